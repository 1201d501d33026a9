package chrome

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/trace"
)

// Name is the importer's name as given to --format.
const Name = "chrome"

// Names of the repairs the importer counts in Header.Repairs.
const (
	// RepairEndWithoutBegin counts "E" events that close no open slice of
	// their thread; they are dropped.
	RepairEndWithoutBegin = "chrome-end-without-begin"
	// RepairOutOfOrderEnd counts slices closed because an "E" named after
	// a slice that encloses them came first (B a, B b, E a): they end
	// with it.
	RepairOutOfOrderEnd = "chrome-slice-closed-out-of-order"
	// RepairBeginWithoutEnd counts "B" events never closed; the slice
	// ends at its thread's last time.
	RepairBeginWithoutEnd = "chrome-begin-without-end"
	// RepairOverlapClamped counts slices that start inside another slice
	// of their thread and end after it (they cannot nest): they are cut
	// at the enclosing slice's end.
	RepairOverlapClamped = "chrome-overlapping-slice-clamped"
	// RepairNegativeDuration counts "X" events with a negative "dur",
	// taken as 0.
	RepairNegativeDuration = "chrome-negative-duration"
	// RepairUnpairedFlow counts flow events ("s", "t", "f") that pair with
	// no other flow event of their id; they are dropped.
	RepairUnpairedFlow = "chrome-unpaired-flow"
	// RepairPeerOutsideRun counts messages and collectives of a file in
	// parscope's own layout whose peer or root is not a process of their
	// run (or a send without one); they are dropped.
	RepairPeerOutsideRun = "chrome-peer-outside-run"
)

func init() { format.Register(Importer{}) }

// Importer imports Chrome/Perfetto trace-event JSON. The zero value is
// ready to use; it is registered under Name.
type Importer struct{}

// Name returns "chrome".
func (Importer) Name() string { return Name }

// Describe is a one-line description for help texts.
func (Importer) Describe() string {
	return "Chrome/Perfetto trace-event JSON (viztracer, PyTorch/Kineto, Caliper, rocprofiler, Kokkos), plain or gzipped"
}

// Detect reports whether head is JSON that starts like a trace: an object
// whose first key is "traceEvents", or an array whose first element is an
// object with a "ph" or "traceEvents" key within the head. A file named
// *.json or *.json.gz whose head holds "ph" and "ts" keys is accepted too
// (objects whose first key is another, such as "schemaVersion").
func (Importer) Detect(name string, head []byte) bool {
	b := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(b) == 0 {
		return false
	}
	switch b[0] {
	case '{':
		r := bytes.TrimLeft(b[1:], " \t\r\n")
		if bytes.HasPrefix(r, []byte(`"traceEvents"`)) {
			return true
		}
	case '[':
		r := bytes.TrimLeft(b[1:], " \t\r\n")
		if len(r) > 0 && r[0] == '{' && bytes.Contains(r, []byte(`"ph"`)) {
			return true
		}
	default:
		return false
	}
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".json") || strings.HasSuffix(lower, ".json.gz") {
		return bytes.Contains(b, []byte(`"traceEvents"`)) ||
			bytes.Contains(b, []byte(`"ph"`)) && bytes.Contains(b, []byte(`"ts"`))
	}
	return false
}

// Import reads each input as one run (see the package documentation for
// the mapping) and writes the runs to w, after the runs w's header already
// has.
func (Importer) Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	if len(inputs) == 0 {
		return errors.New("chrome: no input files")
	}
	h := w.Header()
	h.Meta.Source = Name
	h.Meta.Inputs = append(h.Meta.Inputs, inputs...)
	im := &importer{ctx: ctx, w: w, h: h}
	im.initDicts()
	for _, in := range inputs {
		if err := im.file(in); err != nil {
			return err
		}
	}
	if im.res == 0 {
		im.res = 1000
	}
	if h.Meta.ClockResolution == 0 || im.res < h.Meta.ClockResolution {
		h.Meta.ClockResolution = im.res
	}
	im.flushDicts()
	return nil
}

// ImportReader imports one trace-event JSON stream (not gzipped) as run
// run of w; name is used in errors. It is Import without the file.
func ImportReader(ctx context.Context, name string, r io.Reader, run int32, w trace.Writer) error {
	h := w.Header()
	h.Meta.Source = Name
	im := &importer{ctx: ctx, w: w, h: h}
	im.initDicts()
	if err := im.stream(name, r, run); err != nil {
		return err
	}
	if h.Meta.ClockResolution == 0 {
		h.Meta.ClockResolution = max(im.res, 1)
		if im.res == 0 {
			h.Meta.ClockResolution = 1000
		}
	}
	im.flushDicts()
	return nil
}

// importer is the state of one import (all its inputs).
type importer struct {
	ctx context.Context
	w   trace.Writer
	h   *trace.Header
	res int64 // clock resolution seen: 1 once a timestamp has sub-µs digits

	regions  map[string]int32
	events   map[string]int32
	counters map[string]int32
	nextReg  int32
	nextEv   int32
	nextCtr  int32
	regDefs  map[int32]trace.RegionDef
	stDefs   map[int32]trace.StateDef

	// per file
	file_    string
	sc       *scanner
	threads  map[string]*thread
	pids     map[string]*process
	flows    []flowPoint
	links    [][2]*thread // flow messages: sending and receiving thread
	seq      int64
	exporter string
	ignored  map[string]int64
	ev       rawEvent
	// the parscope layout's dictionaries, and the generic ids before the file
	pStates     map[int32]trace.StateDef
	pRegions    map[int32]trace.RegionDef
	pEventNames map[int32]string
	regMark     int32
	evMark      int32
	minT        int64
	hasT        bool
}

// rawEvent is one trace event as read; its byte slices are valid until the
// next event is read.
type rawEvent struct {
	off                    int64
	ph                     []byte
	name, cat              []byte
	pid, tid               []byte // "n"+number text or "s"+string
	hasPid, hasTid         bool
	ts, dur                int64
	hasTs, hasDur          bool
	id                     []byte
	hasID                  bool
	bp, scope              byte
	args                   []arg
	arena                  []byte
	tsFrac                 bool
	nameSet, catSet, phSet bool
}

// arg is one scalar member of an event's "args": its key and value are
// spans of event.arena.
type arg struct {
	k0, k1, v0, v1 int
	num            bool // a number (else a string, or true/false)
}

func (e *rawEvent) key(a arg) []byte { return e.arena[a.k0:a.k1] }
func (e *rawEvent) val(a arg) []byte { return e.arena[a.v0:a.v1] }

// argStr returns the string or number text of args[key], if present.
func (e *rawEvent) argStr(key string) (string, bool) {
	for _, a := range e.args {
		if string(e.key(a)) == key {
			return string(e.val(a)), true
		}
	}
	return "", false
}

// argInt returns args[key] as an integer.
func (e *rawEvent) argInt(key string) (int64, bool) {
	for _, a := range e.args {
		if a.num && string(e.key(a)) == key {
			if v, err := strconv.ParseInt(string(e.val(a)), 10, 64); err == nil {
				return v, true
			}
			if f, err := strconv.ParseFloat(string(e.val(a)), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
				return int64(f), true
			}
		}
	}
	return 0, false
}

// thread is one (pid, tid) pair, or a pid's process-scoped events.
type thread struct {
	pid    *process
	tid    string // display form; "" for the process-scoped lane
	tidKey string
	items  []item
	proc   int32 // parscope process, assigned at the end
	seq    int64 // first appearance
}

// process is one pid.
type process struct {
	key     string
	pid     string // display form
	name    string
	labels  string
	sort    int64
	hasSort bool
	threads map[string]*thread
	tsort   map[string]int64 // thread_sort_index by tid key
	tnames  map[string]string
	seq     int64
	run     int32 // parscope layout
	proc    int32
}

// Item kinds.
const (
	itSlice   = iota // X: T..End, ID region
	itBegin          // B: ID region
	itEnd            // E: ID region, or -1 without a name
	itRecord         // a finished record (instant, counter, parscope layout)
	itFlowRec        // a send or receive made from flows
)

type item struct {
	r   trace.Record
	seq int64
	alt int32 // the parscope layout's id (state, region, event, op)
	k   uint8
	cls uint8 // the parscope layout's category (clsState, ...), or 0
}

// Categories of the parscope exporter's events.
const (
	clsNone = iota
	clsState
	clsRegion
	clsMPI
	clsEvent
)

type flowPoint struct {
	t   int64
	seq int64
	key string
	ph  byte
	th  *thread
	off int64
}

func (im *importer) initDicts() {
	im.regions = map[string]int32{}
	im.events = map[string]int32{}
	im.counters = map[string]int32{}
	im.regDefs = map[int32]trace.RegionDef{}
	im.stDefs = map[int32]trace.StateDef{}
	for _, d := range im.h.Regions {
		im.nextReg = max(im.nextReg, d.ID+1)
		im.regions[d.Label] = d.ID
	}
	for _, d := range im.h.Events {
		im.nextEv = max(im.nextEv, d.ID+1)
		im.events[d.Name] = d.ID
	}
	for _, d := range im.h.Counters {
		im.nextCtr = max(im.nextCtr, d.ID+1)
		im.counters[d.Name] = d.ID
	}
}

// flushDicts adds the dictionary entries made by the import to the header.
func (im *importer) flushDicts() {
	im.h.Regions = appendMissing(im.h.Regions, func(d trace.RegionDef) int32 { return d.ID }, im.regions,
		func(name string, id int32) (int32, trace.RegionDef) {
			if d, ok := im.regDefs[id]; ok {
				return id, d
			}
			return id, trace.RegionDef{ID: id, Kind: trace.RegionUser, Label: name, Parent: -1}
		})
	im.h.Events = appendMissing(im.h.Events, func(d trace.EventDef) int32 { return d.ID }, im.events,
		func(name string, id int32) (int32, trace.EventDef) { return id, trace.EventDef{ID: id, Name: name} })
	im.h.Counters = appendMissing(im.h.Counters, func(d trace.CounterDef) int32 { return d.ID }, im.counters,
		func(name string, id int32) (int32, trace.CounterDef) { return id, trace.CounterDef{ID: id, Name: name} })
	im.h.States = appendMissing(im.h.States, func(d trace.StateDef) int32 { return d.ID }, im.stDefs,
		func(id int32, d trace.StateDef) (int32, trace.StateDef) { return id, d })
	im.h.SortDicts()
}

// appendMissing appends to defs, a dictionary of the header, the entries
// the import made (made, each the id and entry def gives) whose id no entry
// of defs has (idOf gives an entry's id).
func appendMissing[D any, K comparable, V any](defs []D, idOf func(D) int32, made map[K]V, def func(K, V) (int32, D)) []D {
	ids := make([]int32, 0, len(defs))
	for _, d := range defs {
		ids = append(ids, idOf(d))
	}
	for k, v := range made {
		if id, d := def(k, v); !slices.Contains(ids, id) {
			defs = append(defs, d)
		}
	}
	return defs
}

func (im *importer) file(path string) error {
	f, err := regular.Open(path)
	if err != nil {
		return &format.Error{File: path, Offset: -1, Msg: "cannot open", Err: err}
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var r io.Reader = br
	if magic, _ := br.Peek(2); format.IsGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return &format.Error{File: path, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		defer zr.Close()
		r = zr
	}
	return im.stream(path, r, int32(len(im.h.Runs)))
}

// stream reads one JSON trace as run (the first run of a parscope export).
func (im *importer) stream(name string, r io.Reader, run int32) error {
	im.file_ = name
	im.sc = newScanner(name, r)
	im.threads = map[string]*thread{}
	im.pids = map[string]*process{}
	im.flows = nil
	im.seq = 0
	im.exporter = ""
	im.ignored = map[string]int64{}
	im.hasT = false
	im.pStates = map[int32]trace.StateDef{}
	im.pRegions = map[int32]trace.RegionDef{}
	im.pEventNames = map[int32]string{}
	im.regMark, im.evMark = im.nextReg, im.nextEv
	if err := im.top(); err != nil {
		return err
	}
	if im.exporter == "parscope" && im.parscopeLayout() {
		return im.emitParscope(run)
	}
	return im.emit(run)
}

// top reads the top-level value: an array of events or an object with a
// "traceEvents" array.
func (im *importer) top() error {
	s := im.sc
	if c, ok := s.skipSpace(); ok && c == 0xef { // a UTF-8 byte order mark
		if err := s.literal("\xef\xbb\xbf"); err != nil {
			return err
		}
	}
	c, ok := s.next()
	switch {
	case ok && c == '[':
		if err := im.events_(); err != nil {
			return err
		}
	case ok && c == '{':
		found := false
		if !s.closes('}') {
			for {
				key, err := s.memberKey()
				if err != nil {
					return err
				}
				k := string(key)
				switch k {
				case "traceEvents":
					if err := s.expect('[', `an array as "traceEvents"`); err != nil {
						return err
					}
					if err := im.events_(); err != nil {
						return err
					}
					found = true
				case "metadata":
					if err := im.metadata(); err != nil {
						return err
					}
				default:
					if err := s.skipValue(0); err != nil {
						return err
					}
				}
				if _, ok := s.skipSpace(); !ok && found && s.rerr == nil {
					break // cut short after the events, as viewers accept
				}
				more, err := s.moreIn('}', "the trace object")
				if err != nil {
					return err
				}
				if !more {
					break
				}
			}
		}
		if !found {
			return format.OffsetError(im.file_, 0, `expected a "traceEvents" array in the trace object, found none`)
		}
	default:
		if ok {
			s.pos--
		}
		return s.unexpected(`'[' or '{' starting a trace (an array of events or an object with "traceEvents")`)
	}
	if c, ok := s.skipSpace(); ok {
		// Viewers accept a trailing comma or a missing "]" (a trace cut
		// short); what follows a complete value is an error.
		_ = c
		return s.unexpected("the end of the input after the trace")
	}
	if s.rerr != nil {
		return s.unexpected("the end of the input")
	}
	return nil
}

// metadata reads the top-level "metadata" object, keeping "exporter".
func (im *importer) metadata() error {
	s := im.sc
	if c, ok := s.skipSpace(); !ok || c != '{' {
		return s.skipValue(0)
	}
	return s.object(`"metadata"`, func(key []byte) error {
		isExp := string(key) == "exporter"
		if c, _ := s.skipSpace(); !isExp || c != '"' {
			return s.skipValue(0)
		}
		v, err := s.readString()
		if err != nil {
			return err
		}
		im.exporter = string(v)
		return nil
	})
}

// events_ reads the events of an array whose '[' is consumed. A missing
// final ']' (a trace cut short, which viewers accept) ends the array too,
// as does a trailing comma before ']'.
func (im *importer) events_() error {
	s := im.sc
	c, ok := s.skipSpace()
	if !ok {
		return nil
	}
	if c == ']' {
		s.pos++
		return nil
	}
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := im.ctx.Err(); err != nil {
				return err
			}
		}
		if err := im.readEvent(); err != nil {
			return err
		}
		if err := im.handle(); err != nil {
			return err
		}
		c, ok := s.next()
		if !ok {
			return nil // cut short after an event
		}
		if c == ']' {
			return nil
		}
		if c != ',' {
			s.pos--
			return s.unexpected("',' or ']' after an event")
		}
		if c, ok := s.skipSpace(); !ok {
			return nil
		} else if c == ']' {
			s.pos++
			return nil
		}
	}
}

// readEvent reads one event object into im.ev.
func (im *importer) readEvent() error {
	s := im.sc
	e := &im.ev
	e.off = s.offset()
	e.hasPid, e.hasTid, e.hasTs, e.hasDur, e.hasID = false, false, false, false, false
	e.nameSet, e.catSet, e.phSet = false, false, false
	e.ph, e.name, e.cat, e.pid, e.tid, e.id = e.ph[:0], e.name[:0], e.cat[:0], e.pid[:0], e.tid[:0], e.id[:0]
	e.bp, e.scope = 0, 0
	e.args, e.arena = e.args[:0], e.arena[:0]
	e.tsFrac = false
	if c, ok := s.skipSpace(); !ok || c != '{' {
		return s.unexpected("an event object '{'")
	}
	return s.object("an event", func(key []byte) error {
		k := keyOf(key)
		switch k {
		case kPh:
			v, err := s.readString()
			if err != nil {
				return err
			}
			e.ph, e.phSet = append(e.ph, v...), true
		case kName:
			if err := im.scalar(&e.name); err != nil {
				return err
			}
			e.nameSet = true
		case kCat:
			if err := im.scalar(&e.cat); err != nil {
				return err
			}
			e.catSet = true
		case kPid:
			if err := im.ident(&e.pid, "pid"); err != nil {
				return err
			}
			e.hasPid = true
		case kTid:
			if err := im.ident(&e.tid, "tid"); err != nil {
				return err
			}
			e.hasTid = true
		case kID:
			if err := im.ident(&e.id, "id"); err != nil {
				return err
			}
			e.hasID = true
		case kTs, kDur:
			off := s.offset()
			if c, _ := s.skipSpace(); c == '"' {
				// Some writers quote numbers.
				v, err := s.readString()
				if err != nil {
					return err
				}
				if !validNumber(v) {
					return format.OffsetError(im.file_, off, "expected a number of microseconds as %q, got %q", keyNames[k], format.Excerpt(v))
				}
				err = im.setTime(e, k, v, off)
				if err != nil {
					return err
				}
				break
			}
			v, err := s.readNumber()
			if err != nil {
				return err
			}
			if err := im.setTime(e, k, v, off); err != nil {
				return err
			}
		case kBp, kS:
			if c, _ := s.skipSpace(); c != '"' {
				if err := s.skipValue(0); err != nil {
					return err
				}
				break
			}
			v, err := s.readString()
			if err != nil {
				return err
			}
			if len(v) == 1 {
				if k == kBp {
					e.bp = v[0]
				} else {
					e.scope = v[0]
				}
			}
		case kArgs:
			if err := im.readArgs(); err != nil {
				return err
			}
		default:
			return s.skipValue(0)
		}
		return nil
	})
}

func (im *importer) setTime(e *rawEvent, k int, v []byte, off int64) error {
	ns, frac, ok := micros(v)
	if !ok {
		return format.OffsetError(im.file_, off, "expected a number of microseconds that fits in 64-bit nanoseconds as %q, got %q", keyNames[k], format.Excerpt(v))
	}
	if frac {
		e.tsFrac = true
	}
	if k == kTs {
		e.ts, e.hasTs = ns, true
	} else {
		e.dur, e.hasDur = ns, true
	}
	return nil
}

// scalar reads a string (or, leniently, a number or literal as its text)
// into dst.
func (im *importer) scalar(dst *[]byte) error {
	s := im.sc
	v, _, found, err := s.stringOrNumber()
	if err != nil {
		return err
	}
	if found {
		*dst = append((*dst)[:0], v...)
		return nil
	}
	*dst = (*dst)[:0]
	return s.skipValue(0)
}

// ident reads a pid, tid or id: a number or a string, kept as "n"+text or
// "s"+string so that 1 and "1" stay apart as viewers keep them.
func (im *importer) ident(dst *[]byte, what string) error {
	s := im.sc
	v, num, found, err := s.stringOrNumber()
	if err != nil {
		return err
	}
	if found {
		tag := byte('s')
		if num {
			tag = 'n'
		}
		*dst = append(append((*dst)[:0], tag), v...)
		return nil
	}
	if c, ok := s.skipSpace(); ok && c == 'n' {
		*dst = (*dst)[:0]
		return s.literal("null")
	}
	return s.unexpected(fmt.Sprintf("a number or a string as %q", what))
}

// readArgs reads the scalar members of "args" into the event's arena;
// nested values are skipped.
func (im *importer) readArgs() error {
	s := im.sc
	e := &im.ev
	if c, ok := s.skipSpace(); !ok || c != '{' {
		return s.skipValue(0)
	}
	return s.object(`"args"`, func(key []byte) error {
		var a arg
		a.k0 = len(e.arena)
		e.arena = append(e.arena, key...)
		a.k1 = len(e.arena)
		v, num, found, err := s.stringOrNumber()
		if err != nil {
			return err
		}
		c, _ := s.skipSpace()
		keep := true
		switch {
		case found:
			a.v0 = len(e.arena)
			e.arena = append(e.arena, v...)
			a.num = num
		case c == 't' || c == 'f':
			word := "true"
			if c == 'f' {
				word = "false"
			}
			if err := s.literal(word); err != nil {
				return err
			}
			a.v0 = len(e.arena)
			e.arena = append(e.arena, word...)
		default:
			keep = false
			if err := s.skipValue(1); err != nil {
				return err
			}
		}
		if keep && len(e.args) < 64 {
			a.v1 = len(e.arena)
			e.args = append(e.args, a)
		}
		return nil
	})
}

// Keys of an event object the importer reads.
const (
	kOther = iota
	kPh
	kName
	kCat
	kPid
	kTid
	kTs
	kDur
	kID
	kBp
	kS
	kArgs
)

var keyNames = [...]string{kOther: "", kPh: "ph", kName: "name", kCat: "cat", kPid: "pid", kTid: "tid",
	kTs: "ts", kDur: "dur", kID: "id", kBp: "bp", kS: "s", kArgs: "args"}

func keyOf(b []byte) int {
	switch string(b) {
	case "ph":
		return kPh
	case "name":
		return kName
	case "cat":
		return kCat
	case "pid":
		return kPid
	case "tid":
		return kTid
	case "ts":
		return kTs
	case "dur":
		return kDur
	case "id":
		return kID
	case "bp":
		return kBp
	case "s":
		return kS
	case "args":
		return kArgs
	}
	return kOther
}

// process returns the process of the current event's pid.
func (im *importer) process() *process {
	e := &im.ev
	p := im.pids[string(e.pid)]
	if p == nil {
		p = &process{key: string(e.pid), pid: display(e.pid), threads: map[string]*thread{},
			tsort: map[string]int64{}, tnames: map[string]string{}, seq: im.seq}
		im.pids[p.key] = p
	}
	return p
}

// display is the text of an identifier as a viewer shows it.
func display(id []byte) string {
	if len(id) == 0 {
		return ""
	}
	return string(id[1:])
}

// thread returns the thread of the current event; scoped false gives the
// pid's process-scoped lane.
func (im *importer) thread(scoped bool) *thread {
	e := &im.ev
	p := im.process()
	var tk []byte
	if scoped && e.hasTid {
		tk = e.tid
	}
	t := p.threads[string(tk)]
	if t == nil {
		t = &thread{pid: p, tidKey: string(tk), tid: display(tk), seq: im.seq}
		p.threads[t.tidKey] = t
	}
	return t
}

// handle files the event just read.
func (im *importer) handle() error {
	e := &im.ev
	im.seq++
	if !e.phSet || len(e.ph) != 1 {
		if !e.phSet {
			return format.OffsetError(im.file_, e.off, `expected a "ph" (phase) member in the event`)
		}
		return format.OffsetError(im.file_, e.off, `expected a one-letter "ph" (phase), got %q`, format.Excerpt(e.ph))
	}
	ph := e.ph[0]
	if ph == 'M' {
		return im.meta()
	}
	switch ph {
	case 'X', 'B', 'E', 'i', 'I', 'C', 's', 't', 'f', 'R':
	default:
		im.ignored[string(e.ph)]++
		return nil
	}
	if !e.hasTs {
		return format.OffsetError(im.file_, e.off, `expected a "ts" (timestamp) in the %q event`, rune(ph))
	}
	if e.tsFrac {
		im.res = 1
	}
	if !im.hasT || e.ts < im.minT {
		im.minT, im.hasT = e.ts, true
	}
	it := item{seq: im.seq}
	it.r = trace.Record{T: e.ts, Peer: trace.NoPeer, Seq: trace.NoRequest}
	switch ph {
	case 'X':
		dur := e.dur
		if dur < 0 {
			im.h.Repair(RepairNegativeDuration, 1)
			dur = 0
		}
		if e.ts > math.MaxInt64-dur {
			return format.OffsetError(im.file_, e.off, `expected "ts"+"dur" within 64-bit nanoseconds`)
		}
		it.k = itSlice
		it.r.End = e.ts + dur
		it.r.ID = im.regionID(e.name)
	case 'B':
		it.k = itBegin
		it.r.ID = im.regionID(e.name)
	case 'E':
		it.k = itEnd
		it.r.ID = -1
		if len(e.name) > 0 {
			if id, ok := im.regions[string(e.name)]; ok {
				it.r.ID = id
			} else {
				it.r.ID = -2 // a name no B had: closes nothing by name
			}
		}
	case 'i', 'I', 'R':
		it.k = itRecord
		it.r.Kind = trace.KindEvent
		it.r.ID = im.eventID(e.name)
		if v, ok := e.argInt("value"); ok {
			it.r.Value = v
		}
		if string(e.cat) == "event" {
			if id, ok := e.argInt("event"); ok && id >= math.MinInt32 && id <= math.MaxInt32 {
				it.cls, it.alt = clsEvent, int32(id)
				if _, ok := im.pEventNames[it.alt]; !ok {
					im.pEventNames[it.alt] = string(e.name)
				}
			}
		}
		th := im.thread(e.scope != 'g' && e.scope != 'p' || e.hasTid)
		th.items = append(th.items, it)
		return nil
	case 'C':
		th := im.thread(false)
		for _, a := range e.args {
			if !a.num {
				continue
			}
			v, err := strconv.ParseFloat(string(e.val(a)), 64)
			if err != nil {
				continue // out of float64 range
			}
			name := string(e.name)
			if k := string(e.key(a)); k != name {
				name += "." + k
			}
			c := it
			c.k = itRecord
			c.r.Kind = trace.KindCounter
			c.r.ID = im.counterID(name)
			c.r.Value = int64(math.Float64bits(v))
			th.items = append(th.items, c)
		}
		return nil
	case 's', 't', 'f':
		if !e.hasID {
			im.h.Repair(RepairUnpairedFlow, 1)
			return nil
		}
		key := string(e.cat) + "\x00" + string(e.id)
		im.flows = append(im.flows, flowPoint{t: e.ts, seq: im.seq, key: key, ph: ph, th: im.thread(true), off: e.off})
		return nil
	}
	th := im.thread(true)
	th.items = append(th.items, it)
	// The parscope layout needs the args of states, regions and MPI slices.
	if ph == 'X' || ph == 'B' {
		im.parscopeArgs(&th.items[len(th.items)-1])
	}
	return nil
}

// rollback forgets the region and event names the current file entered
// into the generic dictionaries.
func (im *importer) rollback() {
	for name, id := range im.regions {
		if id >= im.regMark {
			delete(im.regions, name)
		}
	}
	for name, id := range im.events {
		if id >= im.evMark {
			delete(im.events, name)
		}
	}
	im.nextReg, im.nextEv = im.regMark, im.evMark
}

func (im *importer) regionID(name []byte) int32 {
	if id, ok := im.regions[string(name)]; ok {
		return id
	}
	id := im.nextReg
	im.nextReg++
	im.regions[string(name)] = id
	return id
}

func (im *importer) eventID(name []byte) int32 {
	if id, ok := im.events[string(name)]; ok {
		return id
	}
	id := im.nextEv
	im.nextEv++
	im.events[string(name)] = id
	return id
}

func (im *importer) counterID(name string) int32 {
	if id, ok := im.counters[name]; ok {
		return id
	}
	id := im.nextCtr
	im.nextCtr++
	im.counters[name] = id
	return id
}

// meta reads an "M" event.
func (im *importer) meta() error {
	e := &im.ev
	p := im.process()
	switch string(e.name) {
	case "process_name":
		if v, ok := e.argStr("name"); ok {
			p.name = v
		}
	case "process_labels":
		if v, ok := e.argStr("labels"); ok {
			p.labels = v
		}
	case "process_sort_index":
		if v, ok := e.argInt("sort_index"); ok {
			p.sort, p.hasSort = v, true
		}
	case "thread_name":
		if v, ok := e.argStr("name"); ok {
			p.tnames[string(e.tid)] = v
		}
	case "thread_sort_index":
		if v, ok := e.argInt("sort_index"); ok {
			p.tsort[string(e.tid)] = v
		}
	default:
		im.ignored["M "+string(e.name)]++
	}
	return nil
}

// idOrder compares two identifiers: numbers (in numeric order) before
// strings (in byte order).
func idOrder(a, b string) int {
	an, bn := strings.HasPrefix(a, "n"), strings.HasPrefix(b, "n")
	if an && bn {
		fa, ea := strconv.ParseFloat(a[1:], 64)
		fb, eb := strconv.ParseFloat(b[1:], 64)
		if ea == nil && eb == nil && fa != fb {
			return cmp.Compare(fa, fb)
		}
	}
	if an != bn {
		if an {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// sortKey is the order of a pid or tid: its sort index when it has one,
// else its number.
func sortKey(key string, idx int64, has bool) float64 {
	if has {
		return float64(idx)
	}
	if strings.HasPrefix(key, "n") {
		if f, err := strconv.ParseFloat(key[1:], 64); err == nil {
			return f
		}
	}
	return math.Inf(1)
}

// orderedThreads returns the threads with items, ordered by process
// (process_sort_index, then pid) and within a process by thread
// (thread_sort_index, then tid; the process-scoped lane first).
func (im *importer) orderedThreads() []*thread {
	procs := make([]*process, 0, len(im.pids))
	for _, p := range im.pids {
		procs = append(procs, p)
	}
	slices.SortFunc(procs, func(a, b *process) int {
		if c := cmp.Compare(sortKey(a.key, a.sort, a.hasSort), sortKey(b.key, b.sort, b.hasSort)); c != 0 {
			return c
		}
		return idOrder(a.key, b.key)
	})
	var out []*thread
	for _, p := range procs {
		ts := make([]*thread, 0, len(p.threads))
		for _, t := range p.threads {
			if len(t.items) > 0 {
				ts = append(ts, t)
			}
		}
		slices.SortFunc(ts, func(a, b *thread) int {
			if (a.tidKey == "") != (b.tidKey == "") {
				if a.tidKey == "" {
					return -1
				}
				return 1
			}
			ia, ha := p.tsort[a.tidKey]
			ib, hb := p.tsort[b.tidKey]
			if c := cmp.Compare(sortKey(a.tidKey, ia, ha), sortKey(b.tidKey, ib, hb)); c != 0 {
				return c
			}
			return idOrder(a.tidKey, b.tidKey)
		})
		out = append(out, ts...)
	}
	return out
}

// emit writes the records of the file just read as run: one process per
// (pid, tid) with events, in the order of orderedThreads.
func (im *importer) emit(run int32) error {
	im.links = im.links[:0]
	im.pairFlows()
	ths := im.orderedThreads()
	for i, t := range ths {
		t.proc = int32(i)
	}
	for _, t := range ths {
		for i := range t.items {
			if it := &t.items[i]; it.k == itFlowRec {
				l := im.links[it.r.Peer]
				if it.r.Kind == trace.KindSend {
					it.r.Peer = l[1].proc
				} else {
					it.r.Peer = l[0].proc
				}
			}
		}
	}
	h := im.h
	h.EnsureRun(run, int32(len(ths)))
	origin := int64(0)
	if im.hasT {
		origin = im.minT
	}
	if h.Runs[run].Extra == nil {
		h.Runs[run].Extra = map[string]string{}
	}
	h.Runs[run].Extra["chrome.origin_us"] = string(appendNS(nil, origin))
	h.Runs[run].Extra["chrome.file"] = im.file_
	for _, t := range ths {
		p := t.pid
		pn := p.name
		if pn == "" {
			pn = "pid " + p.pid
		}
		name := pn
		if t.tidKey != "" {
			tn := p.tnames[t.tidKey]
			if tn == "" {
				tn = "tid " + t.tid
			}
			name += " / " + tn
		}
		extra := map[string]string{"pid": p.pid}
		if t.tidKey != "" {
			extra["tid"] = t.tid
		}
		if p.labels != "" {
			extra["labels"] = p.labels
		}
		h.Procs = append(h.Procs, trace.ProcInfo{Run: run, Proc: t.proc, Name: name, Extra: extra})
		if err := im.emitThread(run, t, origin); err != nil {
			return err
		}
	}
	im.warnIgnored()
	return nil
}

func (im *importer) warnIgnored() {
	if len(im.ignored) == 0 {
		return
	}
	keys := make([]string, 0, len(im.ignored))
	for k := range im.ignored {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %q", im.ignored[k], k))
	}
	format.Warn(im.h, "chrome.ignored."+im.file_, im.file_+": events of phases the importer does not convert, skipped: "+strings.Join(parts, ", "))
}

// pairFlows links the flow points of each id in time order: s starts a
// chain, t and f continue it from the chain's last point, f ends it. Each
// link becomes a message: a send on the earlier point's thread and a
// receive on the later one's. The messages' peers are set by finishFlows
// once the threads are numbered.
func (im *importer) pairFlows() {
	slices.SortStableFunc(im.flows, func(a, b flowPoint) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	open := map[string]int{} // key -> index of the chain's last point
	linked := make([]bool, len(im.flows))
	var tag int32
	for i, fp := range im.flows {
		j, has := open[fp.key]
		switch fp.ph {
		case 's':
			open[fp.key] = i
			continue
		case 't', 'f':
			if !has {
				continue
			}
		}
		a := im.flows[j]
		linked[i], linked[j] = true, true
		s := item{k: itFlowRec, seq: a.seq}
		s.r = trace.Record{Kind: trace.KindSend, T: a.t, End: a.t, Tag: tag, Seq: trace.NoRequest}
		s.r.Peer = int32(len(im.links))
		r := item{k: itFlowRec, seq: fp.seq}
		r.r = trace.Record{Kind: trace.KindRecv, T: fp.t, End: fp.t, Tag: tag, Seq: trace.NoRequest}
		r.r.Peer = int32(len(im.links))
		a.th.items = append(a.th.items, s)
		fp.th.items = append(fp.th.items, r)
		im.links = append(im.links, [2]*thread{a.th, fp.th})
		tag = (tag + 1) & math.MaxInt32
		if fp.ph == 'f' {
			delete(open, fp.key)
		} else {
			open[fp.key] = i
		}
	}
	var n int64
	for _, l := range linked {
		if !l {
			n++
		}
	}
	if n > 0 {
		im.h.Repair(RepairUnpairedFlow, n)
	}
}
