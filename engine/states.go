package engine

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// StatesFrom says where the analyses that read parallel states (states,
// entropy, pca, phasespace, occupancy, and the rest that read state
// records) take a process's state from. It is one option of a Run, the
// same for every analysis of it: `--states-from` in every command.
type StatesFrom string

// The sources of states.
const (
	// StatesAuto picks what the trace has: its state records when it
	// holds any, else its regions, else nothing (the state analyses then
	// say what the trace lacks).
	StatesAuto StatesFrom = "auto"
	// StatesRecorded reads the trace's state records: the blocks of
	// Gomez, Cai & Schubert (2017), Paraver's states, Go goroutine states.
	StatesRecorded StatesFrom = "recorded"
	// StatesRegions puts a process in the innermost region open on it
	// (a function, a loop, an MPI call), or in "outside any region".
	StatesRegions StatesFrom = "regions"
	// StatesMPI puts a process in "MPI" while an MPI call is open on it
	// (a region whose name begins with MPI_ or PMPI_) and in "computation"
	// otherwise: Paraver's useful / MPI split.
	StatesMPI StatesFrom = "mpi"
)

// StatesFromValues are the values of StatesFrom, in the order help lists
// them.
var StatesFromValues = []StatesFrom{StatesAuto, StatesRecorded, StatesRegions, StatesMPI}

// StatesFromHelp is the help of the --states-from flag of every face.
const StatesFromHelp = `where processes' states come from: auto (the trace's state records, else its regions), recorded, regions (innermost open region), mpi (MPI call or computation)`

// ParseStatesFrom parses a --states-from value; "" is StatesAuto.
func ParseStatesFrom(s string) (StatesFrom, error) {
	if s == "" {
		return StatesAuto, nil
	}
	for _, v := range StatesFromValues {
		if string(v) == s {
			return v, nil
		}
	}
	var names []string
	for _, v := range StatesFromValues {
		names = append(names, string(v))
	}
	return "", fmt.Errorf("states from %q: want one of %s", s, strings.Join(names, ", "))
}

// ResolveStates returns the source of states from picks on the trace t:
// StatesAuto becomes StatesRecorded when t holds state records, else
// StatesRegions when it holds region entries, else StatesRecorded; the
// other values are returned as they are.
func ResolveStates(t *Trace, from StatesFrom) StatesFrom {
	if from != StatesAuto && from != "" {
		return from
	}
	if t.Count(trace.KindState) == 0 && t.Count(trace.KindEnter) > 0 {
		return StatesRegions
	}
	return StatesRecorded
}

// ResolveOf resolves the "of" option of an analysis that counts time by
// regions or by states (profile, pop): "regions" or "states" as given, or
// for "" regions when the trace t holds region entries, else states; any
// other value is an error.
func ResolveOf(t *Trace, of string) (string, error) {
	switch of {
	case "":
		if t.Count(trace.KindEnter) > 0 {
			return "regions", nil
		}
		return "states", nil
	case "regions", "states":
		return of, nil
	}
	return "", fmt.Errorf("of %q: want regions or states", of)
}

// Describe says in words what the states of source from are, for `info`
// and the report.
func (from StatesFrom) Describe() string {
	switch from {
	case StatesRecorded:
		return "the trace's state records"
	case StatesRegions:
		return "derived from regions: the innermost region open on each process"
	case StatesMPI:
		return "derived from regions: MPI call or computation"
	}
	return string(from)
}

// Names of the derived states that are not regions.
const (
	// OutsideRegions is the state of a process with no region open.
	OutsideRegions = "outside any region"
	// UnknownRegion is the state of a process whose innermost region is
	// not in the trace's dictionary.
	UnknownRegion = "unknown region"
	// Computation and MPICall are the states of StatesMPI.
	Computation = "computation"
	MPICall     = "MPI"
	// Ended is the absent state a derived process enters at its last
	// record: it exists from its first record to its last.
	Ended = "ended"
)

// Spanner is implemented by sources that know the span of each process's
// records without reading them (a *store.Store, from its index). States
// derived from regions need it: a process exists from its first record,
// of any kind, to its last.
type Spanner interface {
	ProcSpans() []store.ProcSpan
}

// Part is implemented by a source that reads part of a trace (one
// process's records, for a shard of a distributed pipeline). States are
// derived for the part from its own records, with the dictionary of the
// whole trace, so that every part numbers them alike.
type Part interface {
	// Whole returns the source of the whole trace.
	Whole() Source
}

// WithStates returns src with its state records derived as from says, and
// the source that was picked. For StatesRecorded (and StatesAuto on a
// trace with state records) it returns src itself; for StatesRegions and
// StatesMPI it returns a source whose header has the derived states'
// dictionary and whose state records are derived, in one stream with the
// other records, from the region records as they are read.
func WithStates(src Source, from StatesFrom) (Source, StatesFrom, error) {
	return withStates(src, from, nil)
}

// withStates is WithStates, with the regions the whole trace enters when
// they are known already (used, for StatesRegions; nil: read them).
func withStates(src Source, from StatesFrom, used map[int32]bool) (Source, StatesFrom, error) {
	if d, ok := src.(*derivedSource); ok {
		// Derived already: as it is, or derived again from the trace.
		if from == StatesAuto || from == "" || from == d.from {
			return d, d.from, nil
		}
		src = d.src
	}
	t := TraceOf(src)
	from = ResolveStates(t, from)
	switch from {
	case StatesRecorded:
		return src, from, nil
	case StatesRegions, StatesMPI:
	default:
		return nil, "", fmt.Errorf("states from %q: unknown source", from)
	}
	if t.Count(trace.KindEnter) == 0 {
		return nil, "", fmt.Errorf("%s: states from %s need region records, and the trace has none", t.Name, from)
	}
	d := &derivedSource{src: src, from: from}
	var spans []store.ProcSpan
	if sp, ok := src.(Spanner); ok {
		spans = sp.ProcSpans()
	} else {
		var err error
		if spans, err = scanSpans(src); err != nil {
			return nil, "", err
		}
	}
	d.spans = spans
	if from == StatesRegions && used == nil {
		var err error
		whole := src
		if p, ok := src.(Part); ok {
			whole = p.Whole()
		}
		if used, err = enteredRegions(whole); err != nil {
			return nil, "", fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	d.used = used
	d.dict(t.Header, used)
	return d, from, nil
}

// enteredRegions returns the ids of the regions src enters: the derived
// dictionary names those, not every region a tool declares (Score-P
// declares every MPI function, entered or not).
func enteredRegions(src Source) (map[int32]bool, error) {
	used := map[int32]bool{}
	rd := src.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindEnter}})
	buf := make([]trace.Record, BatchSize)
	for {
		n, err := rd.Read(buf)
		for i := range buf[:n] {
			used[buf[i].ID] = true
		}
		if errors.Is(err, io.EOF) {
			return used, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Check reports whether Run would accept req on the trace t, from its
// header and figures alone (no record is read): the analysis is known, its
// options are of its type, it applies — with states counted as present
// when they would be derived from the trace's regions (WithStates) —, the
// trace is within its limits (Analysis.Limit) and its accumulator accepts
// the options. A launcher checks a request this
// way before it starts workers.
func Check(t *Trace, req Request) error {
	a, ok := Lookup(req.Analysis)
	if ok && !a.Recorded {
		opts, _ := a.optionsOf(req.Options) // of another type: the defaults, as resolve refuses it
		if from := ResolveStates(t, req.States); slices.Contains(a.Kinds(opts), trace.KindState) &&
			(from == StatesRegions || from == StatesMPI) && t.Count(trace.KindEnter) > 0 {
			stats := *t.Stats
			stats.Records = maps.Clone(stats.Records)
			stats.Records[trace.KindState.String()] += stats.Records[trace.KindEnter.String()]
			t = &Trace{Name: t.Name, Header: t.Header, Stats: &stats}
		}
	}
	a, opts, err := resolve(t, req)
	if err != nil {
		return err
	}
	if _, err := a.New(t, opts); err != nil {
		return analysisError(t.Name, a.Name, err)
	}
	return nil
}

// scanSpans reads every timed record of src for the spans of its
// processes, for a source that cannot give them otherwise.
func scanSpans(src Source) ([]store.ProcSpan, error) {
	type key struct{ run, proc int32 }
	m := map[key]*store.ProcSpan{}
	rd := src.Records(store.ReadOptions{})
	buf := make([]trace.Record, BatchSize)
	for {
		n, err := rd.Read(buf)
		for i := range buf[:n] {
			r := &buf[i]
			k := key{r.Run, r.Proc}
			if sp := m[k]; sp != nil {
				sp.First, sp.Last = min(sp.First, r.T), max(sp.Last, r.T)
			} else {
				m[k] = &store.ProcSpan{Run: r.Run, Proc: r.Proc, First: r.T, Last: r.T}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]store.ProcSpan, 0, len(m))
	for _, sp := range m {
		out = append(out, *sp)
	}
	slices.SortFunc(out, func(a, b store.ProcSpan) int {
		return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Proc, b.Proc))
	})
	return out, nil
}

// derivedSource is a source whose state records are derived from its
// region records.
type derivedSource struct {
	src   Source
	from  StatesFrom
	spans []store.ProcSpan
	m     store.Manifest
	// stateOf maps a region id to its state (StatesRegions); mpi marks
	// the regions that are MPI calls (StatesMPI).
	stateOf map[int32]int32
	mpi     map[int32]bool
	// outside is the state with no region open (StatesRegions) or no
	// MPI call open (StatesMPI); inMPI the state in an MPI call; unknown
	// that of an undefined region; ended the absent state.
	outside, inMPI, unknown, ended int32
	// used are the regions the whole trace enters (StatesRegions).
	used map[int32]bool
}

// dict builds the derived states' dictionary, of the regions used (with
// StatesRegions), and the manifest that carries it. A derived state has
// its name and no description: the state analyses show a state's
// description in place of its name when it has one.
func (d *derivedSource) dict(h *trace.Header, used map[int32]bool) {
	var states []trace.StateDef
	add := func(s trace.StateDef) int32 {
		s.ID = int32(len(states))
		states = append(states, s)
		return s.ID
	}
	switch d.from {
	case StatesRegions:
		d.outside = add(trace.StateDef{Name: OutsideRegions})
		d.stateOf = make(map[int32]int32, len(used))
		unknown := len(used)
		for _, r := range h.Regions {
			if !used[r.ID] {
				continue
			}
			unknown--
			d.stateOf[r.ID] = add(trace.StateDef{Name: r.Name(), File: r.File, Line: r.Line})
		}
		d.unknown = -1
		if unknown > 0 {
			d.unknown = add(trace.StateDef{Name: UnknownRegion})
		}
	case StatesMPI:
		d.outside = add(trace.StateDef{Name: Computation})
		d.inMPI = add(trace.StateDef{Name: MPICall})
		d.mpi = map[int32]bool{}
		for i := range h.Regions {
			if h.Regions[i].IsMPI() {
				d.mpi[h.Regions[i].ID] = true
			}
		}
	}
	d.ended = add(trace.StateDef{Name: Ended, Absent: true})

	m := *d.src.Manifest()
	m.Header.States = states
	m.Stats.Records = maps.Clone(m.Stats.Records)
	if m.Stats.Records == nil {
		m.Stats.Records = map[string]int64{}
	}
	// The recorded states, and at most one derived state per region
	// record and two per process.
	m.Stats.Records[trace.KindState.String()] += m.Stats.Records[trace.KindEnter.String()] +
		m.Stats.Records[trace.KindExit.String()] + 2*int64(len(d.spans))
	m.Stats.StatesUsed = len(states) - 1
	m.Stats.Runs = slices.Clone(m.Stats.Runs)
	for i := range m.Stats.Runs {
		m.Stats.Runs[i].StatesUsed = len(states) - 1
	}
	d.m = m
}

func (d *derivedSource) Dir() string                                 { return d.src.Dir() }
func (d *derivedSource) Manifest() *store.Manifest                   { return &d.m }
func (d *derivedSource) BBV(opts store.ReadOptions) trace.Reader     { return d.src.BBV(opts) }
func (d *derivedSource) ProcSpans() []store.ProcSpan                 { return d.spans }
func (d *derivedSource) Records(opts store.ReadOptions) trace.Reader { return d.records(opts) }

// records reads the kinds opts selects, state records derived.
func (d *derivedSource) records(opts store.ReadOptions) trace.Reader {
	kinds := opts.Kinds
	if kinds == nil {
		for _, k := range trace.Kinds {
			if k != trace.KindBBV {
				kinds = append(kinds, k)
			}
		}
	}
	if !slices.Contains(kinds, trace.KindState) {
		return d.src.Records(opts)
	}
	if opts.From != 0 || opts.To != 0 {
		return errReader{fmt.Errorf("states %s cannot be read in a time window: they depend on the regions opened before it", d.from.Describe())}
	}
	dr := &derivedReader{d: d, run: -1}
	in := opts
	in.Kinds = nil
	for _, k := range kinds {
		if k == trace.KindBBV {
			continue
		}
		// The recorded state records pass too (for the analyses that read
		// the trace as recorded, Analysis.Recorded); the derived ones are
		// flagged trace.FlagDerived.
		dr.pass[k] = true
		in.Kinds = append(in.Kinds, k)
	}
	for _, k := range []trace.Kind{trace.KindEnter, trace.KindExit} {
		if !dr.pass[k] {
			in.Kinds = append(in.Kinds, k)
		}
	}
	slices.Sort(in.Kinds)
	dr.in = d.src.Records(in)
	for _, sp := range d.spans {
		if (opts.Runs == nil || slices.Contains(opts.Runs, sp.Run)) && (opts.Procs == nil || slices.Contains(opts.Procs, sp.Proc)) {
			dr.begins = append(dr.begins, marker{sp.Run, sp.First, sp.Proc})
			dr.ends = append(dr.ends, marker{sp.Run, sp.Last, sp.Proc})
		}
	}
	for _, ms := range [][]marker{dr.begins, dr.ends} {
		slices.SortFunc(ms, func(a, b marker) int {
			return cmp.Or(cmp.Compare(a.run, b.run), cmp.Compare(a.t, b.t), cmp.Compare(a.proc, b.proc))
		})
	}
	return dr
}

// errReader is a reader that fails.
type errReader struct{ err error }

func (e errReader) Read([]trace.Record) (int, error) { return 0, e.err }

// marker is the first or the last record time of a process.
type marker struct {
	run  int32
	t    int64
	proc int32
}

// procStates is what the derivation knows of one process.
type procStates struct {
	proc int32
	// stack holds the open regions, innermost last; mpiOpen counts the
	// MPI calls among them.
	stack   []int32
	mpiOpen int
	started bool
	ended   bool
	// last is the state last delivered (-1: none); touched is set while
	// the process is in the list of those whose state may change at the
	// current time.
	last    int32
	touched bool
}

// state returns the process's state now, or -1 before its first record.
func (p *procStates) state(d *derivedSource) int32 {
	switch {
	case p.ended:
		return d.ended
	case !p.started:
		return -1
	case d.from == StatesMPI:
		if p.mpiOpen > 0 {
			return d.inMPI
		}
		return d.outside
	case len(p.stack) == 0:
		return d.outside
	}
	if s, ok := d.stateOf[p.stack[len(p.stack)-1]]; ok {
		return s
	}
	return d.unknown
}

// derivedReader merges the records read, the first and last times of the
// processes, and the states derived from them into one time-merged stream.
// It handles one (run, time) at a time: the records read at that time are
// held, the processes whose state may change are noted, and when the time
// moves on the held records and a state record for each process whose
// state changed are delivered in process order (a process's state record
// before its other records, the order of the store's tables).
type derivedReader struct {
	d    *derivedSource
	in   trace.Reader
	pass [trace.KindBBV + 1]bool
	// run is the run being read; dense and far hold its processes (a
	// time-merged stream ends a run before the next begins).
	run   int32
	dense []*procStates
	far   map[int32]*procStates
	// states holds the state records of a flush.
	states []trace.Record

	buf     []trace.Record
	pos, n  int
	inDone  bool
	begins  []marker
	ends    []marker
	bi, ei  int
	cur     marker // run and time of the records held
	have    bool
	held    []trace.Record
	touched []*procStates
	out     []trace.Record
	outPos  int
	err     error
}

// maxDense bounds the process ids kept in a slice rather than a map.
const maxDense = 1 << 16

func (dr *derivedReader) proc(run, proc int32) *procStates {
	if run != dr.run {
		dr.run, dr.dense, dr.far = run, dr.dense[:0], nil
	}
	if proc >= 0 && proc < maxDense {
		for int(proc) >= len(dr.dense) {
			dr.dense = append(dr.dense, nil)
		}
		p := dr.dense[proc]
		if p == nil {
			p = &procStates{proc: proc, last: -1}
			dr.dense[proc] = p
		}
		return p
	}
	p := dr.far[proc]
	if p == nil {
		if dr.far == nil {
			dr.far = map[int32]*procStates{}
		}
		p = &procStates{proc: proc, last: -1}
		dr.far[proc] = p
	}
	return p
}

func (dr *derivedReader) touch(p *procStates) {
	if !p.touched {
		p.touched = true
		dr.touched = append(dr.touched, p)
	}
}

// Read delivers the next records.
func (dr *derivedReader) Read(buf []trace.Record) (int, error) {
	for dr.outPos == len(dr.out) {
		if dr.err != nil {
			return 0, dr.err
		}
		dr.out, dr.outPos = dr.out[:0], 0
		if err := dr.fill(len(buf)); err != nil {
			dr.err = err
			if len(dr.out) == 0 {
				return 0, err
			}
		}
	}
	n := copy(buf, dr.out[dr.outPos:])
	dr.outPos += n
	return n, nil
}

// fill produces at least want records, or all that are left; it returns
// io.EOF after the last ones.
func (dr *derivedReader) fill(want int) error {
	if dr.buf == nil {
		dr.buf = make([]trace.Record, BatchSize)
	}
	for len(dr.out) < want {
		if dr.pos == dr.n && !dr.inDone {
			n, err := dr.in.Read(dr.buf)
			dr.pos, dr.n = 0, n
			if errors.Is(err, io.EOF) {
				dr.inDone = true
			} else if err != nil {
				return err
			}
			if n == 0 && !dr.inDone {
				continue
			}
		}
		// The next item: a record read, a first time or a last time,
		// whichever comes first.
		var next marker
		which := -1
		if dr.pos < dr.n {
			r := &dr.buf[dr.pos]
			next, which = marker{r.Run, r.T, r.Proc}, 0
		}
		if dr.bi < len(dr.begins) && (which < 0 || before(dr.begins[dr.bi], next)) {
			next, which = dr.begins[dr.bi], 1
		}
		if dr.ei < len(dr.ends) && (which < 0 || before(dr.ends[dr.ei], next)) {
			next, which = dr.ends[dr.ei], 2
		}
		if which < 0 {
			dr.flush()
			return io.EOF
		}
		if dr.have && (next.run != dr.cur.run || next.t != dr.cur.t) {
			dr.flush()
		}
		dr.cur, dr.have = next, true
		switch which {
		case 0:
			r := dr.buf[dr.pos]
			dr.pos++
			dr.record(&r)
		case 1:
			dr.bi++
			p := dr.proc(next.run, next.proc)
			p.started = true
			dr.touch(p)
		case 2:
			dr.ei++
			p := dr.proc(next.run, next.proc)
			p.ended = true
			dr.touch(p)
		}
	}
	return nil
}

// before orders markers by run and time.
func before(a, b marker) bool {
	if a.run != b.run {
		return a.run < b.run
	}
	return a.t < b.t
}

// record takes a record read: a region record updates its process's
// regions; the kinds asked for are held for delivery.
func (dr *derivedReader) record(r *trace.Record) {
	if dr.pass[r.Kind] {
		dr.held = append(dr.held, *r)
	}
	if r.Kind != trace.KindEnter && r.Kind != trace.KindExit {
		return
	}
	p := dr.proc(r.Run, r.Proc)
	if p.ended {
		return
	}
	mpi := dr.d.mpi[r.ID]
	if r.Kind == trace.KindEnter {
		p.stack = append(p.stack, r.ID)
		if mpi {
			p.mpiOpen++
		}
	} else {
		// The innermost open region of that id closes; a region closed
		// out of order leaves the ones opened after it open, and an exit
		// of a region that is not open changes nothing.
		i := len(p.stack) - 1
		for i >= 0 && p.stack[i] != r.ID {
			i--
		}
		if i < 0 {
			return
		}
		p.stack = slices.Delete(p.stack, i, i+1)
		if mpi {
			p.mpiOpen--
		}
	}
	dr.touch(p)
}

// flush delivers the records held at the current time with the state
// records of the processes whose state changed, in process order.
func (dr *derivedReader) flush() {
	states := dr.states[:0]
	for _, p := range dr.touched {
		p.touched = false
		s := p.state(dr.d)
		if s < 0 || s == p.last {
			continue
		}
		p.last = s
		r := trace.State(dr.cur.run, p.proc, dr.cur.t, s)
		r.Flags = trace.FlagDerived
		states = append(states, r)
	}
	dr.touched = dr.touched[:0]
	if len(states) == 0 {
		dr.out = append(dr.out, dr.held...)
		dr.held = dr.held[:0]
		return
	}
	dr.states = states
	if len(states) > 1 {
		slices.SortFunc(states, func(a, b trace.Record) int { return cmp.Compare(a.Proc, b.Proc) })
	}
	i := 0
	for _, s := range states {
		for i < len(dr.held) && dr.held[i].Proc < s.Proc {
			dr.out = append(dr.out, dr.held[i])
			i++
		}
		dr.out = append(dr.out, s)
	}
	dr.out = append(dr.out, dr.held[i:]...)
	dr.held = dr.held[:0]
}
