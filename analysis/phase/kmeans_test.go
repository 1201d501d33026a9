package phase

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveNearest is SimPoint's assignment written plainly: full distances,
// strict < against +max, so the lowest index wins ties.
func naiveNearest(x, centres []float64, k int) (int, float64) {
	d := len(x)
	best, bestD := -1, math.MaxFloat64
	for c := 0; c < k; c++ {
		s := 0.0
		for i := 0; i < d; i++ {
			t := x[i] - centres[c*d+i]
			s += t * t
		}
		if s < bestD {
			best, bestD = c, s
		}
	}
	return best, bestD
}

// TestNearestMatchesNaive checks the pruned, hinted search against the
// plain one, with duplicate centres (ties) and every possible hint.
func TestNearestMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 3, 5, 8, 15, 17} {
		for _, k := range []int{1, 2, 3, 7, 20, 70} {
			centres := make([]float64, k*d)
			for i := range centres {
				centres[i] = math.Round(rng.Float64()*8) / 4 // coarse: many ties
			}
			for c := 1; c < k; c += 3 { // exact duplicates
				copy(centres[c*d:(c+1)*d], centres[(c-1)*d:c*d])
			}
			scratch := make([]float64, k)
			for trial := 0; trial < 50; trial++ {
				x := make([]float64, d)
				for i := range x {
					x[i] = math.Round(rng.Float64()*8) / 4
				}
				if trial%5 == 0 {
					copy(x, centres[rng.IntN(k)*d:])
				}
				wc, wd := naiveNearest(x, centres, k)
				for hint := -1; hint < k; hint++ {
					c, dd := nearestScratch(x, centres, k, hint, scratch)
					if c != wc || dd != wd {
						t.Fatalf("d=%d k=%d hint=%d: got %d (%v), want %d (%v)", d, k, hint, c, dd, wc, wd)
					}
				}
				if c, dd := nearest(x, centres, k); c != wc || dd != wd {
					t.Fatalf("d=%d k=%d: nearest got %d, want %d", d, k, c, wc)
				}
			}
		}
	}
}
