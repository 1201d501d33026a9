package occupancy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
)

// FitOptions control the estimator fit of a sweep.
type FitOptions struct {
	// MaxOrder is the largest number of parameters in a candidate term
	// (1 to 3; 0 means 2).
	MaxOrder int
	// MaxTerms bounds the terms of one mode's equation (0 means 4).
	MaxTerms int
	// MinGain is the smallest relative decrease of the cross-validated
	// error (PRESS) for which forward selection adds a term (0 means 0.02).
	MinGain float64
	// Terms, when it has an entry for a mode, fixes that mode's equation to
	// these terms (no selection): e.g. Lyon's {"g/n", "1"}.
	Terms map[string][]Term
	// Absolute fits by ordinary least squares. By default each trial's
	// residuals are weighted by 1/T (T its elapsed time), so the fit
	// minimises the errors relative to the elapsed time, the measure of
	// the tableau's accuracy (±% of measured elapsed time): otherwise the
	// longest trials dominate and the short ones get large relative errors.
	Absolute bool
}

// EqTerm is one term of a fitted equation and its coefficient.
type EqTerm struct {
	// Expr is the term as Term.Format writes it.
	Expr string `json:"term"`
	// Coef is its coefficient (s per unit of the term).
	Coef float64 `json:"coef"`
	// Term is the parsed term.
	Term Term `json:"-"`
}

// Equation is the fitted estimator of one mode's mean node occupancy.
type Equation struct {
	Mode  string   `json:"mode"`
	Terms []EqTerm `json:"terms"`
	// R2 is the coefficient of determination of the fit.
	R2 float64 `json:"r2"`
	// RMS and CVRMS are the root mean square residual and the
	// leave-one-out (PRESS) residual, in s (unweighted).
	RMS   float64 `json:"rms_s"`
	CVRMS float64 `json:"cv_rms_s"`
	// Acc95 is the 95th percentile over trials of |residual| / elapsed
	// time: this mode's share of the estimator's error.
	Acc95 float64 `json:"acc95"`
	// Collinear lists candidate terms that were collinear with the terms
	// already selected when they would have been added (or, for fixed
	// terms, with the terms before them) and were left out.
	Collinear []string `json:"collinear,omitempty"`
}

// Format writes the equation: "0.522 g/n + 0.905".
func (e *Equation) Format() string {
	if len(e.Terms) == 0 {
		return "0"
	}
	var b strings.Builder
	for i, t := range e.Terms {
		c := t.Coef
		switch {
		case i == 0 && c < 0:
			b.WriteString("-")
			c = -c
		case i > 0 && c < 0:
			b.WriteString(" - ")
			c = -c
		case i > 0:
			b.WriteString(" + ")
		}
		b.WriteString(strconv.FormatFloat(c, 'g', 3, 64))
		if t.Expr != "1" {
			b.WriteString(" " + t.Expr)
		}
	}
	return b.String()
}

// Eval returns the equation's value at the parameter values v.
func (e *Equation) Eval(v []float64) float64 {
	var y float64
	for _, t := range e.Terms {
		y += t.Coef * t.Term.Eval(v)
	}
	return y
}

// Fit is the tableau of one workload: an estimator equation per mode,
// fitted to a sweep, whose sum T estimates the elapsed time.
type Fit struct {
	// Name names the workload (the sweep file).
	Name   string   `json:"name,omitempty"`
	Params []string `json:"params"`
	Modes  []string `json:"modes"`
	// Trials is the number of trials fitted.
	Trials    int        `json:"trials"`
	Equations []Equation `json:"equations"`
	// Acc95 is the 95th percentile over trials of |T̂ − T| / T, T the
	// measured elapsed time: "±Acc95 of measured elapsed time at 95%
	// confidence". CVAcc95 is the same with each trial predicted by
	// equations (same terms) fitted without it.
	Acc95   float64 `json:"acc95"`
	CVAcc95 float64 `json:"cv_acc95"`
	// MaxErr is the largest |T̂ − T| / T.
	MaxErr float64 `json:"max_err"`
	// Measurements is trials × modes; Compression is measurements per
	// equation and TermCompression measurements per equation term.
	Measurements    int     `json:"measurements"`
	Compression     float64 `json:"compression"`
	TermCompression float64 `json:"term_compression"`
	// Constant lists parameters that have one value in every trial (left
	// out of the candidate terms), Undefined candidate terms that divide by
	// a parameter that is zero in some trial, and Duplicate candidate terms
	// equal (up to a factor) to a simpler one on the sweep's data.
	Constant  []string `json:"constant_params,omitempty"`
	Undefined []string `json:"undefined_terms,omitempty"`
	Duplicate []string `json:"duplicate_terms,omitempty"`
}

// ErrTooFewTrials is returned (wrapped) when a sweep has no more trials
// than an equation has terms.
var ErrTooFewTrials = errors.New("fewer trials than terms")

// FitSweep fits an estimator equation per mode of s (by least squares
// weighted by 1/T unless Options.Absolute): by forward selection
// from the candidate terms (the constant, x, 1/x, and products of up to
// MaxOrder parameters), adding at each step the term that most lowers the
// leave-one-out cross-validated error (PRESS), while it lowers it by at
// least MinGain; or by least squares on the terms given in Options.Terms.
func FitSweep(s *Sweep, o FitOptions) (*Fit, error) {
	if o.MaxOrder == 0 {
		o.MaxOrder = 2
	}
	if o.MaxOrder < 1 || o.MaxOrder > 3 {
		return nil, fmt.Errorf("fit: terms of up to %d parameters: expected 1 to 3", o.MaxOrder)
	}
	if o.MaxTerms == 0 {
		o.MaxTerms = 4
	}
	if o.MaxTerms < 1 {
		return nil, fmt.Errorf("fit: at most %d terms per equation: expected at least 1", o.MaxTerms)
	}
	if o.MinGain == 0 {
		o.MinGain = 0.02
	}
	n := len(s.Trials)
	for mode, ts := range o.Terms {
		if !slices.Contains(s.Modes, mode) {
			return nil, fmt.Errorf("fit: terms given for %q, which is not a mode of the sweep (modes: %s)", mode, strings.Join(s.Modes, ", "))
		}
		if n < len(ts) {
			return nil, fmt.Errorf("fit: mode %s: %d trials for %d terms: %w", mode, n, len(ts), ErrTooFewTrials)
		}
	}
	if len(o.Terms) < len(s.Modes) && n <= o.MaxTerms {
		return nil, fmt.Errorf("fit: %d trials for up to %d terms per equation: %w (a fit needs more trials than terms; add trials or lower the maximum)", n, o.MaxTerms, ErrTooFewTrials)
	}
	f := &Fit{Params: s.Params, Modes: s.Modes, Trials: n, Measurements: n * len(s.Modes)}

	totals := make([]float64, n)
	for i := range s.Trials {
		totals[i] = s.Trials[i].Total(s.HasElapsed)
		if totals[i] <= 0 {
			return nil, fmt.Errorf("fit: trial %d has an elapsed time of %g s: expected a positive time", i+1, totals[i])
		}
	}
	// Row weights: 1/T, or 1 for ordinary least squares.
	weight := make([]float64, n)
	for i := range weight {
		weight[i] = 1
		if !o.Absolute {
			weight[i] = 1 / totals[i]
		}
	}

	// Candidate columns (weighted).
	skip := make([]bool, len(s.Params))
	for i, name := range s.Params {
		constant := true
		for _, t := range s.Trials {
			if t.Values[i] != s.Trials[0].Values[i] {
				constant = false
				break
			}
		}
		if constant && n > 0 {
			skip[i] = true
			f.Constant = append(f.Constant, fmt.Sprintf("%s = %g", name, s.Trials[0].Values[i]))
		}
	}
	var cands []Term
	var cols [][]float64 // unit-norm columns
	var norms []float64
	for _, t := range Candidates(len(s.Params), o.MaxOrder, skip) {
		col := make([]float64, n)
		for i := range s.Trials {
			col[i] = t.Eval(s.Trials[i].Values) * weight[i]
		}
		if !finite(col) {
			f.Undefined = append(f.Undefined, t.Format(s.Params))
			continue
		}
		nrm := math.Sqrt(dot(col, col))
		if nrm == 0 {
			f.Undefined = append(f.Undefined, t.Format(s.Params))
			continue
		}
		for i := range col {
			col[i] /= nrm
		}
		dup := -1
		for k, c := range cols {
			if math.Abs(dot(c, col)) > 1-1e-12 {
				dup = k
				break
			}
		}
		if dup >= 0 {
			f.Duplicate = append(f.Duplicate, t.Format(s.Params)+" = "+cands[dup].Format(s.Params))
			continue
		}
		cands, cols, norms = append(cands, t), append(cols, col), append(norms, nrm)
	}

	pred := make([]float64, n)
	cvPred := make([]float64, n)
	for j, mode := range s.Modes {
		y, wy := make([]float64, n), make([]float64, n)
		for i := range s.Trials {
			y[i] = s.Trials[i].Means[j]
			wy[i] = y[i] * weight[i]
		}
		var ls *lsq
		var collinear []string
		if fixed, ok := o.Terms[mode]; ok {
			ls = newLSQ(wy)
			for _, t := range fixed {
				if len(t) != len(s.Params) {
					return nil, fmt.Errorf("fit: mode %s: a term over %d parameters, the sweep has %d", mode, len(t), len(s.Params))
				}
				col := make([]float64, n)
				for i := range s.Trials {
					col[i] = t.Eval(s.Trials[i].Values) * weight[i]
				}
				if !finite(col) {
					return nil, fmt.Errorf("fit: mode %s: term %s is undefined on the sweep (a division by a parameter that is zero)", mode, t.Format(s.Params))
				}
				nrm := math.Sqrt(dot(col, col))
				if nrm > 0 {
					for i := range col {
						col[i] /= nrm
					}
				}
				if nrm == 0 || !ls.add(t, col, nrm) {
					collinear = append(collinear, t.Format(s.Params))
				}
			}
		} else {
			ls, collinear = selectTerms(wy, cands, cols, norms, o, s.Params)
		}
		eq := Equation{Mode: mode, Collinear: collinear}
		coef := ls.coefficients()
		for k, t := range ls.terms {
			eq.Terms = append(eq.Terms, EqTerm{Expr: t.Format(s.Params), Coef: coef[k], Term: t})
		}
		var ss, sst, press float64
		mean := 0.0
		for _, v := range y {
			mean += v / float64(n)
		}
		errs := make([]float64, n)
		for i := range y {
			yi := eq.Eval(s.Trials[i].Values)
			r := y[i] - yi
			ss += r * r
			sst += (y[i] - mean) * (y[i] - mean)
			pr := ls.pressResidual(i) / weight[i]
			press += pr * pr
			pred[i] += yi
			cvPred[i] += y[i] - pr
			errs[i] = math.Abs(r) / totals[i]
		}
		eq.RMS = math.Sqrt(ss / float64(n))
		eq.CVRMS = math.Sqrt(press / float64(n))
		if sst > 0 {
			eq.R2 = 1 - ss/sst
		} else if ss == 0 {
			eq.R2 = 1
		}
		eq.Acc95 = quantile95(errs)
		f.Equations = append(f.Equations, eq)
	}
	errs := make([]float64, n)
	cvErrs := make([]float64, n)
	for i := range errs {
		errs[i] = math.Abs(pred[i]-totals[i]) / totals[i]
		cvErrs[i] = math.Abs(cvPred[i]-totals[i]) / totals[i]
		f.MaxErr = max(f.MaxErr, errs[i])
	}
	f.Acc95, f.CVAcc95 = quantile95(errs), quantile95(cvErrs)
	terms := 0
	for _, e := range f.Equations {
		terms += len(e.Terms)
	}
	f.Compression = float64(f.Measurements) / float64(len(f.Equations))
	if terms > 0 {
		f.TermCompression = float64(f.Measurements) / float64(terms)
	}
	return f, nil
}

// selectTerms runs forward selection by PRESS with swaps: after each
// addition, a selected term is replaced by an unused candidate while that
// lowers PRESS (greedy addition alone misses, e.g., a + b/x + c·y/x when
// y/x alone fits best). Selection stops when the best addition lowers PRESS
// by less than MinGain, or the fit is exact.
func selectTerms(y []float64, cands []Term, cols [][]float64, norms []float64, o FitOptions, params []string) (*lsq, []string) {
	ls := newLSQ(y)
	var set []int
	prev := ls.press()
	exact := 1e-20 * dot(y, y)
	var collinear []string
	for len(set) < o.MaxTerms && len(set)+1 < len(y) && prev > exact {
		best, bestPress := -1, math.Inf(1)
		for k := range cands {
			if slices.Contains(set, k) {
				continue
			}
			if p, ok := ls.tryPress(cols[k]); ok && p < bestPress {
				best, bestPress = k, p
			}
		}
		if best < 0 || bestPress > prev*(1-o.MinGain) {
			break
		}
		set = append(set, best)
		ls.add(cands[best], cols[best], norms[best])
		prev = bestPress
		// Swaps at this size.
		for improved := true; improved && prev > exact; {
			improved = false
			for pos := range set {
				for k := range cands {
					if slices.Contains(set, k) {
						continue
					}
					trial := slices.Clone(set)
					trial[pos] = k
					l, ok := buildLSQ(y, trial, cands, cols, norms)
					if !ok {
						continue
					}
					if p := l.press(); p < prev*(1-1e-9) {
						set, ls, prev, improved = trial, l, p, true
					}
				}
			}
		}
	}
	// Backward elimination: drop a term whose removal raises PRESS by less
	// than MinGain (or keeps an exact fit exact).
	for len(set) > 1 {
		drop, dropPress := -1, math.Inf(1)
		for pos := range set {
			trial := slices.Delete(slices.Clone(set), pos, pos+1)
			if l, ok := buildLSQ(y, trial, cands, cols, norms); ok {
				if p := l.press(); p < dropPress {
					drop, dropPress = pos, p
				}
			}
		}
		if drop < 0 || dropPress > max(prev*(1+o.MinGain), exact) {
			break
		}
		set = slices.Delete(set, drop, drop+1)
		ls, _ = buildLSQ(y, set, cands, cols, norms)
		prev = dropPress
	}
	// Report the candidates that are collinear with the selected terms.
	for k := range cands {
		if !slices.Contains(set, k) && ls.inSpan(cols[k]) {
			collinear = append(collinear, cands[k].Format(params))
		}
	}
	return ls, collinear
}

// buildLSQ fits y on the candidates of set; false when they are collinear
// or a trial's leverage reaches 1.
func buildLSQ(y []float64, set []int, cands []Term, cols [][]float64, norms []float64) (*lsq, bool) {
	l := newLSQ(y)
	for _, k := range set {
		if !l.add(cands[k], cols[k], norms[k]) {
			return nil, false
		}
	}
	for _, h := range l.lev {
		if h > 1-1e-9 {
			return nil, false
		}
	}
	return l, true
}

// lsq is an incremental least-squares fit: an orthonormal basis Q of the
// (unit-norm) columns added so far, by modified Gram–Schmidt with
// reorthogonalisation, the residual of y and the leverages.
type lsq struct {
	y, res, lev []float64
	q           [][]float64
	cols        [][]float64
	norms       []float64
	terms       []Term
	scratch     []float64
}

func newLSQ(y []float64) *lsq {
	return &lsq{y: y, res: slices.Clone(y), lev: make([]float64, len(y)), scratch: make([]float64, len(y))}
}

// collinearTol is the relative norm below which a column is taken to be in
// the span of the columns before it.
const collinearTol = 1e-7

// orth orthogonalises col against Q into w and returns its norm.
func (l *lsq) orth(col, w []float64) float64 {
	copy(w, col)
	for range 2 {
		for _, q := range l.q {
			c := dot(q, w)
			for i := range w {
				w[i] -= c * q[i]
			}
		}
	}
	return math.Sqrt(dot(w, w))
}

func (l *lsq) inSpan(col []float64) bool { return l.orth(col, l.scratch) < collinearTol }

// tryPress returns the PRESS of the fit with col added, and false when col
// is collinear with the columns already in or a trial's leverage would
// reach 1.
func (l *lsq) tryPress(col []float64) (float64, bool) {
	w := l.scratch
	nrm := l.orth(col, w)
	if nrm < collinearTol {
		return 0, false
	}
	c := dot(w, l.res) / nrm
	var p float64
	for i := range w {
		qi := w[i] / nrm
		h := l.lev[i] + qi*qi
		if h > 1-1e-9 {
			return 0, false
		}
		r := (l.res[i] - c*qi) / (1 - h)
		p += r * r
	}
	return p, true
}

// add adds a unit-norm column (the term's values divided by nrm); false
// when it is collinear with the columns already in.
func (l *lsq) add(t Term, col []float64, nrm float64) bool {
	w := make([]float64, len(col))
	wn := l.orth(col, w)
	if wn < collinearTol {
		return false
	}
	for i := range w {
		w[i] /= wn
	}
	c := dot(w, l.res)
	for i := range w {
		l.res[i] -= c * w[i]
		l.lev[i] += w[i] * w[i]
	}
	l.q = append(l.q, w)
	l.cols = append(l.cols, col)
	l.norms = append(l.norms, nrm)
	l.terms = append(l.terms, t)
	return true
}

// press returns the leave-one-out error sum of squares of the current fit.
func (l *lsq) press() float64 {
	var p float64
	for i := range l.res {
		r := l.pressResidual(i)
		p += r * r
	}
	return p
}

// pressResidual returns trial i's residual when the fit leaves it out.
func (l *lsq) pressResidual(i int) float64 {
	if l.lev[i] >= 1-1e-9 {
		return l.res[i]
	}
	return l.res[i] / (1 - l.lev[i])
}

// coefficients solves R β = Qᵀ y (R = Qᵀ X, upper triangular) and
// unscales β to the terms' units.
func (l *lsq) coefficients() []float64 {
	k := len(l.q)
	b := make([]float64, k)
	for a := k - 1; a >= 0; a-- {
		v := dot(l.q[a], l.y)
		for c := a + 1; c < k; c++ {
			v -= dot(l.q[a], l.cols[c]) * b[c]
		}
		b[a] = v / dot(l.q[a], l.cols[a])
	}
	for a := range b {
		b[a] /= l.norms[a]
	}
	return b
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// quantile95 returns the 95th percentile of xs (nearest rank).
func quantile95(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(math.Ceil(0.95*float64(len(s)))) - 1
	return s[max(k, 0)]
}

// ParamIndex maps the fit's parameters to the positions of the same names
// in names, or reports those names lacks.
func (f *Fit) ParamIndex(names []string) ([]int, error) {
	idx := make([]int, len(f.Params))
	var missing []string
	for i, p := range f.Params {
		if idx[i] = slices.Index(names, p); idx[i] < 0 {
			missing = append(missing, p)
		}
	}
	if missing != nil {
		return nil, fmt.Errorf("no value for parameter(s) %s of fit %q", strings.Join(missing, ", "), f.Name)
	}
	return idx, nil
}

// Prediction is the estimate of the fit at one parameter setting.
type Prediction struct {
	// Values are the parameter values, in the fit's order.
	Values []float64 `json:"values"`
	// Means is the estimated mean node occupancy per mode (s) and Total
	// their sum, the estimated elapsed time.
	Means []float64 `json:"means_s"`
	Total float64   `json:"total_s"`
}

// Predict evaluates the equations at v (one value per parameter of the
// fit). A term that divides by zero is an error.
func (f *Fit) Predict(v []float64) (Prediction, error) {
	if len(v) != len(f.Params) {
		return Prediction{}, fmt.Errorf("predict: %d values for %d parameters (%s)", len(v), len(f.Params), strings.Join(f.Params, ", "))
	}
	p := Prediction{Values: slices.Clone(v), Means: make([]float64, len(f.Equations))}
	for j := range f.Equations {
		y := f.Equations[j].Eval(v)
		if math.IsInf(y, 0) || math.IsNaN(y) {
			return Prediction{}, fmt.Errorf("predict: the equation of %s is undefined at %s (a division by zero)", f.Modes[j], formatValues(f.Params, v, ","))
		}
		p.Means[j] = y
		p.Total += y
	}
	return p, nil
}

// ParsePoint parses a parameter setting "n=16,p=8,g=100" into one value
// per parameter of params, in params' order. Every parameter needs a
// finite value, given once; a name not in params is an error.
func ParsePoint(spec string, params []string) ([]float64, error) {
	v := make([]float64, len(params))
	seen := make([]bool, len(params))
	for _, kv := range strings.Split(spec, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("%q: expected NAME=VALUE", kv)
		}
		i := slices.Index(params, k)
		if i < 0 {
			return nil, fmt.Errorf("%q is not a parameter of the fit (%s)", k, strings.Join(params, ", "))
		}
		x, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("%s=%q: expected a finite number", k, val)
		}
		if seen[i] {
			return nil, fmt.Errorf("%s given twice", k)
		}
		v[i], seen[i] = x, true
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("no value for %s", params[i])
		}
	}
	return v, nil
}

// formatValues writes a point of the parameters, "n=4" for each joined
// by sep: "n=4,g=20" in messages, "n=4 g=20" to name a sweep's trial.
func formatValues(params []string, v []float64, sep string) string {
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = p + "=" + strconv.FormatFloat(v[i], 'g', -1, 64)
	}
	return strings.Join(parts, sep)
}

// Check compares the fit's predictions with the measured trials of s (for
// instance a sweep not used in the fit): it returns, per trial, |T̂ − T| / T
// with T the measured elapsed time. s must have every parameter of the fit
// and the same modes.
func (f *Fit) Check(s *Sweep) ([]float64, error) {
	if !slices.Equal(s.Modes, f.Modes) {
		return nil, fmt.Errorf("check: the sweep's modes %s differ from the fit's %s", strings.Join(s.Modes, ","), strings.Join(f.Modes, ","))
	}
	idx, err := f.ParamIndex(s.Params)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(s.Trials))
	v := make([]float64, len(f.Params))
	for i, t := range s.Trials {
		for k, j := range idx {
			v[k] = t.Values[j]
		}
		p, err := f.Predict(v)
		if err != nil {
			return nil, fmt.Errorf("trial %d: %w", i+1, err)
		}
		tot := t.Total(s.HasElapsed)
		if tot <= 0 {
			return nil, fmt.Errorf("check: trial %d has an elapsed time of %g s: expected a positive time", i+1, tot)
		}
		out[i] = math.Abs(p.Total-tot) / tot
	}
	return out, nil
}

// Comparison is a fit's predictions of the measured trials of a sweep
// (Fit.Compare).
type Comparison struct {
	// Trials are the sweep's trials, in its order.
	Trials []Compared
	// Errors are |T̂ − T| / T per trial (Fit.Check), Acc95 their 95th
	// percentile (Quantile95) and MaxErr the largest.
	Errors        []float64
	Acc95, MaxErr float64
}

// Compared is one trial of a Comparison.
type Compared struct {
	// Values are the trial's values of the fit's parameters, in the fit's
	// order.
	Values []float64
	// Predicted is the fit's estimate T̂ of the elapsed time and Measured
	// the trial's T (its elapsed time, or without one the sum of its
	// means), in seconds.
	Predicted, Measured float64
}

// Error returns the trial's signed relative error (T̂ − T) / T.
func (c Compared) Error() float64 { return (c.Predicted - c.Measured) / c.Measured }

// Compare compares the fit's predictions with the measured trials of s, as
// Check does, and returns each trial's predicted and measured elapsed
// time with the errors' summary. s must have every parameter of the fit,
// the same modes and at least one trial.
func (f *Fit) Compare(s *Sweep) (*Comparison, error) {
	errs, err := f.Check(s)
	if err != nil {
		return nil, err
	}
	if len(errs) == 0 {
		return nil, errors.New("check: the sweep has no trials")
	}
	c := &Comparison{Errors: errs, Acc95: quantile95(errs), MaxErr: slices.Max(errs)}
	idx, _ := f.ParamIndex(s.Params) // Check found them
	for _, t := range s.Trials {
		v := make([]float64, len(f.Params))
		for k, j := range idx {
			v[k] = t.Values[j]
		}
		p, _ := f.Predict(v) // Check predicted it
		c.Trials = append(c.Trials, Compared{Values: v, Predicted: p.Total, Measured: t.Total(s.HasElapsed)})
	}
	return c, nil
}

// Tableau is Lyon's tableau of several workloads' fits: one column per fit,
// one row per mode of any of them, each column summing to the estimated
// elapsed time T.
type Tableau struct {
	// Fits are the columns.
	Fits []*Fit
	// Modes are the rows: every fit's modes, in order of first appearance.
	Modes []string
	// Measurements and Equations are the fits' totals, and Compression
	// measurements per equation over all the fits.
	Measurements, Equations int
	Compression             float64
}

// NewTableau returns the tableau of fits.
func NewTableau(fits []*Fit) *Tableau {
	t := &Tableau{Fits: fits}
	for _, f := range fits {
		for _, m := range f.Modes {
			if !slices.Contains(t.Modes, m) {
				t.Modes = append(t.Modes, m)
			}
		}
		t.Measurements += f.Measurements
		t.Equations += len(f.Equations)
	}
	if t.Equations > 0 {
		t.Compression = float64(t.Measurements) / float64(t.Equations)
	}
	return t
}

// Equation returns the cell of fit i (a column) and mode (a row): the
// fit's equation of the mode, or nil when the fit has no such mode.
func (t *Tableau) Equation(i int, mode string) *Equation {
	f := t.Fits[i]
	if j := slices.Index(f.Modes, mode); j >= 0 {
		return &f.Equations[j]
	}
	return nil
}

// Quantile95 returns the 95th percentile (nearest rank) of errs.
func Quantile95(errs []float64) float64 { return quantile95(errs) }

// WriteFits writes fits as JSON.
func WriteFits(w io.Writer, fits []*Fit) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Fits []*Fit `json:"fits"`
	}{fits})
}

// ReadFitsFile reads the fits of the file at path (ReadFits).
func ReadFitsFile(path string) ([]*Fit, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadFits(f, path)
}

// ReadFits reads fits written by WriteFits (name is used in errors),
// parsing every term against its fit's parameters.
func ReadFits(r io.Reader, name string) ([]*Fit, error) {
	var doc struct {
		Fits []*Fit `json:"fits"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: offset %d: expected a fit file (JSON written by parscope fit): %v", name, se.Offset, format.ClipError(err))
		}
		return nil, fmt.Errorf("%s: expected a fit file (JSON written by parscope fit): %v", name, format.ClipError(err))
	}
	if len(doc.Fits) == 0 {
		return nil, fmt.Errorf("%s: expected {\"fits\": [...]} with at least one fit", name)
	}
	for k, f := range doc.Fits {
		if f == nil || len(f.Equations) != len(f.Modes) {
			return nil, fmt.Errorf("%s: fit %d: expected one equation per mode", name, k+1)
		}
		for j := range f.Equations {
			e := &f.Equations[j]
			if e.Mode != f.Modes[j] {
				return nil, fmt.Errorf("%s: fit %d: equation %d is for %q, expected mode %q", name, k+1, j+1, format.Excerpt([]byte(e.Mode)), format.Excerpt([]byte(f.Modes[j])))
			}
			for i := range e.Terms {
				t, err := ParseTerm(e.Terms[i].Expr, f.Params)
				if err != nil {
					return nil, fmt.Errorf("%s: fit %d, mode %s: %w", name, k+1, format.Excerpt([]byte(e.Mode)), err)
				}
				if math.IsInf(e.Terms[i].Coef, 0) || math.IsNaN(e.Terms[i].Coef) {
					return nil, fmt.Errorf("%s: fit %d, mode %s: term %s has no finite coefficient", name, k+1, format.Excerpt([]byte(e.Mode)), format.Excerpt([]byte(e.Terms[i].Expr)))
				}
				e.Terms[i].Term = t
			}
		}
	}
	return doc.Fits, nil
}
