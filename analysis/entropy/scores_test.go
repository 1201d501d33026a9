package entropy

import (
	"math"
	"testing"
)

// TestRobustScores checks the subset ranking's scores on values worked by
// hand, and that rounding noise between equal values does not make a score
// of 1e17 (0.1+0.2 and 0.3 differ in the last bit).
func TestRobustScores(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []float64
		want []float64
	}{
		// median 3, |dev| = 2,1,0,1,7 → MAD 1 → spread 1.4826.
		{"mad", []float64{1, 2, 3, 4, 10}, []float64{-2 / 1.4826, -1 / 1.4826, 0, 1 / 1.4826, 7 / 1.4826}},
		// Five of six equal up to rounding: MAD 0, mean |dev| = 4.7/6.
		{"rounding", []float64{0.3, 0.1 + 0.2, 0.1 + 0.2, 0.3, 0.3, 5}, []float64{0, 0, 0, 0, 0, 4.7 / (1.2533 * 4.7 / 6)}},
		{"constant", []float64{2, 2, 2}, []float64{0, 0, 0}},
		{"tiny", []float64{3e-265, 3e-265, 6e-265}, []float64{0, 0, 3e-265 / (1.2533 * 1e-265)}},
	} {
		got := robustScores(tc.vals)
		for i := range tc.want {
			if math.Abs(got[i]-tc.want[i]) > 1e-9*math.Max(1, math.Abs(tc.want[i])) {
				t.Errorf("%s: score %d = %g, want %g", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}
