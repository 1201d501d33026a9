package pca

import (
	"math"
	"slices"
)

// Swings counts the upward swings of a score series (PC1 against state
// number): rises of at least prominence from the lowest point since the
// last swing down. On an iterative program whose processes move through
// the loop together, PC1 climbs once per iteration and falls back when the
// loop restarts: each swing is one of the V shapes of Figure 8 of Gomez, Cai & Schubert (2017),
// and the count is the number of iterations. A series that never moves by
// prominence has no swing.
func Swings(y []float64, prominence float64) int {
	if len(y) == 0 || !(prominence > 0) {
		return 0
	}
	lo, hi := y[0], y[0]
	dir := 0 // +1 rising, -1 falling, 0 not yet known
	n := 0
	for _, v := range y[1:] {
		switch dir {
		case 0:
			lo, hi = min(lo, v), max(hi, v)
			if v-lo >= prominence {
				dir, hi, n = 1, v, n+1
			} else if hi-v >= prominence {
				dir, lo = -1, v
			}
		case 1:
			if v > hi {
				hi = v
			} else if hi-v >= prominence {
				dir, lo = -1, v
			}
		case -1:
			if v < lo {
				lo = v
			} else if v-lo >= prominence {
				dir, hi, n = 1, v, n+1
			}
		}
	}
	return n
}

// SwingProminence is the default prominence for Swings: half the spread
// between the 5th and 95th percentiles of the series, which ignores the
// start-up ramp and single outliers.
func SwingProminence(y []float64) float64 {
	if len(y) == 0 {
		return 0
	}
	s := slices.Clone(y)
	slices.Sort(s)
	q := func(p float64) float64 { return s[int(math.Round(p*float64(len(s)-1)))] }
	return 0.5 * (q(0.95) - q(0.05))
}
