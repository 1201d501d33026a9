// Package counters summarises the counter samples of a trace (hardware
// counters, PAPI or rocprof metrics, memory or power readings): for every
// run and counter, how many samples which processes took, their range and
// mean, each process's, and their minimum, mean and maximum over the
// processes in each of a fixed number of time windows, the series a chart
// draws. It is registered in the engine as "counters": `parscope
// counters`, the report's counters section and `parscope serve`'s view
// read its result.
//
// A counter sample is a value at an instant (a trace.Counter record); the
// windows split the run's span, from its first record to the last time a
// record covers, into Params.Windows equal parts, and a window holds the
// samples whose time falls in it. Windows without a sample are left out of
// the series. Sums are in float64: a mean is exact to about 15 digits.
package counters

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the analysis' name in the engine's registry.
const Name = "counters"

// DefaultWindows is the default of Params.Windows.
const DefaultWindows = 256

// Params are the options of the analysis.
type Params struct {
	// Windows is the number of time windows of each run's series.
	Windows int `json:"windows" flag:"windows" help:"time windows of each counter's series per run"`
}

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{Windows: DefaultWindows} }

// Result holds the counters of each run.
type Result struct {
	// Runs are the runs with counter samples, in run order.
	Runs []Run `json:"runs"`
}

// Run is the counters of one run.
type Run struct {
	Run int32 `json:"run"`
	// BeginNS, EndNS and WindowNS are the run's span and the width of a
	// window of the series.
	BeginNS  int64 `json:"begin_ns"`
	EndNS    int64 `json:"end_ns"`
	WindowNS int64 `json:"window_ns"`
	// Counters are the counters sampled in the run, by id.
	Counters []Counter `json:"counters"`
}

// Counter is one counter of a run.
type Counter struct {
	ID   int32  `json:"id"`
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
	// Samples, Procs: the samples and the processes that took them.
	Samples int64 `json:"samples"`
	Procs   int   `json:"procs"`
	// Min, Mean and Max are over every sample.
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	// ByProcess gives each process's samples, in process order.
	ByProcess []Proc `json:"by_process"`
	// Series are the windows with samples, in time order.
	Series []Point `json:"series"`
	// NonFinite counts samples that are NaN or infinite: counted here and
	// left out of every figure.
	NonFinite int64 `json:"non_finite"`
}

// Proc is one process's samples of a counter.
type Proc struct {
	Proc    int32   `json:"proc"`
	Samples int64   `json:"samples"`
	Min     float64 `json:"min"`
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	// Last is the value of its last sample.
	Last float64 `json:"last"`
}

// Point is one window of a counter's series.
type Point struct {
	// TNS is the window's start.
	TNS     int64   `json:"t_ns"`
	Samples int64   `json:"samples"`
	Min     float64 `json:"min"`
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
}

func init() {
	engine.Register(&engine.Analysis{
		Name:    Name,
		Doc:     "counter samples: per counter and process their range and mean, and a min/mean/max series over time windows",
		Needs:   []trace.Kind{trace.KindCounter},
		Options: func() any { return DefaultParams() },
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return New(t, o.(*Params)) },
	})
}

// stat accumulates samples: count, sum, range.
type stat struct {
	n        int64
	sum      float64
	min, max float64
	last     float64
	lastT    int64
}

func (s *stat) add(v float64, t int64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	s.sum += v
	if t >= s.lastT {
		s.last, s.lastT = v, t
	}
}

func (s *stat) merge(o *stat) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = *o
		return
	}
	s.min, s.max = min(s.min, o.min), max(s.max, o.max)
	s.n += o.n
	s.sum += o.sum
	if o.lastT >= s.lastT {
		s.last, s.lastT = o.last, o.lastT
	}
}

// counterAcc is one counter of one run.
type counterAcc struct {
	all       stat
	procs     map[int32]*stat
	windows   []stat
	nonFinite int64
}

// runAcc is one run.
type runAcc struct {
	begin, width int64
	counters     map[int32]*counterAcc
}

// Accumulator summarises the counter samples of a trace.
type Accumulator struct {
	t       *engine.Trace
	windows int
	runs    engine.PerRun[*runAcc]
	res     *Result
}

// New returns the accumulator of the analysis of t with the options p.
func New(t *engine.Trace, p *Params) (*Accumulator, error) {
	if p.Windows < 1 || p.Windows > 1<<20 {
		return nil, fmt.Errorf("counters: --windows %d: want 1 to %d", p.Windows, 1<<20)
	}
	a := &Accumulator{t: t, windows: p.Windows}
	a.runs.New = a.newRun
	return a, nil
}

// newRun makes a run's state: its windows split its span.
func (a *Accumulator) newRun(run int32) (*runAcc, error) {
	begin, end, _ := a.t.Span(run)
	width := max(1, (end-begin+int64(a.windows)-1)/int64(a.windows))
	return &runAcc{begin: begin, width: width, counters: map[int32]*counterAcc{}}, nil
}

// Add implements engine.Accumulator.
func (a *Accumulator) Add(batch []trace.Record) error {
	for i := range batch {
		r := &batch[i]
		if r.Kind != trace.KindCounter {
			continue
		}
		ra, err := a.runs.Of(r.Run)
		if err != nil {
			return err
		}
		c := ra.counters[r.ID]
		if c == nil {
			c = &counterAcc{procs: map[int32]*stat{}, windows: make([]stat, a.windows)}
			ra.counters[r.ID] = c
		}
		v := math.Float64frombits(uint64(r.Value))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			c.nonFinite++
			continue
		}
		c.all.add(v, r.T)
		p := c.procs[r.Proc]
		if p == nil {
			p = &stat{}
			c.procs[r.Proc] = p
		}
		p.add(v, r.T)
		w := min(max(0, (r.T-ra.begin)/ra.width), int64(a.windows-1))
		c.windows[w].add(v, r.T)
	}
	return nil
}

// Merge implements engine.Accumulator: other holds later records (a later
// time shard or later runs); a run both hold is merged window by window.
func (a *Accumulator) Merge(o engine.Accumulator) error {
	b, ok := o.(*Accumulator)
	if !ok {
		return fmt.Errorf("counters: merging a %T", o)
	}
	return a.runs.Merge(&b.runs, func(_ int32, x, y *runAcc) error {
		for id, cy := range y.counters {
			cx := x.counters[id]
			if cx == nil {
				x.counters[id] = cy
				continue
			}
			cx.all.merge(&cy.all)
			cx.nonFinite += cy.nonFinite
			for p, sy := range cy.procs {
				if sx := cx.procs[p]; sx != nil {
					sx.merge(sy)
				} else {
					cx.procs[p] = sy
				}
			}
			for w := range cx.windows {
				cx.windows[w].merge(&cy.windows[w])
			}
		}
		return nil
	})
}

// Result implements engine.Accumulator.
func (a *Accumulator) Result() (any, error) {
	if a.res != nil {
		return a.res, nil
	}
	ix := trace.NewIndex(a.t.Header)
	res := &Result{Runs: []Run{}}
	for _, run := range a.runs.Runs() {
		ra, _ := a.runs.Get(run)
		_, end, _ := a.t.Span(run)
		out := Run{Run: run, BeginNS: ra.begin, EndNS: end, WindowNS: ra.width, Counters: []Counter{}}
		ids := make([]int32, 0, len(ra.counters))
		for id := range ra.counters {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			c := ra.counters[id]
			ct := Counter{ID: id, Name: fmt.Sprintf("counter #%d", id), Samples: c.all.n, Procs: len(c.procs),
				Min: c.all.min, Max: c.all.max, Mean: mean(&c.all), NonFinite: c.nonFinite, ByProcess: []Proc{}, Series: []Point{}}
			if d := ix.Counter(id); d != nil {
				ct.Name, ct.Unit = d.Name, d.Unit
			}
			for p, s := range c.procs {
				ct.ByProcess = append(ct.ByProcess, Proc{Proc: p, Samples: s.n, Min: s.min, Mean: mean(s), Max: s.max, Last: s.last})
			}
			slices.SortFunc(ct.ByProcess, func(x, y Proc) int { return cmp.Compare(x.Proc, y.Proc) })
			for w := range c.windows {
				s := &c.windows[w]
				if s.n > 0 {
					ct.Series = append(ct.Series, Point{TNS: ra.begin + int64(w)*ra.width, Samples: s.n, Min: s.min, Mean: mean(s), Max: s.max})
				}
			}
			out.Counters = append(out.Counters, ct)
		}
		res.Runs = append(res.Runs, out)
	}
	a.res = res
	return res, nil
}

// mean is the mean of s's samples (0 without any).
func mean(s *stat) float64 {
	if s.n == 0 {
		return 0
	}
	return s.sum / float64(s.n)
}
