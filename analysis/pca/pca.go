// Package pca finds the principal components of the state matrix of a
// parallel execution (rows = states, columns = processes; Gomez, Cai & Schubert 2017,
// section 3.4): the first component shows the typical progress of the
// processes, the next ones how they differ at a moment.
//
// A process that does not exist at a state's time (state.Absent: before its
// first record, after a goroutine ended) has the value −1 in its column,
// one below every block id: a value of its own, so that the columns stay
// the processes of the run (docs/entropy.md, "Processes that come and go").
//
// The covariance is accumulated in one streaming pass without storing the
// matrix. Consecutive states differ in one column, so the weighted sums
// Σ w x_i x_j are kept lazily: a pair's product is constant until one of
// its two columns changes, and is added (times the weight elapsed since the
// later of the two columns last changed) only then. A state change costs
// O(P), the whole pass O(M·P) for M states; the P×P eigendecomposition
// (gonum's EigenSym) follows. Scores are computed in a second pass, again
// incrementally: O(k) per change for k components.
package pca

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/parscope/parscope/analysis/state"
)

// Accumulator collects the weighted moments of a stream of states with P
// columns. Add rows in order (the lazy sums rely on consecutive rows
// differing in few columns, but any rows are accepted).
type Accumulator struct {
	p     int
	timeW bool
	n     int64
	cumW  float64   // total weight so far
	x     []float64 // current state
	last  []float64 // cumulative weight when each column last changed
	sum   []float64 // Σ w x_i, settled up to last[i]
	// cross holds Σ w x_i x_j, settled lazily: a pair's contributions are
	// added to the contiguous row of whichever column changed, so the sum
	// for i ≠ j is cross[i][j] + cross[j][i], and cross[i][i] for i = j.
	cross  []float64
	seeded bool
}

// NewAccumulator returns an accumulator for states of p processes; with
// timeWeighted each state counts by its duration, otherwise by 1. It
// refuses, with an error naming the memory needed, a p whose P×P matrices
// would need more than MaxExactBytes (see Exact and Randomized).
func NewAccumulator(p int, timeWeighted bool) (*Accumulator, error) {
	if err := checkExact(p); err != nil {
		return nil, err
	}
	return &Accumulator{p: p, timeW: timeWeighted, x: make([]float64, p), last: make([]float64, p),
		sum: make([]float64, p), cross: make([]float64, p*p)}, nil
}

// Add adds one state row.
func (a *Accumulator) Add(r *state.Row) error {
	if len(r.X) != a.p {
		return fmt.Errorf("pca: a state of %d processes, want %d", len(r.X), a.p)
	}
	w := 1.0
	if a.timeW {
		w = float64(r.Dur)
	}
	switch {
	case !a.seeded:
		for i, v := range r.X {
			a.x[i] = float64(v)
		}
		a.seeded = true
	case r.Index > 0 && r.Tracker != nil:
		// Only the columns the tracker reports changed since the last row.
		for _, j := range r.Changed {
			if f := float64(r.X[j]); f != a.x[j] {
				a.change(j, f)
			}
		}
	default:
		for j, v := range r.X {
			if f := float64(v); f != a.x[j] {
				a.change(j, f)
			}
		}
	}
	a.n++
	a.cumW += w
	return nil
}

// change settles every pair of column j at the current weight, then sets
// x_j to v. The pairs go to row j of cross, which is contiguous.
func (a *Accumulator) change(j int, v float64) {
	xj, lj, p := a.x[j], a.last[j], a.p
	a.sum[j] += xj * (a.cumW - lj)
	// Slices of one length, so the loop runs without bounds checks.
	last := a.last[:p]
	row, x := a.cross[j*p : (j+1)*p][:len(last)], a.x[:len(last)]
	w := a.cumW
	sinceJ := w - lj
	for i, li := range last {
		// min(w−li, sinceJ) without min's NaN and signed-zero cases:
		// the weights are finite.
		since := w - li
		if since > sinceJ {
			since = sinceJ
		}
		row[i] += x[i] * xj * since
	}
	a.x[j], a.last[j] = v, a.cumW
}

// settle brings every sum up to the current weight.
func (a *Accumulator) settle() {
	p := a.p
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			since := a.cumW - max(a.last[i], a.last[j])
			a.cross[i*p+j] += a.x[i] * a.x[j] * since
		}
	}
	for i := 0; i < p; i++ {
		a.sum[i] += a.x[i] * (a.cumW - a.last[i])
		a.last[i] = a.cumW
	}
}

// Merge adds the states of b (another shard of the same columns).
func (a *Accumulator) Merge(b *Accumulator) error {
	if a.p != b.p {
		return fmt.Errorf("pca: merging states of %d processes into %d", b.p, a.p)
	}
	a.settle()
	b.settle()
	for i := range a.sum {
		a.sum[i] += b.sum[i]
	}
	for i := range a.cross {
		a.cross[i] += b.cross[i]
	}
	a.n += b.n
	// Keep a's current state; shift its weights so that later changes
	// settle from the merged total.
	a.cumW += b.cumW
	for i := range a.last {
		a.last[i] = a.cumW
	}
	return nil
}

// Component is one principal component.
type Component struct {
	// Variance is the variance of the data along the component (the
	// eigenvalue of the covariance matrix).
	Variance float64 `json:"variance"`
	// Explained is the fraction of the total variance it accounts for.
	Explained float64 `json:"explained"`
	// Loadings is the unit vector of the component over the processes.
	Loadings []float64 `json:"loadings"`
}

// Result is a PCA of the state matrix.
type Result struct {
	Procs         int         `json:"procs"`
	Rows          int64       `json:"rows"`
	Weight        float64     `json:"weight"`
	Mean          []float64   `json:"mean"`
	TotalVariance float64     `json:"total_variance"`
	Components    []Component `json:"components"`
}

// Result computes the top k components (all when k ≤ 0 or k > P). The
// covariance is centred and divided by the total weight (the population
// covariance; explained fractions do not depend on the choice).
func (a *Accumulator) Result(k int) (*Result, error) {
	if a.n == 0 || a.cumW == 0 {
		return nil, errors.New("pca: no states (or zero total weight)")
	}
	a.settle()
	p := a.p
	if k <= 0 || k > p {
		k = p
	}
	mean := make([]float64, p)
	for i := range mean {
		mean[i] = a.sum[i] / a.cumW
	}
	cov := mat.NewSymDense(p, nil)
	total := 0.0
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			sxy := a.cross[i*p+j]
			if i != j {
				sxy += a.cross[j*p+i]
			}
			c := sxy/a.cumW - mean[i]*mean[j]
			if i == j {
				c = max(c, 0)
				total += c
			}
			cov.SetSym(i, j, c)
		}
	}
	res := &Result{Procs: p, Rows: a.n, Weight: a.cumW, Mean: mean, TotalVariance: total}
	vals, vecs, order, err := eigenDescending(cov, "covariance")
	if err != nil {
		return nil, err
	}
	for _, c := range order[:k] {
		v := max(vals[c], 0)
		load := make([]float64, p)
		// A deterministic sign: the largest loading is positive.
		big := 0
		for i := 0; i < p; i++ {
			load[i] = vecs.At(i, c)
			if math.Abs(load[i]) > math.Abs(load[big]) {
				big = i
			}
		}
		if load[big] < 0 {
			for i := range load {
				load[i] = -load[i]
			}
		}
		exp := 0.0
		if total > 0 {
			exp = v / total
		}
		res.Components = append(res.Components, Component{Variance: v, Explained: exp, Loadings: load})
	}
	return res, nil
}

// Scorer projects states onto the components of a Result, incrementally:
// each change of a column updates the k scores in O(k).
type Scorer struct {
	res    *Result
	x      []float64
	scores []float64
	seeded bool
}

// NewScorer returns a scorer for the components of res.
func NewScorer(res *Result) *Scorer {
	return &Scorer{res: res, x: make([]float64, res.Procs), scores: make([]float64, len(res.Components))}
}

// Scores returns the scores of r (valid until the next call).
func (s *Scorer) Scores(r *state.Row) []float64 {
	if !s.seeded {
		s.seeded = true
		for i, v := range r.X {
			s.x[i] = float64(v)
		}
		for c, comp := range s.res.Components {
			t := 0.0
			for i, l := range comp.Loadings {
				t += (s.x[i] - s.res.Mean[i]) * l
			}
			s.scores[c] = t
		}
		return s.scores
	}
	for j, v := range r.X {
		f := float64(v)
		if d := f - s.x[j]; d != 0 {
			for c, comp := range s.res.Components {
				s.scores[c] += d * comp.Loadings[j]
			}
			s.x[j] = f
		}
	}
	return s.scores
}

// Reset starts a new run: the next row's scores are computed in full.
func (s *Scorer) Reset() { s.seeded = false }

// eigenDescending factorizes the symmetric matrix s (the named what in the
// error when the factorization does not converge) and returns its
// eigenvalues, its eigenvectors as columns, and the columns in order of
// decreasing eigenvalue (equal ones in column order).
func eigenDescending(s mat.Symmetric, what string) (vals []float64, vecs *mat.Dense, order []int, err error) {
	var eig mat.EigenSym
	if ok := eig.Factorize(s, true); !ok {
		return nil, nil, nil, errors.New("pca: the eigendecomposition of the " + what + " did not converge")
	}
	vals = eig.Values(nil)
	vecs = new(mat.Dense)
	eig.VectorsTo(vecs)
	order = make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		switch {
		case vals[x] > vals[y]:
			return -1
		case vals[x] < vals[y]:
			return 1
		}
		return x - y
	})
	return vals, vecs, order, nil
}
