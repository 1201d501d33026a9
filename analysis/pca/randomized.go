package pca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/internal/human"
)

// Memory bounds. The exact method holds a few P×P matrices (the lazy cross
// sums, the covariance, its eigenvectors); above ExactMaxProcs processes,
// or when that needs more than MaxExactBytes, the randomized method is
// used, which holds a few P×(k+Oversample) matrices instead.
const (
	// ExactMaxProcs is the largest number of processes PCA handles with the
	// exact P×P covariance; Method picks the randomized method above it.
	ExactMaxProcs = 4096
	// MaxExactBytes bounds the memory of the exact method.
	MaxExactBytes = 1 << 30
	// MaxRandomizedBytes bounds the memory of the randomized method.
	MaxRandomizedBytes = 8 << 30
	// Oversample is how many directions beyond the k requested the
	// randomized method carries (Halko, Martinsson & Tropp 2011 suggest 5
	// to 10).
	Oversample = 10
	// PowerIterations is how many passes of subspace iteration the
	// randomized method makes before its final Rayleigh–Ritz pass.
	PowerIterations = 4
)

// ExactBytes returns the memory (in bytes) the exact method needs for p
// processes: the P×P cross sums, covariance and eigenvectors, and the
// eigensolver's P×P workspace.
func ExactBytes(p int) float64 { return 4 * 8 * float64(p) * float64(p) }

// RandomizedBytes returns the memory (in bytes) the randomized method needs
// for p processes and k components: three P×(k+Oversample) matrices and a
// few vectors of P.
func RandomizedBytes(p, k int) float64 {
	l := float64(min(k+Oversample, p))
	return 8 * float64(p) * (3*l + 4)
}

// Exact reports whether PCA of p processes uses the exact method (true) or
// the randomized one.
func Exact(p int) bool { return p <= ExactMaxProcs && ExactBytes(p) <= MaxExactBytes }

// checkExact returns an error naming the need when the exact method of p
// processes is out of bounds.
func checkExact(p int) error {
	if p < 0 {
		return fmt.Errorf("pca: %d processes", p)
	}
	if ExactBytes(p) > MaxExactBytes {
		return fmt.Errorf("pca: the exact PCA of %d processes needs a %s covariance matrix and workspace (at most %s); use the randomized method (pca.Randomized)",
			p, humanBytes(ExactBytes(p)), humanBytes(MaxExactBytes))
	}
	return nil
}

// humanBytes formats a memory estimate in bytes (a float, so that it
// cannot overflow) as human.Bytes does; beyond 4 EiB it says 4 EiB.
func humanBytes(b float64) string { return human.Bytes(int64(min(b, 1<<62))) }

// Pass streams the state rows of the whole input, in the same order every
// time it is called, to fn.
type Pass func(fn func(*state.Row) error) error

// Randomized computes the top k components of the state matrix of p
// processes without forming the P×P covariance: randomized subspace
// iteration (the randomized range finder with power iterations of Halko,
// Martinsson & Tropp 2011, followed by Rayleigh–Ritz). Every pass over the
// rows multiplies the covariance by a P×l block (l = k+Oversample) in
// O(l) per changed column, so the memory is O(P·l) and the time
// O((M + P)·l) per pass for M states; it makes PowerIterations+1 passes.
// The random start is seeded with seed: the same input and seed give the
// same result. Variances are the Ritz values (accurate for components
// whose eigenvalues stand apart from the (l+1)-th), TotalVariance is exact.
func Randomized(ctx context.Context, p, k int, timeWeighted bool, seed uint64, pass Pass) (*Result, error) {
	it, err := NewIteration(p, k, timeWeighted, seed)
	if err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("pca: %w", err)
		}
		if err := pass(it.Add); err != nil {
			return nil, err
		}
		res, err := it.EndPass()
		if err != nil || res != nil {
			return res, err
		}
	}
}

// Iteration is the randomized method (Randomized) driven pass by pass, the
// form a streaming accumulator needs: feed each pass's rows to Add, then
// call EndPass, until it returns the result (after PowerIterations+1
// passes).
type Iteration struct {
	p, k, l int
	v       []float64
	m       *blockMultiplier
	it      int
}

// NewIteration starts the randomized method for the top k components of
// states of p processes (every component when k ≤ 0 or k > p), seeded
// with seed. It refuses a p whose P×(k+Oversample) matrices would need
// more than MaxRandomizedBytes.
func NewIteration(p, k int, timeWeighted bool, seed uint64) (*Iteration, error) {
	if p <= 0 {
		return nil, fmt.Errorf("pca: %d processes", p)
	}
	if k <= 0 || k > p {
		k = p
	}
	if need := RandomizedBytes(p, k); need > MaxRandomizedBytes {
		return nil, fmt.Errorf("pca: the randomized PCA of %d processes needs %s (at most %s)", p, humanBytes(need), humanBytes(MaxRandomizedBytes))
	}
	l := min(k+Oversample, p)
	rng := rand.New(rand.NewPCG(seed, 0x9ca))
	v := make([]float64, p*l)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	if err := orthonormalize(v, p, l); err != nil {
		return nil, err
	}
	it := &Iteration{p: p, k: k, l: l, v: v, m: newBlockMultiplier(p, l, timeWeighted)}
	it.m.reset(v)
	return it, nil
}

// Add adds one row of the current pass.
func (it *Iteration) Add(r *state.Row) error { return it.m.add(r) }

// EndPass ends a pass: it returns the result after the last pass, and nil
// when another pass over the same rows is needed.
func (it *Iteration) EndPass() (*Result, error) {
	m := it.m
	if m.n == 0 || m.cumW == 0 {
		return nil, errors.New("pca: no states (or zero total weight)")
	}
	z := m.product() // C·V, P×l
	if it.it == PowerIterations {
		return m.ritz(it.v, z, it.k)
	}
	if err := orthonormalize(z, it.p, it.l); err != nil {
		return nil, err
	}
	it.v = z
	it.it++
	m.reset(it.v)
	return nil, nil
}

// blockMultiplier computes C·V for the weighted covariance C of a stream of
// rows and a P×l block V, lazily: s = xᵀV is kept up to date in O(l) per
// changed column, S = Σ w s is its running weighted sum, and row i of
// G = Σ w x xᵀV is settled (x_i times the growth of S since column i last
// changed) only when column i changes.
type blockMultiplier struct {
	p, l  int
	timeW bool
	v     []float64 // V, P×l row-major
	x     []float64 // current state
	s     []float64 // xᵀV
	sCum  []float64 // Σ w s over the rows so far
	sAt   []float64 // sCum when each column last changed, P×l
	g     []float64 // Σ w x xᵀV, settled, P×l
	last  []float64 // cumW when each column last changed
	sum   []float64 // Σ w x_i, settled
	sq    []float64 // Σ w x_i², settled
	cumW  float64
	n     int64
	seed  bool
}

func newBlockMultiplier(p, l int, timeW bool) *blockMultiplier {
	return &blockMultiplier{p: p, l: l, timeW: timeW, x: make([]float64, p), s: make([]float64, l), sCum: make([]float64, l),
		sAt: make([]float64, p*l), g: make([]float64, p*l), last: make([]float64, p), sum: make([]float64, p), sq: make([]float64, p)}
}

func (m *blockMultiplier) reset(v []float64) {
	m.v = v
	clear(m.x)
	clear(m.s)
	clear(m.sCum)
	clear(m.sAt)
	clear(m.g)
	clear(m.last)
	clear(m.sum)
	clear(m.sq)
	m.cumW, m.n, m.seed = 0, 0, false
}

// add takes one row.
func (m *blockMultiplier) add(r *state.Row) error {
	if len(r.X) != m.p {
		return fmt.Errorf("pca: a state of %d processes, want %d", len(r.X), m.p)
	}
	if !m.seed || r.Index == 0 || r.Tracker == nil {
		for j, v := range r.X {
			if f := float64(v); f != m.x[j] {
				m.change(j, f)
			}
		}
		m.seed = true
	} else {
		for _, j := range r.Changed {
			if f := float64(r.X[j]); f != m.x[j] {
				m.change(j, f)
			}
		}
	}
	w := 1.0
	if m.timeW {
		w = float64(r.Dur)
	}
	for c, sc := range m.s {
		m.sCum[c] += w * sc
	}
	m.cumW += w
	m.n++
	return nil
}

// change settles column j and sets it to f.
func (m *blockMultiplier) change(j int, f float64) {
	m.settle(j)
	d := f - m.x[j]
	vj := m.v[j*m.l : (j+1)*m.l]
	for c := range m.s {
		m.s[c] += d * vj[c]
	}
	m.x[j] = f
}

// settle brings column j's sums up to the rows added so far.
func (m *blockMultiplier) settle(j int) {
	xj := m.x[j]
	since := m.cumW - m.last[j]
	m.sum[j] += xj * since
	m.sq[j] += xj * xj * since
	g, at := m.g[j*m.l:(j+1)*m.l], m.sAt[j*m.l:(j+1)*m.l]
	for c := range g {
		g[c] += xj * (m.sCum[c] - at[c])
		at[c] = m.sCum[c]
	}
	m.last[j] = m.cumW
}

// product settles every column and returns C·V.
func (m *blockMultiplier) product() []float64 {
	for j := 0; j < m.p; j++ {
		m.settle(j)
	}
	// C·V = G/W − μ (μᵀV).
	mu := make([]float64, m.p)
	muV := make([]float64, m.l)
	for j := range mu {
		mu[j] = m.sum[j] / m.cumW
		vj := m.v[j*m.l : (j+1)*m.l]
		for c := range muV {
			muV[c] += mu[j] * vj[c]
		}
	}
	z := make([]float64, m.p*m.l)
	for j := 0; j < m.p; j++ {
		gj, zj := m.g[j*m.l:(j+1)*m.l], z[j*m.l:(j+1)*m.l]
		for c := range zj {
			zj[c] = gj[c]/m.cumW - mu[j]*muV[c]
		}
	}
	return z
}

// ritz finishes: with V orthonormal and Z = C·V, the eigenpairs of the
// l×l matrix Vᵀ C V give the components V·u and their variances.
func (m *blockMultiplier) ritz(v, z []float64, k int) (*Result, error) {
	p, l := m.p, m.l
	b := mat.NewSymDense(l, nil)
	for a := 0; a < l; a++ {
		for c := a; c < l; c++ {
			s := 0.0
			for j := 0; j < p; j++ {
				s += v[j*l+a]*z[j*l+c] + v[j*l+c]*z[j*l+a]
			}
			b.SetSym(a, c, s/2)
		}
	}
	vals, vecs, order, err := eigenDescending(b, "projected covariance")
	if err != nil {
		return nil, err
	}
	mean := make([]float64, p)
	total := 0.0
	for j := range mean {
		mean[j] = m.sum[j] / m.cumW
		total += max(m.sq[j]/m.cumW-mean[j]*mean[j], 0)
	}
	res := &Result{Procs: p, Rows: m.n, Weight: m.cumW, Mean: mean, TotalVariance: total}
	for _, c := range order[:k] {
		load := make([]float64, p)
		big := 0
		for j := 0; j < p; j++ {
			t := 0.0
			for a := 0; a < l; a++ {
				t += v[j*l+a] * vecs.At(a, c)
			}
			load[j] = t
			if math.Abs(t) > math.Abs(load[big]) {
				big = j
			}
		}
		if load[big] < 0 {
			for j := range load {
				load[j] = -load[j]
			}
		}
		val := max(vals[c], 0)
		exp := 0.0
		if total > 0 {
			exp = val / total
		}
		res.Components = append(res.Components, Component{Variance: val, Explained: exp, Loadings: load})
	}
	return res, nil
}

// orthonormalize makes the l columns of the P×l row-major block a
// orthonormal in place (classical Gram–Schmidt, applied twice for
// stability). A column that vanishes against the earlier ones (the data
// span fewer than l directions) is replaced by the first unit vector
// independent of them.
func orthonormalize(a []float64, p, l int) error {
	col := make([]float64, p)
	for c := 0; c < l; c++ {
		for j := 0; j < p; j++ {
			col[j] = a[j*l+c]
		}
		norm0 := norm(col)
		project(col, a, l, c)
		nrm := norm(col)
		for e := 0; nrm <= 1e-10*norm0 || nrm == 0; e++ {
			if e == p {
				return fmt.Errorf("pca: cannot complete an orthonormal basis of %d directions in %d dimensions", l, p)
			}
			clear(col)
			col[e] = 1
			project(col, a, l, c)
			if nrm = norm(col); nrm < 0.5 {
				nrm = 0
			}
			norm0 = 1
		}
		for j := 0; j < p; j++ {
			a[j*l+c] = col[j] / nrm
		}
	}
	return nil
}

// project removes from col its components along the first c columns of
// the P×l block a (which are orthonormal), twice.
func project(col, a []float64, l, c int) {
	for range 2 {
		for d := 0; d < c; d++ {
			dot := 0.0
			for j, x := range col {
				dot += x * a[j*l+d]
			}
			for j := range col {
				col[j] -= dot * a[j*l+d]
			}
		}
	}
}

func norm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// Compute returns the top k components of the state rows that pass
// streams, of p processes: in one pass with the exact method when Exact(p),
// otherwise with Randomized (seeded with seed). k ≤ 0 asks for every
// component, which only the exact method can give.
func Compute(ctx context.Context, p, k int, timeWeighted bool, seed uint64, pass Pass) (*Result, error) {
	if Exact(p) {
		acc, err := NewAccumulator(p, timeWeighted)
		if err != nil {
			return nil, err
		}
		if err := pass(acc.Add); err != nil {
			return nil, err
		}
		return acc.Result(k)
	}
	if k <= 0 {
		return nil, fmt.Errorf("pca: all %d components of %d processes would need %s; ask for the top few (the randomized method gives them for more than %d processes)",
			p, p, humanBytes(ExactBytes(p)), ExactMaxProcs)
	}
	return Randomized(ctx, p, k, timeWeighted, seed, pass)
}
