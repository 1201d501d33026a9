package entropy

import (
	"errors"
	"fmt"
	"time"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the entropy analysis' name in the engine's registry.
const Name = "entropy"

// Params are the options of the entropy analysis: the flags of `parscope
// entropy` and the "options" of its envelope.
type Params struct {
	state.Params
	// Blocks is N; 0 means the number of states of the trace's dictionary
	// but those marked Absent (or, without one, the number of blocks the
	// states use).
	Blocks int `json:"blocks" flag:"blocks" help:"N, the number of blocks of the code (0: the trace's state dictionary)"`
	// TimeWeighted weights each state by its duration instead of 1.
	TimeWeighted bool `json:"time_weighted" flag:"time-weighted" help:"weight each state by its duration instead of 1"`
	// Window is the width of the windows of the histogram-entropy series
	// (0: no series).
	Window time.Duration `json:"window_ns" flag:"window-ns" help:"histogram entropy per time window of this width (1ms, or nanoseconds; 0: no series)"`
	// Subsets is the size of the windows of adjacent processes of run 0
	// ranked by their entropy (0: no ranking).
	Subsets int `json:"subsets" flag:"subsets" help:"rank every window of this many adjacent processes of run 0 (0: no ranking)"`
	// Cyclic makes the windows of Subsets wrap around.
	Cyclic bool `json:"cyclic" flag:"cyclic" help:"with --subsets: windows wrap around (processes in a ring)"`
	// Measure is the measure the subsets are ranked by (empty:
	// comb_entropy_distinct); the command shows only it when given.
	Measure string `json:"measure,omitempty" flag:"measure" help:"rank the subsets by this measure, and print only it (comb_entropy, comb_entropy_distinct, surprisal_mean, histogram_entropy_mean, empirical_entropy)"`
}

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{} }

// RankedBy returns the measure the subsets are ranked by.
func (p *Params) RankedBy() Measure {
	if p.Measure == "" {
		return MeasureCombDistinct
	}
	return Measure(p.Measure)
}

// Report is the result of the entropy analysis.
type Report struct {
	// Runs holds the measures of each run with states, in run order.
	Runs []RunResult `json:"runs"`
	// All holds them over every run (absent for one run, or runs of
	// different process counts).
	All *Result `json:"all,omitempty"`
	// WindowNS is Params.Window; Series the histogram entropy of each
	// window of each run (with a window).
	WindowNS int64         `json:"window_ns,omitempty"`
	Series   []WindowPoint `json:"series,omitempty"`
	// Subsets ranks the windows of adjacent processes (with Params.Subsets).
	Subsets *SubsetRanking `json:"subsets,omitempty"`
}

// RunResult is the entropy of one run.
type RunResult struct {
	Run int32 `json:"run"`
	Result
}

// SubsetRanking ranks the windows of K adjacent processes of run 0, most
// anomalous first.
type SubsetRanking struct {
	Run     int32          `json:"run"`
	K       int            `json:"k"`
	Cyclic  bool           `json:"cyclic"`
	Measure Measure        `json:"measure"`
	Results []SubsetResult `json:"results"`
}

func init() {
	engine.Register(&engine.Analysis{
		Name:    Name,
		Doc:     "entropy of the parallel execution: combinatorial, histogram, empirical, over time and per subset of processes",
		Needs:   []trace.Kind{trace.KindState},
		Options: func() any { return DefaultParams() },
		Limit:   func(t *engine.Trace, req engine.Request, o any) error { return o.(*Params).Limit(t, req) },
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return newAnalysis(t, o.(*Params)) },
	})
}

// analysis is the entropy analysis' accumulator: it reads the shared
// state rows, and the records themselves for the subset ranking.
type analysis struct {
	state.Reading
	p    *Params
	opts Options
	cur  *Accumulator
	run  int32
	rep  Report
	// last is the run before cur, and all the runs before it merged: a
	// run is merged into all only once another follows, so that the
	// classes of a trace of one run are not copied.
	last *Accumulator
	all  *Accumulator
	// mixed is set when runs of different process counts make All
	// meaningless.
	mixed bool
	win   *Windows
	rank  *Ranker
	// ranked is the subset ranking, made (rankDone) once run 0 ended,
	// when the accumulator is encoded (MarshalBinary) or ends.
	ranked   []SubsetResult
	rankDone bool
}

func newAnalysis(t *engine.Trace, p *Params) (*analysis, error) {
	if p.Measure != "" {
		if _, err := (Result{}).Value(Measure(p.Measure)); err != nil {
			return nil, err
		}
	}
	if p.Blocks < 0 || p.Window < 0 || p.Subsets < 0 {
		return nil, fmt.Errorf("blocks %d, window %v, subsets %d: want 0 or more", p.Blocks, p.Window, p.Subsets)
	}
	a := &analysis{p: p}
	var err error
	if a.Reading, err = state.NewReading(t.Header, &p.Params, a); err != nil {
		return nil, err
	}
	a.opts = Options{Blocks: p.Blocks, TimeWeighted: p.TimeWeighted}
	if a.opts.Blocks == 0 {
		// A state marked Absent is no block a process can be in.
		a.opts.Blocks = len(t.Header.States) - len(t.Header.AbsentStates())
	}
	a.all = NewAccumulator(a.opts)
	if p.Window > 0 {
		if a.win, err = NewWindows(int64(p.Window)); err != nil {
			return nil, err
		}
	}
	if p.Subsets > 0 {
		so := a.StateOptions()
		so.Procs = nil
		if a.rank, err = NewRanker(t.Header, p.Subsets, p.Cyclic, a.opts, p.RankedBy(), so); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Row implements state.RowReader.
func (a *analysis) Row(r *state.Row) error {
	if a.cur == nil || r.Run != a.run {
		if err := a.flush(); err != nil {
			return err
		}
		a.cur, a.run = NewAccumulator(a.opts), r.Run
	}
	if err := a.cur.Add(r); err != nil {
		return err
	}
	if a.win != nil {
		return a.win.Add(r)
	}
	return nil
}

// Records implements state.RecordReader: the subset ranking rebuilds the
// partial states of its windows from the records.
func (a *analysis) Records(batch []trace.Record) error {
	if a.rank == nil {
		return nil
	}
	return a.rank.Add(batch)
}

// flush ends the current run.
func (a *analysis) flush() error {
	if a.cur == nil {
		return nil
	}
	res, err := a.cur.Result()
	if err != nil {
		return err
	}
	a.rep.Runs = append(a.rep.Runs, RunResult{a.run, res})
	err = a.fold()
	a.last, a.cur = a.cur, nil
	return err
}

// fold merges the last run into all: its classes spilled first, so that
// its runs move instead of its map being copied. Runs of different
// process counts make all meaningless (mixed).
func (a *analysis) fold() error {
	last := a.last
	if last == nil {
		return nil
	}
	a.last = nil
	if a.mixed {
		return last.Close()
	}
	if err := last.spillAll(); err != nil {
		return errors.Join(err, last.Close())
	}
	if a.all.Merge(last) != nil {
		a.mixed = true
		return errors.Join(last.Close(), a.all.Close())
	}
	return nil
}

// close lets the classes of every accumulator go.
func (a *analysis) close() error {
	var errs []error
	for _, acc := range []*Accumulator{a.cur, a.last, a.all} {
		if acc != nil {
			errs = append(errs, acc.Close())
		}
	}
	return errors.Join(errs...)
}

// Merge implements engine.Accumulator for the states of later runs (the
// subset ranking, of run 0, must be in the receiver).
func (a *analysis) Merge(o engine.Accumulator) error {
	b, ok := o.(*analysis)
	if !ok {
		return fmt.Errorf("entropy: merging a %T", o)
	}
	if err := errors.Join(a.EndPass(), b.EndPass()); err != nil {
		return err
	}
	if err := errors.Join(a.flush(), b.flush(), a.fold(), b.fold()); err != nil {
		return err
	}
	if len(a.rep.Runs) > 0 && len(b.rep.Runs) > 0 && b.rep.Runs[0].Run <= a.rep.Runs[len(a.rep.Runs)-1].Run {
		return fmt.Errorf("entropy: merging run %d after run %d (only later runs merge)", b.rep.Runs[0].Run, a.rep.Runs[len(a.rep.Runs)-1].Run)
	}
	if b.rank != nil && (b.rank.Seen() || b.rankDone) {
		return errors.New("entropy: merging the subset ranking of run 0 into later runs")
	}
	a.rep.Runs = append(a.rep.Runs, b.rep.Runs...)
	if a.mixed || b.mixed || a.all.Merge(b.all) != nil {
		a.mixed = true
		if err := errors.Join(a.all.Close(), b.all.Close()); err != nil {
			return err
		}
	}
	if a.win != nil {
		a.win.points = append(a.win.Result(), b.win.Result()...)
	}
	return nil
}

// Result implements engine.Accumulator.
func (a *analysis) Result() (any, error) {
	defer a.close()
	if err := a.EndPass(); err != nil {
		return nil, err
	}
	if err := a.flush(); err != nil {
		return nil, err
	}
	rep := a.rep
	if rep.Runs == nil {
		rep.Runs = []RunResult{}
	}
	if len(rep.Runs) > 1 {
		if err := a.fold(); err != nil {
			return nil, err
		}
		if !a.mixed {
			all, err := a.all.Result()
			if err != nil {
				return nil, err
			}
			rep.All = &all
		}
	}
	if a.win != nil {
		rep.WindowNS = int64(a.p.Window)
		rep.Series = a.win.Result()
		if rep.Series == nil {
			rep.Series = []WindowPoint{}
		}
	}
	if a.rank != nil {
		if !a.rank.Seen() && !a.rankDone {
			return nil, errors.New("the subset ranking reads run 0, and the runs analysed leave it out")
		}
		if err := a.rankNow(); err != nil {
			return nil, err
		}
		rep.Subsets = &SubsetRanking{Run: 0, K: a.p.Subsets, Cyclic: a.p.Cyclic, Measure: a.p.RankedBy(), Results: a.ranked}
	}
	return &rep, nil
}
