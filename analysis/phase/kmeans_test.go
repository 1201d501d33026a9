package phase

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
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
				// The second smallest squared distance, summed as naiveNearest does.
				second := math.Inf(1)
				for c := 0; c < k; c++ {
					if c != wc {
						second = min(second, sqDist(x, centres[c*d:(c+1)*d]))
					}
				}
				for hint := -1; hint < k; hint++ {
					c, dd := nearestScratch(x, centres, k, hint, scratch)
					if c != wc || dd != wd {
						t.Fatalf("d=%d k=%d hint=%d: got %d (%v), want %d (%v)", d, k, hint, c, dd, wc, wd)
					}
					for _, exact := range []bool{false, true} {
						c, dd, lo := nearestBounded(x, centres, k, hint, scratch, exact)
						if c != wc || dd != wd || lo > second || (exact && lo != second) {
							t.Fatalf("d=%d k=%d hint=%d exact=%v: got %d (%v), bound %v; want %d (%v), bound %s %v",
								d, k, hint, exact, c, dd, lo, wc, wd, map[bool]string{false: "≤", true: "="}[exact], second)
						}
					}
				}
				if c, dd := nearest(x, centres, k); c != wc || dd != wd {
					t.Fatalf("d=%d k=%d: nearest got %d, want %d", d, k, c, wc)
				}
			}
		}
	}
}

// plainCompatLloyd is compatLloyd without Hamerly's bounds: every
// interval searched in every update, as SimPoint does.
func plainCompatLloyd(ds *dataset, k int, centres []float64, limit int) ([]float64, []float64, int) {
	d := ds.d
	cur, curW := centres, make([]float64, k)
	for u := 1; ; u++ {
		next := make([]float64, k*d)
		nextW := make([]float64, k)
		for i := 0; i < ds.n; i++ {
			x := ds.row(i)
			c, _ := naiveNearest(x, cur, k)
			for j, v := range x {
				next[c*d+j] += v * ds.w[i]
			}
			nextW[c] += ds.w[i]
		}
		for c := 0; c < k; c++ {
			if nextW[c] > 0 {
				for j := range d {
					next[c*d+j] /= nextW[c]
				}
			}
		}
		if equal(next, cur) {
			return next, nextW, u - 1
		}
		if u >= limit {
			return cur, curW, u // the centres before the last update, as compatLloyd
		}
		cur, curW = next, nextW
	}
}

// TestCompatLloydBoundsExact checks that compat mode's Lloyd, which skips
// the search where Hamerly's bounds show the label cannot change, gives
// the centres and weights of the full search to the last bit, on data
// with many duplicate intervals (ties) and centres that empty.
func TestCompatLloydBoundsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 40; trial++ {
		n, d, k := 200+rng.IntN(400), 8+rng.IntN(9), 2+rng.IntN(12)
		x := make([]float64, n*d)
		for i := range x {
			x[i] = math.Round(rng.NormFloat64()*4) / 4
		}
		for i := 1; i < n; i += 4 { // duplicates
			copy(x[i*d:(i+1)*d], x[(i-1)*d:i*d])
		}
		ds := &dataset{n: n, d: d, w: make([]float64, n)}
		ds.setRows(x)
		for i := range ds.w {
			ds.w[i] = 1 / float64(n)
		}
		centres := make([]float64, k*d)
		for c := 0; c < k; c++ {
			copy(centres[c*d:(c+1)*d], ds.row(rng.IntN(n)))
		}
		weights := make([]float64, k)
		limit := 100
		if trial%4 == 3 {
			limit = 2 + rng.IntN(3) // stopped before it converges
		}
		wantC, wantW, wantIters := plainCompatLloyd(ds, k, slices.Clone(centres), limit)
		cl, err := compatLloyd(context.Background(), ds, k, slices.Clone(centres), weights, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(cl.centres, wantC) || !equal(cl.weights, wantW) || cl.iterations != wantIters {
			t.Fatalf("trial %d (n=%d d=%d k=%d, limit %d): centres, weights or updates (%d, want %d) differ from the full search's",
				trial, n, d, k, limit, cl.iterations, wantIters)
		}
	}
}
