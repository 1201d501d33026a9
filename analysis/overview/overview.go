// Package overview is the overview analysis: what a trace holds and when.
// For every run it counts the records by kind, the processes and the time
// span, and the records of each kind per time window at several levels of
// detail, so that a view of any time range is answered from a few hundred
// windows whatever the trace's size. It is registered in the engine as
// "overview": `parscope overview`, the report's overview section and
// summary, and `parscope serve`'s time-range queries all read its result.
package overview

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the overview analysis' name in the engine's registry.
const Name = "overview"

// DefaultWindows is the default number of windows of the finest level.
const DefaultWindows = 1024

// Factor is the ratio between the window counts of two adjacent levels.
const Factor = 4

// Params are the options of the overview analysis (the flags of
// `parscope overview` and the "options" of its envelope).
type Params struct {
	// Windows is the number of windows of the finest level of each run.
	Windows int `json:"windows" flag:"windows" help:"number of time windows of the finest level of each run's activity (each coarser level has 4 times fewer)"`
}

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{Windows: DefaultWindows} }

// Result is the overview of the runs analysed.
type Result struct {
	// Records counts the records of every kind, over the runs analysed.
	Records map[string]int64 `json:"records"`
	// Kinds names the columns of Level.Counts: every kind with a time (BBV
	// records have none; they are counted in Records only).
	Kinds []string `json:"kinds"`
	// Runs are the runs analysed, in run order.
	Runs []Run `json:"runs"`
}

// RunSummary is what a run holds.
type RunSummary struct {
	Run int32 `json:"run"`
	// Name is the run's name in the trace's header, if any.
	Name string `json:"name,omitempty"`
	// Procs is the number of processes: one more than the largest process
	// number of the run's records.
	Procs int32 `json:"procs"`
	// ProcessNames lists the processes whose name says more than their
	// number (the original id an importer renumbered: a pid, an MPI rank).
	ProcessNames []ProcessName `json:"process_names,omitempty"`
	// Records counts the run's records of every kind.
	Records int64 `json:"records"`
	// BeginNS and EndNS are the run's time span: its first record's time
	// and the last time a record covers (a message's or collective's end).
	BeginNS int64 `json:"begin_ns"`
	EndNS   int64 `json:"end_ns"`
}

// ProcessName names one process.
type ProcessName struct {
	Proc int32  `json:"proc"`
	Name string `json:"name"`
}

// Run is the overview of one run.
type Run struct {
	RunSummary
	// Levels go from the finest (Params.Windows windows) to the coarsest,
	// each Factor times coarser than the one before.
	Levels []Level `json:"levels"`
}

// Level is one level of detail: the run's time span cut into equal
// windows.
type Level struct {
	BeginNS int64 `json:"begin_ns"`
	// WidthNS is the duration of a window.
	WidthNS float64 `json:"width_ns"`
	Windows int     `json:"windows"`
	// Counts holds, window after window, the number of records of each
	// kind (Result.Kinds) that start in the window (len Windows × len
	// Kinds).
	Counts []int64 `json:"counts"`
}

// Window returns the counts of window i of a level with kinds columns.
func (l *Level) Window(i, kinds int) []int64 { return l.Counts[i*kinds : (i+1)*kinds] }

// Summaries returns the runs without their levels.
func (r *Result) Summaries() []RunSummary {
	out := make([]RunSummary, len(r.Runs))
	for i := range r.Runs {
		out[i] = r.Runs[i].RunSummary
	}
	return out
}

// Informative reports whether a process's name says more than its number
// ("rank 3" for process 3 does not).
func Informative(p trace.ProcInfo) bool {
	n := p.Name
	return n != "" && n != fmt.Sprint(p.Proc) && n != fmt.Sprintf("rank %d", p.Proc) && n != fmt.Sprintf("process %d", p.Proc)
}

// timedKinds lists the kinds the levels count, in column order.
func timedKinds() []trace.Kind {
	var ks []trace.Kind
	for _, k := range trace.Kinds {
		if k != trace.KindBBV {
			ks = append(ks, k)
		}
	}
	return ks
}

func init() {
	engine.Register(&engine.Analysis{
		Name:     Name,
		Recorded: true,
		Doc:      "what the trace holds: runs, processes, time spans, records by kind and over time",
		Feeds:    func(any) []trace.Kind { return trace.Kinds },
		Options:  func() any { return DefaultParams() },
		New:      func(t *engine.Trace, o any) (engine.Accumulator, error) { return newAnalysis(t, o.(*Params)) },
	})
}

// runAcc is the running overview of one run.
type runAcc struct {
	run     Run
	seen    bool // a timed record was counted: BeginNS is set
	byKind  [trace.KindBBV + 1]int64
	maxProc int32
}

// analysis is the engine's accumulator of the overview.
type analysis struct {
	t    *engine.Trace
	p    *Params
	col  [trace.KindBBV + 1]int // column of a timed kind, -1 for BBV
	nk   int
	runs map[int32]*runAcc
	last *runAcc
}

func newAnalysis(t *engine.Trace, p *Params) (*analysis, error) {
	if p.Windows < 1 {
		return nil, fmt.Errorf("windows %d: want 1 or more", p.Windows)
	}
	a := &analysis{t: t, p: p, runs: map[int32]*runAcc{}}
	for i := range a.col {
		a.col[i] = -1
	}
	for i, k := range timedKinds() {
		a.col[k] = i
		a.nk++
	}
	return a, nil
}

// runOf returns the accumulator of run, made on its first record.
func (a *analysis) runOf(run int32) *runAcc {
	if a.last != nil && a.last.run.Run == run {
		return a.last
	}
	r := a.runs[run]
	if r == nil {
		begin, end, _ := a.t.Span(run)
		r = &runAcc{maxProc: -1, run: Run{RunSummary: RunSummary{Run: run}, Levels: []Level{{BeginNS: begin,
			WidthNS: float64(end-begin+1) / float64(a.p.Windows), Windows: a.p.Windows, Counts: make([]int64, a.p.Windows*a.nk)}}}}
		if int(run) < len(a.t.Header.Runs) && run >= 0 {
			r.run.Name = a.t.Header.Runs[run].Name
		}
		a.runs[run] = r
	}
	a.last = r
	return r
}

// Add implements engine.Accumulator.
func (a *analysis) Add(batch []trace.Record) error {
	for i := range batch {
		rec := &batch[i]
		if !rec.Kind.Valid() {
			continue
		}
		r := a.runOf(rec.Run)
		r.byKind[rec.Kind]++
		r.maxProc = max(r.maxProc, rec.Proc)
		c := a.col[rec.Kind]
		if c < 0 {
			continue
		}
		end := rec.T
		if (rec.Kind == trace.KindSend || rec.Kind == trace.KindRecv || rec.Kind == trace.KindCollective) && rec.End > end {
			end = rec.End
		}
		if !r.seen || rec.T < r.run.BeginNS {
			r.run.BeginNS = rec.T
		}
		if !r.seen || end > r.run.EndNS {
			r.run.EndNS = end
		}
		r.seen = true
		l := &r.run.Levels[0]
		w := int(float64(rec.T-l.BeginNS) / l.WidthNS)
		w = min(max(w, 0), l.Windows-1)
		l.Counts[w*a.nk+c]++
	}
	return nil
}

// Merge implements engine.Accumulator: every count adds up, so other may
// hold any records (other runs, or a later time shard of the same runs).
func (a *analysis) Merge(o engine.Accumulator) error {
	b, ok := o.(*analysis)
	if !ok {
		return fmt.Errorf("overview: merging a %T", o)
	}
	if b.p.Windows != a.p.Windows {
		return fmt.Errorf("overview: merging %d windows into %d", b.p.Windows, a.p.Windows)
	}
	for run, y := range b.runs {
		x := a.runs[run]
		if x == nil {
			a.runs[run] = y
			continue
		}
		for k := range x.byKind {
			x.byKind[k] += y.byKind[k]
		}
		x.maxProc = max(x.maxProc, y.maxProc)
		if y.seen {
			if !x.seen || y.run.BeginNS < x.run.BeginNS {
				x.run.BeginNS = y.run.BeginNS
			}
			if !x.seen || y.run.EndNS > x.run.EndNS {
				x.run.EndNS = y.run.EndNS
			}
			x.seen = true
		}
		for i, n := range y.run.Levels[0].Counts {
			x.run.Levels[0].Counts[i] += n
		}
	}
	b.runs, b.last = nil, nil
	return nil
}

// Result implements engine.Accumulator.
func (a *analysis) Result() (any, error) {
	res := &Result{Records: map[string]int64{}}
	for _, k := range timedKinds() {
		res.Kinds = append(res.Kinds, k.String())
	}
	names := map[int32][]ProcessName{}
	for _, p := range a.t.Header.Procs {
		if Informative(p) {
			names[p.Run] = append(names[p.Run], ProcessName{Proc: p.Proc, Name: p.Name})
		}
	}
	for _, r := range a.runs {
		for k, n := range r.byKind {
			if n > 0 {
				res.Records[trace.Kind(k).String()] += n
				r.run.Records += n
			}
		}
		r.run.Procs = r.maxProc + 1
		for _, pn := range names[r.run.Run] {
			if pn.Proc <= r.maxProc {
				r.run.ProcessNames = append(r.run.ProcessNames, pn)
			}
		}
		slices.SortFunc(r.run.ProcessNames, func(x, y ProcessName) int { return cmp.Compare(x.Proc, y.Proc) })
		coarsen(&r.run, a.nk)
		res.Runs = append(res.Runs, r.run)
	}
	slices.SortFunc(res.Runs, func(x, y Run) int { return cmp.Compare(x.Run, y.Run) })
	return res, nil
}

// coarsen adds the coarser levels to the finest.
func coarsen(r *Run, nk int) {
	for r.Levels[len(r.Levels)-1].Windows > Factor {
		fine := &r.Levels[len(r.Levels)-1]
		n := (fine.Windows + Factor - 1) / Factor
		coarse := Level{BeginNS: fine.BeginNS, WidthNS: fine.WidthNS * Factor, Windows: n, Counts: make([]int64, n*nk)}
		for w := range fine.Windows {
			for c := range nk {
				coarse.Counts[(w/Factor)*nk+c] += fine.Counts[w*nk+c]
			}
		}
		r.Levels = append(r.Levels, coarse)
	}
}

// Slice is the answer to an overview query: the windows of one level that
// cover a time range.
type Slice struct {
	Run   int32    `json:"run"`
	Kinds []string `json:"kinds"`
	// Level is the index of the level used (0 is the finest).
	Level   int     `json:"level"`
	WidthNS float64 `json:"width_ns"`
	// StartsNS are the start times of the windows and Counts their
	// counts, as in Level.Counts.
	StartsNS []int64 `json:"starts_ns"`
	Counts   []int64 `json:"counts"`
}

// Query returns the windows of run that overlap [from, to) (to ≤ from
// means to the end) from the finest level that needs at most most windows
// (the coarsest level when none does). It reads only the pre-aggregated
// levels. ok is false when the run is unknown.
func (res *Result) Query(run int32, from, to int64, most int) (sl Slice, ok bool) {
	var r *Run
	for i := range res.Runs {
		if res.Runs[i].Run == run {
			r = &res.Runs[i]
		}
	}
	if r == nil || len(r.Levels) == 0 {
		return Slice{}, false
	}
	if to <= from {
		to = r.Levels[0].BeginNS + int64(float64(r.Levels[0].Windows)*r.Levels[0].WidthNS) + 1
	}
	nk := len(res.Kinds)
	span := func(l *Level) (int, int) {
		a := int(float64(from-l.BeginNS) / l.WidthNS)
		b := int(float64(to-l.BeginNS)/l.WidthNS) + 1
		return min(max(a, 0), l.Windows), min(max(b, 0), l.Windows)
	}
	li := len(r.Levels) - 1
	for i := range r.Levels {
		a, b := span(&r.Levels[i])
		if b-a <= most {
			li = i
			break
		}
	}
	l := &r.Levels[li]
	a, b := span(l)
	sl = Slice{Run: run, Kinds: res.Kinds, Level: li, WidthNS: l.WidthNS, Counts: l.Counts[a*nk : b*nk]}
	for w := a; w < b; w++ {
		sl.StartsNS = append(sl.StartsNS, l.BeginNS+int64(float64(w)*l.WidthNS))
	}
	return sl, true
}
