package phase

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
)

// modernKMeans is Default mode's k-means, run for every restart:
//
//  1. weighted k-means++ seeding from a PCG stream keyed by (seed, k),
//     which also yields every interval's nearest initial centre;
//  2. Lloyd iterations accelerated with Hamerly's bounds (each interval
//     keeps an upper bound on the distance to its centre and a lower
//     bound on the distance to any other, so most intervals skip the
//     search once the centres settle, and a search measures only the
//     centres within twice its distance from its own, nearest first),
//     with cluster sums updated only for the intervals that change
//     cluster. An empty cluster is re-seeded
//     with one half of the cluster of largest distortion (see split).
//     Lloyd stops when no label changes, or when an update lowers the
//     distortion by no more than tol times (an upper bound on) its value.
//
// A cluster that ends empty gets weight 0 and a centre at +Inf, so that
// no interval is ever nearest to it. The clustering keeps the k-means
// state for refine, which Run applies to the chosen clustering. The
// result depends only on the arguments.
func modernKMeans(ctx context.Context, ds *dataset, k int, seed int64, limit int, tol float64) (*clustering, error) {
	m := newKMeans(ds, k)
	m.seedPlusPlus(rand.New(rand.NewPCG(uint64(seed), uint64(k))))
	m.recount()
	iters, converged, err := m.lloyd(ctx, limit, tol)
	if err != nil {
		return nil, err
	}
	return m.clustering(iters, converged), nil
}

// refine improves a converged clustering from modernKMeans with
// Hartigan's single-interval moves (see hartigan), which reach partitions
// Lloyd's fixed points miss. It returns cl itself when there is nothing
// to do.
func refine(ctx context.Context, cl *clustering) (*clustering, error) {
	m := cl.state
	if m == nil || !cl.converged {
		return cl, nil
	}
	m.exactMeans(true) // Hartigan's gains assume exact means
	if err := m.hartigan(ctx); err != nil {
		return nil, err
	}
	m.exactMeans(true)
	return m.clustering(cl.iterations, cl.converged), nil
}

// guardedScore returns the BIC and distortion of cl with its small
// phases dissolved, the phase-size guard's view of it (see
// Options.MinPhaseSize): the intervals of every cluster of fewer than
// minSize intervals (labelled by nearest centre) join the nearest cluster
// of at least minSize, the centres become the means of the new clusters,
// and the dissolved clusters are empty. Without a small cluster, or
// without a large one, it returns cl's own scores.
func guardedScore(ds *dataset, cl *clustering, minSize int) (bic, distortion float64) {
	k, d := cl.k, ds.d
	labels := make([]int, ds.n)
	size := make([]int, k)
	scratch := make([]float64, k)
	for i := range labels {
		hint := -1
		if cl.state != nil {
			hint = cl.state.labels[i]
		} else if cl.hint != nil {
			hint = int(cl.hint[i])
		}
		labels[i], _ = nearestScratch(ds.row(i), cl.centres, k, hint, scratch)
		size[labels[i]]++
	}
	small, big := false, false
	for _, s := range size {
		small = small || (s > 0 && s < minSize)
		big = big || s >= minSize
	}
	if !small || !big {
		return cl.bic, cl.distortion
	}
	sums := make([]float64, k*d)
	weights := make([]float64, k)
	for i, c := range labels {
		x := ds.row(i)
		if size[c] < minSize {
			to, best := -1, math.Inf(1)
			for b := 0; b < k; b++ {
				if size[b] >= minSize {
					if dd := sqDistBelow(x, cl.centres[b*d:(b+1)*d], best); dd < best {
						to, best = b, dd
					}
				}
			}
			c = to
		}
		acc := sums[c*d : (c+1)*d]
		for j, v := range x {
			acc[j] += float64(v * ds.w[i])
		}
		weights[c] += ds.w[i]
	}
	centres := make([]float64, k*d)
	for c := 0; c < k; c++ {
		ctr := centres[c*d : (c+1)*d]
		if size[c] < minSize {
			fillInf(ctr)
			continue
		}
		for j := range ctr {
			ctr[j] = sums[c*d+j] / weights[c]
		}
	}
	return score(ds, &clustering{k: k, centres: centres, weights: weights})
}

// clustering returns the clustering of the current state: copies of the
// centres (+Inf for an empty cluster) and of the cluster weights, and the
// state itself for refine and as score's hint.
func (m *kmeans) clustering(iters int, converged bool) *clustering {
	centres := slices.Clone(m.centres)
	weights := slices.Clone(m.wsum)
	for c := 0; c < m.k; c++ {
		if m.size[c] == 0 {
			weights[c] = 0
			fillInf(centres[c*m.d : (c+1)*m.d])
		}
	}
	return &clustering{k: m.k, centres: centres, weights: weights, iterations: iters, converged: converged, state: m}
}

// kmeans is the state of one Default-mode k-means run.
type kmeans struct {
	ds      *dataset
	n, d, k int
	centres []float64 // k*d
	sums    []float64 // k*d: Σ w·x over each cluster's members
	wsum    []float64 // k: Σ w over each cluster's members
	size    []int     // k: members of each cluster
	labels  []int     // n
	upper   []float64 // n: ≥ distance to the own centre
	lower   []float64 // n: ≤ distance to any other centre
	lb      []float32 // n*k, Hartigan: per-centre lower bounds, rounded down (see hartigan)
	reseed  bool      // whether Lloyd re-seeds empty clusters
	refills int       // how many times it did
	// tiny is the smallest decrease of the distortion (per unit of
	// weight) that counts as one for Hartigan's moves: 1e-12 times the
	// data's spread. Without it, intervals with (nearly) equal vectors
	// could trade places forever on rounding noise.
	tiny float64
}

func newKMeans(ds *dataset, k int) *kmeans {
	n, d := ds.n, ds.d
	return &kmeans{ds: ds, n: n, d: d, k: k, tiny: 1e-12 * ds.spread(), reseed: true,
		centres: make([]float64, k*d), sums: make([]float64, k*d), wsum: make([]float64, k), size: make([]int, k),
		labels: make([]int, n), upper: make([]float64, n), lower: make([]float64, n)}
}

func (m *kmeans) centre(c int) []float64 { return m.centres[c*m.d : (c+1)*m.d] }

// seedPlusPlus picks the k initial centres by weighted k-means++: the
// first with probability proportional to the interval weights, each next
// one proportional to weight × squared distance to the nearest centre so
// far. It leaves every interval labelled with its nearest centre (the
// first on ties), the upper bound exact and the lower bound valid. A new
// centre at least twice an interval's distance away from the interval's
// centre cannot be nearer (triangle inequality), so most intervals skip
// the measurement.
func (m *kmeans) seedPlusPlus(rng *rand.Rand) {
	ds, n, k := m.ds, m.n, m.k
	u, l := m.upper, m.lower
	sq := make([]float64, n) // squared distance to the nearest centre
	// pick draws an interval with probability proportional to its
	// score, w·sq (w alone when sq is nil); total is the scores' sum.
	// The scores are computed as they are summed, not stored.
	pick := func(sq []float64, total float64) int {
		if !(total > 0) {
			return rng.IntN(n)
		}
		x := rng.Float64() * total
		acc := 0.0
		last := 0
		for i, w := range ds.w {
			s := w
			if sq != nil {
				s = float64(w * sq[i])
			}
			if s > 0 {
				last = i
			}
			acc += s
			if x < acc {
				return i
			}
		}
		return last // rounding: the last interval with a positive score
	}
	totalW := 0.0
	for _, w := range ds.w {
		totalW += w
	}
	copy(m.centre(0), ds.row(pick(nil, totalW)))
	total := 0.0
	for i := range sq {
		sq[i] = sqDist(ds.row(i), m.centre(0))
		u[i], l[i] = math.Sqrt(sq[i]), math.Inf(1)
		total += float64(ds.w[i] * sq[i])
	}
	cc := make([]float64, k) // distances from the new centre to the others
	for c := 1; c < k; c++ {
		ctr := m.centre(c)
		copy(ctr, ds.row(pick(sq, total)))
		for o := 0; o < c; o++ {
			cc[o] = math.Sqrt(sqDist(ctr, m.centre(o)))
		}
		total = 0
		for i := range sq {
			if sep := cc[m.labels[i]]; sep >= 2*u[i] {
				// |x−c| ≥ sep − u ≥ u: not nearer.
				l[i] = min(l[i], sep-u[i])
			} else if dd := sqDist(ds.row(i), ctr); dd < sq[i] {
				m.labels[i], l[i] = c, u[i]
				sq[i], u[i] = dd, math.Sqrt(dd)
			} else {
				l[i] = min(l[i], math.Sqrt(dd))
			}
			total += float64(ds.w[i] * sq[i])
		}
	}
}

// addTo moves interval i's weight and coordinates into cluster c's sums
// (sign +1) or out of them (sign -1).
func (m *kmeans) addTo(c, i int, sign float64) {
	w := m.ds.w[i]
	acc := m.sums[c*m.d : (c+1)*m.d]
	for j, v := range m.ds.row(i) {
		acc[j] += sign * float64(v*w)
	}
	if sign > 0 {
		m.wsum[c] += w
		m.size[c]++
	} else {
		m.wsum[c] -= w
		if m.size[c]--; m.size[c] == 0 {
			clear(acc) // no rounding residue in an empty cluster
			m.wsum[c] = 0
		}
	}
}

// fillInf sets every coordinate of an empty cluster's centre to +Inf.
func fillInf(ctr []float64) {
	for j := range ctr {
		ctr[j] = math.Inf(1)
	}
}

// recount recomputes the cluster sums, weights and sizes from the
// labels, in row order.
func (m *kmeans) recount() {
	ds, d := m.ds, m.d
	clear(m.sums)
	clear(m.wsum)
	clear(m.size)
	for i, c := range m.labels {
		acc := m.sums[c*d : (c+1)*d]
		w := ds.w[i]
		for j, v := range ds.row(i) {
			acc[j] += float64(v * w)
		}
		m.wsum[c] += w
		m.size[c]++
	}
}

// exactMeans recounts the clusters and sets each non-empty cluster's
// centre to the mean of its members. With bounds, it widens the Hamerly
// bounds by how far the centres moved.
func (m *kmeans) exactMeans(bounds bool) {
	d := m.d
	m.recount()
	maxMove := 0.0
	move := make([]float64, m.k)
	for c := 0; c < m.k; c++ {
		ctr := m.centre(c)
		if m.size[c] == 0 {
			fillInf(ctr) // an empty cluster attracts no interval
			continue
		}
		dd := 0.0
		for j := range ctr {
			v := m.sums[c*d+j] / m.wsum[c]
			t := v - ctr[j]
			dd += float64(t * t)
			ctr[j] = v
		}
		move[c] = math.Sqrt(dd)
		maxMove = max(maxMove, move[c])
	}
	if bounds {
		for i, c := range m.labels {
			m.upper[i] += move[c]
			m.lower[i] -= maxMove
		}
	}
}

// lloyd runs Lloyd iterations with Hamerly's bounds from the seeded
// state, and returns the number of updates and whether it converged.
func (m *kmeans) lloyd(ctx context.Context, limit int, tol float64) (int, bool, error) {
	ds, n, d, k := m.ds, m.n, m.d, m.k
	old := make([]float64, k*d)
	move := make([]float64, k)
	half := make([]float64, k)
	cc := make([]float64, k*k)
	byCC := make([]int32, k*k) // each row of cc as centres by distance
	var fresh []int
	var ccFresh []float64
	iters := 0
	for limit == NoIterationLimit || iters < limit {
		if err := ctx.Err(); err != nil {
			return 0, false, err
		}
		copy(old, m.centres)
		fresh = fresh[:0]
		for c := 0; c < k && m.reseed; c++ {
			if m.size[c] == 0 && m.refill(c) {
				fresh = append(fresh, c)
				if m.refills++; m.refills >= 4*k {
					m.reseed = false // no endless splitting
				}
			}
		}
		decrease := 0.0
		for c := 0; c < k; c++ {
			ctr := m.centre(c)
			move[c] = 0
			if m.size[c] == 0 {
				// Gone: no interval is nearer to it, so no bound breaks.
				fillInf(ctr)
				continue
			}
			for j := range ctr {
				ctr[j] = m.sums[c*d+j] / m.wsum[c]
			}
			if math.IsInf(old[c*d], 1) {
				continue // re-seeded: see fresh below
			}
			dd := sqDist(old[c*d:(c+1)*d], ctr)
			move[c] = math.Sqrt(dd)
			decrease += float64(m.wsum[c] * dd)
		}
		// A re-seeded centre f is at least |c_a − c_f| − upper from an
		// interval of cluster a: that keeps the lower bounds valid.
		ccFresh = ccFresh[:0]
		for _, f := range fresh {
			for a := 0; a < k; a++ {
				ccFresh = append(ccFresh, math.Sqrt(sqDist(m.centre(a), m.centre(f))))
			}
		}
		iters++
		// Bounds: a centre that moved by δ changes distances by at most δ.
		max1, max2, arg := 0.0, 0.0, -1
		for c, mv := range move {
			if mv > max1 {
				max1, max2, arg = mv, max1, c
			} else if mv > max2 {
				max2 = mv
			}
		}
		// cc: the distances between the centres (+Inf to an empty
		// cluster's); half[c]: half the distance from centre c to the
		// nearest other.
		for c := range half {
			half[c] = math.Inf(1)
		}
		for c := 0; c < k; c++ {
			cc[c*k+c] = 0
			for o := c + 1; o < k; o++ {
				dd := math.Inf(1)
				if m.size[c] > 0 && m.size[o] > 0 {
					dd = math.Sqrt(sqDist(m.centre(c), m.centre(o)))
				}
				cc[c*k+o], cc[o*k+c] = dd, dd
				half[c], half[o] = min(half[c], dd), min(half[o], dd)
			}
		}
		for c := range half {
			half[c] *= 0.5
		}
		sortByDistance(byCC, cc, k)
		changed := 0
		sseBound := 0.0
		for i := 0; i < n; i++ {
			a := m.labels[i]
			m.upper[i] += move[a]
			if a == arg {
				m.lower[i] -= max2
			} else {
				m.lower[i] -= max1
			}
			for j, f := range fresh {
				if f != a {
					m.lower[i] = min(m.lower[i], ccFresh[j*k+a]-m.upper[i])
				}
			}
			if z := max(half[a], m.lower[i]); m.upper[i] > z {
				x := ds.row(i)
				da := sqDist(x, m.centre(a))
				m.upper[i] = math.Sqrt(da)
				if m.upper[i] > z {
					c, d1, d2 := nearestTwoFrom(x, m.centres, a, da, cc[a*k:(a+1)*k], byCC[a*k:(a+1)*k])
					if c != a {
						m.labels[i] = c
						m.addTo(a, i, -1)
						m.addTo(c, i, 1)
						changed++
					}
					m.upper[i], m.lower[i] = math.Sqrt(d1), math.Sqrt(d2)
				}
			}
			sseBound += float64(ds.w[i] * m.upper[i] * m.upper[i])
		}
		if len(fresh) == 0 && (changed == 0 || decrease < tol*sseBound) {
			return iters, true, nil
		}
	}
	return iters, false, nil
}

// hartiganPasses bounds the work of hartigan, in passes over the data.
const hartiganPasses = 50

// hartigan refines a converged Lloyd clustering (centres the exact means
// of their members, Hamerly bounds valid) with Hartigan's single moves: an
// interval moves to another cluster when that lowers the weighted
// distortion once both means are updated, which Lloyd's fixed points do
// not check (moving x of weight w from a to b changes the distortion by
// W_b/(W_b+w)·|x−c_b|² − W_a/(W_a−w)·|x−c_a|²). It visits the intervals
// in turn until every one has been visited with no move since (or for
// hartiganPasses passes). A cluster is never emptied.
//
// Bounds make most visits cheap, as Elkan's do for Lloyd: each interval
// keeps an upper bound on its distance to its own centre and a lower
// bound on its distance to every other centre, so only the clusters that
// could pay are measured. A move shifts the two centres by known amounts;
// the bounds are stored relative to each centre's total shift (drift),
// which keeps them valid at no cost. The per-centre bounds, k values per
// interval and the refinement's largest array, are kept as float32
// rounded down (below32): looser by at most one float32 step, so they
// prune a little less, but every decision is the same. A first test with the smallest of
// the lower bounds, widened by the sum over the moves of the larger shift,
// usually settles a visit in O(1).
func (m *kmeans) hartigan(ctx context.Context) error {
	ds, n, k := m.ds, m.n, m.k
	if len(m.lb) != n*k {
		m.lb = make([]float32, n*k)
	}
	// Initial bounds: the Hamerly lower bound, or the triangle inequality
	// |x−c_b| ≥ |c_a−c_b| − |x−c_a|, whichever is larger.
	cc := make([]float64, k*k)
	minW := math.Inf(1)
	for c := 0; c < k; c++ {
		if m.size[c] == 0 {
			continue // an empty cluster's centre is +Inf: no bound needed
		}
		minW = min(minW, m.wsum[c])
		for o := c + 1; o < k; o++ {
			if m.size[o] > 0 {
				cc[c*k+o] = math.Sqrt(sqDist(m.centre(c), m.centre(o)))
				cc[o*k+c] = cc[c*k+o]
			}
		}
	}
	lmin := m.lower // the smallest lower bound, valid at total = totalAt
	for i, a := range m.labels {
		lb := m.lb[i*k : (i+1)*k]
		lo := math.Inf(1)
		for b := range lb {
			v := max(m.lower[i], cc[a*k+b]-m.upper[i])
			lb[b] = below32(v)
			if b != a && m.size[b] > 0 {
				lo = min(lo, v)
			}
		}
		lmin[i] = lo
	}
	drift := make([]float64, k) // how far each centre moved, summed
	total, totalAt := 0.0, make([]float64, n)
	quiet := 0
	for step := 0; quiet < n && step < hartiganPasses*n; step++ {
		i := step % n
		if i == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		quiet++
		a, w := m.labels[i], ds.w[i]
		if m.size[a] <= 1 {
			continue // the only member: moving it would empty a cluster
		}
		stayF := m.wsum[a] / (m.wsum[a] - w)
		u := m.upper[i] + drift[a]
		stay := stayF * u * u
		if stay <= m.tiny {
			continue // on its centre: no move can pay
		}
		// Moving to b costs W_b/(W_b+w)·|x−c_b|² ≥ minW/(minW+w)·lmin².
		if l := lmin[i] - (total - totalAt[i]); l > 0 && minW/(minW+w)*l*l > stay {
			continue
		}
		x := ds.row(i)
		lb := m.lb[i*k : (i+1)*k]
		exact := false
		best, bestCost, bestD := -1, 0.0, 0.0
		lo := math.Inf(1)
		for b := 0; b < k; b++ {
			if b == a || m.size[b] == 0 {
				continue
			}
			wb := m.wsum[b]
			fb := wb / (wb + w)
			l := float64(lb[b]) - drift[b]
			if l > 0 && fb*l*l > stay {
				lo = min(lo, l)
				continue
			}
			if !exact {
				da := sqDist(x, m.centre(a))
				u = math.Sqrt(da)
				m.upper[i] = u - drift[a]
				stay, bestCost, exact = stayF*da, stayF*da, true
				if stay <= m.tiny {
					lo = 0 // the other bounds were not all seen
					break
				}
				if l > 0 && fb*l*l > stay {
					lo = min(lo, l)
					continue
				}
			}
			// Summed only until past twice what the bound test needs:
			// enough to rule b out, now and for a while.
			db := sqDistBelow(x, m.centre(b), 2*stay/fb)
			l = math.Sqrt(db)
			lb[b] = below32(l + drift[b])
			lo = min(lo, l)
			if c := fb * db; c < bestCost-(1e-12*bestCost+m.tiny) {
				best, bestCost, bestD = b, c, db
			}
		}
		lmin[i], totalAt[i] = lo, total
		if best < 0 {
			continue
		}
		ca, cb := m.centre(a), m.centre(best)
		wa, wb := m.wsum[a], m.wsum[best]
		for j, v := range x {
			ca[j] = (wa*ca[j] - w*v) / (wa - w)
			cb[j] = (wb*cb[j] + w*v) / (wb + w)
		}
		m.labels[i] = best
		m.addTo(a, i, -1)
		m.addTo(best, i, 1)
		minW = min(minW, m.wsum[a])
		// c_a moves away from x by w·|x−c_a|/(W_a−w), c_b towards it by
		// w·|x−c_b|/(W_b+w); x's distances scale by W_a/(W_a−w) and
		// W_b/(W_b+w).
		db := math.Sqrt(bestD)
		sa, sb := w*u/(wa-w), w*db/(wb+w)
		drift[a] += sa
		drift[best] += sb
		total += max(sa, sb)
		m.upper[i] = db*wb/(wb+w) - drift[best]
		lb[a] = below32(u*wa/(wa-w) + drift[a])
		lmin[i] = 0
		quiet = 0
	}
	// Leave the Hamerly bounds valid for the centres as they are.
	for i, a := range m.labels {
		m.upper[i] += drift[a]
		lo := math.Inf(1)
		for b := 0; b < k; b++ {
			if b != a && m.size[b] > 0 {
				lo = min(lo, float64(m.lb[i*k+b])-drift[b])
			}
		}
		m.lower[i] = lo
	}
	return nil
}

// refill re-seeds the empty cluster e with one half of the cluster of
// largest distortion (bounded by the upper bounds) that split can divide,
// and reports whether it did.
func (m *kmeans) refill(e int) bool {
	ds := m.ds
	sse := make([]float64, m.k)
	for i, c := range m.labels {
		sse[c] += float64(ds.w[i] * m.upper[i] * m.upper[i])
	}
	for {
		p := -1
		for c := 0; c < m.k; c++ {
			if m.size[c] >= 2 && sse[c] > 0 && (p < 0 || sse[c] > sse[p]) {
				p = c
			}
		}
		if p < 0 {
			return false
		}
		var members []int
		for i, c := range m.labels {
			if c == p {
				members = append(members, i)
			}
		}
		side := m.split(members)
		if side == nil {
			sse[p] = 0 // cannot be split: try the next
			continue
		}
		for j, i := range members {
			if side[j] {
				m.labels[i] = e
				m.addTo(p, i, -1)
				m.addTo(e, i, 1)
			}
			m.upper[i], m.lower[i] = math.Inf(1), 0
		}
		return true
	}
}

// split finds how to bisect a cluster (its members in row order, at
// least two) into two non-empty parts, and returns the part of each
// member, or nil when all the members are equal.
// The members are sorted by their projection on the cluster's principal
// axis (power iteration on the weighted scatter matrix), cut where the
// two parts' distortion along the axis is smallest, and the parts
// refined by 2-means as long as neither empties.
func (m *kmeans) split(members []int) []bool {
	ds, d := m.ds, m.d
	cp := m.centre(m.labels[members[0]])
	scatter := make([]float64, d*d)
	diff := make([]float64, d)
	far, farD := -1, -1.0
	for _, i := range members {
		x, w := ds.row(i), ds.w[i]
		for a := range diff {
			diff[a] = x[a] - cp[a]
		}
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				scatter[a*d+b] += float64(w * diff[a] * diff[b])
			}
		}
		if dd := sqDist(x, cp); dd > farD {
			far, farD = i, dd
		}
	}
	if !(farD > 0) {
		return nil
	}
	// The principal axis, from the direction of the furthest member.
	v, next := make([]float64, d), make([]float64, d)
	for a := range v {
		v[a] = ds.row(far)[a] - cp[a]
	}
	for it := 0; it < 30; it++ {
		norm := 0.0
		for a := 0; a < d; a++ {
			s := 0.0
			for b := 0; b < d; b++ {
				s += float64(scatter[a*d+b] * v[b])
			}
			next[a] = s
			norm += float64(s * s)
		}
		if !(norm > 0) {
			break
		}
		norm = math.Sqrt(norm)
		for a := range next {
			next[a] /= norm
		}
		v, next = next, v
	}
	// The best cut of the sorted projections (weighted 1-D 2-means).
	type proj struct {
		t, w float64
		j    int
	}
	ps := make([]proj, len(members))
	for j, i := range members {
		x, t := ds.row(i), 0.0
		for a := range v {
			t += float64((x[a] - cp[a]) * v[a])
		}
		ps[j] = proj{t, ds.w[i], j}
	}
	slices.SortStableFunc(ps, func(a, b proj) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	var tw, tt, ttt float64
	for _, p := range ps {
		tw += p.w
		tt += p.w * p.t
		ttt += p.w * p.t * p.t
	}
	bestCut, bestCost := -1, math.Inf(1)
	var lw, lt, ltt float64
	for j := 0; j+1 < len(ps); j++ {
		lw += ps[j].w
		lt += ps[j].w * ps[j].t
		ltt += ps[j].w * ps[j].t * ps[j].t
		rw, rt, rtt := tw-lw, tt-lt, ttt-ltt
		if cost := (ltt - lt*lt/lw) + (rtt - rt*rt/rw); cost < bestCost {
			bestCut, bestCost = j, cost
		}
	}
	if bestCut < 0 {
		return nil
	}
	side := make([]bool, len(members))
	for _, p := range ps[bestCut+1:] {
		side[p.j] = true
	}
	// 2-means on the members, from the two parts.
	c0, c1 := make([]float64, d), make([]float64, d)
	means := func() {
		clear(c0)
		clear(c1)
		w0, w1 := 0.0, 0.0
		for j, i := range members {
			x, w := ds.row(i), ds.w[i]
			acc := c0
			if side[j] {
				acc, w1 = c1, w1+w
			} else {
				w0 += w
			}
			for a, xv := range x {
				acc[a] += float64(xv * w)
			}
		}
		for a := range c0 {
			c0[a] /= w0
			c1[a] /= w1
		}
	}
	trial := make([]bool, len(members))
	for it := 0; it < 20; it++ {
		means()
		n1 := 0
		for j, i := range members {
			x := ds.row(i)
			trial[j] = sqDist(x, c1) < sqDist(x, c0)
			if trial[j] {
				n1++
			}
		}
		if slices.Equal(trial, side) || n1 == 0 || n1 == len(members) {
			break
		}
		copy(side, trial)
	}
	return side
}

// below32 returns the largest float32 not above x: a lower bound kept in
// half the memory stays a lower bound.
func below32(x float64) float32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

// nearestTwoFrom returns the index of the centre nearest to x (the lowest
// on ties), its squared distance, and a lower bound on the squared
// distance to every other centre, given da, x's squared distance to
// centre a, cca, the distances from centre a to every centre, and byCC,
// the centres in increasing order of cca. A centre c with cca[c] > 2·√da
// is farther from x than a is (|x−c| ≥ cca[c] − √da > √da), so the search
// stops at the first such centre, and cca[c] − √da bounds the distance of
// it and of every later one from below; the centres before it are
// measured as far as they can matter (sqDistBelow). The bound is the
// smaller of that and the second smallest squared distance measured,
// whatever the order of the centres: a sum cut short is at least the
// second smallest so far, which only falls.
func nearestTwoFrom(x, centres []float64, a int, da float64, cca []float64, byCC []int32) (int, float64, float64) {
	d := len(x)
	u := math.Sqrt(da)
	far := 2 * u * (1 + 1e-9) // the margin covers the roundings of cca and u
	best, d1, d2 := a, da, math.Inf(1)
	// Sums are cut short only above d2 (at cut, the next float), so
	// that a sum equal to d1 is exact.
	cut := d2
	skipped := math.Inf(1) // a lower bound on the distance to the others
	for _, c32 := range byCC {
		c := int(c32)
		if c == a {
			continue
		}
		if cca[c] > far {
			skipped = (cca[c] - u) * (1 - 1e-9)
			break
		}
		s := sqDistBelow(x, centres[c*d:(c+1)*d], cut)
		if s < d1 || (s == d1 && c < best) {
			best, d1, d2 = c, s, d1
		} else if s < d2 {
			d2 = s
		} else {
			continue
		}
		cut = math.Nextafter(d2, math.Inf(1))
	}
	return best, d1, min(d2, skipped*skipped)
}

// sortByDistance fills byCC, k×k, with each centre's row of cc (the
// distances between the centres, k×k) as centre indices in increasing
// order of distance, the lower index first on ties.
func sortByDistance(byCC []int32, cc []float64, k int) {
	for a := 0; a < k; a++ {
		row, dist := byCC[a*k:(a+1)*k], cc[a*k:(a+1)*k]
		for c := range row {
			row[c] = int32(c)
		}
		slices.SortFunc(row, func(p, q int32) int {
			if c := cmp.Compare(dist[p], dist[q]); c != 0 {
				return c
			}
			return cmp.Compare(p, q)
		})
	}
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
