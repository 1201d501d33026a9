package occupancy

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func readLyonSweep(t *testing.T, name string) *Sweep {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lyon", name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ReadSweep(f, name+".csv")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLyonWorkloadSweeps fits the sweeps of examples/lyon recorded on
// machine A (testdata/lyon, 60/75/75 trials as the paper's) and checks:
// the U estimator against the workloads' emulated compute cost, the
// accuracy of the tableau (the figures docs/occupancy.md reports), and
// predictions of trials left out of the fit (fit on half of the trials,
// predict the other half).
func TestLyonWorkloadSweeps(t *testing.T) {
	for _, c := range []struct {
		name   string
		trials int
		// the term of the emulated compute cost of U and its coefficient
		// (s per unit of the term).
		uTerm string
		uCoef float64
		// in-sample accuracy and its hold-out tolerance.
		acc95, holdout float64
	}{
		// 64 tasks of g work units on average, 10 µs a unit, over n nodes.
		{"random", 60, "g/n", 64 * 10e-6, 0.328, 0.40},
		// 20 steps of p·g units.
		{"mesh", 75, "p*g", 20 * 10e-6, 0.373, 0.42},
		// 5 steps of n·p·g units.
		{"ring", 75, "n*p*g", 5 * 10e-6, 0.211, 0.26},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := readLyonSweep(t, c.name)
			if len(s.Trials) != c.trials || !slices.Equal(s.Modes, []string{"I", "S", "R", "U"}) {
				t.Fatalf("%d trials, modes %v", len(s.Trials), s.Modes)
			}
			f, err := FitSweep(s, FitOptions{MaxOrder: 3})
			if err != nil {
				t.Fatal(err)
			}
			for _, eq := range f.Equations {
				t.Logf("%s = %s (R² %.3f)", eq.Mode, eq.Format(), eq.R2)
			}
			if math.Abs(f.Acc95-c.acc95) > 0.0005 {
				t.Errorf("±%.1f%% of elapsed time at 95%%, docs/occupancy.md says ±%.1f%%", 100*f.Acc95, 100*c.acc95)
			}
			if f.Compression != float64(c.trials) {
				t.Errorf("compression %g:1, want %d:1", f.Compression, c.trials)
			}
			// The main term of the U estimator is the emulated compute cost
			// (the workload sleeps it, paying back late wake-ups): its
			// coefficient within 15 %. (The other terms absorb the host's
			// scheduling delays, attributed to whatever mode a node is in.)
			u := f.Equations[3]
			k := slices.IndexFunc(u.Terms, func(e EqTerm) bool { return e.Expr == c.uTerm })
			if k < 0 {
				t.Errorf("U = %s has no term %s", u.Format(), c.uTerm)
			} else if got := u.Terms[k].Coef; math.Abs(got-c.uCoef) > 0.15*c.uCoef {
				t.Errorf("U: %s × %.3g, the emulated cost is %.3g", c.uTerm, got, c.uCoef)
			}
			// Hold-out: fit the even trials, predict the odd ones.
			var even, odd Sweep
			even, odd = *s, *s
			even.Trials, odd.Trials = nil, nil
			for i, tr := range s.Trials {
				if i%2 == 0 {
					even.Trials = append(even.Trials, tr)
				} else {
					odd.Trials = append(odd.Trials, tr)
				}
			}
			half, err := FitSweep(&even, FitOptions{MaxOrder: 3})
			if err != nil {
				t.Fatal(err)
			}
			errs, err := half.Check(&odd)
			if err != nil {
				t.Fatal(err)
			}
			q := Quantile95(errs)
			t.Logf("fit on %d trials: ±%.1f%%; predicting the other %d: ±%.1f%% (largest %.1f%%)", len(even.Trials), 100*half.Acc95, len(errs), 100*q, 100*slices.Max(errs))
			if q > c.holdout {
				t.Errorf("held-out trials predicted within ±%.1f%% at 95%%, want ≤ ±%.0f%%", 100*q, 100*c.holdout)
			}
		})
	}
}

// TestLyonRingPredictsNewSettings fits Ring's sweep and predicts 48 new
// settings measured later (n = 6, 10, 14, between the swept 4, 8, 16; p
// and g between the swept values): T within ±34 % at 95 %.
func TestLyonRingPredictsNewSettings(t *testing.T) {
	f, err := FitSweep(readLyonSweep(t, "ring"), FitOptions{MaxOrder: 3})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := f.Check(readLyonSweep(t, "ring_new"))
	if err != nil {
		t.Fatal(err)
	}
	if q := Quantile95(errs); len(errs) != 48 || q > 0.34 {
		t.Errorf("%d new settings predicted within ±%.1f%% at 95%%, want 48 within ±34%%", len(errs), 100*q)
	}
}
