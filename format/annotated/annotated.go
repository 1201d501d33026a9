package annotated

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// Name is the format's name as given to --format.
const Name = "annotated"

// Default values of the "anysource" and "procnull" parameters: MPICH's
// MPI_ANY_SOURCE and MPI_PROC_NULL as seen through its Fortran binding.
const (
	DefaultAnySource = -2
	DefaultProcNull  = -1
)

// Names of the repairs the importer counts in Header.Repairs.
const (
	// RepairImplicitExit counts regions closed because an enclosing region
	// ended while they were still open (Figure 4's IF_152).
	RepairImplicitExit = "implicit-region-exit"
	// RepairUnclosedRegion counts regions still open at the end of a file,
	// closed at the file's last known time.
	RepairUnclosedRegion = "unclosed-region-at-eof"
	// RepairUnwaitedRequest counts non-blocking calls whose completing
	// wait was not seen; their End is the time the call itself returned.
	RepairUnwaitedRequest = "unwaited-request"
	// RepairElision counts ":" elision marks (Figure 4 has two), skipped.
	RepairElision = "elision-marker"
)

// maxHeld bounds the records a process may hold back while a non-blocking
// call waits for its wait: beyond it the oldest is released as unwaited.
const maxHeld = 1 << 16

func init() { format.Register(Importer{}) }

// Importer imports annotated MPI traces (Jones et al. 2007). The zero value is ready
// to use; it is registered under Name.
type Importer struct{}

// Name returns "annotated".
func (Importer) Name() string { return Name }

// Describe is a one-line description for help texts.
func (Importer) Describe() string {
	return "code-structure-annotated MPI traces (Jones et al. 2007): one file per rank"
}

var (
	detectStart = regexp.MustCompile(`(?m)^[ \t]*---[ \t]*\S+[ \t]+starts[ \t]+---`)
	detectEnd   = regexp.MustCompile(`(?m)^[ \t]*\+\+\+[ \t]*\S+[ \t]+ends[ \t]+\+\+\+`)
	detectCall  = regexp.MustCompile(`(?i)mpi_[a-z0-9_]*_[ \t]*\(`)
	detectSize  = regexp.MustCompile(`\{[ \t\r\n]*typesize`)
)

// Detect reports whether head looks like an annotated trace: a region line
// ("--- LABEL starts ---", "+++ LABEL ends +++") or an "mpi_..._(" call
// record with its "{ typesize" block.
func (Importer) Detect(name string, head []byte) bool {
	return detectStart.Match(head) || detectEnd.Match(head) ||
		detectCall.Match(head) && detectSize.Match(head)
}

// input is one file of the trace, as found by the first pass.
type input struct {
	path     string
	rank     int64
	size     int64 // declared number of processes, 0 if none
	sizeLine int   // the line of the rank header
	first    int64 // the first timestamp, absolute ns
	hasFirst bool
}

// Import reads one file per process and writes the trace to w, as run 0
// of a fresh header: region, event and communicator ids start at 0. It
// reads the parameters "anysource" and "procnull" from opts.Params (other
// parameters are ignored) and the unit of the timestamps from
// opts.TimeUnit (seconds when 0).
func (Importer) Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	return importFiles(ctx, inputs, opts, w, openFile)
}

// opener opens an input for line reading; tests replace the file system.
type opener func(path string) (*format.LineReader, error)

// importFiles is Import with the way inputs are opened as a parameter.
func importFiles(ctx context.Context, inputs []string, opts format.Options, w trace.Writer, open opener) error {
	if len(inputs) == 0 {
		return errors.New("annotated: no input files")
	}
	anySource, err := intParam(opts.Params, "anysource", DefaultAnySource)
	if err != nil {
		return err
	}
	procNull, err := intParam(opts.Params, "procnull", DefaultProcNull)
	if err != nil {
		return err
	}
	if anySource == procNull {
		return fmt.Errorf("annotated: parameters anysource and procnull are both %d", anySource)
	}
	unit := opts.TimeUnit
	if unit <= 0 {
		unit = time.Second
	}

	// First pass: the rank, the declared size and the first timestamp of
	// every file.
	files := make([]input, 0, len(inputs))
	for _, path := range inputs {
		if err := ctx.Err(); err != nil {
			return err
		}
		in, err := scanHead(path, unit, open)
		if err != nil {
			return err
		}
		files = append(files, in)
	}
	slices.SortStableFunc(files, func(a, b input) int { return cmp.Compare(a.rank, b.rank) })
	var declared int64
	var declaredBy *input
	var origin int64
	hasOrigin := false
	for i := range files {
		f := &files[i]
		if i > 0 && files[i-1].rank == f.rank {
			return format.LineError(f.path, 0, "rank %d is also the rank of %s", f.rank, files[i-1].path)
		}
		if f.size > 0 {
			if declaredBy != nil && f.size != declared {
				return format.LineError(f.path, f.sizeLine, "the header declares %d processes, but %s declares %d", f.size, declaredBy.path, declared)
			}
			declared, declaredBy = f.size, f
		}
		if f.hasFirst && (!hasOrigin || f.first < origin) {
			origin, hasOrigin = f.first, true
		}
	}
	procs := files[len(files)-1].rank + 1
	if declared > 0 {
		if procs > declared {
			last := files[len(files)-1]
			return format.LineError(last.path, 0, "unknown rank %d: the trace declares %d processes (in %s)", last.rank, declared, declaredBy.path)
		}
		procs = declared
	}

	h := w.Header()
	h.Meta.Source = Name
	h.Meta.ClockResolution = 1
	h.Meta.Inputs = append([]string(nil), inputs...)
	if h.Meta.Extra == nil {
		h.Meta.Extra = map[string]string{}
	}
	h.Meta.Extra["time_origin_ns"] = strconv.FormatInt(origin, 10)
	h.EnsureRun(0, int32(procs))

	imp := &importer{
		ctx: ctx, open: open, w: w, h: h,
		anySource: anySource, procNull: procNull, unit: unit,
		origin: origin, declared: declared, procs: procs,
		classes:   map[string]*callClass{},
		regionIDs: map[string]int32{},
		comms:     map[int32]bool{},
	}
	for i := range files {
		if err := imp.file(&files[i]); err != nil {
			return err
		}
		h.Procs = append(h.Procs, trace.ProcInfo{Run: 0, Proc: int32(files[i].rank),
			Name: fmt.Sprintf("rank %d", files[i].rank), Extra: map[string]string{"file": files[i].path}})
	}
	h.Regions = append(h.Regions, imp.regionDefs...)
	for id, name := range imp.events.Names() {
		h.Events = append(h.Events, trace.EventDef{ID: int32(id), Name: name})
	}
	comms := make([]int32, 0, len(imp.comms))
	for c := range imp.comms {
		comms = append(comms, c)
	}
	slices.Sort(comms)
	for _, c := range comms {
		h.Comms = append(h.Comms, trace.CommDef{ID: c, Unknown: true})
	}
	return nil
}

// intParam reads an integer parameter.
func intParam(params map[string]string, key string, def int64) (int64, error) {
	s, ok := params[key]
	if !ok {
		return def, nil
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("annotated: parameter %s=%q: %w", key, s, err)
	}
	return v, nil
}

// openFile opens a file for line reading, as a located error on failure.
func openFile(path string) (*format.LineReader, error) {
	lr, err := format.OpenLines(path)
	if err != nil {
		var fe *format.Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, &format.Error{File: path, Offset: -1, Msg: "cannot open", Err: err}
	}
	return lr, nil
}

// scanHead reads a file up to its first call record: its rank header, if
// any, and its first timestamp. The rank comes from the header or from the
// last integer in the file's base name.
func scanHead(path string, unit time.Duration, open opener) (input, error) {
	in := input{path: path, rank: -1}
	lr, err := open(path)
	if err != nil {
		return in, err
	}
	defer lr.Close()
	p := newParser(lr, path, unit)
	records := 0
	for {
		ok, err := p.next()
		if err != nil {
			return in, err
		}
		if !ok {
			break
		}
		if p.it.kind == itemRankHeader {
			if records > 0 {
				return in, p.errorf("the rank header must come before the first record")
			}
			if in.rank >= 0 {
				return in, p.errorf("a second rank header (the first is on line %d)", in.sizeLine)
			}
			in.rank, in.sizeLine = p.it.rank, p.it.line
			if p.it.hasSize {
				in.size = p.it.size
			}
			continue
		}
		if p.it.kind == itemElision {
			continue
		}
		records++
		if p.it.kind == itemCall {
			in.first, in.hasFirst = p.it.tPrev, true
			if in.first == 0 {
				in.first = p.it.tStart
			}
			break
		}
	}
	if in.rank < 0 {
		r, ok := rankFromName(path)
		if !ok {
			return in, format.LineError(path, 0, `cannot tell the rank: give a "# rank R of N" line before the first record, or put the rank in the file name (mg.3.trace)`)
		}
		in.rank = r
	}
	return in, nil
}

// rankFromName returns the last integer in the base name of path, ignoring
// a ".gz" suffix: 3 for "mg.3.trace" and for "trace-0003.txt.gz".
func rankFromName(path string) (int64, bool) {
	base := filepath.Base(path)
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".gz"), ".gzip")
	end := -1
	for i := len(base) - 1; i >= 0; i-- {
		if isDigit(base[i]) {
			end = i + 1
			break
		}
	}
	if end < 0 {
		return 0, false
	}
	start := end - 1
	for start > 0 && isDigit(base[start-1]) {
		start--
	}
	r, err := strconv.ParseInt(base[start:end], 10, 64)
	if err != nil || r >= math.MaxInt32 {
		return 0, false
	}
	return r, true
}

// callKind is what the importer makes of a call.
type callKind uint8

const (
	callEvent    callKind = iota // a named event
	callSend                     // the send side of a message
	callRecv                     // the receive side of a message
	callSendRecv                 // both sides (mpi_sendrecv_)
	callColl                     // a collective
	callWait                     // wait, waitall: completes the requests it names
	callTest                     // test, testall: completes them when flag= is true
)

// callClass is the classification of a call name, cached per name.
type callClass struct {
	kind        callKind
	nonblocking bool
	op          trace.CollectiveOp
	event       int32 // the event id, when hasEvent
	hasEvent    bool
}

// classify maps a call name ("mpi_irecv_", "MPI_Allreduce") to what it becomes.
func classify(name string) callClass {
	s := strings.TrimSuffix(strings.ToLower(name), "_")
	switch {
	case strings.HasPrefix(s, "pmpi_"):
		s = s[len("pmpi_"):]
	case strings.HasPrefix(s, "mpi_"):
		s = s[len("mpi_"):]
	default:
		return callClass{kind: callEvent}
	}
	switch s {
	case "send", "ssend", "bsend", "rsend":
		return callClass{kind: callSend}
	case "isend", "issend", "ibsend", "irsend":
		return callClass{kind: callSend, nonblocking: true}
	case "recv":
		return callClass{kind: callRecv}
	case "irecv":
		return callClass{kind: callRecv, nonblocking: true}
	case "sendrecv", "sendrecv_replace":
		return callClass{kind: callSendRecv}
	case "wait", "waitall":
		return callClass{kind: callWait}
	case "test", "testall":
		return callClass{kind: callTest}
	case "waitany", "waitsome", "testany", "testsome":
		return callClass{kind: callEvent}
	}
	if op, ok := trace.ParseCollectiveOp(s); ok {
		return callClass{kind: callColl, op: op}
	}
	return callClass{kind: callEvent}
}

// importer is the state shared by the files of one import.
type importer struct {
	ctx       context.Context
	open      opener
	w         trace.Writer
	h         *trace.Header
	anySource int64
	procNull  int64
	unit      time.Duration
	origin    int64 // absolute ns of time 0
	declared  int64 // declared number of processes, 0 if none
	procs     int64 // processes of run 0 so far

	regions    trace.Dict // keyed by label, function and file, NUL-separated
	regionIDs  map[string]int32
	regionDefs []trace.RegionDef
	key        []byte // scratch for region keys
	events     trace.Dict
	classes    map[string]*callClass
	comms      map[int32]bool
}

// held is a record held back until its times are known.
type held struct {
	r        trace.Record
	line     int
	req      int64 // the request handle, when needWait
	needEnd  bool  // End is the return time of the call, known at the next call
	needWait bool  // End is the return time of the wait that completes req
	needTime bool  // T is the end of the previous call, known at the next call
}

// openRegion is a region entered and not yet exited.
type openRegion struct {
	id   int32
	line int
}

// fileState imports one file: one process's stream.
type fileState struct {
	*importer
	in   *input
	rank int32

	q    []held // records held back, in stream order; q[qh] is the oldest
	qh   int
	base int64 // the absolute index of q[0]

	requests  map[int64]int64 // request handle -> absolute index of its call
	lastFrom  int64           // absolute indexes [lastFrom, lastTo) of the last call's records
	lastTo    int64
	waits     []int64 // absolute indexes completed by the last call (a wait)
	lastWaitT int64   // the start of the last call when it was a wait
	timeFrom  int64   // absolute index of the first record waiting for a time, or -1

	stack     []openRegion
	hasCall   bool
	prevStart int64 // absolute ns: the start of the previous call
	lastT     int64 // rebased: the last time given to a record
	headers   int
	records   int
}

// file imports one input.
func (imp *importer) file(in *input) error {
	lr, err := imp.open(in.path)
	if err != nil {
		return err
	}
	defer lr.Close()
	p := newParser(lr, in.path, imp.unit)
	f := &fileState{importer: imp, in: in, rank: int32(in.rank), requests: map[int64]int64{}, timeFrom: -1}
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := imp.ctx.Err(); err != nil {
				return err
			}
		}
		ok, err := p.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if err := f.item(p); err != nil {
			return err
		}
	}
	return f.finish()
}

// errorf returns an error located at the line where the current record starts.
func (f *fileState) errorf(it *item, msg string, args ...any) error {
	return format.LineError(f.in.path, it.line, msg, args...)
}

func (f *fileState) item(p *parser) error {
	it := &p.it
	switch it.kind {
	case itemRankHeader:
		f.headers++
		if f.records > 0 {
			return f.errorf(it, "the rank header must come before the first record")
		}
		if f.headers > 1 {
			return f.errorf(it, "a second rank header (the first is on line %d)", f.in.sizeLine)
		}
		return nil
	case itemElision:
		f.h.Repair(RepairElision, 1)
		return nil
	case itemRegionStart:
		f.records++
		return f.enter(it)
	case itemRegionEnd:
		f.records++
		return f.exit(it)
	case itemCall:
		f.records++
		return f.call(it)
	}
	return f.errorf(it, "internal error: unknown record kind %d", it.kind)
}

// regionKind tells a region's kind from its label's prefix.
func regionKind(label string) trace.RegionKind {
	u := strings.ToUpper(label)
	switch {
	case strings.HasPrefix(u, "LOOP_"), strings.HasPrefix(u, "DO_"), strings.HasPrefix(u, "FOR_"), strings.HasPrefix(u, "WHILE_"):
		return trace.RegionLoop
	case strings.HasPrefix(u, "IF_"):
		return trace.RegionIf
	case strings.HasPrefix(u, "FUNC_"), strings.HasPrefix(u, "FUNCTION_"), strings.HasPrefix(u, "SUBROUTINE_"):
		return trace.RegionFunction
	case strings.HasPrefix(u, "CALL_"):
		return trace.RegionCall
	}
	return trace.RegionUser
}

// push appends a held record and returns its absolute index.
func (f *fileState) push(h held) int64 {
	f.q = append(f.q, h)
	i := f.base + int64(len(f.q)-1)
	if h.needTime && f.timeFrom < 0 {
		f.timeFrom = i
	}
	return i
}

// at returns the held record at an absolute index, or nil once it has been written.
func (f *fileState) at(i int64) *held {
	k := i - f.base
	if k < int64(f.qh) || k >= int64(len(f.q)) {
		return nil
	}
	return &f.q[k]
}

func (f *fileState) end() int64 { return f.base + int64(len(f.q)) }

func (f *fileState) enter(it *item) error {
	f.key = append(append(append(append(append(f.key[:0], it.label...), 0), it.fn...), 0), it.file...)
	id, ok := f.regionIDs[string(f.key)] // no allocation when the region is known
	if !ok {
		id = f.regions.ID(string(f.key))
		f.regionIDs[string(f.key)] = id
		parent := int32(-1)
		if len(f.stack) > 0 {
			parent = f.stack[len(f.stack)-1].id
		}
		label := string(it.label)
		f.regionDefs = append(f.regionDefs, trace.RegionDef{ID: id, Kind: regionKind(label), Label: label,
			Function: string(it.fn), File: string(it.file), Line: it.locLine, Parent: parent})
	}
	f.stack = append(f.stack, openRegion{id: id, line: it.line})
	f.push(held{r: trace.Enter(0, f.rank, 0, id), line: it.line, needTime: true})
	return nil
}

func (f *fileState) exit(it *item) error {
	match := -1
	for i := len(f.stack) - 1; i >= 0; i-- {
		d := &f.regionDefs[f.stack[i].id]
		if d.Label == string(it.label) && (!it.hasLoc || d.Function == string(it.fn) && d.File == string(it.file)) {
			match = i
			break
		}
	}
	if match < 0 {
		if len(f.stack) == 0 {
			return f.errorf(it, `"+++ %s ends +++" but no region is open`, format.Excerpt([]byte(it.label)))
		}
		top := f.stack[len(f.stack)-1]
		d := &f.regionDefs[top.id]
		return f.errorf(it, `"+++ %s ends +++" does not match the open region %s of %s in %s (entered on line %d), nor any region around it`,
			format.Excerpt([]byte(it.label)), format.Excerpt([]byte(d.Label)), format.Excerpt([]byte(d.Function)), format.Excerpt([]byte(d.File)), top.line)
	}
	for i := len(f.stack) - 1; i > match; i-- {
		f.push(held{r: trace.Exit(0, f.rank, 0, f.stack[i].id), line: it.line, needTime: true})
		f.h.Repair(RepairImplicitExit, 1)
	}
	id := f.stack[match].id
	if d := &f.regionDefs[id]; it.hasLoc && d.EndLine == 0 {
		d.EndLine = it.locLine
	}
	f.stack = f.stack[:match]
	f.push(held{r: trace.Exit(0, f.rank, 0, id), line: it.line, needTime: true})
	return nil
}

// secs formats absolute nanoseconds as seconds for error messages.
func secs(ns int64) string { return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9) }

func (f *fileState) call(it *item) error {
	e, s := it.tPrev, it.tStart
	if !f.hasCall {
		if e == 0 { // no previous call
			e = s
		}
	} else if e < f.prevStart {
		return f.errorf(it, "time goes backwards: the record says the previous call ended at %s s, but it started at %s s", secs(e), secs(f.prevStart))
	}
	if s < e {
		return f.errorf(it, "time goes backwards: the call starts at %s s, before the previous call ended at %s s", secs(s), secs(e))
	}
	if e < f.origin {
		return f.errorf(it, "internal error: time %s s is before the trace's origin %s s", secs(e), secs(f.origin))
	}
	end, start := e-f.origin, s-f.origin

	// The previous call returned at end: complete its records, the
	// requests it waited for, and the regions in between.
	for i := f.lastFrom; i < f.lastTo; i++ {
		if h := f.at(i); h != nil && h.needEnd {
			h.r.End, h.needEnd = end, false
		}
	}
	for _, i := range f.waits {
		if h := f.at(i); h != nil && h.needWait {
			h.r.End, h.needWait = end, false
		}
	}
	f.waits = f.waits[:0]
	f.fillTimes(end)

	cls := f.classes[string(it.name)]
	if cls == nil {
		c := classify(string(it.name))
		cls = &c
		f.classes[string(it.name)] = cls
	}
	var flags uint8
	if it.dynamic {
		flags = trace.FlagDynamic
	}
	f.lastFrom = f.end()
	var err error
	made := false
	switch cls.kind {
	case callSend:
		made, err = f.message(it, sendSide, start, flags, cls.nonblocking)
	case callRecv:
		made, err = f.message(it, recvSide, start, flags, cls.nonblocking)
	case callSendRecv:
		var m1, m2 bool
		if m1, err = f.message(it, sendRecvSend, start, flags, false); err == nil {
			m2, err = f.message(it, sendRecvRecv, start, flags, false)
		}
		made = m1 || m2
	case callColl:
		err = f.collective(it, cls.op, start, flags)
		made = true
	case callWait, callTest:
		n := int64(0)
		if cls.kind == callWait || it.args.has[argFlag] && it.args.v[argFlag] != 0 {
			for _, r := range it.args.reqs {
				if i, ok := f.requests[r]; ok {
					delete(f.requests, r)
					f.waits = append(f.waits, i)
					n++
				}
			}
		}
		f.lastWaitT = start
		f.event(it, cls, start, flags, n)
		made = true
	}
	if err != nil {
		return err
	}
	if !made {
		f.event(it, cls, start, flags, 0)
	}
	f.lastTo = f.end()
	f.hasCall, f.prevStart, f.lastT = true, s, start
	return f.flush()
}

// fillTimes gives t to the records waiting for a time.
func (f *fileState) fillTimes(t int64) {
	if f.timeFrom < 0 {
		return
	}
	for i := f.timeFrom; i < f.end(); i++ {
		if h := f.at(i); h != nil && h.needTime {
			h.r.T, h.needTime = t, false
		}
	}
	f.timeFrom = -1
}

// event adds a named event for a call.
func (f *fileState) event(it *item, cls *callClass, t int64, flags uint8, value int64) {
	if !cls.hasEvent {
		cls.event, cls.hasEvent = f.events.ID(string(it.name)), true
	}
	r := trace.Event(0, f.rank, t, cls.event, value)
	r.Flags = flags
	f.push(held{r: r, line: it.line})
}

// side selects the arguments of one side of a point-to-point call: the
// peer, the count (or its alternative) and the tag (or its alternative).
type side struct {
	send            bool
	peer            int
	count, countAlt int
	tag, tagAlt     int
}

var (
	sendSide     = side{true, argDst, argCount, argSendCount, argTag, argSendTag}
	recvSide     = side{false, argSrc, argCount, argRecvCount, argTag, argRecvTag}
	sendRecvSend = side{true, argDst, argSendCount, argCount, argSendTag, argTag}
	sendRecvRecv = side{false, argSrc, argRecvCount, argCount, argRecvTag, argTag}
)

// message adds the send or receive side of a point-to-point call. It adds
// nothing and reports false when the peer is MPI_PROC_NULL.
func (f *fileState) message(it *item, sd side, t int64, flags uint8, nonblocking bool) (bool, error) {
	a := &it.args
	if !a.has[sd.peer] {
		return false, f.errorf(it, "%s has no %s= argument", format.Excerpt(it.name), argNames[sd.peer])
	}
	peer := a.v[sd.peer]
	switch {
	case peer == f.procNull:
		return false, nil
	case peer == f.anySource && !sd.send:
		peer = int64(trace.NoPeer)
		flags |= trace.FlagAnySource
	case peer == f.anySource:
		return false, f.errorf(it, "%s=%d is MPI_ANY_SOURCE, which a send cannot use", argNames[sd.peer], peer)
	default:
		if err := f.checkRank(it, argNames[sd.peer], peer); err != nil {
			return false, err
		}
	}
	count, ok := a.v[sd.count], a.has[sd.count]
	if !ok {
		count, ok = a.v[sd.countAlt], a.has[sd.countAlt]
	}
	if !ok {
		return false, f.errorf(it, "%s has no %s= argument", format.Excerpt(it.name), argNames[sd.count])
	}
	bytes, err := f.bytes(it, count)
	if err != nil {
		return false, err
	}
	var tag int64
	switch {
	case a.has[sd.tag]:
		tag = a.v[sd.tag]
	case a.has[sd.tagAlt]:
		tag = a.v[sd.tagAlt]
	}
	if tag < math.MinInt32 || tag > math.MaxInt32 {
		return false, f.errorf(it, "tag %d does not fit in 32 bits", tag)
	}
	comm, err := f.comm(it)
	if err != nil {
		return false, err
	}
	var r trace.Record
	if sd.send {
		r = trace.Send(0, f.rank, t, 0, int32(peer), bytes, int32(tag), comm)
	} else {
		r = trace.Recv(0, f.rank, t, 0, int32(peer), bytes, int32(tag), comm)
	}
	r.Flags = flags
	h := held{r: r, line: it.line, needEnd: true}
	if nonblocking && len(a.reqs) > 0 {
		req := a.reqs[0]
		if req < math.MinInt32 || req > math.MaxInt32 {
			return false, f.errorf(it, "request %d does not fit in 32 bits", req)
		}
		h.r.Seq, h.req, h.needWait = int32(req), req, true
		if old, ok := f.requests[req]; ok {
			// The handle is reused: the earlier call was completed by a
			// call the importer cannot follow (waitany, a test without flag=).
			f.release(old)
		}
		f.requests[req] = f.push(h)
		return true, nil
	}
	f.push(h)
	return true, nil
}

// release gives up waiting for the wait of a held non-blocking call.
func (f *fileState) release(i int64) {
	if h := f.at(i); h != nil && h.needWait {
		h.needWait = false
		f.h.Repair(RepairUnwaitedRequest, 1)
		if j, ok := f.requests[h.req]; ok && j == i {
			delete(f.requests, h.req)
		}
	}
}

// collective adds one process's part in a collective.
func (f *fileState) collective(it *item, op trace.CollectiveOp, t int64, flags uint8) error {
	a := &it.args
	root := int64(-1)
	if a.has[argRoot] && a.v[argRoot] >= 0 {
		root = a.v[argRoot]
		if err := f.checkRank(it, "root", root); err != nil {
			return err
		}
	}
	var bytes int64
	count, ok := a.v[argCount], a.has[argCount]
	if !ok {
		count, ok = a.v[argSendCount], a.has[argSendCount]
	}
	if ok {
		var err error
		if bytes, err = f.bytes(it, count); err != nil {
			return err
		}
	}
	comm, err := f.comm(it)
	if err != nil {
		return err
	}
	r := trace.Coll(0, f.rank, t, 0, op, int32(root), bytes, comm)
	r.Flags = flags
	f.push(held{r: r, line: it.line, needEnd: true})
	return nil
}

// checkRank checks a peer or root against the number of processes,
// growing the run when the trace does not declare its size.
func (f *fileState) checkRank(it *item, what string, v int64) error {
	switch {
	case v < 0:
		return f.errorf(it, "%s=%d is not a rank (MPI_ANY_SOURCE is taken to be %d and MPI_PROC_NULL %d; see the anysource and procnull parameters)",
			what, v, f.anySource, f.procNull)
	case f.declared > 0 && v >= f.declared:
		return f.errorf(it, "unknown rank %d: the trace declares %d processes", v, f.declared)
	case v >= math.MaxInt32:
		return f.errorf(it, "unknown rank %d", v)
	case v >= f.procs:
		f.procs = v + 1
		f.h.EnsureRun(0, int32(f.procs))
	}
	return nil
}

// bytes returns count × typesize.
func (f *fileState) bytes(it *item, count int64) (int64, error) {
	a := &it.args
	if count < 0 {
		return 0, f.errorf(it, "negative count %d in %s", count, format.Excerpt(it.name))
	}
	if count == 0 {
		return 0, nil
	}
	if !a.has[argTypesize] {
		return 0, f.errorf(it, `expected "{ typesize = N }" after the timestamps of %s (its byte count needs it)`, format.Excerpt(it.name))
	}
	ts := a.v[argTypesize]
	if ts < 0 {
		return 0, f.errorf(it, "negative typesize %d in %s", ts, format.Excerpt(it.name))
	}
	if ts > 0 && count > math.MaxInt64/ts {
		return 0, f.errorf(it, "count %d × typesize %d overflows", count, ts)
	}
	return count * ts, nil
}

// comm returns the call's communicator (0 when it names none) and records it.
func (f *fileState) comm(it *item) (int32, error) {
	var c int64
	if it.args.has[argComm] {
		c = it.args.v[argComm]
	}
	if c < math.MinInt32 || c > math.MaxInt32 {
		return 0, f.errorf(it, "communicator %d does not fit in 32 bits", c)
	}
	f.comms[int32(c)] = true
	return int32(c), nil
}

// flush writes the records at the head of the queue whose times are known.
func (f *fileState) flush() error {
	for f.qh < len(f.q) {
		h := &f.q[f.qh]
		if h.needWait && len(f.q)-f.qh > maxHeld {
			f.release(f.base + int64(f.qh))
		}
		if h.needEnd || h.needWait || h.needTime {
			break
		}
		if err := f.w.Add(h.r); err != nil {
			return &format.Error{File: f.in.path, Line: h.line, Offset: -1, Msg: "cannot add the record", Err: err}
		}
		f.qh++
	}
	switch {
	case f.qh == len(f.q):
		f.base += int64(len(f.q))
		f.q, f.qh = f.q[:0], 0
	case f.qh >= 4096 && 2*f.qh >= len(f.q):
		n := copy(f.q, f.q[f.qh:])
		f.base += int64(f.qh)
		f.q, f.qh = f.q[:n], 0
	}
	return nil
}

// finish closes what is still open at the end of a file and writes the
// records held back.
func (f *fileState) finish() error {
	for i := len(f.stack) - 1; i >= 0; i-- {
		f.push(held{r: trace.Exit(0, f.rank, 0, f.stack[i].id), line: f.stack[i].line, needTime: true})
		f.h.Repair(RepairUnclosedRegion, 1)
	}
	f.stack = f.stack[:0]
	f.fillTimes(f.lastT)
	// The last wait's return time is unknown: its requests complete no
	// earlier than it began.
	for _, i := range f.waits {
		if h := f.at(i); h != nil && h.needWait {
			h.r.End, h.needWait = f.lastWaitT, false
		}
	}
	for i := f.qh; i < len(f.q); i++ {
		h := &f.q[i]
		h.needEnd = false // the last call's return time is unknown: End stays 0
		if h.needWait {
			h.needWait = false
			f.h.Repair(RepairUnwaitedRequest, 1)
		}
	}
	return f.flush()
}
