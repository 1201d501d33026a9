package phase

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format/bbv"
)

// ownData is the folder of the BBV files made with parscope bbv.
const ownData = "../../testdata/bbv"

// dataSets are every BBV file we have: SimPoint's sample, the two shared
// real files and our own three.
var dataSets = []string{
	"shared:simpoint-3.2/sample/sample.bb", "shared:bzip2_rt_100M.bb.gz", "shared:phases.bb.gz",
	"own:seq.bb.gz", "own:cycle.bb.gz", "own:sort.bb.gz",
}

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

// TestDefaultBICAtLeastCompat checks, on every data set, that Default mode
// clusters SimPoint's chosen k at least as well as SimPoint does (a BIC at
// least as high), with the same projection and number of restarts.
func TestDefaultBICAtLeastCompat(t *testing.T) {
	for _, name := range dataSets {
		t.Run(name, func(t *testing.T) {
			f := loadDataSet(t, name)
			opts := DefaultOptions()
			compat, err := Run(context.Background(), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Mode, opts.K = Default, []int{compat.K}
			def, err := Run(context.Background(), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			cb, db := float64(compat.Evaluated[compat.Chosen].BIC), float64(def.Evaluated[0].BIC)
			t.Logf("k=%d: compat BIC %.2f, default BIC %.2f", compat.K, cb, db)
			if !(db >= cb) {
				t.Errorf("k=%d: Default BIC %v < SimPoint's %v", compat.K, db, cb)
			}
			if len(def.Phases) == 0 || def.Phases[0].Size == 0 {
				t.Errorf("no phases reported")
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
