package state

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/spill"
	"github.com/parscope/parscope/trace"
)

// Params are the options of the reconstruction that every state analysis
// (states, entropy, pca, phasespace) has, with the same flags and JSON
// names in each.
type Params struct {
	// Procs restricts the state to these processes, in this order.
	Procs []int32 `json:"procs,omitempty" flag:"procs" help:"a partial state over these processes, in this order (e.g. 4,5,6)"`
	// Start is the block every process is in from time 0 until its first
	// record (the paper's start block): a state id or name. Empty means
	// none: a process does not exist before its first record.
	Start string `json:"start,omitempty" flag:"start" help:"put every process in this block (a state id or name) from time 0 until its first record (default: a process does not exist before its first record)"`
	// PerRecord makes a row of every record instead of one per distinct time.
	PerRecord bool `json:"per_record" flag:"per-record" help:"a state row per record instead of per distinct time"`
}

// Options returns the reconstruction options of p for the trace of header h.
func (p *Params) Options(h *trace.Header) (Options, error) {
	o := Options{Procs: p.Procs, PerRecord: p.PerRecord}
	if p.Start == "" {
		return o, nil
	}
	o.StartSet = true
	for _, s := range h.States {
		if s.Name == p.Start {
			o.Start = s.ID
			return o, nil
		}
	}
	id, err := strconv.ParseInt(p.Start, 10, 32)
	if err != nil {
		return o, fmt.Errorf("start %q is neither a state id nor a state name of the trace", p.Start)
	}
	o.Start = int32(id)
	return o, nil
}

// Limit is the part of engine.Analysis.Limit that every state analysis
// has: without a partial state (Procs), a run among those req selects may
// have at most MaxProcs processes, the columns a state's reconstruction
// holds.
func (p *Params) Limit(t *engine.Trace, req engine.Request) error {
	if p.Procs != nil {
		return nil
	}
	if run, n := t.LargestRun(req.Runs); n > MaxProcs {
		return fmt.Errorf("run %d has %d processes: its states would need %d MiB (at most %d processes; --procs builds partial states)",
			run, n, int64(n)*TrackerBytes>>20, MaxProcs)
	}
	return nil
}

// key identifies the rows the options o build.
func key(o Options) string {
	return fmt.Sprintf("state rows %v %d/%v %v", o.Procs, o.Start, o.StartSet, o.PerRecord)
}

// RowReader reads the rows of a Fan.
type RowReader interface {
	// Row adds one state row (valid only during the call).
	Row(*Row) error
}

// RecordReader is implemented by the readers of a Fan that also read the
// records themselves (the entropy's subset ranking rebuilds partial
// states of its own).
type RecordReader interface {
	// Records adds a batch of the records the fan is fed. The fan calls
	// it on another goroutine while it builds the batch's rows: it must
	// not touch what the reader's Row does, nor keep the batch.
	Records(batch []trace.Record) error
}

// Fan rebuilds the state rows from the records once and hands every row
// to each of its readers: the engine.Stage the state analyses share.
type Fan struct {
	b    *Builder
	rows []RowReader
	recs []RecordReader
}

// NewFan returns a fan of the rows of the trace of header h, built with
// opts, to readers.
func NewFan(h *trace.Header, opts Options, readers []RowReader) (*Fan, error) {
	f := &Fan{rows: readers}
	for _, r := range readers {
		if rr, ok := r.(RecordReader); ok {
			f.recs = append(f.recs, rr)
		}
	}
	var err error
	f.b, err = NewBuilder(h, opts, func(row *Row) error {
		for _, r := range f.rows {
			if err := r.Row(row); err != nil {
				return err
			}
		}
		return nil
	})
	return f, err
}

// Add implements engine.Stage. The readers that read records do so on
// another goroutine while the rows are built: on the state analyses'
// one goroutine, the entropy's subset ranking took a third of the time.
// Their error comes first, as it would in turn.
func (f *Fan) Add(batch []trace.Record) error {
	if len(f.recs) == 0 {
		return f.addRows(batch)
	}
	var wg sync.WaitGroup
	var recErr error
	wg.Go(func() {
		for _, r := range f.recs {
			if recErr = r.Records(batch); recErr != nil {
				return
			}
		}
	})
	err := f.addRows(batch)
	wg.Wait()
	if recErr != nil {
		return recErr
	}
	return err
}

// addRows builds the rows of batch and hands them to the readers.
func (f *Fan) addRows(batch []trace.Record) error {
	for i := range batch {
		if err := f.b.Add(&batch[i]); err != nil {
			return err
		}
	}
	return nil
}

// End implements engine.Stage: it delivers the last row.
func (f *Fan) End() error { return f.b.Close() }

// Reading is embedded in the engine accumulator of a state analysis: it
// makes the accumulator engine.Staged, reading the rows of a Fan shared
// with the other state analyses of equal reconstruction options, and
// gives it Add, which rebuilds the rows itself when the accumulator is
// used alone.
type Reading struct {
	h    *trace.Header
	opts Options
	self RowReader
	own  *Fan
}

// NewReading returns the Reading of the accumulator self, which reads the
// rows of the trace of header h that p asks for.
func NewReading(h *trace.Header, p *Params, self RowReader) (Reading, error) {
	o, err := p.Options(h)
	return Reading{h: h, opts: o, self: self}, err
}

// StateOptions returns the reconstruction options.
func (r *Reading) StateOptions() Options { return r.opts }

// StageKey implements engine.Staged.
func (r *Reading) StageKey() string { return key(r.opts) }

// NewStage implements engine.Staged.
func (r *Reading) NewStage(accs []engine.Accumulator) (engine.Stage, error) {
	readers := make([]RowReader, len(accs))
	for i, a := range accs {
		rr, ok := a.(RowReader)
		if !ok {
			return nil, fmt.Errorf("state: a %T reads no state rows", a)
		}
		readers[i] = rr
	}
	return NewFan(r.h, r.opts, readers)
}

// Add implements engine.Accumulator for the accumulator used alone.
func (r *Reading) Add(batch []trace.Record) error {
	if r.own == nil {
		f, err := NewFan(r.h, r.opts, []RowReader{r.self})
		if err != nil {
			return err
		}
		r.own = f
	}
	return r.own.Add(batch)
}

// EndPass ends the pass of an accumulator used alone (it delivers the last
// row); the accumulator calls it before it answers Again or Result.
func (r *Reading) EndPass() error {
	if r.own == nil {
		return nil
	}
	f := r.own
	r.own = nil
	return f.End()
}

// Name is the states analysis' name in the engine's registry.
const Name = "states"

// DefaultTimelineSamples is the default of StatesParams.TimelineSamples.
const DefaultTimelineSamples = 256

// MaxTimelineProcs is the largest number of columns of a state whose
// timeline the states analysis samples (P×samples values).
const MaxTimelineProcs = 4096

// MaxTimelineChanges is the largest number of block changes (all processes
// together) a run's timeline lists; a run with more keeps only its samples.
const MaxTimelineChanges = 200000

// StatesParams are the options of the states analysis.
type StatesParams struct {
	Params
	// TimelineSamples is the number of instants of each run at which the
	// block of every process is sampled (0: no timeline).
	TimelineSamples int `json:"timeline_samples" flag:"timeline-samples" help:"sample the block of every process at this many instants of each run (0: none; runs of more than 4096 processes have none)"`
}

// DefaultStatesParams returns the default options of the states analysis.
func DefaultStatesParams() *StatesParams {
	return &StatesParams{TimelineSamples: DefaultTimelineSamples}
}

// Summary is the result of the states analysis.
type Summary struct {
	// BlockNames names the blocks (state ids) by the state's description,
	// or its name.
	BlockNames map[int32]string `json:"block_names"`
	// Runs are the runs with states, in run order.
	Runs []RunSummary `json:"runs"`
}

// RunSummary describes the states of one run.
type RunSummary struct {
	Run int32 `json:"run"`
	// Procs is the number of columns of a state.
	Procs int `json:"procs"`
	// States is the number of states (rows); DistinctClasses the number of
	// distinct classes (multisets of blocks) among them.
	States          int64 `json:"states"`
	DistinctClasses int   `json:"distinct_classes"`
	// FirstNS is the time of the first state, LastNS the time the last
	// state begins.
	FirstNS int64 `json:"first_ns"`
	LastNS  int64 `json:"last_ns"`
	// Timeline samples the block of every process (absent for more than
	// MaxTimelineProcs columns or without samples).
	Timeline *Timeline `json:"timeline,omitempty"`
}

// Timeline is the block of each process sampled over a run.
type Timeline struct {
	// BeginNS is the run's first record and WidthNS the sampling period:
	// sample w is taken at BeginNS + (w+0.5)·WidthNS, over the run's span
	// of every record kind.
	BeginNS int64   `json:"begin_ns"`
	WidthNS float64 `json:"width_ns"`
	// Blocks[p][w] is the block of column p at sample w, Absent (-1)
	// when the process does not exist then.
	Blocks [][]int32 `json:"blocks"`
	// EndNS is the run's last record. ChangeNS[p][i] is the time at which
	// column p enters block ChangeBlock[p][i], which it holds until
	// ChangeNS[p][i+1] (the last one until EndNS): every state, however
	// short, where the samples show only the blocks at their instants.
	// Both are absent when the run has more than MaxTimelineChanges
	// changes.
	EndNS       int64     `json:"end_ns"`
	ChangeNS    [][]int64 `json:"change_ns,omitempty"`
	ChangeBlock [][]int32 `json:"change_block,omitempty"`
	changes     int
}

func init() {
	engine.Register(&engine.Analysis{
		Name:    Name,
		Doc:     "the total parallel states of each run: how many, how many distinct classes, and the block of each process over time",
		Needs:   []trace.Kind{trace.KindState},
		Options: func() any { return DefaultStatesParams() },
		Limit:   func(t *engine.Trace, req engine.Request, o any) error { return o.(*StatesParams).Limit(t, req) },
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return newStates(t, o.(*StatesParams)) },
	})
}

// ClassesBudget bounds the memory (bytes) the states analysis holds to
// count the distinct classes of a run: past it, the class hashes are
// written, sorted, to temporary files and merged back to count them
// (spill.Set).
const ClassesBudget = 16 << 20

// statesAcc is the states analysis' accumulator.
type statesAcc struct {
	Reading
	t    *engine.Trace
	p    *StatesParams
	runs []RunSummary
	// classes holds the class hashes of the current run, counted when
	// the run ends (counting: a run's classes are pending).
	classes  *spill.Set
	counting bool
	prevX    []int32
	prevEnd  int64 // the end of the state prevX holds (the first state's time before it)
	next     int
}

func newStates(t *engine.Trace, p *StatesParams) (*statesAcc, error) {
	if p.TimelineSamples < 0 {
		return nil, fmt.Errorf("timeline samples %d: want 0 or more", p.TimelineSamples)
	}
	a := &statesAcc{t: t, p: p, classes: spill.NewSet("states", ClassesBudget)}
	var err error
	a.Reading, err = NewReading(t.Header, &p.Params, a)
	return a, err
}

// Row implements RowReader.
func (a *statesAcc) Row(r *Row) error {
	if len(a.runs) == 0 || a.runs[len(a.runs)-1].Run != r.Run {
		if err := a.end(); err != nil {
			return err
		}
		a.runs = append(a.runs, RunSummary{Run: r.Run, Procs: r.P(), FirstNS: r.T})
		a.counting = true
		a.prevX, a.next = a.prevX[:0], 0
		if n := a.p.TimelineSamples; n > 0 && r.P() <= MaxTimelineProcs {
			// Before the run's first state no process exists.
			for range r.P() {
				a.prevX = append(a.prevX, Absent)
			}
			a.prevEnd = r.T
			begin, end, _ := a.t.Span(r.Run)
			tl := &Timeline{BeginNS: begin, WidthNS: float64(end-begin+1) / float64(n), Blocks: make([][]int32, r.P()), EndNS: end,
				ChangeNS: make([][]int64, r.P()), ChangeBlock: make([][]int32, r.P())}
			for p := range tl.Blocks {
				// Empty, not null, for a process that never exists.
				tl.Blocks[p], tl.ChangeNS[p], tl.ChangeBlock[p] = make([]int32, n), []int64{}, []int32{}
			}
			a.runs[len(a.runs)-1].Timeline = tl
		}
	}
	cur := &a.runs[len(a.runs)-1]
	cur.States++
	cur.LastNS = r.T
	if err := a.classes.Add(r.ClassHash()); err != nil {
		return err
	}
	if tl := cur.Timeline; tl != nil {
		// The samples before this state's time show the previous one, or
		// no process after its end (a gap in which none existed).
		for ; len(a.prevX) > 0 && a.next < a.p.TimelineSamples; a.next++ {
			at := tl.BeginNS + int64((float64(a.next)+0.5)*tl.WidthNS)
			if at >= r.T {
				break
			}
			for p := range tl.Blocks {
				tl.Blocks[p][a.next] = a.prevX[p]
				if at >= a.prevEnd {
					tl.Blocks[p][a.next] = Absent
				}
			}
		}
		if len(a.prevX) > 0 && r.T > a.prevEnd {
			// A gap in which no process existed: every column leaves its
			// block when the previous state ends.
			gap := Row{T: a.prevEnd, X: make([]int32, len(a.prevX))}
			for p := range gap.X {
				gap.X[p] = Absent
			}
			tl.change(a.prevX, &gap)
			a.prevX = append(a.prevX[:0], gap.X...)
		}
		tl.change(a.prevX, r)
		a.prevX = append(a.prevX[:0], r.X...)
		a.prevEnd = r.T + r.Dur
	}
	return nil
}

// change records the columns of row r whose block differs from prev (all
// of them at the first row), and drops the lists once they grow past
// MaxTimelineChanges.
func (tl *Timeline) change(prev []int32, r *Row) {
	if tl.ChangeNS == nil {
		return
	}
	for p, b := range r.X {
		if len(prev) == len(r.X) && prev[p] == b {
			continue
		}
		if n := len(tl.ChangeNS[p]); n > 0 && tl.ChangeNS[p][n-1] == r.T {
			// Two rows at one instant: the later block holds.
			tl.ChangeBlock[p][n-1] = b
			continue
		}
		if tl.changes++; tl.changes > MaxTimelineChanges {
			tl.ChangeNS, tl.ChangeBlock = nil, nil
			return
		}
		tl.ChangeNS[p] = append(tl.ChangeNS[p], r.T)
		tl.ChangeBlock[p] = append(tl.ChangeBlock[p], b)
	}
}

// end ends the current run: its samples filled, its classes counted.
func (a *statesAcc) end() error {
	a.fill()
	if !a.counting {
		return nil
	}
	a.counting = false
	n, err := a.classes.Len()
	a.runs[len(a.runs)-1].DistinctClasses = n
	return errors.Join(err, a.classes.Close())
}

// fill gives the samples after the current run's last state that state.
func (a *statesAcc) fill() {
	if len(a.runs) == 0 || len(a.prevX) == 0 {
		return
	}
	tl := a.runs[len(a.runs)-1].Timeline
	if tl == nil {
		return
	}
	for ; a.next < a.p.TimelineSamples; a.next++ {
		for p := range tl.Blocks {
			tl.Blocks[p][a.next] = a.prevX[p]
		}
	}
}

// Merge implements engine.Accumulator for the states of later runs.
func (a *statesAcc) Merge(o engine.Accumulator) error {
	b, ok := o.(*statesAcc)
	if !ok {
		return fmt.Errorf("states: merging a %T", o)
	}
	if err := errors.Join(a.EndPass(), b.EndPass()); err != nil {
		return err
	}
	if err := errors.Join(a.end(), b.end()); err != nil {
		return err
	}
	if len(a.runs) > 0 && len(b.runs) > 0 && b.runs[0].Run <= a.runs[len(a.runs)-1].Run {
		return fmt.Errorf("states: merging run %d after run %d (only later runs merge)", b.runs[0].Run, a.runs[len(a.runs)-1].Run)
	}
	a.runs = append(a.runs, b.runs...)
	a.prevX = nil
	return nil
}

// Result implements engine.Accumulator.
func (a *statesAcc) Result() (any, error) {
	if err := a.EndPass(); err != nil {
		return nil, err
	}
	if err := a.end(); err != nil {
		return nil, err
	}
	a.prevX = nil
	s := &Summary{BlockNames: BlockNames(a.t.Header), Runs: a.runs}
	if s.Runs == nil {
		s.Runs = []RunSummary{}
	}
	slices.SortStableFunc(s.Runs, func(x, y RunSummary) int { return cmp.Compare(x.Run, y.Run) })
	return s, nil
}

// BlockNames names the blocks of the trace of header h: the state's
// description, or its name.
func BlockNames(h *trace.Header) map[int32]string {
	names := map[int32]string{}
	for _, st := range h.States {
		names[st.ID] = st.Name
		if st.Description != "" {
			names[st.ID] = st.Description
		}
	}
	return names
}
