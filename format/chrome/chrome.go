// Package chrome exports a trace as Chrome Trace Event Format JSON, the
// format that ui.perfetto.dev and chrome://tracing open, and imports such
// files (see "Import" below).
//
// The output is the JSON object form
//
//	{"traceEvents":[...], "displayTimeUnit":"ns", "metadata":{...}}
//
// with "traceEvents" first (Perfetto recognises a JSON trace by that prefix)
// and one event per line. The trace model maps onto it as follows:
//
//   - Every process of every run becomes one trace process (pid). pids are
//     numbered from 1 in (run, proc) order over the processes the header
//     declares; a process that appears in the records but not in the header
//     gets the next free pid when first seen. Each process is named
//     "run R · proc P" (followed by " · NAME" when the header's ProcInfo
//     names it) by a process_name metadata event, and ordered by a
//     process_sort_index equal to its pid.
//   - Each process has the threads (tid) 1 "states", 2 "regions",
//     3 "mpi" and, on first use, 4 "events"; they are named by thread_name
//     metadata events and ordered by thread_sort_index.
//   - A state entry becomes a complete slice ("X") on the states thread
//     that lasts until the process's next state entry. The last state of a
//     process lasts until the process's last time in the run: the largest
//     T or completion time of any of its records (or, with
//     Options.StatesToRunEnd, the largest of the whole run). Its name is the
//     state's name from the header; its args are the state id and, when the
//     header has them, its description and source location.
//   - Region entries and exits become "B"/"E" pairs on the regions thread,
//     named by the region's label, with the region id, kind, function and
//     file:line as args of the "B". A region still open at the end of a run
//     is closed at the process's last time; an exit of a region that is not
//     the innermost open one first closes the regions opened inside it; an
//     exit of a region that is not open is dropped. Stats counts all three.
//   - Sends, receives and collectives become "X" slices from T to
//     Record.EndTime (at least 1 ns long, so that they are visible) named
//     "send → 3", "recv ← 2" ("recv ← any" for an unknown source) or the
//     collective's operation ("allreduce"), with bytes, tag, comm and the
//     like as args. They go on the mpi thread; when operations of one
//     process overlap in time (non-blocking sends and receives) without
//     nesting, which a thread track cannot show, the later ones go on extra
//     lanes "mpi 2", "mpi 3", ... (tids 5, 6, ...): a slice takes the first
//     lane whose previous slice has ended, so lanes are only added while
//     that many operations are in flight.
//   - Matched messages (trace.Matcher, MPI's non-overtaking rule) become
//     flow arrows: a flow start ("ph":"s") on the send slice and a flow end
//     ("ph":"f","bp":"e") on the receive slice, both with cat and name
//     "msg", the same unique id, and the pid/tid of their slice. See
//     "Flow events" below.
//   - Events become thread-scoped instant events ("ph":"i","s":"t") on the
//     events thread, named after the event, with the id and value as args.
//   - Counter samples become counter events ("ph":"C") named after the
//     counter, with args {"<counter name>": value}. Samples that are NaN or
//     infinite cannot be written in JSON and are skipped (and counted).
//   - BBV records, which the merged stream normally does not carry, are
//     ignored (and counted).
//
// Timestamps and durations are written in microseconds with nanosecond
// precision as exact decimals ("ts":1793078.235), computed from the integer
// nanoseconds without going through float64.
//
// # Flow events
//
// Perfetto binds a flow event to the slice that is open on the flow
// event's own pid/tid at its timestamp, after sorting all events by
// timestamp (ties keep their order in the file), and drops a flow end that
// comes before its start. The exporter therefore places the flow start at
// the send slice's first nanosecond and the flow end at the first nanosecond
// of the receive slice that is not before the send, and writes the pair
// right after each other, when the matcher pairs the two sides. Because MPI
// slices of one lane never overlap, the slice open at those times on that
// lane is the intended one. When the receive completes before the send was
// posted (clock skew between processes), no such nanosecond exists; the
// flow end is put at the receive's last nanosecond and Stats.BackwardFlows
// counts it.
//
// # Import
//
// The importer (registered as "chrome") reads the array form and the
// {"traceEvents": [...]} object form, plain or gzipped, as written by
// VizTracer, the PyTorch profiler (libkineto), Caliper, rocprofiler, the
// Kokkos tools and Perfetto. Each input file is one run. The JSON is
// streamed through a hand-written scanner that holds one 256 KiB buffer;
// the events are kept as compact records until the end of the file,
// because the format does not order them (VizTracer writes a function
// when it returns, after its callees), so memory grows with the number of
// events, never with the size of the text.
//
//   - Every (pid, tid) pair with events becomes one process, numbered
//     densely in the order of process_sort_index (else the pid, numbers
//     before strings) and, within a pid, of thread_sort_index (else the
//     tid). It is named "PROCESS / THREAD" from the process_name and
//     thread_name metadata ("pid P" / "tid T" without them); ProcInfo.Extra
//     keeps the pid, the tid and the process_labels. pids and tids may be
//     numbers or strings. Events without a tid (counters, process or
//     global instants) go on their pid's own lane, named after the
//     process alone.
//   - "X" (complete) and "B"/"E" (begin/end) slices become region entries
//     and exits, one region per distinct name. An "E" closes the innermost
//     open "B" of its thread, or, when it has a name, the innermost open
//     "B" of that name: the slices opened inside it close with it
//     (RepairOutOfOrderEnd); an "E" that closes nothing is dropped
//     (RepairEndWithoutBegin); a "B" never closed ends at its thread's
//     last time (RepairBeginWithoutEnd). Slices that start at the same
//     time nest longest first; a slice that starts inside another and ends
//     after it is cut at the other's end (RepairOverlapClamped); a
//     negative "dur" counts as 0 (RepairNegativeDuration).
//   - "i", "I" (instant) and "R" (mark) events become events, one id per
//     distinct name, with args.value as value when it is an integer.
//   - "C" (counter) events become one counter sample per numeric arg,
//     named after the event, followed by "." and the arg's key unless the
//     key is the event's name.
//   - Flow events "s", "t" and "f" of one cat and id are linked in time
//     order ("s" starts a chain, "t" continues it, "f" ends it); each
//     link becomes a message of 0 bytes (a send at the earlier point, a
//     receive at the later one, tag the link's number) from the earlier
//     point's process to the later one's. Flow events that link to
//     nothing are dropped (RepairUnpairedFlow).
//   - "M" metadata other than the names, labels and sort indexes, and
//     the phases the model has no place for (async "b"/"n"/"e", "S"/"T"/"F",
//     samples, objects, memory dumps, clock syncs) are skipped and counted
//     in a warning.
//
// Timestamps are microseconds; they are converted exactly to nanoseconds
// for up to three decimals (rounded beyond), and shifted so that the
// earliest event of the file is at 0 (the run's Extra "chrome.origin_us"
// keeps the shift). The clock resolution is 1 ns when a timestamp has
// digits below the microsecond, 1 µs otherwise.
//
// A file this package exported (its "metadata" says "exporter":
// "parscope") is read back as the records it came from: each pid is the
// run and process its process_name gives, states, regions, messages,
// collectives and events are rebuilt from their categories and args
// (with their ids and definitions), and the flow arrows are dropped. Two
// things do not survive the trip: the order of records of one process at
// the same time, and operations of no duration, which come back 1 ns long.
//
// Errors name the file and the byte offset (in the decompressed data of a
// gzipped file) and say what was expected. A trace cut short after a
// complete event, or with a trailing comma, is accepted, as viewers do.
//
// # Streaming
//
// Export reads the records once, in the time-merged order of trace.Merge,
// and writes each trace event as soon as it is known: a state slice when
// the process's next state starts, a flow pair when the matcher pairs a
// send and a receive. Viewers sort events by timestamp, so the file need
// not be sorted. Memory is bounded by the per-process state (current state,
// open regions, MPI lanes) of the current run and the messages in flight,
// never by the number of records. The output is byte-for-byte deterministic
// for the same input.
package chrome

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// Thread ids of the threads of each trace process.
const (
	TidStates  = 1 // state slices
	TidRegions = 2 // region B/E pairs
	TidMPI     = 3 // sends, receives and collectives (first lane)
	TidEvents  = 4 // instant events
	// Extra MPI lane k (k = 1, 2, ...) has tid TidEvents + k.
)

// Options configure Export.
type Options struct {
	// NoFlows leaves out the flow arrows of matched messages (and the
	// message matching they need).
	NoFlows bool
	// StatesToRunEnd makes the last state slice of every process last until
	// the end of the run (the largest time seen on any process of the run)
	// rather than until the process's own last time.
	StatesToRunEnd bool
	// Stats, when not nil, receives counts about the export; it is filled
	// in even when Export fails.
	Stats *Stats
}

// Stats counts what an export wrote and what it had to repair or skip.
type Stats struct {
	// Records is the number of records read.
	Records int64 `json:"records"`
	// Events is the number of trace events written, metadata included.
	Events int64 `json:"events"`
	// States, Regions, MPISlices, Instants and Counters count the state
	// slices, region B/E pairs, send/receive/collective slices, instant
	// events and counter events written.
	States    int64 `json:"states"`
	Regions   int64 `json:"regions"`
	MPISlices int64 `json:"mpi_slices"`
	Instants  int64 `json:"instants"`
	Counters  int64 `json:"counters"`
	// Flows is the number of matched messages drawn as flow arrows.
	Flows int64 `json:"flows"`
	// BackwardFlows counts flows whose receive completed before the send
	// was posted; viewers may drop them.
	BackwardFlows int64 `json:"backward_flows,omitempty"`
	// UnmatchedSends and UnmatchedRecvs count message sides left without a
	// partner at the end of their run (only when flows are drawn).
	UnmatchedSends int64 `json:"unmatched_sends,omitempty"`
	UnmatchedRecvs int64 `json:"unmatched_recvs,omitempty"`
	// RegionsClosedAtEnd counts regions still open at the end of their run,
	// closed at their process's last time.
	RegionsClosedAtEnd int64 `json:"regions_closed_at_end,omitempty"`
	// RegionsClosedEarly counts regions closed because a region enclosing
	// them exited first.
	RegionsClosedEarly int64 `json:"regions_closed_early,omitempty"`
	// UnmatchedExits counts exits of regions that were not open (dropped).
	UnmatchedExits int64 `json:"unmatched_exits,omitempty"`
	// SkippedCounters counts NaN or infinite counter samples (not
	// representable in JSON).
	SkippedCounters int64 `json:"skipped_counters,omitempty"`
	// SkippedBBV counts BBV records in the stream (ignored).
	SkippedBBV int64 `json:"skipped_bbv,omitempty"`
	// MaxLanes is the largest number of MPI lanes any process needed.
	MaxLanes int `json:"max_lanes"`
}

// Export writes the trace described by h with the records of r as Chrome
// Trace Event Format JSON to w. r must yield the records of all runs in
// time-merged order (trace.Merge): runs one after another and each
// process's records in time order; Export fails otherwise. Export does not
// close w.
func Export(w io.Writer, h *trace.Header, r trace.Reader, opts Options) error {
	e := newExporter(w, h, opts)
	err := e.run(r)
	if opts.Stats != nil {
		*opts.Stats = e.st
	}
	return err
}

type exporter struct {
	bw   *bufio.Writer
	h    *trace.Header
	ix   *trace.Index
	opts Options
	st   Stats
	err  error // first write error

	pidBase  []int64            // first pid of each header run
	nextPid  int64              // next pid for a process not in the header
	extraPid map[[2]int32]int64 // pids of processes not in the header
	procName map[[2]int32]string

	cur    int32        // current run; -1 before the first record
	procs  []*procState // processes of the current run declared by the header
	extra  map[int32]*procState
	runEnd int64

	m      *trace.Matcher
	flowID int64
	tmp    trace.Record // the copy of a message given to the matcher

	states  map[int32]*frag
	regions map[int32]*frag
	events  map[int32][]byte
	ctrs    map[int32]*frag
}

// frag holds the pre-rendered, escaped JSON pieces of a dictionary entry.
type frag struct {
	pre  []byte // `{"name":"...","cat":"...","ph":"X","pid":`
	args []byte // `,"args":{...}}` or the like
	name []byte // the escaped name with its quotes
}

type procState struct {
	proc     int32
	pid      int64
	seen     bool
	lastT    int64 // T of the last record (order check)
	last     int64 // largest time seen (T or completion time)
	hasState bool
	state    int32
	stateT   int64
	regions  []int32 // open regions, innermost last
	lanes    []int64 // end of the last slice of each MPI lane
	evNamed  bool    // the events thread has been named
}

func newExporter(w io.Writer, h *trace.Header, opts Options) *exporter {
	if h == nil {
		h = &trace.Header{}
	}
	e := &exporter{
		bw:       bufio.NewWriterSize(w, 256<<10),
		h:        h,
		ix:       trace.NewIndex(h),
		opts:     opts,
		extraPid: map[[2]int32]int64{},
		procName: map[[2]int32]string{},
		cur:      -1,
		extra:    map[int32]*procState{},
		states:   map[int32]*frag{},
		regions:  map[int32]*frag{},
		events:   map[int32][]byte{},
		ctrs:     map[int32]*frag{},
	}
	pid := int64(1)
	for _, ri := range h.Runs {
		e.pidBase = append(e.pidBase, pid)
		pid += int64(max(ri.Procs, 0))
	}
	e.nextPid = pid
	for _, p := range h.Procs {
		if p.Name != "" {
			e.procName[[2]int32{p.Run, p.Proc}] = p.Name
		}
	}
	return e
}

func (e *exporter) run(r trace.Reader) error {
	e.bw.WriteString(`{"traceEvents":[`)
	for run, ri := range e.h.Runs {
		for p := int32(0); p < ri.Procs; p++ {
			e.processMeta(int32(run), p, e.pidBase[run]+int64(p))
		}
	}
	err := trace.Each(r, e.record)
	if err == nil {
		err = e.err
	}
	if err != nil {
		return err
	}
	e.endRun()
	if e.err != nil {
		return e.err
	}
	e.bw.WriteString("\n],\n\"displayTimeUnit\":\"ns\",\n\"metadata\":")
	meta, err := json.Marshal(metadata{
		Exporter: "parscope",
		Meta:     e.h.Meta,
		Runs:     e.h.Runs,
		Repairs:  e.h.Repairs,
		Stats:    e.st,
	})
	if err != nil {
		return fmt.Errorf("chrome: metadata: %w", err)
	}
	e.bw.Write(meta)
	e.bw.WriteString("}\n")
	return e.bw.Flush()
}

type metadata struct {
	Exporter string           `json:"exporter"`
	Meta     trace.Meta       `json:"meta"`
	Runs     []trace.RunInfo  `json:"runs"`
	Repairs  map[string]int64 `json:"repairs,omitempty"`
	Stats    Stats            `json:"stats"`
}

// ev starts a trace event: it returns a buffer holding the separator.
func (e *exporter) ev() []byte {
	b := e.bw.AvailableBuffer()
	if e.st.Events > 0 {
		b = append(b, ',')
	}
	e.st.Events++
	return append(b, '\n')
}

// put writes a finished trace event.
func (e *exporter) put(b []byte) {
	if _, err := e.bw.Write(b); err != nil && e.err == nil {
		e.err = err
	}
}

func (e *exporter) processMeta(run, proc int32, pid int64) {
	name := fmt.Sprintf("run %d · proc %d", run, proc)
	if n := e.procName[[2]int32{run, proc}]; n != "" {
		name += " · " + n
	}
	b := e.ev()
	b = append(b, `{"name":"process_name","ph":"M","pid":`...)
	b = format.AppendInt(b, pid)
	b = append(b, `,"ts":0,"args":{"name":`...)
	b = appendString(b, name)
	b = append(b, "}}"...)
	e.put(b)
	b = e.ev()
	b = append(b, `{"name":"process_sort_index","ph":"M","pid":`...)
	b = format.AppendInt(b, pid)
	b = append(b, `,"ts":0,"args":{"sort_index":`...)
	b = format.AppendInt(b, pid)
	b = append(b, "}}"...)
	e.put(b)
	if int(run) < len(e.h.Runs) && e.h.Runs[run].Name != "" {
		b = e.ev()
		b = append(b, `{"name":"process_labels","ph":"M","pid":`...)
		b = format.AppendInt(b, pid)
		b = append(b, `,"ts":0,"args":{"labels":`...)
		b = appendString(b, e.h.Runs[run].Name)
		b = append(b, "}}"...)
		e.put(b)
	}
	e.threadMeta(pid, TidStates, "states", 1)
	e.threadMeta(pid, TidRegions, "regions", 2)
	e.threadMeta(pid, TidMPI, "mpi", 3)
}

func (e *exporter) threadMeta(pid int64, tid int, name string, sort int) {
	b := e.ev()
	b = append(b, `{"name":"thread_name","ph":"M","pid":`...)
	b = format.AppendInt(b, pid)
	b = append(b, `,"tid":`...)
	b = format.AppendInt(b, int64(tid))
	b = append(b, `,"ts":0,"args":{"name":`...)
	b = appendString(b, name)
	b = append(b, "}}"...)
	e.put(b)
	b = e.ev()
	b = append(b, `{"name":"thread_sort_index","ph":"M","pid":`...)
	b = format.AppendInt(b, pid)
	b = append(b, `,"tid":`...)
	b = format.AppendInt(b, int64(tid))
	b = append(b, `,"ts":0,"args":{"sort_index":`...)
	b = format.AppendInt(b, int64(sort))
	b = append(b, "}}"...)
	e.put(b)
}

// laneTid returns the thread id of MPI lane k.
func laneTid(k int) int {
	if k == 0 {
		return TidMPI
	}
	return TidEvents + k
}

// eventsSort is the thread_sort_index of the events thread: after every MPI lane.
const eventsSort = 1 << 20

func (e *exporter) record(r *trace.Record) error {
	if e.err != nil {
		return e.err
	}
	e.st.Records++
	if r.Run != e.cur {
		if r.Run < e.cur {
			return fmt.Errorf("chrome: a record of run %d follows run %d: records must be in time-merged order", r.Run, e.cur)
		}
		e.endRun()
		e.startRun(r.Run)
	}
	if r.Kind == trace.KindBBV {
		e.st.SkippedBBV++
		return nil
	}
	if r.Proc < 0 {
		return fmt.Errorf("chrome: record of run %d has negative process %d", r.Run, r.Proc)
	}
	p := e.proc(r.Proc)
	if p.seen && r.T < p.lastT {
		return fmt.Errorf("chrome: %w: process %d of run %d goes back from %d to %d ns", trace.ErrOutOfOrder, r.Proc, r.Run, p.lastT, r.T)
	}
	p.seen = true
	p.lastT = r.T
	end := r.T
	switch r.Kind {
	case trace.KindState:
		if p.hasState {
			e.stateSlice(p, p.stateT, r.T)
		}
		p.hasState, p.state, p.stateT = true, r.ID, r.T
	case trace.KindEnter:
		e.enter(p, r)
	case trace.KindExit:
		e.exit(p, r)
	case trace.KindSend, trace.KindRecv, trace.KindCollective:
		end = e.mpi(p, r)
	case trace.KindEvent:
		e.instant(p, r)
	case trace.KindCounter:
		e.counter(p, r)
	default:
		return fmt.Errorf("chrome: record of invalid kind %d", r.Kind)
	}
	if end > p.last {
		p.last = end
	}
	if p.last > e.runEnd {
		e.runEnd = p.last
	}
	return e.err
}

func (e *exporter) startRun(run int32) {
	e.cur = run
	e.runEnd = math.MinInt64
	n := int32(0)
	if int(run) < len(e.h.Runs) {
		n = max(e.h.Runs[run].Procs, 0)
	}
	e.procs = slices.Grow(e.procs[:0], int(n))[:n]
	for i := range e.procs {
		e.procs[i] = &procState{proc: int32(i), pid: e.pidBase[run] + int64(i)}
	}
	clear(e.extra)
	if !e.opts.NoFlows {
		e.m = &trace.Matcher{OnMatch: e.flow}
	}
}

// proc returns the state of a process of the current run, naming it first
// when the header does not declare it.
func (e *exporter) proc(proc int32) *procState {
	if int(proc) < len(e.procs) {
		return e.procs[proc]
	}
	if p := e.extra[proc]; p != nil {
		return p
	}
	key := [2]int32{e.cur, proc}
	pid, ok := e.extraPid[key]
	if !ok {
		pid = e.nextPid
		e.nextPid++
		e.extraPid[key] = pid
		e.processMeta(e.cur, proc, pid)
	}
	p := &procState{proc: proc, pid: pid}
	e.extra[proc] = p
	return p
}

// endRun closes what is still open in the current run: the last state of
// every process and its open regions, and counts unmatched messages.
func (e *exporter) endRun() {
	if e.cur < 0 {
		return
	}
	extras := make([]*procState, 0, len(e.extra))
	for _, p := range e.extra {
		extras = append(extras, p)
	}
	slices.SortFunc(extras, func(a, b *procState) int { return int(a.proc) - int(b.proc) })
	for _, list := range [][]*procState{e.procs, extras} {
		for _, p := range list {
			if !p.seen {
				continue
			}
			if p.hasState {
				end := p.last
				if e.opts.StatesToRunEnd {
					end = e.runEnd
				}
				e.stateSlice(p, p.stateT, end)
				p.hasState = false
			}
			for len(p.regions) > 0 {
				e.st.RegionsClosedAtEnd++
				e.regionEnd(p, p.regions[len(p.regions)-1], p.last)
				p.regions = p.regions[:len(p.regions)-1]
			}
		}
	}
	if e.m != nil {
		s, r := e.m.Unmatched()
		e.st.UnmatchedSends += int64(len(s))
		e.st.UnmatchedRecvs += int64(len(r))
		e.m = nil
	}
}

func (e *exporter) stateFrag(id int32) *frag {
	if f := e.states[id]; f != nil {
		return f
	}
	f := &frag{}
	f.name = appendString(nil, e.ix.StateName(id))
	f.pre = append(f.pre, `{"name":`...)
	f.pre = append(f.pre, f.name...)
	f.pre = append(f.pre, `,"cat":"state","ph":"X","pid":`...)
	f.args = append(f.args, `,"args":{"state":`...)
	f.args = format.AppendInt(f.args, int64(id))
	if d := e.ix.State(id); d != nil {
		if d.Description != "" {
			f.args = append(f.args, `,"description":`...)
			f.args = appendString(f.args, d.Description)
		}
		if d.File != "" {
			f.args = append(f.args, `,"location":`...)
			f.args = appendString(f.args, location(d.File, d.Line))
		}
	}
	f.args = append(f.args, "}}"...)
	e.states[id] = f
	return f
}

func location(file string, line int32) string {
	if line > 0 {
		return file + ":" + strconv.Itoa(int(line))
	}
	return file
}

func (e *exporter) stateSlice(p *procState, t, end int64) {
	f := e.stateFrag(p.state)
	b := e.ev()
	b = append(b, f.pre...)
	b = format.AppendInt(b, p.pid)
	b = append(b, `,"tid":1,"ts":`...)
	b = appendNS(b, t)
	b = append(b, `,"dur":`...)
	b = appendNS(b, max(end-t, 0))
	b = append(b, f.args...)
	e.put(b)
	e.st.States++
}

func (e *exporter) regionFrag(id int32) *frag {
	if f := e.regions[id]; f != nil {
		return f
	}
	f := &frag{}
	f.name = appendString(nil, e.ix.RegionName(id))
	f.pre = append(f.pre, `{"name":`...)
	f.pre = append(f.pre, f.name...)
	f.pre = append(f.pre, `,"cat":"region","ph":"B","pid":`...)
	f.args = append(f.args, `,"args":{"region":`...)
	f.args = format.AppendInt(f.args, int64(id))
	if d := e.ix.Region(id); d != nil {
		f.args = append(f.args, `,"kind":`...)
		f.args = appendString(f.args, d.Kind.String())
		if d.Function != "" {
			f.args = append(f.args, `,"function":`...)
			f.args = appendString(f.args, d.Function)
		}
		if d.File != "" {
			f.args = append(f.args, `,"location":`...)
			f.args = appendString(f.args, location(d.File, d.Line))
		}
	}
	f.args = append(f.args, "}}"...)
	e.regions[id] = f
	return f
}

func (e *exporter) enter(p *procState, r *trace.Record) {
	f := e.regionFrag(r.ID)
	b := e.ev()
	b = append(b, f.pre...)
	b = format.AppendInt(b, p.pid)
	b = append(b, `,"tid":2,"ts":`...)
	b = appendNS(b, r.T)
	b = append(b, f.args...)
	e.put(b)
	p.regions = append(p.regions, r.ID)
}

func (e *exporter) exit(p *procState, r *trace.Record) {
	i := len(p.regions) - 1
	for i >= 0 && p.regions[i] != r.ID {
		i--
	}
	if i < 0 {
		e.st.UnmatchedExits++
		return
	}
	for j := len(p.regions) - 1; j >= i; j-- {
		if j > i {
			e.st.RegionsClosedEarly++
		}
		e.regionEnd(p, p.regions[j], r.T)
	}
	p.regions = p.regions[:i]
}

func (e *exporter) regionEnd(p *procState, id int32, t int64) {
	f := e.regionFrag(id)
	b := e.ev()
	b = append(b, `{"name":`...)
	b = append(b, f.name...)
	b = append(b, `,"cat":"region","ph":"E","pid":`...)
	b = format.AppendInt(b, p.pid)
	b = append(b, `,"tid":2,"ts":`...)
	b = appendNS(b, t)
	b = append(b, '}')
	e.put(b)
	e.st.Regions++
}

// mpi writes the slice of a send, receive or collective and returns its
// completion time.
func (e *exporter) mpi(p *procState, r *trace.Record) int64 {
	end := r.EndTime()
	vis := max(end, r.T+1) // the slice's visible end
	lane := -1
	for k, le := range p.lanes {
		if le <= r.T {
			lane = k
			break
		}
	}
	if lane < 0 {
		lane = len(p.lanes)
		p.lanes = append(p.lanes, 0)
		if lane > 0 {
			e.threadMeta(p.pid, laneTid(lane), "mpi "+strconv.Itoa(lane+1), TidMPI+lane)
		}
		e.st.MaxLanes = max(e.st.MaxLanes, len(p.lanes))
	}
	p.lanes[lane] = vis
	tid := laneTid(lane)

	b := e.ev()
	switch r.Kind {
	case trace.KindSend:
		b = append(b, `{"name":"send → `...)
		b = format.AppendInt(b, int64(r.Peer))
	case trace.KindRecv:
		b = append(b, `{"name":"recv ← `...)
		if r.Peer == trace.NoPeer {
			b = append(b, "any"...)
		} else {
			b = format.AppendInt(b, int64(r.Peer))
		}
	default:
		b = append(b, `{"name":"`...)
		b = append(b, trace.CollectiveOp(r.ID).String()...) // lower-case letters, digits, '_' and '(' ')'
	}
	b = append(b, `","cat":"mpi","ph":"X","pid":`...)
	b = format.AppendInt(b, p.pid)
	b = append(b, `,"tid":`...)
	b = format.AppendInt(b, int64(tid))
	b = append(b, `,"ts":`...)
	b = appendNS(b, r.T)
	b = append(b, `,"dur":`...)
	b = appendNS(b, vis-r.T)
	b = append(b, `,"args":{`...)
	if r.Kind == trace.KindCollective {
		if r.Peer >= 0 {
			b = append(b, `"root":`...)
			b = format.AppendInt(b, int64(r.Peer))
			b = append(b, ',')
		}
	} else {
		b = append(b, `"peer":`...)
		b = format.AppendInt(b, int64(r.Peer))
		b = append(b, ',')
	}
	b = append(b, `"bytes":`...)
	b = format.AppendInt(b, r.Value)
	if r.Kind != trace.KindCollective {
		b = append(b, `,"tag":`...)
		b = format.AppendInt(b, int64(r.Tag))
	}
	b = append(b, `,"comm":`...)
	b = format.AppendInt(b, int64(r.Comm))
	if r.Kind != trace.KindCollective && r.Seq != trace.NoRequest {
		b = append(b, `,"request":`...)
		b = format.AppendInt(b, int64(r.Seq))
	}
	if r.End < r.T {
		b = append(b, `,"end_unknown":true`...)
	}
	if r.Flags != 0 {
		b = append(b, `,"flags":`...)
		b = format.AppendInt(b, int64(r.Flags))
	}
	b = append(b, "}}"...)
	e.put(b)
	e.st.MPISlices++

	if e.m != nil && r.Kind != trace.KindCollective {
		// The matcher keeps a copy of pending sides; it carries the lane
		// in ID (unused by messages) and the visible end in End.
		e.tmp = *r
		e.tmp.ID = int32(lane)
		e.tmp.End = vis
		e.m.Add(&e.tmp)
	}
	return end
}

// flow writes the flow arrow of a matched message; s and r carry their
// lane in ID and their slice's visible end in End (see mpi).
func (e *exporter) flow(s, r *trace.Record) {
	e.flowID++
	sp, rp := e.proc(s.Proc), e.proc(r.Proc)
	ts := s.T
	tf := max(r.T, ts)
	if tf > r.End-1 {
		tf = r.End - 1
		e.st.BackwardFlows++
	}
	b := e.ev()
	b = append(b, `{"name":"msg","cat":"msg","ph":"s","id":`...)
	b = format.AppendInt(b, e.flowID)
	b = append(b, `,"pid":`...)
	b = format.AppendInt(b, sp.pid)
	b = append(b, `,"tid":`...)
	b = format.AppendInt(b, int64(laneTid(int(s.ID))))
	b = append(b, `,"ts":`...)
	b = appendNS(b, ts)
	b = append(b, '}')
	e.put(b)
	b = e.ev()
	b = append(b, `{"name":"msg","cat":"msg","ph":"f","bp":"e","id":`...)
	b = format.AppendInt(b, e.flowID)
	b = append(b, `,"pid":`...)
	b = format.AppendInt(b, rp.pid)
	b = append(b, `,"tid":`...)
	b = format.AppendInt(b, int64(laneTid(int(r.ID))))
	b = append(b, `,"ts":`...)
	b = appendNS(b, tf)
	b = append(b, '}')
	e.put(b)
	e.st.Flows++
}

func (e *exporter) instant(p *procState, r *trace.Record) {
	if !p.evNamed {
		p.evNamed = true
		e.threadMeta(p.pid, TidEvents, "events", eventsSort)
	}
	name := e.events[r.ID]
	if name == nil {
		name = appendString(nil, e.ix.EventName(r.ID))
		e.events[r.ID] = name
	}
	b := e.ev()
	b = append(b, `{"name":`...)
	b = append(b, name...)
	b = append(b, `,"cat":"event","ph":"i","s":"t","pid":`...)
	b = format.AppendInt(b, p.pid)
	b = append(b, `,"tid":4,"ts":`...)
	b = appendNS(b, r.T)
	b = append(b, `,"args":{"event":`...)
	b = format.AppendInt(b, int64(r.ID))
	b = append(b, `,"value":`...)
	b = format.AppendInt(b, r.Value)
	b = append(b, "}}"...)
	e.put(b)
	e.st.Instants++
}

func (e *exporter) counter(p *procState, r *trace.Record) {
	v := r.Float()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		e.st.SkippedCounters++
		return
	}
	f := e.ctrs[r.ID]
	if f == nil {
		f = &frag{}
		name := fmt.Sprintf("counter %d", r.ID)
		if d := e.ix.Counter(r.ID); d != nil && d.Name != "" {
			name = d.Name
		}
		f.name = appendString(nil, name)
		f.pre = append(f.pre, `{"name":`...)
		f.pre = append(f.pre, f.name...)
		f.pre = append(f.pre, `,"cat":"counter","ph":"C","pid":`...)
		f.args = append(f.args, `,"args":{`...)
		f.args = append(f.args, f.name...)
		f.args = append(f.args, ':')
		e.ctrs[r.ID] = f
	}
	b := e.ev()
	b = append(b, f.pre...)
	b = format.AppendInt(b, p.pid)
	b = append(b, `,"ts":`...)
	b = appendNS(b, r.T)
	b = append(b, f.args...)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	b = append(b, "}}"...)
	e.put(b)
	e.st.Counters++
}
