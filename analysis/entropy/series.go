package entropy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/trace"
)

// WindowPoint is the histogram entropy of one time window of a run: the
// time-weighted histogram of processes over blocks in [Start, End),
// normalised, and its Shannon entropy (section 4, last paragraph).
type WindowPoint struct {
	Run     int32   `json:"run"`
	Start   int64   `json:"start_ns"`
	End     int64   `json:"end_ns"`
	Entropy float64 `json:"entropy_bits"`
	// Covered is the part of the window the run's states cover (the last
	// window of a run may be partial).
	Covered int64 `json:"covered_ns"`
}

// Windows accumulates the histogram-entropy series of states in windows of
// a fixed duration. Add the rows of state.Reconstruct in order.
type Windows struct {
	width  int64
	points []WindowPoint
	run    int32
	start  int64
	acc    []float64 // per dense block: process-ns in the current window
	cover  int64
	open   bool
}

// NewWindows returns a series accumulator for windows of width ns.
func NewWindows(width int64) (*Windows, error) {
	if width <= 0 {
		return nil, fmt.Errorf("entropy: window width must be positive, got %d ns", width)
	}
	return &Windows{width: width}, nil
}

// Add adds a state row (with its duration).
func (w *Windows) Add(r *state.Row) error {
	if !w.open || r.Run != w.run {
		w.close()
		w.run, w.start, w.open = r.Run, 0, true
	}
	t, end := r.T, r.T+r.Dur
	for t < end {
		for t >= w.start+w.width {
			w.close()
			w.start += w.width
			w.open = true
		}
		seg := min(end, w.start+w.width) - t
		for len(w.acc) < len(r.Counts) {
			w.acc = append(w.acc, 0)
		}
		for k, c := range r.Counts {
			if c > 0 {
				w.acc[k] += float64(c) * float64(seg)
			}
		}
		w.cover += seg
		t += seg
	}
	return nil
}

// close finishes the current window, if it has any coverage.
func (w *Windows) close() {
	if !w.open {
		return
	}
	w.open = false
	if w.cover == 0 {
		return
	}
	total := 0.0
	for _, a := range w.acc {
		total += a
	}
	h := 0.0
	for k, a := range w.acc {
		if a > 0 {
			f := a / total
			h -= f * math.Log2(f)
		}
		w.acc[k] = 0
	}
	w.points = append(w.points, WindowPoint{Run: w.run, Start: w.start, End: w.start + w.width, Entropy: max(h, 0), Covered: w.cover})
	w.cover = 0
}

// Result returns the series, in run and time order.
func (w *Windows) Result() []WindowPoint {
	w.close()
	return w.points
}

// Measure names a field of Result, for ranking subsets and for the CLI.
type Measure string

// The measures that can be selected by name.
const (
	MeasureComb          Measure = "comb_entropy"
	MeasureCombDistinct  Measure = "comb_entropy_distinct"
	MeasureSurprisalMean Measure = "surprisal_mean"
	MeasureHistogram     Measure = "histogram_entropy_mean"
	MeasureEmpirical     Measure = "empirical_entropy"
)

// Measures lists the selectable measures.
var Measures = []Measure{MeasureComb, MeasureCombDistinct, MeasureSurprisalMean, MeasureHistogram, MeasureEmpirical}

// Value returns the measure m of r.
func (r Result) Value(m Measure) (float64, error) {
	switch m {
	case MeasureComb:
		return r.CombEntropy, nil
	case MeasureCombDistinct:
		return r.CombEntropyDistinct, nil
	case MeasureSurprisalMean:
		return r.SurprisalMean, nil
	case MeasureHistogram:
		return r.HistogramEntropyMean, nil
	case MeasureEmpirical:
		return r.EmpiricalEntropy, nil
	}
	return 0, fmt.Errorf("unknown entropy measure %q (known: %v)", m, Measures)
}

// SubsetResult is the entropy of the partial state over one subset of
// processes, and how far it stands from the other subsets.
type SubsetResult struct {
	Procs  []int32 `json:"procs"`
	Result Result  `json:"result"`
	Value  float64 `json:"value"`
	// Score is the robust z-score (value − median) / (1.4826 · MAD) among
	// all subsets searched (1.2533 · mean absolute deviation when most
	// subsets share one value); 0 when the subsets do not vary.
	Score float64 `json:"score"`
}

// Subsets computes the entropy of the partial state of every contiguous
// window of k processes (0..k-1, 1..k, ...; with cyclic also the windows
// that wrap around) of run 0 of the trace, and ranks them by how far the
// chosen measure lies from the others, most anomalous first: the search
// that points at a starving process (Gomez, Cai & Schubert 2017, Table 5).
// open returns a time-merged reader of the trace, read once (a Ranker).
func Subsets(ctx context.Context, h *trace.Header, open func() trace.Reader, k int, cyclic bool, opts Options, m Measure) ([]SubsetResult, error) {
	rk, err := NewRanker(h, k, cyclic, opts, m, state.Options{})
	if err != nil {
		return nil, err
	}
	r := open()
	buf := make([]trace.Record, 4096)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(buf)
		if e := rk.Add(buf[:n]); e != nil {
			return nil, e
		}
		if errors.Is(err, io.EOF) {
			return rk.Result()
		}
		if err != nil {
			return nil, err
		}
	}
}

// minWindowBudget is the least memory budget of a window's accumulator.
const minWindowBudget = 64 << 10

// Ranker computes Subsets in one pass over the records: it rebuilds the
// partial state of every window of processes at once, giving each record
// of run 0 to the windows that hold its process. The windows share
// Options.Budget (each holds at least minWindowBudget).
type Ranker struct {
	m        Measure
	procs    [][]int32
	builders []*state.Builder
	accs     []*Accumulator
	// of lists, per process, the windows that hold it.
	of      [][]int
	started bool
}

// NewRanker returns a ranker of the windows of k adjacent processes of run
// 0 of the trace of header h (with cyclic, also those that wrap around),
// by measure m of their entropy with options opts; so holds the
// reconstruction options other than the processes (start, per record).
func NewRanker(h *trace.Header, k int, cyclic bool, opts Options, m Measure, so state.Options) (*Ranker, error) {
	if len(h.Runs) == 0 {
		return nil, fmt.Errorf("entropy: the trace has no runs")
	}
	p := int(h.Runs[0].Procs)
	if k < 1 || k > p {
		return nil, fmt.Errorf("entropy: subset size %d must be between 1 and the %d processes", k, p)
	}
	if _, err := (Result{}).Value(m); err != nil {
		return nil, err
	}
	last := p - k
	if cyclic && k < p {
		last = p - 1
	}
	rk := &Ranker{m: m, of: make([][]int, p)}
	// The windows share the budget: each holds its part of it.
	budget := opts.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	opts.Budget = max(budget/int64(last+1), minWindowBudget)
	for s := 0; s <= last; s++ {
		procs := make([]int32, k)
		for i := range procs {
			procs[i] = int32((s + i) % p)
			rk.of[procs[i]] = append(rk.of[procs[i]], s)
		}
		acc := NewAccumulator(opts)
		o := so
		o.Procs = procs
		b, err := state.NewBuilder(h, o, acc.Add)
		if err != nil {
			return nil, err
		}
		rk.procs = append(rk.procs, procs)
		rk.builders = append(rk.builders, b)
		rk.accs = append(rk.accs, acc)
	}
	return rk, nil
}

// Add adds a batch of records in time-merged order; only those of run 0
// count.
func (rk *Ranker) Add(batch []trace.Record) error {
	for i := range batch {
		r := &batch[i]
		if r.Run != 0 {
			continue
		}
		if !rk.started {
			// Every window's state begins with the run's first record,
			// whichever process it is of.
			rk.started = true
			for _, b := range rk.builders {
				if err := b.Add(r); err != nil {
					return err
				}
			}
			continue
		}
		if r.Proc < 0 || int(r.Proc) >= len(rk.of) {
			continue
		}
		for _, s := range rk.of[r.Proc] {
			if err := rk.builders[s].Add(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// Seen reports whether a record of run 0 was added.
func (rk *Ranker) Seen() bool { return rk.started }

// Result ends the pass and ranks the windows, most anomalous first.
func (rk *Ranker) Result() ([]SubsetResult, error) {
	defer func() {
		for _, acc := range rk.accs {
			acc.Close()
		}
	}()
	var out []SubsetResult
	for s, b := range rk.builders {
		if err := b.Close(); err != nil {
			return nil, err
		}
		res, err := rk.accs[s].Result()
		if err != nil {
			return nil, err
		}
		v, _ := res.Value(rk.m)
		out = append(out, SubsetResult{Procs: rk.procs[s], Result: res, Value: v})
	}
	vals := make([]float64, len(out))
	for i, o := range out {
		vals[i] = o.Value
	}
	for i, z := range robustScores(vals) {
		out[i].Score = z
	}
	slices.SortStableFunc(out, func(a, b SubsetResult) int {
		return cmp.Compare(math.Abs(b.Score), math.Abs(a.Score))
	})
	return out, nil
}

// robustScores returns each value's robust z-score (v − median) /
// (1.4826 · MAD). Values that differ by less than a billionth of the
// largest magnitude are taken as equal, so that rounding noise between
// subsets whose entropy is the same (a MAD of 1e-17) cannot blow a score
// up to 1e17. When more than half the values are equal (MAD 0) the
// scale falls back to 1.2533 · the mean absolute deviation (Iglewicz &
// Hoaglin 1993), and every score is 0 when the values do not vary.
func robustScores(vals []float64) []float64 {
	scale := 0.0
	for _, v := range vals {
		scale = max(scale, math.Abs(v))
	}
	tol := 1e-9 * scale
	med := median(vals)
	dev := make([]float64, len(vals))
	mean := 0.0
	for i, v := range vals {
		if d := math.Abs(v - med); d > tol {
			dev[i] = d
			mean += d / float64(len(vals))
		}
	}
	spread := 1.4826 * median(dev)
	if spread <= tol {
		spread = 1.2533 * mean
	}
	z := make([]float64, len(vals))
	if spread <= tol {
		return z
	}
	for i, v := range vals {
		if dev[i] > 0 {
			z[i] = (v - med) / spread
		}
	}
	return z
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
