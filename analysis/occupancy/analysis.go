package occupancy

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/trace"
)

// Name is the occupancy analysis' name in the engine's registry.
const Name = "occupancy"

// Params are the options of the occupancy analysis, the same for every
// face: the flag names of `parscope occupancy` and parscope-beam, and the
// "options" of the result's JSON envelope.
type Params struct {
	// Modes is a file mapping states to modes (ParseModes); empty makes
	// every state a mode of its own.
	Modes string `json:"modes,omitempty" flag:"modes" help:"a file mapping states to modes (lines \"STATE MODE\"); default: every state is a mode"`
	// Start is the mode processes are in before their first state; empty
	// means none: a process does not exist, and counts in no mode, before
	// its first state record.
	Start string `json:"start,omitempty" flag:"start" help:"put processes in this mode before their first state (default: a process does not exist before its first state)"`
	// Project lists modes (names, or A1..Am) to project the table on (T4).
	Project []string `json:"project,omitempty" flag:"project" help:"also project the table on these modes (e.g. U,R)"`
	// Rates is a rate table file (ParseRates): the result then holds the
	// work Σ occupancy (s) × rate.
	Rates string `json:"rates,omitempty" flag:"rates" help:"a rate table r(macrostate) (lines \"C1,...,Ck RATE\", \"* RATE\"): the work Σ occupancy × rate"`
	// Counters also averages the instrument library's occupancy counters.
	Counters bool `json:"counters" flag:"counters" help:"also average the instrument library's occupancy counters"`
	// Top bounds the table rows kept per run to those of the largest
	// occupancy (0 keeps every row).
	Top int `json:"top" flag:"top" help:"keep the table rows of the largest occupancy, at most this many per run (0: all)"`
	// Windows is the number of windows of the processes-per-mode series
	// (0: no series).
	Windows int `json:"windows" flag:"windows" help:"number of time windows of the processes-per-mode series of each run (0: none)"`
}

// DefaultTop and DefaultWindows are the defaults of Params.Top and
// Params.Windows.
const (
	DefaultTop     = 20
	DefaultWindows = 256
)

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{Top: DefaultTop, Windows: DefaultWindows} }

// Report is the result of the occupancy analysis: one entry per run with
// state records, and with Params.Counters per run with occupancy counters
// (a trace recorded for the local collection alone may hold no state
// records: instrument.DropKinds(trace.KindState)), in run order.
type Report struct {
	Runs []RunReport `json:"runs"`
}

// RunReport is the occupancy of one run (Lyon 1990).
type RunReport struct {
	Run   int32 `json:"run"`
	Procs int   `json:"procs"`
	// Modes are the mode names, the columns A1..Am of the tables.
	Modes []string `json:"modes"`
	// StartMode is the mode processes are in before their first state
	// ("" when none is given: they do not exist then).
	StartMode string `json:"start_mode,omitempty"`
	// BeginNS and EndNS delimit the run: from its first record of any
	// kind (from 0 with a start mode, which processes are in from time 0
	// on) to the end of its last.
	BeginNS int64 `json:"begin_ns"`
	EndNS   int64 `json:"end_ns"`
	// AbsentNS is the time processes did not exist (before their first
	// state record, after entering a state marked absent), summed over the
	// processes: the time in no mode. Σ_j Mean[j].GlobalNS·p + AbsentNS =
	// p·(EndNS−BeginNS).
	AbsentNS int64 `json:"absent_ns"`
	// StateRecords counts the state records read.
	StateRecords int64 `json:"state_records"`
	// Microstates and MacrostateRows are the rows of T1 and T2.
	Microstates    int64 `json:"microstates"`
	MacrostateRows int64 `json:"macrostate_rows"`
	// PossibleMacrostates is C(p+m-1, p), or C(p+m, p) when processes are
	// absent for a while (Result.Possible; a decimal string: it can exceed
	// any integer type); ObservedMacrostates the rows of T3.
	PossibleMacrostates string `json:"possible_macrostates"`
	ObservedMacrostates int    `json:"observed_macrostates"`
	// Compression is state records per occupancy table row.
	Compression float64 `json:"compression"`
	// Table is the occupancy table (T3) in order of first appearance:
	// with Params.Top, the rows of the largest occupancy only, and
	// TableOmitted counts the others. With Top 0 the analysis' result
	// holds the whole table in temporary files instead, read by EachRow
	// (and written into "table" by MarshalJSON); Table is then nil.
	Table        []Macro `json:"table"`
	TableOmitted int     `json:"table_omitted"`
	// Projection is T4 (with Params.Project).
	Projection *Projection `json:"projection,omitempty"`
	// Mean is the mean node occupancy of each mode (T5).
	Mean []ModeMean `json:"mean"`
	// CountersSpanNS is the elapsed time the instrument library's counters
	// cover (Counters.Span: from the earliest beginning of a process, its
	// end minus the sum of its counters, to the latest end), with
	// Params.Counters in a run that has occupancy counters; 0 otherwise.
	CountersSpanNS float64 `json:"counters_span_ns,omitempty"`
	// Histogram[j][k] is the fraction of the run's time with k processes
	// in mode j.
	Histogram [][]float64 `json:"histogram"`
	// WindowNS is the width of a window of ProcessesPerWindow, whose
	// [w][j] is the time-weighted mean number of processes in mode j in
	// window w (with Params.Windows).
	WindowNS           float64     `json:"window_ns,omitempty"`
	ProcessesPerWindow [][]float64 `json:"processes_per_window,omitempty"`
	// Work is Σ occupancy (s) × rate over the table WorkOf names
	// ("table" or "projection"), with Params.Rates.
	Work   *float64 `json:"work,omitempty"`
	WorkOf string   `json:"work_of,omitempty"`

	// stream is the whole table with Params.Top 0, until Report.Close.
	stream *TableStream
}

// EachRow calls fn with every row of the run's occupancy table that the
// report holds, in order of first appearance: the whole table with
// Params.Top 0 (streamed from temporary files: m.Counts is valid only
// during the call), else the rows of Table. It stops at fn's first error.
func (r *RunReport) EachRow(fn func(m Macro) error) error {
	if r.stream != nil {
		return r.stream.Each(fn)
	}
	for _, m := range r.Table {
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Streamed reports whether the run's table is streamed by EachRow rather
// than held in Table.
func (r *RunReport) Streamed() bool { return r.stream != nil }

// runReportJSON is RunReport without its methods, for MarshalJSON.
type runReportJSON RunReport

// MarshalJSON writes the run's report; with a streamed table, "table"
// holds every row, read into memory for the occasion (the CLI writes it
// row by row instead).
func (r RunReport) MarshalJSON() ([]byte, error) {
	if r.stream != nil {
		all, err := r.stream.All()
		if err != nil {
			return nil, err
		}
		r.Table = all
	}
	return json.Marshal(runReportJSON(r))
}

// Close removes the temporary files of the tables streamed with
// Params.Top 0. The tables cannot be read afterwards.
func (r *Report) Close() error {
	var errs []error
	for i := range r.Runs {
		errs = append(errs, r.Runs[i].stream.Close())
		r.Runs[i].stream = nil
	}
	return errors.Join(errs...)
}

// Projection is the occupancy table projected on some modes (T4).
type Projection struct {
	Modes       []string `json:"modes"`
	ModeIndices []int    `json:"mode_indices"`
	Table       []Macro  `json:"table"`
}

// ModeMean is the mean node occupancy of one mode.
type ModeMean struct {
	Mode string `json:"mode"`
	// GlobalNS is from the occupancy table, LocalNS from the per-process
	// counters of the accumulator, CountersNS from the instrument
	// library's counters (with Params.Counters).
	GlobalNS   float64  `json:"global_ns"`
	LocalNS    float64  `json:"local_ns"`
	CountersNS *float64 `json:"counters_ns,omitempty"`
	// Share is GlobalNS over the run's duration.
	Share float64 `json:"share"`
}

func init() {
	engine.Register(&engine.Analysis{
		Name:  Name,
		Doc:   "state occupancies: macrostates, occupancy tables, mean node occupancy (Lyon 1990)",
		Needs: []trace.Kind{trace.KindState},
		// With the counters, a trace of the local collection alone (the
		// counters without state records) is read too.
		NeedsOf: func(o any) []trace.Kind {
			if o.(*Params).Counters {
				return []trace.Kind{trace.KindState, trace.KindCounter}
			}
			return []trace.Kind{trace.KindState}
		},
		Feeds: func(o any) []trace.Kind {
			if o.(*Params).Counters {
				return []trace.Kind{trace.KindState, trace.KindCounter}
			}
			return []trace.Kind{trace.KindState}
		},
		Options: func() any { return DefaultParams() },
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return newAnalysis(t, o.(*Params)) },
	})
}

// analysis is the engine's accumulator of the occupancy analysis: one
// Accumulator per run, each run's report made when the run's records end.
type analysis struct {
	t        *engine.Trace
	p        *Params
	modes    *Modes
	keep     []int
	rates    Rates
	ratesOn  string
	counters map[int32]bool // ids of occupancy counters
	cntRecs  []trace.Record

	run  int32
	acc  *Accumulator
	ser  *series
	done []RunReport
}

func newAnalysis(t *engine.Trace, p *Params) (*analysis, error) {
	a := &analysis{t: t, p: p, run: -1, modes: StateModes(t.Header)}
	if p.Modes != "" {
		f, err := regular.Open(p.Modes)
		if err != nil {
			return nil, err
		}
		a.modes, err = ParseModes(f, p.Modes, t.Header)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if len(a.modes.Names) == 0 {
		return nil, fmt.Errorf("the trace defines no states (give a modes file)")
	}
	if p.Start != "" && a.modes.Index(p.Start) < 0 {
		return nil, fmt.Errorf("start mode %q is not one of the modes %s", p.Start, strings.Join(a.modes.Names, ", "))
	}
	for _, name := range p.Project {
		k := modeIndex(a.modes.Names, strings.TrimSpace(name))
		if k < 0 {
			return nil, fmt.Errorf("project: %q is neither a mode nor A1..A%d (modes: %s)", name, len(a.modes.Names), strings.Join(a.modes.Names, ", "))
		}
		a.keep = append(a.keep, k)
	}
	if p.Top < 0 || p.Windows < 0 {
		return nil, fmt.Errorf("top %d, windows %d: want 0 or more", p.Top, p.Windows)
	}
	if p.Rates != "" {
		f, err := regular.Open(p.Rates)
		if err != nil {
			return nil, err
		}
		var k int
		a.rates, k, err = ParseRates(f, p.Rates)
		f.Close()
		if err != nil {
			return nil, err
		}
		switch {
		case k == 0 || k == len(a.modes.Names):
			a.ratesOn = "table"
		case a.keep != nil && k == len(a.keep):
			a.ratesOn = "projection"
		default:
			return nil, fmt.Errorf("%s: macrostates of %d counts, expected %d (the modes %s) or, with a projection, the number of projected modes", p.Rates, k, len(a.modes.Names), strings.Join(a.modes.Names, ", "))
		}
	}
	if p.Counters {
		a.counters = map[int32]bool{}
		for _, c := range t.Header.Counters {
			if strings.HasPrefix(c.Name, CounterPrefix) {
				a.counters[c.ID] = true
			}
		}
	}
	return a, nil
}

// modeIndex finds a mode by name, or by its column name A1..Am.
func modeIndex(modes []string, name string) int {
	if k := slices.Index(modes, name); k >= 0 {
		return k
	}
	if rest, ok := strings.CutPrefix(name, "A"); ok {
		if k, err := strconv.Atoi(rest); err == nil && k >= 1 && k <= len(modes) {
			return k - 1
		}
	}
	return -1
}

// Add implements engine.Accumulator.
func (a *analysis) Add(batch []trace.Record) error {
	for i := range batch {
		r := &batch[i]
		if r.Kind == trace.KindCounter {
			if a.counters[r.ID] {
				a.cntRecs = append(a.cntRecs, *r)
			}
			continue
		}
		if r.Kind != trace.KindState {
			continue
		}
		if a.acc == nil || r.Run != a.run {
			if err := a.finish(); err != nil {
				return err
			}
			if err := a.begin(r.Run); err != nil {
				return err
			}
		}
		if err := a.acc.Add(r); err != nil {
			return fmt.Errorf("run %d: %w", a.run, err)
		}
		if a.ser != nil {
			a.ser.add(r)
		}
	}
	return nil
}

// begin starts the accumulators of run.
func (a *analysis) begin(run int32) error {
	if slices.ContainsFunc(a.done, func(r RunReport) bool { return r.Run == run }) {
		return fmt.Errorf("run %d: its records are not contiguous", run)
	}
	p := 0
	if int(run) >= 0 && int(run) < len(a.t.Header.Runs) {
		p = int(a.t.Header.Runs[run].Procs)
	}
	// Without a start mode no process exists before the run's first
	// record: the run begins there (a DUMPI or Chrome clock does not
	// start at 0). A start mode puts processes in it from time 0.
	begin, end, _ := a.t.Span(run)
	if a.p.Start != "" {
		begin = 0
	}
	// The whole table is read row by row for the face that asked for it
	// (Top 0), a projection or the work of the table; the summary and the
	// top rows need no more than one pass over the macrostates.
	stream := a.p.Top == 0 || a.keep != nil || a.ratesOn == "table"
	acc, err := NewAccumulator(a.modes, p, begin, Options{Start: a.p.Start, Top: a.p.Top, Stream: stream})
	if err != nil {
		return err
	}
	a.run, a.acc, a.ser = run, acc, nil
	if a.p.Windows > 0 {
		a.ser = newSeries(a.modes, p, a.modes.Index(a.p.Start), begin, end, a.p.Windows)
	}
	return nil
}

// finish ends the current run and makes its report.
func (a *analysis) finish() error {
	if a.acc == nil {
		return nil
	}
	_, end, _ := a.t.Span(a.run)
	res, err := a.acc.Result(end)
	if err != nil {
		return fmt.Errorf("run %d: %w", a.run, err)
	}
	res.Run = a.run
	rep, err := a.report(res)
	if err != nil {
		res.Stream.Close()
		return fmt.Errorf("run %d: %w", a.run, err)
	}
	if a.p.Top == 0 {
		rep.stream = res.Stream
	} else if err := res.Stream.Close(); err != nil {
		return fmt.Errorf("run %d: %w", a.run, err)
	}
	a.done = append(a.done, rep)
	a.acc, a.ser = nil, nil
	return nil
}

// report summarises a run's result.
func (a *analysis) report(res *Result) (RunReport, error) {
	rep := RunReport{Run: res.Run, Procs: res.Procs, Modes: res.Modes, StartMode: a.p.Start, BeginNS: res.Begin, EndNS: res.End, AbsentNS: res.AbsentNS,
		StateRecords: res.Records, Microstates: res.Microstates, MacrostateRows: res.Rows,
		PossibleMacrostates: res.Possible().String(), ObservedMacrostates: res.Observed}
	if res.Observed > 0 {
		rep.Compression = float64(res.Records) / float64(res.Observed)
	}
	rep.Table = res.Table
	if a.p.Top > 0 {
		rep.TableOmitted = res.Observed - len(rep.Table)
	}
	if a.keep != nil {
		pt, err := res.Project(a.keep)
		if err != nil {
			return rep, err
		}
		pr := &Projection{ModeIndices: a.keep, Table: pt}
		for _, k := range a.keep {
			pr.Modes = append(pr.Modes, res.Modes[k])
		}
		rep.Projection = pr
	}
	g, l := res.Mean(), res.LocalMean()
	total := float64(res.End - res.Begin)
	for j, name := range res.Modes {
		m := ModeMean{Mode: name, GlobalNS: g[j], LocalNS: l[j]}
		if total > 0 {
			m.Share = g[j] / total
		}
		rep.Mean = append(rep.Mean, m)
		hist := make([]float64, res.Procs+1)
		for k, occ := range res.Histogram[j] {
			if total > 0 && occ != 0 {
				hist[k] = float64(occ) / total
			}
		}
		rep.Histogram = append(rep.Histogram, hist)
	}
	if a.ser != nil {
		rep.WindowNS, rep.ProcessesPerWindow = a.ser.result()
	}
	if a.rates != nil {
		var w float64
		var err error
		if a.ratesOn == "projection" {
			w, err = WorkOf(rep.Projection.Table, a.rates)
		} else {
			w, err = res.Work(a.rates)
		}
		if err != nil {
			return rep, fmt.Errorf("%s: %w", a.p.Rates, err)
		}
		rep.Work, rep.WorkOf = &w, a.ratesOn
	}
	return rep, nil
}

// Merge implements engine.Accumulator for accumulators of disjoint runs
// (other's runs after this one's). Time shards of one run are merged by
// Accumulator.Merge; the engine does not split runs into shards.
func (a *analysis) Merge(o engine.Accumulator) error {
	b, ok := o.(*analysis)
	if !ok {
		return fmt.Errorf("occupancy: merging a %T", o)
	}
	if err := a.finish(); err != nil {
		return err
	}
	if err := b.finish(); err != nil {
		return err
	}
	for _, r := range b.done {
		if slices.ContainsFunc(a.done, func(x RunReport) bool { return x.Run == r.Run }) {
			return fmt.Errorf("occupancy: both accumulators hold run %d", r.Run)
		}
	}
	a.done = append(a.done, b.done...)
	a.cntRecs = append(a.cntRecs, b.cntRecs...)
	return nil
}

// Result implements engine.Accumulator.
func (a *analysis) Result() (any, error) {
	if err := a.finish(); err != nil {
		return nil, err
	}
	if a.p.Counters {
		if err := a.addCounters(); err != nil {
			return nil, errors.Join(err, (&Report{Runs: a.done}).Close())
		}
	}
	if len(a.done) == 0 {
		if a.p.Counters {
			return nil, fmt.Errorf("no state records or occupancy counters in the runs selected")
		}
		return nil, fmt.Errorf("no state records in the runs selected")
	}
	slices.SortFunc(a.done, func(x, y RunReport) int { return cmp.Compare(x.Run, y.Run) })
	return &Report{Runs: a.done}, nil
}

// addCounters adds the instrument library's counters to the runs' reports:
// their means and span. A run with counters but no state records gets a
// report of its own, from no state records: its processes are absent
// throughout, or in the start mode.
func (a *analysis) addCounters() error {
	cs, err := ReadCounters(context.Background(), a.t.Header, trace.NewSliceReader(a.cntRecs), a.modes)
	if err != nil {
		return err
	}
	for _, c := range cs {
		i := slices.IndexFunc(a.done, func(r RunReport) bool { return r.Run == c.Run })
		if i < 0 {
			if err := a.begin(c.Run); err != nil {
				return err
			}
			if err := a.finish(); err != nil {
				return err
			}
			i = len(a.done) - 1
		}
		for j, v := range c.Mean() {
			a.done[i].Mean[j].CountersNS = &v
		}
		a.done[i].CountersSpanNS = c.Span()
	}
	return nil
}

// TopMacros returns the at most n rows of table with the largest
// occupancy (ties to the earlier row), in table order (first appearance).
func TopMacros(table []Macro, n int) []Macro {
	if n >= len(table) {
		return table
	}
	idx := make([]int, len(table))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(table[y].Occupancy, table[x].Occupancy) })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]Macro, n)
	for i, j := range idx {
		out[i] = table[j]
	}
	return out
}

// series is the time-weighted number of processes in each mode per time
// window of a run, kept from the state records as they pass: each
// process's time in a mode is spread over the windows it covers.
type series struct {
	modes modeTable
	start int // mode before the first state, -1 none (absent)
	mode  []int32
	since []int64
	width float64
	w     int
	acc   [][]float64
	// begin and end delimit the run; window w begins at begin+w·width.
	begin, end int64
}

func newSeries(modes *Modes, p, start int, begin, end int64, windows int) *series {
	s := &series{modes: newModeTable(modes), start: start, mode: make([]int32, p), since: make([]int64, p),
		width: float64(max(end-begin, 1)) / float64(windows), w: windows, begin: begin, end: end}
	for i := range s.mode {
		s.mode[i], s.since[i] = int32(start), begin
	}
	s.acc = make([][]float64, windows)
	for w := range s.acc {
		s.acc[w] = make([]float64, len(modes.Names))
	}
	return s
}

// add follows a state record (already checked by the Accumulator).
func (s *series) add(r *trace.Record) {
	k, ok := s.modes.mode(r.ID)
	if !ok {
		k = absentMode
	}
	i := r.Proc
	if s.mode[i] == k {
		return
	}
	s.spread(s.mode[i], s.since[i], r.T)
	s.mode[i], s.since[i] = k, r.T
}

// spread adds mode k's presence over [t0, t1).
func (s *series) spread(k int32, t0, t1 int64) {
	if k < 0 || t1 <= t0 {
		return
	}
	a, b := float64(t0-s.begin), float64(t1-s.begin)
	for w := max(int(a/s.width), 0); w < s.w && float64(w)*s.width < b; w++ {
		lo, hi := max(a, float64(w)*s.width), min(b, float64(w+1)*s.width)
		if hi > lo {
			s.acc[w][k] += (hi - lo) / s.width
		}
	}
}

// result ends every process at the run's end.
func (s *series) result() (float64, [][]float64) {
	for i := range s.mode {
		s.spread(s.mode[i], s.since[i], s.end)
		s.since[i] = s.end
	}
	return s.width, s.acc
}

// WithTable returns a copy of r whose Table is rows and which streams
// nothing: for a face that writes a streamed table itself.
func (r RunReport) WithTable(rows []Macro) RunReport {
	r.Table, r.stream = rows, nil
	return r
}
