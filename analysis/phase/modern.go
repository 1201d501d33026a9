package phase

import (
	"context"
	"math"
	"math/rand/v2"
)

// modernKMeans is Default mode's k-means: weighted k-means++ seeding from
// a PCG stream keyed by (seed, k), then Lloyd iterations accelerated with
// Hamerly's bounds (each interval keeps an upper bound on the distance to
// its centre and a lower bound on the distance to any other, so most
// intervals skip the search once the centres settle). Empty clusters are
// re-seeded at the interval worst served by its centre. It stops when no
// label changes, or when an update lowers the distortion by no more than
// tol times (an upper bound on) its value. The result depends only on its
// arguments.
func modernKMeans(ctx context.Context, ds *dataset, k int, seed int64, limit int, tol float64) (*clustering, error) {
	n, d := ds.n, ds.d
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(k)))
	centres := seedPlusPlus(ds, k, rng)

	labels := make([]int, n)
	upper := make([]float64, n)
	lower := make([]float64, n)
	for i := 0; i < n; i++ {
		c, d1, d2 := nearestTwo(ds.row(i), centres, k)
		labels[i], upper[i], lower[i] = c, math.Sqrt(d1), math.Sqrt(d2)
	}
	weights := make([]float64, k)
	sums := make([]float64, k*d)
	old := make([]float64, k*d)
	move := make([]float64, k)
	half := make([]float64, k)
	served := make([]bool, n)
	iters := 0
	converged := false
	for limit == NoIterationLimit || iters < limit {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Update: weighted means of the members, in row order.
		clear(weights)
		clear(sums)
		for i := 0; i < n; i++ {
			c, w := labels[i], ds.w[i]
			acc := sums[c*d : (c+1)*d]
			for j, v := range ds.row(i) {
				acc[j] += float64(v * w)
			}
			weights[c] += w
		}
		copy(old, centres)
		reseeded := false
		decrease := 0.0
		for c := 0; c < k; c++ {
			ctr := centres[c*d : (c+1)*d]
			if weights[c] > 0 {
				for j := range ctr {
					ctr[j] = sums[c*d+j] / weights[c]
				}
			} else if far := worstServed(ds, upper, served); far >= 0 {
				// An empty cluster takes over the interval furthest from
				// its centre; that interval then counts as served.
				copy(ctr, ds.row(far))
				served[far] = true
				reseeded = true
			}
			dd := sqDist(old[c*d:(c+1)*d], ctr)
			move[c] = math.Sqrt(dd)
			decrease += float64(weights[c] * dd)
		}
		clear(served)
		iters++
		// Bounds: a centre that moved by m changes distances by at most m.
		max1, max2, arg := 0.0, 0.0, -1
		for c, m := range move {
			if m > max1 {
				max1, max2, arg = m, max1, c
			} else if m > max2 {
				max2 = m
			}
		}
		for c := 0; c < k; c++ {
			best := math.Inf(1)
			for o := 0; o < k; o++ {
				if o != c {
					best = min(best, sqDist(centres[c*d:(c+1)*d], centres[o*d:(o+1)*d]))
				}
			}
			half[c] = 0.5 * math.Sqrt(best)
		}
		changed := 0
		sseBound := 0.0
		for i := 0; i < n; i++ {
			a := labels[i]
			upper[i] += move[a]
			if a == arg {
				lower[i] -= max2
			} else {
				lower[i] -= max1
			}
			if m := max(half[a], lower[i]); upper[i] > m {
				x := ds.row(i)
				upper[i] = math.Sqrt(sqDist(x, centres[a*d:(a+1)*d]))
				if upper[i] > m {
					c, d1, d2 := nearestTwo(x, centres, k)
					if c != a {
						labels[i] = c
						changed++
					}
					upper[i], lower[i] = math.Sqrt(d1), math.Sqrt(d2)
				}
			}
			sseBound += float64(ds.w[i] * upper[i] * upper[i])
		}
		if !reseeded && (changed == 0 || decrease < tol*sseBound) {
			converged = true
			break
		}
	}
	if converged {
		if err := hartigan(ctx, ds, k, centres, labels); err != nil {
			return nil, err
		}
	}
	clear(weights)
	for i, c := range labels {
		weights[c] += ds.w[i]
	}
	return &clustering{k: k, centres: centres, weights: weights, iterations: iters, converged: converged}, nil
}

// hartiganPasses bounds the refinement passes of hartigan.
const hartiganPasses = 50

// hartigan refines a converged Lloyd clustering with Hartigan's single
// moves: an interval moves to another cluster when that lowers the
// weighted distortion once both means are updated, which Lloyd's fixed
// points do not check (moving x of weight w from a to b changes the
// distortion by W_b/(W_b+w)·|x−c_b|² − W_a/(W_a−w)·|x−c_a|²). Centres are
// the exact means of their members afterwards.
func hartigan(ctx context.Context, ds *dataset, k int, centres []float64, labels []int) error {
	n, d := ds.n, ds.d
	wsum := make([]float64, k)
	for i, c := range labels {
		wsum[c] += ds.w[i]
	}
	for pass := 0; pass < hartiganPasses; pass++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		moved := 0
		for i := 0; i < n; i++ {
			a, w, x := labels[i], ds.w[i], ds.row(i)
			if wsum[a] <= w {
				continue // the only member: moving it would empty a cluster
			}
			gain := wsum[a] / (wsum[a] - w) * sqDist(x, centres[a*d:(a+1)*d])
			best, bestCost := -1, gain
			for b := 0; b < k; b++ {
				if b == a || wsum[b] == 0 {
					continue
				}
				bound := bestCost * (wsum[b] + w) / wsum[b]
				if c := wsum[b] / (wsum[b] + w) * sqDistBelow(x, centres[b*d:(b+1)*d], bound); c < bestCost*(1-1e-12) {
					best, bestCost = b, c
				}
			}
			if best < 0 {
				continue
			}
			ca, cb := centres[a*d:(a+1)*d], centres[best*d:(best+1)*d]
			wa, wb := wsum[a], wsum[best]
			for j, v := range x {
				ca[j] = (wa*ca[j] - w*v) / (wa - w)
				cb[j] = (wb*cb[j] + w*v) / (wb + w)
			}
			wsum[a], wsum[best] = wa-w, wb+w
			labels[i] = best
			moved++
		}
		if moved == 0 {
			break
		}
	}
	// Recompute the means exactly, free of the incremental updates' rounding.
	sums := make([]float64, k*d)
	for i, c := range labels {
		acc := sums[c*d : (c+1)*d]
		for j, v := range ds.row(i) {
			acc[j] += float64(v * ds.w[i])
		}
	}
	for c := 0; c < k; c++ {
		if wsum[c] > 0 {
			for j := 0; j < d; j++ {
				centres[c*d+j] = sums[c*d+j] / wsum[c]
			}
		}
	}
	return nil
}

// worstServed returns the interval not yet served with the largest
// weighted (bound on the) squared distance to its centre, or -1 when every
// interval sits on its centre.
func worstServed(ds *dataset, upper []float64, served []bool) int {
	far := -1
	for i, u := range upper {
		if served[i] || !(u > 0) {
			continue
		}
		if far < 0 || float64(ds.w[i]*u*u) > float64(ds.w[far]*upper[far]*upper[far]) {
			far = i
		}
	}
	return far
}

// nearestTwo returns the index of the centre nearest to x (the lowest on
// ties), the squared distance to it and the squared distance to the
// second nearest (+Inf when k = 1).
func nearestTwo(x, centres []float64, k int) (int, float64, float64) {
	d := len(x)
	best, d1, d2 := 0, math.Inf(1), math.Inf(1)
	for c := 0; c < k; c++ {
		s := sqDistBelow(x, centres[c*d:(c+1)*d], d2)
		if s < d1 {
			best, d1, d2 = c, s, d1
		} else if s < d2 {
			d2 = s
		}
	}
	return best, d1, d2
}

// seedPlusPlus picks k initial centres by weighted k-means++: the first
// with probability proportional to the interval weights, each next one
// proportional to weight × squared distance to the nearest centre so far.
func seedPlusPlus(ds *dataset, k int, rng *rand.Rand) []float64 {
	n, d := ds.n, ds.d
	centres := make([]float64, k*d)
	pick := func(score func(i int) float64, total float64) int {
		if !(total > 0) {
			return rng.IntN(n)
		}
		u := rng.Float64() * total
		acc := 0.0
		for i := 0; i < n; i++ {
			acc += score(i)
			if u < acc {
				return i
			}
		}
		// Rounding: fall back on the last interval with a positive score.
		for i := n - 1; i > 0; i-- {
			if score(i) > 0 {
				return i
			}
		}
		return 0
	}
	totalW := 0.0
	for _, w := range ds.w {
		totalW += w
	}
	first := pick(func(i int) float64 { return ds.w[i] }, totalW)
	copy(centres[:d], ds.row(first))
	minD := make([]float64, n)
	for i := range minD {
		minD[i] = sqDist(ds.row(i), centres[:d])
	}
	for c := 1; c < k; c++ {
		total := 0.0
		for i, m := range minD {
			total += float64(ds.w[i] * m)
		}
		next := pick(func(i int) float64 { return float64(ds.w[i] * minD[i]) }, total)
		ctr := centres[c*d : (c+1)*d]
		copy(ctr, ds.row(next))
		for i := range minD {
			if dd := sqDistBelow(ds.row(i), ctr, minD[i]); dd < minD[i] {
				minD[i] = dd
			}
		}
	}
	return centres
}

// sqDistBelow is sqDist, except that it may stop summing, and return a
// partial sum ≥ bound, once the sum reaches bound.
func sqDistBelow(a, b []float64, bound float64) float64 {
	b = b[:len(a)]
	s := 0.0
	i := 0
	for ; i+4 <= len(a); i += 4 {
		t0, t1, t2, t3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s += float64(t0 * t0)
		s += float64(t1 * t1)
		s += float64(t2 * t2)
		s += float64(t3 * t3)
		if s >= bound {
			return s
		}
	}
	for ; i < len(a); i++ {
		t := a[i] - b[i]
		s += float64(t * t)
	}
	return s
}
