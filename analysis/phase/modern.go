package phase

import (
	"context"
	"math"
	"math/rand/v2"
)

// modernKMeans is Default mode's k-means: weighted k-means++ seeding from
// a PCG stream keyed by (seed, k), Lloyd iterations with empty clusters
// re-seeded at the interval worst served by its centre, and convergence
// when no label changes or the distortion falls by no more than tol times
// its value. The result depends only on its arguments.
func modernKMeans(ctx context.Context, ds *dataset, k int, seed int64, limit int, tol float64) (*clustering, error) {
	n, d := ds.n, ds.d
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(k)))
	centres := seedPlusPlus(ds, k, rng)

	labels := make([]int, n)
	dist := make([]float64, n)
	for i := range labels {
		labels[i] = -1
	}
	scratch := make([]float64, k)
	weights := make([]float64, k)
	sums := make([]float64, k*d)
	assign := func() (changed int, sse float64) {
		clear(weights)
		for i := 0; i < n; i++ {
			c, dd := nearestScratch(ds.row(i), centres, k, labels[i], scratch)
			if c != labels[i] {
				changed++
				labels[i] = c
			}
			dist[i] = dd
			weights[c] += ds.w[i]
			sse += float64(ds.w[i] * dd)
		}
		return changed, sse
	}

	prev := math.Inf(1)
	iters := 0
	converged := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		changed, sse := assign()
		if iters > 0 && (changed == 0 || prev-sse <= tol*sse) {
			converged = true
			break
		}
		if limit != NoIterationLimit && iters >= limit {
			break
		}
		prev = sse
		iters++
		// Update: weighted means of the members, in row order.
		clear(sums)
		for i := 0; i < n; i++ {
			acc := sums[labels[i]*d : (labels[i]+1)*d]
			for j, v := range ds.row(i) {
				acc[j] += float64(v * ds.w[i])
			}
		}
		reseeded := false
		for c := 0; c < k; c++ {
			ctr := centres[c*d : (c+1)*d]
			if weights[c] > 0 {
				for j := range ctr {
					ctr[j] = sums[c*d+j] / weights[c]
				}
				continue
			}
			// An empty cluster takes over the interval that is furthest
			// from its centre; that interval then counts as served.
			far := -1
			for i := 0; i < n; i++ {
				if dist[i] > 0 && (far < 0 || float64(ds.w[i]*dist[i]) > float64(ds.w[far]*dist[far])) {
					far = i
				}
			}
			if far < 0 {
				continue // every interval sits on a centre: nothing to split
			}
			copy(ctr, ds.row(far))
			dist[far] = 0
			reseeded = true
		}
		if reseeded {
			prev = math.Inf(1) // a re-seed restarts the descent
		}
	}
	return &clustering{k: k, centres: centres, weights: weights, iterations: iters, converged: converged}, nil
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
			if dd := sqDist(ds.row(i), ctr); dd < minD[i] {
				minD[i] = dd
			}
		}
	}
	return centres
}
