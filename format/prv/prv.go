package prv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// Name is the format's name as given to --format.
const Name = "prv"

// Names of the repairs the importer counts in Header.Repairs.
const (
	// RepairStateGap counts gaps between a state's end and the next state's
	// begin (or the trace's end), filled with state 0 (Idle).
	RepairStateGap = "prv-state-gap-idle"
	// RepairMessageMoved counts sends and receives whose logical time lay
	// before the last record already added on their process (Extrae sorts
	// communication records by physical send time, so a send or a receive
	// posted earlier can come late); they were moved to that last time.
	RepairMessageMoved = "prv-message-moved-forward"
	// RepairImplicitExit counts MPI calls entered while a call of the same
	// event type was open (old MPItrace traces omit the end events); the
	// open call was exited first.
	RepairImplicitExit = "prv-mpi-implicit-exit"
	// RepairCommMember counts communicator members naming a task the header
	// does not declare; they were dropped.
	RepairCommMember = "prv-comm-undefined-member"
	// RepairCommDuplicate counts communicator lines whose id was already
	// defined; they were skipped.
	RepairCommDuplicate = "prv-comm-duplicate"
	// RepairUnopenedExit counts MPI call end events (value 0) with no call of
	// that type open on the thread; they were dropped.
	RepairUnopenedExit = "prv-mpi-exit-without-enter"
	// RepairFunctionUnopenedExit counts function end events (value 0 of a
	// FunctionTypes type) with no function of that type open on the thread
	// (a trace cut after the function was entered); they were dropped.
	RepairFunctionUnopenedExit = "prv-function-exit-without-enter"
	// RepairEndsEarly counts traces whose last record lies before the end
	// time the header declares: the file was most likely cut short (on a
	// line boundary, where nothing else shows it). The import goes on with
	// what is there and warns (format.Warn).
	RepairEndsEarly = "prv-ends-before-header-end"
)

// Event type ranges with a meaning of their own.
const (
	// MPITypeMin and MPITypeMax bound Extrae's MPI call event types, which
	// become regions.
	MPITypeMin = 50000001
	MPITypeMax = 50000099
	// CounterTypeMin and CounterTypeMax bound the hardware counter types
	// (PAPI and others), which become counter samples.
	CounterTypeMin = 42000000
	CounterTypeMax = 42999999
	// UserFunctionType is Extrae's user function event type (USRFUNC_EV);
	// its events become regions (see FunctionTypes), and the exporter
	// writes regions of traces that did not come from Paraver under it.
	UserFunctionType = 60000019
	// regionScale separates type and value in an MPI region id.
	regionScale = 100000
	// FunctionRegionScale separates the type's place in FunctionTypes
	// from the value in a function region id: the region of value v of
	// FunctionTypes()[k-1] has id k*FunctionRegionScale+v. MPI region ids
	// are below 10,000,000 (type 50000099, value 99,999), so the two
	// ranges cannot meet.
	FunctionRegionScale = 100000000
)

// functionTypes are Extrae's event types whose values identify a function
// (translated by mpi2prv into the .pcf VALUES, 0 "End") entered at a
// non-zero value and left at 0, nesting like calls. Their order fixes the
// region ids: append, never reorder. From Extrae's src/common/events.h and
// the merger's handlers (src/merger/paraver/*_prv_semantics.c), commit
// 2292a142dc7a0544d2b0c06c9a9cce7e94d1a423.
var functionTypes = [...]int64{
	60000018, // OMPFUNC_EV: executed OpenMP parallel (outlined) function
	60000019, // USRFUNC_EV: user function
	60000020, // PTHREAD_FUNC_EV: pthread function (thread body, pthread_create)
	60000023, // TASKFUNC_EV: executed OpenMP task function
	60000024, // TASKFUNC_INST_EV: instantiated OpenMP task function
	63000006, // CUDA_KERNEL_EXEC_EV: CUDA kernel execution
	63500006, // HIP_KERNEL_EXEC_EV: HIP kernel execution
}

// FunctionTypes returns Extrae's function event types that the importer
// turns into regions, in the order that numbers their region ids (see
// FunctionRegionScale): 60000018 (executed OpenMP parallel function),
// 60000019 (user function), 60000020 (pthread function), 60000023
// (executed OpenMP task function), 60000024 (instantiated OpenMP task
// function), 63000006 (CUDA kernel execution) and 63500006 (HIP kernel
// execution).
func FunctionTypes() []int64 { return functionTypes[:] }

// functionSlot returns the 1-based place of typ in functionTypes, or 0.
func functionSlot(typ int64) int64 {
	for i, t := range functionTypes {
		if t == typ {
			return int64(i) + 1
		}
	}
	return 0
}

// IsFunctionType reports whether typ is one of FunctionTypes.
func IsFunctionType(typ int64) bool { return functionSlot(typ) > 0 }

// RegionID returns the region id the importer gives to value v of event
// type typ: (typ-50000000)*100000+v for an MPI call (typ within MPITypeMin
// and MPITypeMax, 0 < v < 100000), k*FunctionRegionScale+v for a function
// of the k-th of FunctionTypes (0 < v < FunctionRegionScale); false for
// any other (typ, v).
func RegionID(typ, v int64) (int32, bool) {
	if k := functionSlot(typ); k > 0 {
		if v <= 0 || v >= FunctionRegionScale {
			return 0, false
		}
		return int32(k*FunctionRegionScale + v), true
	}
	if typ < MPITypeMin || typ > MPITypeMax || v <= 0 || v >= regionScale {
		return 0, false
	}
	return int32((typ-50000000)*regionScale + v), true
}

// RegionType is the inverse of RegionID: the event type and value of a
// region id, and false for an id RegionID does not give.
func RegionType(id int32) (typ, v int64, ok bool) {
	if id >= FunctionRegionScale {
		k, val := int64(id)/FunctionRegionScale, int64(id)%FunctionRegionScale
		if k > int64(len(functionTypes)) || val <= 0 {
			return 0, 0, false
		}
		return functionTypes[k-1], val, true
	}
	t, val := int64(id)/regionScale, int64(id)%regionScale
	if t < 1 || t > MPITypeMax-50000000 || val <= 0 {
		return 0, 0, false
	}
	return 50000000 + t, val, true
}

// dimemasOps maps the global operation ids of "4:" records to operations.
var dimemasOps = []trace.CollectiveOp{
	trace.OpBarrier, trace.OpBcast, trace.OpGather, trace.OpGather, trace.OpScatter, trace.OpScatter,
	trace.OpAllgather, trace.OpAllgather, trace.OpAlltoall, trace.OpAlltoall, trace.OpReduce,
	trace.OpAllreduce, trace.OpReduceScatter, trace.OpScan,
}

// rooted reports whether op has a root.
func rooted(op trace.CollectiveOp) bool {
	switch op {
	case trace.OpBcast, trace.OpGather, trace.OpScatter, trace.OpReduce:
		return true
	}
	return false
}

func init() { format.Register(Importer{}) }

// Importer imports Paraver traces. The zero value is ready to use; it is
// registered under Name.
type Importer struct{}

// Name returns "prv".
func (Importer) Name() string { return Name }

// Describe is a one-line description for help texts.
func (Importer) Describe() string {
	return "Paraver traces (Extrae, MPItrace): .prv with its .pcf and .row"
}

// Detect reports whether head starts with a Paraver header.
func (Importer) Detect(name string, head []byte) bool {
	return strings.HasPrefix(string(head[:min(len(head), 8)]), "#Paraver")
}

// Import reads one .prv file (given among inputs, possibly gzipped) and the
// .pcf and .row files of the same base name next to it, or given among
// inputs. It writes run 0 of the trace to w.
func (Importer) Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	var prvPath, pcfPath, rowPath string
	for _, in := range inputs {
		switch ext := strings.ToLower(filepath.Ext(strings.TrimSuffix(in, ".gz"))); ext {
		case ".pcf":
			pcfPath = in
		case ".row":
			rowPath = in
		default:
			if prvPath != "" {
				return fmt.Errorf("prv: one trace per import (got %s and %s)", prvPath, in)
			}
			prvPath = in
		}
	}
	if prvPath == "" {
		return errors.New("prv: no .prv input")
	}
	base := strings.TrimSuffix(strings.TrimSuffix(prvPath, ".gz"), ".prv")
	if pcfPath == "" {
		pcfPath = base + ".pcf"
	}
	if rowPath == "" {
		rowPath = base + ".row"
	}
	h := w.Header()
	if h.Meta.Extra == nil {
		h.Meta.Extra = map[string]string{}
	}
	pc, err := companion(h, "prv.pcf", pcfPath, "missing: states, events and values have numeric names", readPCF)
	if err != nil {
		return err
	}
	if pc != nil {
		if w := pc.unknownSummary(); w != "" {
			h.Meta.Extra["prv.pcf.skipped"] = w
		}
		for t, n := range pc.precision {
			h.Meta.Extra[fmt.Sprintf("prv.precision.%d", t)] = strconv.FormatInt(n, 10)
		}
	}
	rw, err := companion(h, "prv.row", rowPath, "missing: processes are named appl.task.thread", readRow)
	if err != nil {
		return err
	}
	lr, err := format.OpenLines(prvPath)
	if err != nil {
		var fe *format.Error
		if errors.As(err, &fe) {
			return err
		}
		return &format.Error{File: prvPath, Offset: -1, Msg: "cannot open", Err: err}
	}
	defer lr.Close()
	return importLines(ctx, lr, prvPath, pc, rw, opts, w)
}

// importer is the state of one import.
type importer struct {
	ctx  context.Context
	lr   *format.LineReader
	w    trace.Writer
	h    *trace.Header
	pcf  *pcf
	hdr  *header
	unit int64
	end  int64 // the trace's end in ns
	last int64 // the latest time of any record so far, in ns
	// procs holds the state of each process that has had a record, by
	// process id; the others are nil, so that what a header declares costs
	// nothing until records name it.
	procs []*procState
	live  []int32   // ids of the non-nil procs, in creation order
	index [][]int32 // appl-1 -> first process id of each task

	threadNames []string // .row THREAD names when they name every thread
	eagerInfo   bool     // h.Procs was filled for every declared thread
	comms       map[int32][]int32

	states   map[int32]bool
	events   map[int32]bool
	counters map[int32]bool
	regions  map[int32]bool
	comments int
	f        []int64          // fields of the current line
	held     int              // records held back, over all processes
	free     [][]trace.Record // released record chunks for reuse
	window   int
}

// procState is what the importer tracks per process.
type procState struct {
	lastLine int64 // time of the last state, event or global record
	seenLine bool
	idle     int64    // pending idle state time, or -1
	pending  recQueue // records not yet added, sorted by T
	released int64    // time of the last record added to the writer
	added    bool
	open     []openCall // open MPI calls and functions, innermost last
}

// MaxNamedThreads is the number of declared threads up to which every
// thread gets a trace.ProcInfo, with or without records. A header that
// declares more (up to 4,194,304) names only the threads that have records,
// so that a corrupt or hostile header cannot make the importer do work in
// proportion to what it declares rather than to what the file contains.
const MaxNamedThreads = 4096

// DefaultWindow is the default number of records the importer holds back
// to put sends and receives at their logical times (parameter "window").
const DefaultWindow = 1 << 21

// openCall is an open MPI call or function: its event type and region id,
// or -1 for a function entry kept as an event (its value has no id).
type openCall struct {
	typ int64
	id  int32
}

// companion reads the companion file (.pcf, .row) at path with read when
// it exists, and notes in h's metadata under key its path, or missing (how
// the import does without it) when there is none.
func companion[T any](h *trace.Header, key, path, missing string, read func(string) (*T, error)) (*T, error) {
	if _, err := os.Stat(path); err != nil {
		h.Meta.Extra[key] = missing
		return nil, nil
	}
	v, err := read(path)
	if err != nil {
		return nil, err
	}
	h.Meta.Extra[key] = path
	return v, nil
}

// importLines imports an opened .prv stream; tests and the fuzz target call
// it directly.
func importLines(ctx context.Context, lr *format.LineReader, path string, pc *pcf, rw *row, opts format.Options, w trace.Writer) error {
	first, err := lr.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return format.LineError(path, 1, "empty file: expected the header \"#Paraver (date):ftime:nodes:applications\"")
		}
		return err
	}
	hdr, err := parseHeader(string(first))
	if err != nil {
		return format.LineError(path, 1, "%v", err)
	}
	h := w.Header()
	if h.Meta.Extra == nil {
		h.Meta.Extra = map[string]string{}
	}
	unit := int64(1)
	switch {
	case opts.TimeUnit > 0:
		unit = int64(opts.TimeUnit / time.Nanosecond)
		h.Meta.Extra["prv.time_unit"] = opts.TimeUnit.String() + " (given)"
	case hdr.ns:
		h.Meta.Extra["prv.time_unit"] = "ns (header _ns suffix)"
	case pc != nil && unitNS(pc.units) > 0:
		unit = unitNS(pc.units)
		h.Meta.Extra["prv.time_unit"] = pc.units + " (.pcf UNITS)"
	default:
		unit = 1000
		h.Meta.Extra["prv.time_unit"] = "us (assumed: no _ns suffix and no .pcf UNITS)"
	}
	if unit <= 0 {
		unit = 1
	}
	if hdr.ftime > math.MaxInt64/unit {
		return format.LineError(path, 1, "the trace duration %d overflows int64 nanoseconds", hdr.ftime)
	}
	im := &importer{ctx: ctx, lr: lr, w: w, h: h, pcf: pc, hdr: hdr, unit: unit, end: hdr.ftime * unit,
		comms: map[int32][]int32{}, states: map[int32]bool{}, events: map[int32]bool{},
		counters: map[int32]bool{}, regions: map[int32]bool{}, window: DefaultWindow}
	if v, ok := opts.Params["window"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("prv: parameter window=%q: want a positive number of records", v)
		}
		im.window = n
	}
	h.Meta.Source = Name
	h.Meta.ClockResolution = unit
	h.Meta.Inputs = append(h.Meta.Inputs, path)
	h.Meta.Extra["prv.date"] = hdr.date
	h.Meta.Extra["prv.duration_ns"] = strconv.FormatInt(im.end, 10)
	h.Meta.Extra["prv.nodes"] = strconv.Itoa(hdr.nnodes)
	if hdr.nodes != nil {
		h.Meta.Extra["prv.cpus_per_node"] = joinInts(hdr.nodes)
	}
	h.Meta.Extra["prv.applications"] = strconv.Itoa(len(hdr.appls))
	if hdr.comms >= 0 {
		h.Meta.Extra["prv.communicators"] = strconv.Itoa(hdr.comms)
	}

	// Processes.
	var nproc int32
	for _, ap := range hdr.appls {
		nproc += int32(sum(ap.threads))
	}
	pid := int32(0)
	for _, ap := range hdr.appls {
		firsts := make([]int32, len(ap.threads))
		for t, nth := range ap.threads {
			firsts[t] = pid
			pid += int32(nth)
		}
		im.index = append(im.index, firsts)
	}
	if rw != nil && int32(len(rw.levels["THREAD"])) == nproc {
		im.threadNames = rw.levels["THREAD"]
	}
	im.eagerInfo = nproc <= MaxNamedThreads
	if im.eagerInfo {
		h.Procs = slices.Grow(h.Procs, int(nproc))
		for a, ap := range hdr.appls {
			for t, nth := range ap.threads {
				for th := 0; th < nth; th++ {
					h.Procs = append(h.Procs, im.procInfo(a, t, th))
				}
			}
		}
	} else {
		h.Meta.Extra["prv.procinfo"] = fmt.Sprintf("the header declares %d threads (more than %d): only threads with records are named", nproc, MaxNamedThreads)
	}
	h.EnsureRun(0, nproc)
	if h.Runs[0].Name == "" {
		h.Runs[0].Name = filepath.Base(strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".prv"))
	}

	if err := im.body(); err != nil {
		return err
	}
	if im.last < im.end {
		h.Repair(RepairEndsEarly, 1)
		format.Warn(h, "prv.ends-early", fmt.Sprintf("%s: the records end at %d ns, before the end time the header declares (%d ns): the file may be cut short after line %d",
			path, im.last, im.end, im.lr.Line()))
	}
	for p, ps := range im.procs {
		if ps != nil {
			if err := im.finish(int32(p)); err != nil {
				return err
			}
		}
	}
	if !im.eagerInfo {
		sort.Slice(h.Procs, func(i, j int) bool { return h.Procs[i].Proc < h.Procs[j].Proc })
	}
	im.dictionaries()
	if im.comments > 0 {
		h.Meta.Extra["prv.comment_lines"] = strconv.Itoa(im.comments)
	}
	return nil
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func joinInts(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

// body reads the records after the header.
func (im *importer) body() error {
	for n := 0; ; n++ {
		if n&0xffff == 0 {
			if err := im.ctx.Err(); err != nil {
				return err
			}
		}
		line, err := im.lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(line) == 0 {
			continue
		}
		switch line[0] {
		case '#':
			im.comments++
			continue
		case 'c':
			if err := im.communicator(line); err != nil {
				return err
			}
			continue
		}
		if len(line) < 2 || line[1] != ':' {
			return im.lr.Errorf("unknown record %q: expected a record type 1 (state), 2 (event), 3 (communication), 4 (global operation), c (communicator) or a # comment", format.Excerpt(line))
		}
		if err := im.fields(line); err != nil {
			return err
		}
		switch line[0] {
		case '1':
			err = im.state()
		case '2':
			err = im.event()
		case '3':
			err = im.comm()
		case '4':
			err = im.global()
		default:
			return im.lr.Errorf("unknown record type %q: expected 1 (state), 2 (event), 3 (communication), 4 (global operation) or c (communicator)", line[0])
		}
		if err != nil {
			return err
		}
	}
}

// fields splits a numeric record into im.f (record type first).
func (im *importer) fields(line []byte) error {
	f := im.f[:0]
	i := 0
	for i <= len(line) {
		j := i
		neg := false
		if j < len(line) && line[j] == '-' {
			neg = true
			j++
		}
		start := j
		var v uint64
		for j < len(line) && line[j] >= '0' && line[j] <= '9' {
			d := uint64(line[j] - '0')
			if v > (math.MaxUint64-d)/10 {
				return im.lr.Errorf("field %d: number too large", len(f)+1)
			}
			v = v*10 + d
			j++
		}
		if j == start || (j < len(line) && line[j] != ':') {
			return im.lr.Errorf("field %d: expected an integer, got %q", len(f)+1, format.Excerpt(fieldAt(line, i)))
		}
		x := int64(v)
		if neg {
			x = -x
		}
		f = append(f, x)
		i = j + 1
	}
	im.f = f
	return nil
}

func fieldAt(line []byte, i int) []byte {
	j := i
	for j < len(line) && line[j] != ':' {
		j++
	}
	return line[i:j]
}

// proc returns the process of (appl, task, thread), 1-based, as in the file.
func (im *importer) proc(a, t, th int64) (int32, error) {
	if a < 1 || a > int64(len(im.hdr.appls)) {
		return 0, im.lr.Errorf("application %d is not declared in the header (it declares %d)", a, len(im.hdr.appls))
	}
	ap := im.hdr.appls[a-1]
	if t < 1 || t > int64(len(ap.threads)) {
		return 0, im.lr.Errorf("task %d of application %d is not declared in the header (it declares %d tasks)", t, a, len(ap.threads))
	}
	if th < 1 || th > int64(ap.threads[t-1]) {
		return 0, im.lr.Errorf("thread %d of task %d.%d is not declared in the header (it declares %d threads)", th, a, t, ap.threads[t-1])
	}
	p := im.index[a-1][t-1] + int32(th-1)
	if int(p) >= len(im.procs) || im.procs[p] == nil {
		im.create(p, int(a-1), int(t-1), int(th-1))
	}
	return p, nil
}

// create sets up the state of process p, thread th of task t of
// application a (0-based), on its first record.
func (im *importer) create(p int32, a, t, th int) {
	if int(p) >= len(im.procs) {
		n := max(int(p)+1, 2*len(im.procs), 16)
		procs := make([]*procState, n)
		copy(procs, im.procs)
		im.procs = procs
	}
	im.procs[p] = &procState{idle: -1}
	im.live = append(im.live, p)
	if !im.eagerInfo {
		im.h.Procs = append(im.h.Procs, im.procInfo(a, t, th))
	}
}

// procName returns the name of process p for error messages.
func (im *importer) procName(p int32) string {
	for i := range im.h.Procs {
		if pi := &im.h.Procs[i]; pi.Run == 0 && pi.Proc == p {
			return pi.Name
		}
	}
	return strconv.Itoa(int(p))
}

// procInfo describes thread th of task t of application a (0-based).
func (im *importer) procInfo(a, t, th int) trace.ProcInfo {
	p := im.index[a][t] + int32(th)
	name := strconv.Itoa(a+1) + "." + strconv.Itoa(t+1) + "." + strconv.Itoa(th+1)
	if im.threadNames != nil {
		name = im.threadNames[p]
	}
	return trace.ProcInfo{Run: 0, Proc: p, Name: name, Extra: map[string]string{
		"appl": strconv.Itoa(a + 1), "task": strconv.Itoa(t + 1), "thread": strconv.Itoa(th + 1),
		"node": strconv.Itoa(im.hdr.appls[a].node[t])}}
}

// time converts a time field to ns.
func (im *importer) time(v int64, what string) (int64, error) {
	if v < 0 || v > math.MaxInt64/im.unit {
		return 0, im.lr.Errorf("%s %d is out of range", what, v)
	}
	im.last = max(im.last, v*im.unit)
	return v * im.unit, nil
}

func (im *importer) need(n int, what string) error {
	if len(im.f) < n {
		return im.lr.Errorf("%s record has %d fields, expected %d", what, len(im.f), n)
	}
	return nil
}

// advance brings process p to the time t of a state, event or global
// operation record: it queues the pending idle state due before t and
// checks that t does not go back in time. A state record at t replaces a
// pending idle state.
func (im *importer) advance(p int32, t int64, state bool) error {
	ps := im.procs[p]
	if ps.seenLine && t < ps.lastLine {
		return im.lr.Errorf("time %d goes back on thread %s (its previous record is at %d): Paraver records must be sorted by time",
			t/im.unit, im.procName(p), ps.lastLine/im.unit)
	}
	ps.lastLine, ps.seenLine = t, true
	if ps.idle >= 0 && ps.idle < t {
		im.states[0] = true
		im.h.Repair(RepairStateGap, 1)
		if err := im.push(p, trace.State(0, p, ps.idle, 0)); err != nil {
			return err
		}
	}
	if state || ps.idle < t {
		ps.idle = -1
	}
	return nil
}

// push queues a record of process p in time order. Records are held back
// (up to the window) because Extrae sorts communication records by their
// physical send time: a send or receive posted earlier comes after records
// it precedes. A record whose time lies before what was already added to
// the writer is moved to that time (RepairMessageMoved).
func (im *importer) push(p int32, r trace.Record) error {
	ps := im.procs[p]
	if ps.added && r.T < ps.released {
		r.T = ps.released
		im.h.Repair(RepairMessageMoved, 1)
	}
	ps.pending.insert(r, &im.free)
	im.held++
	if im.held > im.window {
		// Release the older half of every process's records.
		for _, q := range im.live {
			if err := im.release(q, im.procs[q].pending.n/2); err != nil {
				return err
			}
		}
	}
	return nil
}

// release adds the first n held records of process p to the writer.
func (im *importer) release(p int32, n int) error {
	ps := im.procs[p]
	if n == 0 {
		return nil
	}
	last, err := ps.pending.release(n, im.w, &im.free)
	if err != nil {
		return im.lr.Errorf("%v", err)
	}
	ps.released, ps.added = last, true
	im.held -= n
	return nil
}

// emit queues a record; it is push for the records of the current line.
func (im *importer) emit(p int32, r trace.Record) error { return im.push(p, r) }

// finish adds what process p still holds at the end of the file.
func (im *importer) finish(p int32) error {
	ps := im.procs[p]
	if ps.idle >= 0 && ps.idle < im.end {
		if err := im.advance(p, im.end, false); err != nil {
			return err
		}
	}
	return im.release(p, ps.pending.n)
}

// procTime returns the process of a record's fields 2 to 4 (application,
// task, thread) and the time in its field 5, called what in errors.
func (im *importer) procTime(what string) (int32, int64, error) {
	f := im.f
	p, err := im.proc(f[2], f[3], f[4])
	if err != nil {
		return 0, 0, err
	}
	t, err := im.time(f[5], what)
	return p, t, err
}

// state handles "1:cpu:appl:task:thread:begin:end:state".
func (im *importer) state() error {
	if err := im.need(8, "state"); err != nil {
		return err
	}
	f := im.f
	p, begin, err := im.procTime("begin time")
	if err != nil {
		return err
	}
	end, err := im.time(f[6], "end time")
	if err != nil {
		return err
	}
	if end < begin {
		return im.lr.Errorf("state ends at %d, before it begins at %d", f[6], f[5])
	}
	if f[7] < 0 || f[7] > math.MaxInt32 {
		return im.lr.Errorf("state %d is out of range", f[7])
	}
	if err := im.advance(p, begin, true); err != nil {
		return err
	}
	id := int32(f[7])
	mark(im.states, id)
	if err := im.emit(p, trace.State(0, p, begin, id)); err != nil {
		return err
	}
	im.procs[p].idle = end
	return nil
}

// event handles "2:cpu:appl:task:thread:time:type:value[:type:value...]".
func (im *importer) event() error {
	f := im.f
	if len(f) < 8 || (len(f)-6)%2 != 0 {
		return im.lr.Errorf("event record has %d fields, expected 6 then type:value pairs", len(f))
	}
	p, t, err := im.procTime("time")
	if err != nil {
		return err
	}
	if err := im.advance(p, t, false); err != nil {
		return err
	}
	ps := im.procs[p]
	for i := 6; i < len(f); i += 2 {
		typ, v := f[i], f[i+1]
		if typ < 0 || typ > math.MaxInt32 {
			return im.lr.Errorf("event type %d is out of range (0..%d)", typ, math.MaxInt32)
		}
		var r trace.Record
		fn := IsFunctionType(typ)
		switch {
		case (fn || typ >= MPITypeMin && typ <= MPITypeMax) && v == 0:
			k := len(ps.open) - 1
			for k >= 0 && ps.open[k].typ != typ {
				k--
			}
			if k < 0 {
				if fn {
					im.h.Repair(RepairFunctionUnopenedExit, 1)
				} else {
					im.h.Repair(RepairUnopenedExit, 1)
				}
				continue
			}
			if id := ps.open[k].id; id >= 0 {
				r = trace.Exit(0, p, t, id)
			} else {
				// The end of a function whose value has no region id:
				// an event, as its entry was.
				r = trace.Event(0, p, t, int32(typ), 0)
			}
			ps.open = append(ps.open[:k], ps.open[k+1:]...)
		case fn:
			// Functions nest: an entry while another function of the
			// type is open is a call from it, not a missing exit.
			id, ok := RegionID(typ, v)
			if !ok {
				// A value out of the id range (an address mpi2prv did
				// not translate): kept as an event, and its end too.
				mark(im.events, int32(typ))
				ps.open = append(ps.open, openCall{typ, -1})
				r = trace.Event(0, p, t, int32(typ), v)
				break
			}
			mark(im.regions, id)
			ps.open = append(ps.open, openCall{typ, id})
			r = trace.Enter(0, p, t, id)
		case typ >= MPITypeMin && typ <= MPITypeMax:
			id, ok := RegionID(typ, v)
			if !ok {
				mark(im.events, int32(typ))
				r = trace.Event(0, p, t, int32(typ), v)
				break
			}
			for k := len(ps.open) - 1; k >= 0; k-- {
				if ps.open[k].typ == typ {
					if err := im.emit(p, trace.Exit(0, p, t, ps.open[k].id)); err != nil {
						return err
					}
					ps.open = append(ps.open[:k], ps.open[k+1:]...)
					im.h.Repair(RepairImplicitExit, 1)
					break
				}
			}
			mark(im.regions, id)
			ps.open = append(ps.open, openCall{typ, id})
			r = trace.Enter(0, p, t, id)
		case typ >= CounterTypeMin && typ <= CounterTypeMax:
			mark(im.counters, int32(typ))
			r = trace.Counter(0, p, t, int32(typ), float64(v))
		default:
			mark(im.events, int32(typ))
			r = trace.Event(0, p, t, int32(typ), v)
		}
		if err := im.emit(p, r); err != nil {
			return err
		}
	}
	return nil
}

// comm handles "3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:thread:lrecv:precv:size:tag".
func (im *importer) comm() error {
	if err := im.need(15, "communication"); err != nil {
		return err
	}
	f := im.f
	src, err := im.proc(f[2], f[3], f[4])
	if err != nil {
		return err
	}
	dst, err := im.proc(f[8], f[9], f[10])
	if err != nil {
		return err
	}
	var ts [4]int64
	for i, k := range []int{5, 6, 11, 12} {
		if ts[i], err = im.time(f[k], "communication time"); err != nil {
			return err
		}
	}
	if f[13] < 0 {
		return im.lr.Errorf("communication size %d is negative", f[13])
	}
	if f[14] < math.MinInt32 || f[14] > math.MaxInt32 {
		return im.lr.Errorf("tag %d is out of range", f[14])
	}
	if err := im.push(src, trace.Send(0, src, ts[0], ts[1], dst, f[13], int32(f[14]), 0)); err != nil {
		return err
	}
	return im.push(dst, trace.Recv(0, dst, ts[2], ts[3], src, f[13], int32(f[14]), 0))
}

// global handles the old "4:cpu:appl:task:thread:time:comm:send:recv:op[:root]".
func (im *importer) global() error {
	if err := im.need(10, "global operation"); err != nil {
		return err
	}
	f := im.f
	p, t, err := im.procTime("time")
	if err != nil {
		return err
	}
	if f[6] < math.MinInt32 || f[6] > math.MaxInt32 {
		return im.lr.Errorf("communicator %d is out of range", f[6])
	}
	if f[7] < 0 {
		return im.lr.Errorf("global operation send size %d is negative", f[7])
	}
	op := trace.OpUnknown
	if f[9] >= 0 && f[9] < int64(len(dimemasOps)) {
		op = dimemasOps[f[9]]
	}
	root := trace.NoPeer
	if len(f) > 10 && rooted(op) {
		if m := im.comms[int32(f[6])]; f[10] >= 0 && f[10] < int64(len(m)) {
			root = m[f[10]]
		}
	}
	if err := im.advance(p, t, false); err != nil {
		return err
	}
	return im.emit(p, trace.Coll(0, p, t, 0, op, root, f[7], int32(f[6])))
}

// communicator handles "c:appl:id:n:task...".
func (im *importer) communicator(line []byte) error {
	parts := strings.Split(string(line), ":")
	if len(parts) < 4 || parts[0] != "c" {
		return im.lr.Errorf("expected a communicator \"c:appl:id:n:task...\", got %q", format.Excerpt(line))
	}
	var nums []int64
	for i, s := range parts[1:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return im.lr.Errorf("communicator field %d: expected an integer, got %q", i+2, format.Excerpt([]byte(s)))
		}
		nums = append(nums, v)
	}
	a, id, n := nums[0], nums[1], nums[2]
	if n < 0 || int64(len(nums)-3) != n {
		return im.lr.Errorf("communicator %d declares %d members but lists %d", id, n, len(nums)-3)
	}
	if id < math.MinInt32 || id > math.MaxInt32 {
		return im.lr.Errorf("communicator id %d is out of range", id)
	}
	if a < 1 || a > int64(len(im.hdr.appls)) {
		return im.lr.Errorf("communicator %d: application %d is not declared in the header", id, a)
	}
	if _, dup := im.comms[int32(id)]; dup {
		im.h.Repair(RepairCommDuplicate, 1)
		return nil
	}
	members := []int32{}
	for _, task := range nums[3:] {
		if task < 1 || task > int64(len(im.hdr.appls[a-1].threads)) {
			im.h.Repair(RepairCommMember, 1)
			continue
		}
		members = append(members, im.index[a-1][task-1])
	}
	im.comms[int32(id)] = members
	im.h.Comms = append(im.h.Comms, trace.CommDef{ID: int32(id), Name: fmt.Sprintf("appl %d comm %d", a, id), Members: members})
	return nil
}

// dictionaries fills the header's dictionaries from the .pcf and the ids seen.
func (im *importer) dictionaries() {
	h, pc := im.h, im.pcf
	typeName := func(typ int64, kind string) string {
		if pc != nil && pc.types[typ] != "" {
			return pc.types[typ]
		}
		return fmt.Sprintf("%s %d", kind, typ)
	}
	stateIDs := map[int32]bool{}
	for id := range im.states {
		stateIDs[id] = true
	}
	if pc != nil {
		for _, id := range pc.stateOrder {
			if id >= 0 && id <= math.MaxInt32 {
				stateIDs[int32(id)] = true
			}
		}
	}
	for _, id := range sortedKeys(stateIDs) {
		name := fmt.Sprintf("state %d", id)
		if pc != nil && pc.states[int64(id)] != "" {
			name = pc.states[int64(id)]
		} else if id == 0 {
			name = "Idle"
		}
		h.States = append(h.States, trace.StateDef{ID: id, Name: name})
	}
	for _, id := range sortedKeys(im.events) {
		h.Events = append(h.Events, trace.EventDef{ID: id, Name: typeName(int64(id), "event type")})
	}
	for _, id := range sortedKeys(im.counters) {
		h.Counters = append(h.Counters, trace.CounterDef{ID: id, Name: typeName(int64(id), "counter")})
	}
	regionTypes := map[int64]bool{}
	for _, id := range sortedKeys(im.regions) {
		typ, v, _ := RegionType(id)
		regionTypes[typ] = true
		var label string
		switch {
		case pc != nil && pc.values[typ][v] != "":
			label = pc.values[typ][v]
		case IsFunctionType(typ):
			label = fmt.Sprintf("%s value %d", typeName(typ, "function type"), v)
		default:
			label = fmt.Sprintf("%s %d", typeName(typ, "MPI type"), v)
		}
		h.Regions = append(h.Regions, trace.RegionDef{ID: id, Kind: trace.RegionFunction, Label: label, Parent: -1})
	}
	if pc == nil {
		return
	}
	for typ := range regionTypes {
		if n := pc.types[typ]; n != "" {
			h.Meta.Extra["prv.type."+strconv.FormatInt(typ, 10)] = n
		}
	}
	used := func(typ int64) bool {
		return typ <= math.MaxInt32 && (im.events[int32(typ)] || im.counters[int32(typ)] || regionTypes[typ])
	}
	for typ, vals := range pc.values {
		if !used(typ) || len(vals) == 0 {
			continue
		}
		m := make(map[string]string, len(vals))
		for v, n := range vals {
			m[strconv.FormatInt(v, 10)] = n
		}
		b, _ := json.Marshal(m) // map[string]string always marshals
		h.Meta.Extra["prv.values."+strconv.FormatInt(typ, 10)] = string(b)
	}
}

// mark adds id to a set; looking up first is cheaper than assigning again
// for the ids every record repeats.
func mark(set map[int32]bool, id int32) {
	if !set[id] {
		set[id] = true
	}
}

func sortedKeys(m map[int32]bool) []int32 {
	ks := make([]int32, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// chunkLen is the number of records in one chunk of a recQueue.
const chunkLen = 1024

// recQueue holds a process's records in time order (equal times in arrival
// order) as a list of chunks, so that holding many records never copies
// them to grow, and out-of-order inserts shift at most one chunk. Every
// chunk is non-empty.
type recQueue struct {
	chunks [][]trace.Record
	n      int
}

func newChunk(free *[][]trace.Record) []trace.Record {
	if k := len(*free); k > 0 {
		c := (*free)[k-1]
		*free = (*free)[:k-1]
		return c[:0]
	}
	return make([]trace.Record, 0, chunkLen)
}

// insert adds r after every record with a time at or before r.T.
func (q *recQueue) insert(r trace.Record, free *[][]trace.Record) {
	q.n++
	nc := len(q.chunks)
	if nc == 0 || q.chunks[nc-1][len(q.chunks[nc-1])-1].T <= r.T {
		if nc == 0 || len(q.chunks[nc-1]) >= chunkLen {
			q.chunks = append(q.chunks, newChunk(free))
			nc++
		}
		q.chunks[nc-1] = append(q.chunks[nc-1], r)
		return
	}
	ci := sort.Search(nc, func(i int) bool { c := q.chunks[i]; return c[len(c)-1].T > r.T })
	c := q.chunks[ci]
	k := sort.Search(len(c), func(i int) bool { return c[i].T > r.T })
	if len(c) >= chunkLen {
		upper := append(newChunk(free), c[len(c)/2:]...)
		c = c[:len(c)/2]
		q.chunks[ci] = c
		q.chunks = slices.Insert(q.chunks, ci+1, upper)
		if k > len(c) {
			ci, k, c = ci+1, k-len(c), upper
		}
	}
	c = append(c, trace.Record{})
	copy(c[k+1:], c[k:])
	c[k] = r
	q.chunks[ci] = c
}

// release adds the first n records to w and returns the time of the last.
func (q *recQueue) release(n int, w trace.Writer, free *[][]trace.Record) (int64, error) {
	var last int64
	for n > 0 {
		c := q.chunks[0]
		m := min(n, len(c))
		for i := range c[:m] {
			if err := w.Add(c[i]); err != nil {
				return last, err
			}
		}
		last = c[m-1].T
		if m == len(c) {
			if cap(c) == chunkLen {
				*free = append(*free, c)
			}
			q.chunks[0] = nil
			q.chunks = q.chunks[1:]
		} else {
			q.chunks[0] = c[m:]
		}
		n -= m
		q.n -= m
	}
	if len(q.chunks) == 0 {
		q.chunks = nil
	}
	return last, nil
}
