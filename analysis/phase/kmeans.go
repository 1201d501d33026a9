package phase

import (
	"context"
	"math"
)

// clustering is the outcome of one k-means run (one initialisation).
type clustering struct {
	k       int
	centres []float64 // k*d
	weights []float64 // k: the share of the data weight in each cluster
	state   *kmeans   // Default mode: the k-means state (for refine, and a hint for score)
	// hint holds, in Default mode once the trial is scored and its state
	// dropped, each interval's label: the hint guardedScore starts its
	// search for the nearest centre from. 4 bytes per interval where the
	// state holds 24.
	hint       []int32
	iterations int
	converged  bool
	bic        float64
	distortion float64

	initCentres []float64 // Compat: the initial centres and their weights
	initWeights []float64
}

// sqDist returns the squared Euclidean distance between a and b, summed
// over the dimensions in order.
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	s := 0.0
	for i, x := range a {
		t := x - b[i]
		s += float64(t * t)
	}
	return s
}

// nearest returns the index of the centre nearest to x and the squared
// distance to it. Ties go to the lowest index (a strict < against an
// initial +max, as SimPoint does).
func nearest(x, centres []float64, k int) (int, float64) {
	var buf [64]float64
	return nearestScratch(x, centres, k, -1, buf[:0])
}

// nearestScratch is nearest with a guess and a buffer. Centre hint (if
// ≥ 0) is measured first, which lets the partial sums of the others stop
// early when the guess is good (the previous label usually is): a sum
// that already exceeds the best distance cannot win, since sums only
// grow. The answer is nearest's: the lowest index among the centres at
// the smallest distance, each distance summed over the dimensions in
// order. scratch, if it has room for k values, saves an allocation.
func nearestScratch(x, centres []float64, k, hint int, scratch []float64) (int, float64) {
	c, dd, _ := nearestBounded(x, centres, k, hint, scratch, false)
	return c, dd
}

// nearestBounded is nearestScratch that also returns a lower bound on
// the squared distance from x to every other centre: the smallest of
// their distances, each summed as far as the search went (a partial sum
// is at most the whole). With k = 1 the bound is +Inf. With exact, a sum
// is cut short only above the second smallest so far, not above the
// smallest, so that the bound is the second smallest distance itself: a
// closer bound for Hamerly's test, at the price of longer sums. The
// nearest centre and its distance are the same either way.
func nearestBounded(x, centres []float64, k, hint int, scratch []float64, exact bool) (int, float64, float64) {
	d := len(x)
	if d < 8 || k < 2 {
		return nearestSimple(x, centres, k, hint)
	}
	// First pass: the partial sums over the first 4 dimensions of every
	// centre. The centres are independent, so the processor overlaps
	// them; the sums are the same as the sequential ones.
	if cap(scratch) < k {
		scratch = make([]float64, k)
	}
	part := scratch[:k]
	x4 := x[:4]
	for c := range part {
		ctr := centres[c*d : c*d+4]
		t0 := x4[0] - ctr[0]
		t1 := x4[1] - ctr[1]
		t2 := x4[2] - ctr[2]
		t3 := x4[3] - ctr[3]
		s := float64(t0 * t0)
		s += float64(t1 * t1)
		s += float64(t2 * t2)
		s += float64(t3 * t3)
		part[c] = s
	}
	best, bestD := 0, math.MaxFloat64
	measured := false // whether bestD is a distance, not the start value
	second := math.Inf(1)
	if hint >= 0 {
		best, bestD, measured = hint, finish(x, centres[hint*d:(hint+1)*d], part[hint], 4), true
	}
	for c := 0; c < k; c++ {
		if c == hint {
			continue
		}
		// A lower index than the best so far wins ties.
		lower := c < best
		s := part[c]
		if (exact && s > second) || (!exact && (s > bestD || (s == bestD && !lower))) {
			second = min(second, s)
			continue
		}
		ctr := centres[c*d : (c+1)*d]
		ctr = ctr[:len(x)]
		i := 4
		for ; i+4 <= d; i += 4 {
			t0 := x[i] - ctr[i]
			s += float64(t0 * t0)
			t1 := x[i+1] - ctr[i+1]
			s += float64(t1 * t1)
			t2 := x[i+2] - ctr[i+2]
			s += float64(t2 * t2)
			t3 := x[i+3] - ctr[i+3]
			s += float64(t3 * t3)
			if (exact && s > second) || (!exact && (s > bestD || (s == bestD && !lower))) {
				break
			}
		}
		if i+4 <= d {
			second = min(second, s)
			continue
		}
		for ; i < d; i++ {
			t := x[i] - ctr[i]
			s += float64(t * t)
		}
		best, bestD, second, measured = offer(c, s, best, bestD, second, measured)
	}
	return best, bestD, second
}

// offer is a step of nearestBounded's search: centre c, at squared
// distance s summed in full, becomes the nearest (best, at bestD) if it is
// nearer, or as near with a lower index; the loser's distance lowers
// second, the bound on the others. measured says whether bestD is a
// distance yet, not the start value.
func offer(c int, s float64, best int, bestD, second float64, measured bool) (int, float64, float64, bool) {
	if s < bestD || (s == bestD && c < best) {
		if measured {
			second = min(second, bestD)
		}
		return c, s, second, true
	}
	return best, bestD, min(second, s), measured
}

// finish completes a squared distance from a partial sum over the first
// from dimensions.
func finish(x, ctr []float64, s float64, from int) float64 {
	ctr = ctr[:len(x)]
	for i := from; i < len(x); i++ {
		t := x[i] - ctr[i]
		s += float64(t * t)
	}
	return s
}

// nearestSimple is nearestBounded for small dimensions or k.
func nearestSimple(x, centres []float64, k, hint int) (int, float64, float64) {
	d := len(x)
	best, bestD := 0, math.MaxFloat64
	measured := false
	second := math.Inf(1)
	if hint >= 0 {
		best, bestD, measured = hint, sqDist(x, centres[hint*d:(hint+1)*d]), true
	}
	for c := 0; c < k; c++ {
		if c == hint {
			continue
		}
		s := sqDist(x, centres[c*d:(c+1)*d])
		best, bestD, second, measured = offer(c, s, best, bestD, second, measured)
	}
	return best, bestD, second
}

// compatInit returns SimPoint's initial centres for one trial.
func compatInit(ds *dataset, k int, seed int64, method InitMethod) []float64 {
	rng := newRan2(seed)
	d := ds.d
	centres := make([]float64, k*d)
	switch method {
	case InitFurthestFirst:
		first := int(rng.int() % int64(ds.n))
		copy(centres[:d], ds.row(first))
		minD := make([]float64, ds.n)
		for i := range minD {
			minD[i] = sqDist(ds.row(i), centres[:d])
		}
		for c := 1; c < k; c++ {
			far := 0
			for i := 1; i < ds.n; i++ {
				if minD[i] > minD[far] {
					far = i
				}
			}
			ctr := centres[c*d : (c+1)*d]
			copy(ctr, ds.row(far))
			for i := range minD {
				if dd := sqDist(ds.row(i), ctr); dd < minD[i] {
					minD[i] = dd
				}
			}
		}
	default:
		for c := 0; c < k; c++ {
			copy(centres[c*d:(c+1)*d], ds.row(int(rng.int()%int64(ds.n))))
		}
	}
	return centres
}

// initWeights gives each initial centre the data weight of the rows
// nearest to it, normalised to total 1.
func initWeights(ds *dataset, centres []float64, k int) []float64 {
	w := make([]float64, k)
	scratch := make([]float64, k)
	for i := 0; i < ds.n; i++ {
		c, _ := nearestScratch(ds.row(i), centres, k, -1, scratch)
		w[c] += ds.w[i]
	}
	total := 0.0
	for _, x := range w {
		total += x
	}
	for c := range w {
		w[c] /= total
	}
	return w
}

// compatLloyd runs SimPoint 3.2's k-means from the given centres
// (docs/simpoint-3.2.md §4.3): weighted means accumulated in row order, empty
// clusters set to the zero vector with weight 0, stop when the new
// centres equal the old ones exactly, and at the iteration limit return
// the centres and weights from before the last update. Each row's search
// starts from its previous label, and a row whose Hamerly bounds show
// that its label cannot change is not searched: both change the speed,
// not the labels.
func compatLloyd(ctx context.Context, ds *dataset, k int, centres, weights []float64, limit int) (*clustering, error) {
	d := ds.d
	cur, curW := centres, weights
	if limit == 0 {
		return &clustering{k: k, centres: cur, weights: curW}, nil
	}
	next := make([]float64, k*d)
	nextW := make([]float64, k)
	labels := make([]int, ds.n)
	scratch := make([]float64, k)
	for i := range labels {
		labels[i] = -1
	}
	// Hamerly's bounds on each interval's distance to its centre (upper)
	// and to every other centre (lower) skip the search where it cannot
	// change the label: only when the own centre is strictly nearer than
	// every other, with a margin of 1e-9 for the roundings of the bounds,
	// so that the labels, and from them every sum, are those of the full
	// search SimPoint does.
	upper := make([]float64, ds.n)
	lower := make([]float64, ds.n)
	move := make([]float64, k)
	for u := 1; ; u++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		clear(next)
		clear(nextW)
		for i := 0; i < ds.n; i++ {
			x := ds.row(i)
			c := labels[i]
			if c < 0 || !(upper[i]*(1+1e-9) < lower[i]*(1-1e-9)) {
				var d1, d2 float64
				c, d1, d2 = nearestBounded(x, cur, k, c, scratch, true)
				upper[i], lower[i] = math.Sqrt(d1), math.Sqrt(d2)
			}
			labels[i] = c
			w := ds.w[i]
			acc := next[c*d : (c+1)*d]
			acc = acc[:len(x)]
			for j, v := range x {
				acc[j] += float64(v * w)
			}
			nextW[c] += w
		}
		for c := 0; c < k; c++ {
			if nextW[c] > 0 {
				acc := next[c*d : (c+1)*d]
				for j := range acc {
					acc[j] /= nextW[c]
				}
			}
		}
		if equal(next, cur) {
			return &clustering{k: k, centres: next, weights: nextW, iterations: u - 1, converged: true}, nil
		}
		if limit != NoIterationLimit && u >= limit {
			return &clustering{k: k, centres: cur, weights: curW, iterations: u, converged: false}, nil
		}
		// Bounds: a centre that moved by δ changes distances by at most δ.
		max1, max2, arg := 0.0, 0.0, -1
		for c := range move {
			move[c] = math.Sqrt(sqDist(cur[c*d:(c+1)*d], next[c*d:(c+1)*d]))
			if move[c] > max1 {
				max1, max2, arg = move[c], max1, c
			} else if move[c] > max2 {
				max2 = move[c]
			}
		}
		for i, c := range labels {
			upper[i] += move[c]
			if c == arg {
				lower[i] -= max2
			} else {
				lower[i] -= max1
			}
		}
		if u == 1 {
			// The first update must not overwrite the caller's centres.
			cur, curW = next, nextW
			next, nextW = make([]float64, k*d), make([]float64, k)
			continue
		}
		cur, next = next, cur
		curW, nextW = nextW, curW
	}
}

func equal(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// bicPi is the value of π SimPoint uses in its BIC.
const bicPi = 3.14159265358979

// score computes SimPoint's BIC of a clustering on the whole data set
// (docs/simpoint-3.2.md §4.4), with labels recomputed from the centres and
// the cluster probabilities taken from the k-means weights. It returns
// the BIC and the distortion. The clustering's k-means state, if any
// (which must be the state the clustering was taken from), only speeds
// up the search for the nearest centres.
func score(ds *dataset, cl *clustering) (bic, distortion float64) {
	n, d, k := ds.n, ds.d, cl.k
	totalW := 0.0
	for _, w := range ds.w {
		totalW += w
	}
	sse := 0.0
	logP := 0.0
	scratch := make([]float64, k)
	logs := make([]float64, k) // the same values as math.Log per row
	for c, p := range cl.weights {
		if p > 0 {
			logs[c] = math.Log(p)
		}
	}
	for i := 0; i < n; i++ {
		var c int
		var dist float64
		if m := cl.state; m != nil {
			// The bounds often prove the label is the nearest centre,
			// and the only one at that distance.
			c = m.labels[i]
			dist = sqDist(ds.row(i), cl.centres[c*d:(c+1)*d])
			if !(math.Sqrt(dist)*(1+1e-9) < m.lower[i]) {
				c, dist = nearestScratch(ds.row(i), cl.centres, k, c, scratch)
			}
		} else {
			c, dist = nearestScratch(ds.row(i), cl.centres, k, -1, scratch)
		}
		sse += float64(ds.w[i] * dist)
		if cl.weights[c] > 0 {
			logP += float64(ds.w[i]/totalW) * logs[c]
		}
	}
	distortion = sse / (totalW / float64(n))
	nf, df := float64(n), float64(d)
	variance := distortion / (df * nf)
	ll := nf * (-df/2.0*(math.Log(2.0*bicPi*variance)+1.0) - math.Log(totalW) + logP)
	params := float64((k - 1) + k*d + 1)
	bic = ll - params/2.0*math.Log(nf)
	return bic, distortion
}
