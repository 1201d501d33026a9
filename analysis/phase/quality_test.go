package phase

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/bbv"
)

// ownData is the folder of the BBV files made with parscope bbv.
const ownData = "../../testdata/bbv"

// loadDataSet parses a data set as SimPoint does.
func loadDataSet(t testing.TB, name string) *bbv.File {
	t.Helper()
	if rel, ok := cutPrefix(name, "shared:"); ok {
		return loadBB(t, rel)
	}
	rel, _ := cutPrefix(name, "own:")
	f, err := bbv.ReadFile(filepath.Join(ownData, rel), bbv.ParseOptions{SimPointQuirks: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// qualitySets are the data sets Default mode is compared on: the seven
// option sets with SimPoint 3.2 reference outputs, and our own three
// files with SimPoint's defaults.
func qualitySets() []reference {
	sets := slices.Clone(references)
	for _, own := range []string{"seq.bb.gz", "cycle.bb.gz", "sort.bb.gz"} {
		sets = append(sets, reference{name: own, bb: "own:" + own})
	}
	return sets
}

// loadReference parses a quality set's input and returns its options.
func loadReference(t testing.TB, r reference) (*bbv.File, Options) {
	t.Helper()
	name := r.bb
	if !strings.HasPrefix(name, "own:") {
		name = "shared:" + name
	}
	opts := DefaultOptions()
	if r.opts != nil {
		r.opts(&opts)
	}
	return loadDataSet(t, name), opts
}

// TestDefaultBICAtLeastCompat checks, on every data set, that Default mode
// clusters SimPoint's chosen k at least as well as SimPoint does: a BIC at
// least as high and a distortion at most as high, with the same
// projection, options and number of restarts.
func TestDefaultBICAtLeastCompat(t *testing.T) {
	for _, r := range qualitySets() {
		t.Run(r.name, func(t *testing.T) {
			f, opts := loadReference(t, r)
			compat, err := Run(context.Background(), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Mode, opts.K = Default, []int{compat.K}
			def, err := Run(context.Background(), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			ce, de := compat.Evaluated[compat.Chosen], def.Evaluated[0]
			cb, db := float64(ce.BIC), float64(de.BIC)
			cd, dd := float64(ce.Trials[ce.BestTrial].Distortion), float64(de.Trials[de.BestTrial].Distortion)
			t.Logf("k=%d: BIC compat %.2f default %.2f; distortion compat %.5g default %.5g", compat.K, cb, db, cd, dd)
			if !(db >= cb) {
				t.Errorf("k=%d: Default BIC %v < SimPoint's %v", compat.K, db, cb)
			}
			if !(dd <= cd) {
				t.Errorf("k=%d: Default distortion %v > SimPoint's %v", compat.K, dd, cd)
			}
			if len(def.Phases) == 0 || def.Phases[0].Size == 0 {
				t.Errorf("no phases reported")
			}
		})
	}
}

// TestPhaseSizeGuard checks the phase-size guard on every data set: with
// SimPoint's options otherwise, Default mode chooses a k whose phases all
// hold at least DefaultMinPhaseSize intervals, no larger than the k it
// chooses without the guard, and its chosen BIC is the guarded one. On
// cycle, whose phases repeat almost exactly, the guard is what stops the
// run-away to k = MaxK with phases of one interval, and Default then
// finds the initialisation and the period as SimPoint does.
func TestPhaseSizeGuard(t *testing.T) {
	for _, r := range qualitySets() {
		t.Run(r.name, func(t *testing.T) {
			f, opts := loadReference(t, r)
			opts.Mode = Default
			res, err := Run(context.Background(), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.MinPhaseSize = 1
			off, err := Run(context.Background(), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			small := func(res *Result) int {
				n := 0
				for _, p := range res.Phases {
					if p.Size < DefaultMinPhaseSize {
						n++
					}
				}
				return n
			}
			t.Logf("guard: k=%d, %d small phases; off: k=%d, %d small phases", res.K, small(res), off.K, small(off))
			if small(res) != 0 {
				t.Errorf("k=%d has %d phases of fewer than %d intervals", res.K, small(res), DefaultMinPhaseSize)
			}
			if res.K > off.K {
				t.Errorf("the guard chose k=%d, more than %d without it", res.K, off.K)
			}
			for _, ev := range res.Evaluated {
				if ev.GuardedBIC == nil || *ev.GuardedBIC > ev.BIC {
					t.Errorf("k=%d: guarded BIC %v, BIC %v", ev.K, ev.GuardedBIC, ev.BIC)
				}
			}
			for _, ev := range off.Evaluated {
				if ev.GuardedBIC == nil || *ev.GuardedBIC != ev.BIC {
					t.Errorf("guard off: k=%d: guarded BIC %v, BIC %v", ev.K, ev.GuardedBIC, ev.BIC)
				}
			}
			if r.name == "cycle.bb.gz" {
				if off.K != opts.MaxK || small(off) == 0 {
					t.Errorf("without the guard: k=%d with %d small phases; want the run-away to %d", off.K, small(off), opts.MaxK)
				}
				if res.Hints.InitEnd != 11 || res.Hints.Period != 20 {
					t.Errorf("init end %d, period %d; want 11 and 20", res.Hints.InitEnd, res.Hints.Period)
				}
			}
		})
	}
}

// majority returns the most frequent label in labels[from:to] and its share.
func majority(labels []int, from, to int) (int, float64) {
	count := map[int]int{}
	best := -1
	for _, l := range labels[from:to] {
		count[l]++
		if best < 0 || count[l] > count[best] || (count[l] == count[best] && l < best) {
			best = l
		}
	}
	return best, float64(count[best]) / float64(to-from)
}

// TestOwnFilesPhases checks the phases found in our own BBV files
// (testdata/bbv/README.md describes the programs and their phases): the
// intervals of different program phases never share a cluster, in either
// mode, and in compat mode each program phase is mostly one cluster and
// the hints find the initialisation and the period.
func TestOwnFilesPhases(t *testing.T) {
	for _, tc := range []struct {
		file     string
		spans    [][2]int // [from, to) inside each program phase
		minShare float64  // compat: share of each span's main cluster
		init     int      // compat: Hints.InitEnd
		period   int      // compat: Hints.Period
	}{
		// I (fill), S (qsort), M (matmul), H (hash)
		{"seq.bb.gz", [][2]int{{1, 19}, {21, 115}, {118, 222}, {227, 434}}, 0.25, 20, 0},
		// I, then 8 × (A stencil, B pointer chase)
		{"cycle.bb.gz", [][2]int{{1, 10}, {12, 20}, {23, 30}}, 0.8, 11, 20},
		// sort: read and sort, then write the output
		{"sort.bb.gz", [][2]int{{4, 262}, {266, 291}}, 0.3, 4, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f := loadDataSet(t, "own:"+tc.file)
			for _, mode := range []Mode{Compat, Default} {
				opts := DefaultOptions()
				opts.Mode = mode
				res, err := Run(context.Background(), f, opts)
				if err != nil {
					t.Fatal(err)
				}
				owner := map[int]int{} // cluster -> span
				for si, s := range tc.spans {
					for i := s[0]; i < s[1]; i++ {
						l := res.Labels[i]
						if o, ok := owner[l]; ok && o != si {
							t.Errorf("%v: cluster %d holds intervals of program phases %d and %d", mode, l, o, si)
						}
						owner[l] = si
					}
					if _, share := majority(res.Labels, s[0], s[1]); mode == Compat && share < tc.minShare {
						t.Errorf("%v: intervals %d-%d: main cluster has %.0f%%", mode, s[0], s[1]-1, 100*share)
					}
				}
				if mode == Compat && (res.Hints.InitEnd != tc.init || res.Hints.Period != tc.period) {
					t.Errorf("%v: init end %d, period %d; want %d, %d", mode, res.Hints.InitEnd, res.Hints.Period, tc.init, tc.period)
				}
			}
		})
	}
}
