package phase

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// labelsOf turns "aaabbb" into []int{0,0,0,1,1,1} (letter - 'a').
func labelsOf(s string) []int {
	out := make([]int, len(s))
	for i, c := range s {
		out[i] = int(c - 'a')
	}
	return out
}

func TestFindHints(t *testing.T) {
	for _, tc := range []struct {
		name    string
		labels  string
		init    int
		period  int
		cycle   []int
		runs    int
		matchGE float64
	}{
		{"empty", "", 0, 0, nil, 0, 0},
		{"constant", "aaaaaa", 0, 1, []int{0}, 1, 1},
		{"init then constant", "xxbbbbbbbb", 2, 1, []int{1}, 2, 1},
		{"init then cycle", "xx" + strings.Repeat("bbbccd", 6), 2, 6, []int{1, 2, 3}, 1 + 18, 1},
		{"cycle from the start", strings.Repeat("aab", 5), 0, 3, []int{0, 1}, 10, 1},
		{"init, cycle, end", "yx" + strings.Repeat("bbbcc", 6) + "z", 2, 5, []int{1, 2}, 2 + 12 + 1, 0.95},
		{"noisy cycle", "x" + strings.Repeat("bbbbcccc", 3) + "bbbbcdcc" + strings.Repeat("bbbbcccc", 3), 1, 8, []int{1, 2}, 1 + 2*7 + 2, 0.9},
		{"sequence without recurrence", "aaabbbcccddd", 9, 1, []int{3}, 4, 1},
		{"long runs, no cycle", strings.Repeat("b", 50) + strings.Repeat("c", 50), 50, 1, []int{2}, 2, 1},
		{"two runs that recur once", strings.Repeat("b", 40) + strings.Repeat("c", 40) + strings.Repeat("b", 40), 0, 0, nil, 3, 0},
		{"init phase recurs at the end", "a" + strings.Repeat("bc", 10) + "a", 0, 2, []int{0, 1}, 22, 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := FindHints(labelsOf(tc.labels))
			if h.InitEnd != tc.init || h.Period != tc.period || !reflect.DeepEqual(h.Cycle, tc.cycle) || len(h.Runs) != tc.runs {
				t.Fatalf("init %d period %d cycle %v runs %d; want %d %d %v %d", h.InitEnd, h.Period, h.Cycle, len(h.Runs), tc.init, tc.period, tc.cycle, tc.runs)
			}
			if h.PeriodMatch < tc.matchGE || h.PeriodMatch > 1 {
				t.Errorf("period match %v, want ≥ %v", h.PeriodMatch, tc.matchGE)
			}
			// Runs cover the labels exactly and PhaseRuns indexes them.
			n := 0
			for r, run := range h.Runs {
				if run.Start != n || run.End <= run.Start || (r > 0 && h.Runs[r-1].Phase == run.Phase) {
					t.Fatalf("run %d %+v", r, run)
				}
				for i := run.Start; i < run.End; i++ {
					if int(tc.labels[i]-'a') != run.Phase {
						t.Fatalf("run %d %+v covers label %c", r, run, tc.labels[i])
					}
				}
				n = run.End
			}
			if n != len(tc.labels) {
				t.Fatalf("runs cover %d of %d", n, len(tc.labels))
			}
			total := 0
			for p, rs := range h.PhaseRuns {
				for _, r := range rs {
					if h.Runs[r].Phase != p {
						t.Fatalf("PhaseRuns[%d] lists run %d of phase %d", p, r, h.Runs[r].Phase)
					}
					total++
				}
			}
			if total != len(h.Runs) {
				t.Fatalf("PhaseRuns lists %d runs of %d", total, len(h.Runs))
			}
		})
	}
}

// TestRunHints checks that Run fills in the hints of its labels, on a
// synthetic program: four phases in runs of 7 intervals, cycling.
func TestRunHints(t *testing.T) {
	f, _ := synthetic([]int{28, 28, 28, 28}, 7, 0.05, 3)
	opts := DefaultOptions()
	opts.Mode, opts.MaxK = Default, 8
	res, err := Run(context.Background(), f, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := FindHints(res.Labels)
	if !reflect.DeepEqual(res.Hints, want) || res.Hints.Period != 28 || res.Hints.InitEnd != 0 || len(res.Hints.Cycle) != 4 || len(res.Hints.Runs) != 16 {
		t.Fatalf("hints %+v", res.Hints)
	}
}

// TestPeriodMatchesNaive checks that period, which stops counting a lag
// once its mismatches rule it out, finds the period and match rate that
// counting every lag in full (naiveRate) gives: on noisy cycles whose match rates sit at and around
// CycleMatch (across several of matchRate's chunks), on long runs and on
// noise.
func TestPeriodMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	found := 0
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(6000)
		cycle := 1 + rng.IntN(60)
		run := 1 + rng.IntN(40)
		phases := 1 + rng.IntN(6)
		noise := []float64{0, 0.05, 0.1, 0.19, 0.2, 0.21, 0.5}[rng.IntN(7)]
		pattern := make([]int, cycle)
		for i := range pattern {
			pattern[i] = rng.IntN(phases)
		}
		s := make([]int, n)
		for i := range s {
			s[i] = pattern[(i/run)%cycle]
			if rng.Float64() < noise {
				s[i] = rng.IntN(phases + 1)
			}
		}
		gp, gm := period(s)
		wp, wm := periodBy(s, naiveRate)
		if gp != wp || gm != wm {
			t.Fatalf("trial %d (n %d, cycle %d × run %d, noise %v): period %d match %v, want %d %v", trial, n, cycle, run, noise, gp, gm, wp, wm)
		}
		if wp > 1 {
			found++
		}
	}
	if found < 50 {
		t.Fatalf("only %d of 300 sequences have a period above 1: the test hardly covers the search", found)
	}
	// A rate exactly at CycleMatch counts (4 mismatches in 20), one
	// below it does not, whichever of matchRate's chunks the mismatches
	// fall in.
	for _, n := range []int{20, 5000} {
		for _, miss := range []int{n / 5, n/5 + 1} {
			a, b := make([]int, n), make([]int, n)
			for i := 0; i < miss; i++ {
				b[n-1-i*(n/miss)] = 1
			}
			got, want := matchRate(a, b), naiveRate(a, b)
			if (want >= CycleMatch) != (miss == n/5) || (want >= CycleMatch && got != want) || (want < CycleMatch && got >= CycleMatch) {
				t.Fatalf("%d mismatches in %d: matchRate %v, full count %v", miss, n, got, want)
			}
		}
	}
}

// naiveRate is the fraction of positions where a and b hold the same
// label, counted in full.
func naiveRate(a, b []int) float64 {
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / float64(len(a))
}

// TestFindHintsExactSize checks that Runs and every phase's list of runs
// are allocated at their size (they are most of the memory FindHints
// takes on a large input), and that they are the runs a plain scan
// finds.
func TestFindHintsExactSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	labels := make([]int, 50_000)
	for i := range labels {
		labels[i] = labels[max(i-1, 0)]
		if rng.IntN(4) == 0 {
			labels[i] = rng.IntN(9)
		}
	}
	h := FindHints(labels)
	var runs []Stretch
	phaseRuns := map[int][]int{}
	for i, l := range labels {
		if i > 0 && l == labels[i-1] {
			runs[len(runs)-1].End = i + 1
			continue
		}
		phaseRuns[l] = append(phaseRuns[l], len(runs))
		runs = append(runs, Stretch{Phase: l, Start: i, End: i + 1})
	}
	if !reflect.DeepEqual(h.Runs, runs) || !reflect.DeepEqual(h.PhaseRuns, phaseRuns) {
		t.Fatalf("runs differ from a plain scan: %d runs against %d", len(h.Runs), len(runs))
	}
	if cap(h.Runs) != len(h.Runs) {
		t.Errorf("Runs: capacity %d for %d runs", cap(h.Runs), len(h.Runs))
	}
	for p, rs := range h.PhaseRuns {
		if cap(rs) != len(rs) {
			t.Errorf("phase %d: capacity %d for %d runs", p, cap(rs), len(rs))
		}
	}
}
