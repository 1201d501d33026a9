package otf2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

func init() { format.Register(Importer{}) }

// Importer imports OTF2 archives (Score-P traces). It is registered with
// the format package under the name "otf2"; see the package documentation
// for the mapping.
type Importer struct{}

// Name returns "otf2".
func (Importer) Name() string { return "otf2" }

// Describe returns a one-line description of the format.
func (Importer) Describe() string {
	return "OTF2 archives (Score-P): the traces.otf2 anchor file or its directory"
}

// Detect reports whether head starts with the anchor file's magic (the
// chunk header 03, an endianness marker, "OTF2\0"), or whether name is a
// directory holding traces.otf2.
func (Importer) Detect(name string, head []byte) bool {
	if isAnchor(head) {
		return true
	}
	if len(head) == 0 && name != "" {
		if p, err := AnchorPath(name); err == nil && p != name {
			h, err := format.Head(p, 16)
			return err == nil && isAnchor(h)
		}
	}
	return false
}

// Import reads each input archive (an anchor file or a directory holding
// one) as one run of the trace, in input order.
func (Importer) Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	if len(inputs) == 0 {
		return errors.New("otf2: no input archive")
	}
	h := w.Header()
	h.Meta.Source = "otf2"
	for _, in := range inputs {
		ar, err := Open(in)
		if err != nil {
			return err
		}
		if _, err := Convert(ctx, ar, int32(len(h.Runs)), w); err != nil {
			return err
		}
		h.Meta.Inputs = append(h.Meta.Inputs, ar.Path)
	}
	return nil
}

// Stats counts what Convert read and what it made of it.
type Stats struct {
	// Events counts the event records by otf2-print's name ("ENTER", ...).
	Events map[string]int64
	// Skipped counts the event records of types that are not converted.
	Skipped map[string]int64
	// Attributes counts the attribute lists attached to events (not converted).
	Attributes int64
	// Records counts the trace records written.
	Records int64
}

// Convert writes the archive's events as run run of w and fills in the
// header: the run, one process per location, regions, counters,
// communicators, events, metadata and skip counts.
func Convert(ctx context.Context, ar *Archive, run int32, w trace.Writer) (*Stats, error) {
	cv, err := newConverter(ar, run, w)
	if err != nil {
		return nil, err
	}
	for p, loc := range cv.locs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := cv.location(ctx, int32(p), loc); err != nil {
			return nil, err
		}
	}
	cv.finish()
	return cv.stats, nil
}

// converter holds the state of one archive's conversion.
type converter struct {
	ar    *Archive
	d     *Defs
	w     trace.Writer
	h     *trace.Header
	run   int32
	locs  []Location
	procs map[uint64]int32 // location id -> process
	comms map[uint32]*commInfo
	evDef map[string]int32 // event name -> id in h.Events
	stats *Stats
	prog  bool // program name recorded
	// per-location state
	proc    int32
	lastT   int64
	queue   []slot
	qbase   int // absolute index of queue[0]
	reqs    map[uint64]int
	colls   []int
	file    string
	recvTot int64
	open    []int32 // regions entered and not left, innermost last
}

type commInfo struct {
	members []int32
	self    bool
	off     int64
}

// slot is a record waiting for its completion (a non-blocking operation
// or a collective) or for an earlier one to complete.
type slot struct {
	rec  trace.Record
	open bool
	drop bool
}

// Repair names used in Header.Repairs.
const (
	// RepairClockReorder counts records whose clock-corrected time went
	// back on its location and were clamped to the previous time.
	RepairClockReorder = "otf2-clock-offset-reorder"
	// RepairIncomplete counts non-blocking operations and collectives that
	// never completed (written with unknown completion time).
	RepairIncomplete = "otf2-incomplete-operation"
	// RepairCancelled counts cancelled requests (dropped).
	RepairCancelled = "otf2-cancelled-request"
	// RepairOutOfOrderLeave counts regions closed because a region that
	// encloses them was left first (Enter A, Enter B, Leave A: B is left
	// with A, at its time), as APEX and TraceR traces do. Their own
	// Leave, when it comes, is then a RepairLeaveWithoutEnter.
	RepairOutOfOrderLeave = "otf2-region-closed-out-of-order"
	// RepairLeaveWithoutEnter counts Leave events of a region that is not
	// open on their location (dropped).
	RepairLeaveWithoutEnter = "otf2-leave-without-enter"
)

func newConverter(ar *Archive, run int32, w trace.Writer) (*converter, error) {
	d := ar.Defs
	cv := &converter{ar: ar, d: d, w: w, h: w.Header(), run: run, locs: ar.Locations(),
		procs: map[uint64]int32{}, comms: map[uint32]*commInfo{}, evDef: map[string]int32{},
		stats: &Stats{Events: map[string]int64{}, Skipped: map[string]int64{}}}
	if len(cv.locs) > math.MaxInt32 {
		return nil, fmt.Errorf("otf2: %d locations are too many", len(cv.locs))
	}
	for p, l := range cv.locs {
		cv.procs[l.ID] = int32(p)
	}
	for _, e := range cv.h.Events {
		cv.evDef[e.Name] = e.ID
	}
	h := cv.h
	h.EnsureRun(run, int32(len(cv.locs)))
	h.Runs[run].Name = filepath.Base(filepath.Dir(ar.Path))
	if h.Meta.ClockResolution == 0 {
		// The store keeps nanoseconds; a timer finer than 1 ns is recorded
		// as 1 ns (the exact rate is in Extra).
		h.Meta.ClockResolution = max(1, int64(math.Round(1e9/float64(d.Clock.Resolution))))
	}
	a := ar.Anchor
	extra := map[string]string{
		"otf2.version":          a.Version(),
		"otf2.creator":          a.Creator,
		"otf2.ticks_per_second": strconv.FormatUint(d.Clock.Resolution, 10),
		"otf2.global_offset":    strconv.FormatUint(d.Clock.Offset, 10),
		"otf2.trace_length":     strconv.FormatUint(d.Clock.Length, 10),
		"otf2.trace_id":         fmt.Sprintf("%016x", a.TraceID),
	}
	if a.MachineName != "" {
		extra["otf2.machine"] = a.MachineName
	}
	if a.Description != "" {
		extra["otf2.description"] = a.Description
	}
	for _, p := range a.Properties {
		extra["otf2.property."+p[0]] = p[1]
	}
	for t, n := range d.Skipped {
		extra[fmt.Sprintf("otf2.skipped_definitions.%d", t)] = strconv.Itoa(n)
	}
	h.Runs[run].Extra = extra
	if h.Meta.Extra == nil {
		h.Meta.Extra = map[string]string{}
	}
	if _, ok := h.Meta.Extra["creator"]; !ok {
		h.Meta.Extra["creator"] = a.Creator
	}
	var nodes []string
	for _, n := range sorted(d.SystemTreeNodes) {
		if d.String(n.Class) == "node" {
			nodes = append(nodes, d.String(n.Name))
		}
	}
	if len(nodes) == 1 && h.Meta.Host == "" {
		h.Meta.Host = nodes[0]
	}
	// Processes.
	for p, l := range cv.locs {
		g := d.LocationGroups[l.Group]
		name := d.String(l.Name)
		if name == "" {
			name = "location " + strconv.FormatUint(l.ID, 10)
		}
		h.Procs = append(h.Procs, trace.ProcInfo{Run: run, Proc: int32(p), Name: name, Extra: map[string]string{
			"otf2.location":            strconv.FormatUint(l.ID, 10),
			"otf2.location_type":       enumName(locationTypes, l.Type),
			"otf2.location_group":      d.String(g.Name),
			"otf2.location_group_type": enumName(groupTypes, g.Type),
			"otf2.system_tree_node":    cv.treePath(g.Parent),
			"otf2.events":              strconv.FormatUint(l.Events, 10),
		}})
	}
	// Regions, counters, communicators (ids are the OTF2 ids; only run 0
	// defines them, later runs must agree).
	if run == 0 {
		for id, r := range sorted(d.Regions) {
			if id > math.MaxInt32 {
				return nil, format.OffsetError(d.file, r.off, "region id %d does not fit in 31 bits", id)
			}
			rd := trace.RegionDef{ID: int32(id), Kind: regionKind(r.Role), Label: d.String(r.Name),
				File: d.String(r.File), Line: int32(min(r.Begin, math.MaxInt32)), EndLine: int32(min(r.End, math.MaxInt32)), Parent: -1}
			if r.Begin == undef32 {
				rd.Line = 0
			}
			if r.End == undef32 {
				rd.EndLine = 0
			}
			if c := d.String(r.Canonical); c != "" && c != rd.Label {
				rd.Function = c
			}
			h.Regions = append(h.Regions, rd)
		}
		for id, m := range sorted(d.MetricMembers) {
			if id > math.MaxInt32 {
				return nil, format.OffsetError(d.file, m.off, "metric member id %d does not fit in 31 bits", id)
			}
			unit := d.String(m.Unit)
			if m.Exponent != 0 {
				b := 10
				if m.Base == 0 {
					b = 2
				}
				unit = fmt.Sprintf("%d^%d %s", b, m.Exponent, unit)
			}
			h.Counters = append(h.Counters, trace.CounterDef{ID: int32(id), Name: d.String(m.Name), Unit: unit})
		}
	}
	if err := cv.resolveComms(); err != nil {
		return nil, err
	}
	return cv, nil
}

var locationTypes = []string{"UNKNOWN", "CPU_THREAD", "ACCELERATOR_STREAM", "METRIC"}
var groupTypes = []string{"UNKNOWN", "PROCESS", "ACCELERATOR"}

func enumName(names []string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return strconv.Itoa(int(v))
}

// regionKind maps an OTF2 region role to a region kind.
func regionKind(role uint8) trace.RegionKind {
	switch role {
	case 1, 2: // function, wrapper
		return trace.RegionFunction
	case 3: // loop
		return trace.RegionLoop
	}
	return trace.RegionUser
}

// treePath returns the system tree path of a node, "machine::Linux/node::quartz10".
func (cv *converter) treePath(id uint32) string {
	var parts []string
	for i := 0; id != undef32 && i < 64; i++ {
		n, ok := cv.d.SystemTreeNodes[id]
		if !ok {
			break
		}
		parts = append(parts, cv.d.String(n.Class)+"::"+cv.d.String(n.Name))
		id = n.Parent
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}

// resolveComms turns every communicator's group into the processes of its
// ranks: a COMM_GROUP lists ranks of the COMM_LOCATIONS group of the same
// paradigm, which lists location ids.
func (cv *converter) resolveComms() error {
	d := cv.d
	commLocs := map[uint8]Group{}
	for _, g := range sorted(d.Groups) {
		if g.Type == groupCommLocations {
			if _, ok := commLocs[g.Paradigm]; !ok {
				commLocs[g.Paradigm] = g
			}
		}
	}
	proc := func(off int64, loc uint64) (int32, error) {
		p, ok := cv.procs[loc]
		if !ok {
			return 0, format.OffsetError(d.file, off, "group refers to undefined location %d", loc)
		}
		return p, nil
	}
	for id, cm := range sorted(d.Comms) {
		g := d.Groups[cm.Group]
		ci := &commInfo{off: cm.off}
		switch g.Type {
		case groupCommSelf:
			ci.self = true
		case groupCommLocations:
			for _, l := range g.Members {
				p, err := proc(g.off, l)
				if err != nil {
					return err
				}
				ci.members = append(ci.members, p)
			}
		case groupCommGroup:
			base, ok := commLocs[g.Paradigm]
			if !ok {
				return format.OffsetError(d.file, g.off, "communication group %d has no COMM_LOCATIONS group of paradigm %d to resolve its ranks", cm.Group, g.Paradigm)
			}
			for _, r := range g.Members {
				if r >= uint64(len(base.Members)) {
					return format.OffsetError(d.file, g.off, "group %d has rank %d, but the COMM_LOCATIONS group has %d members", cm.Group, r, len(base.Members))
				}
				p, err := proc(base.off, base.Members[r])
				if err != nil {
					return err
				}
				ci.members = append(ci.members, p)
			}
		}
		cv.comms[id] = ci
		if cv.run == 0 && id <= math.MaxInt32 {
			cv.h.Comms = append(cv.h.Comms, trace.CommDef{ID: int32(id), Name: d.String(cm.Name), Members: ci.members, Self: ci.self})
		}
	}
	return nil
}

// ns converts a timestamp in ticks to nanoseconds since the global offset,
// rounded to the nearest nanosecond (ties away from zero).
func (cv *converter) ns(t uint64) (int64, bool) {
	off, res := cv.d.Clock.Offset, cv.d.Clock.Resolution
	if t >= off {
		return scale(t-off, res)
	}
	v, ok := scale(off-t, res)
	return -v, ok
}

func scale(d, res uint64) (int64, bool) {
	hi, lo := bits.Mul64(d, 1e9)
	lo, carry := bits.Add64(lo, res/2, 0)
	hi += carry
	if hi >= res {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, res)
	if q > math.MaxInt64 {
		return 0, false
	}
	return int64(q), true
}

func (cv *converter) eventID(name string) int32 {
	if id, ok := cv.evDef[name]; ok {
		return id
	}
	id := int32(len(cv.h.Events))
	for {
		taken := false
		for _, e := range cv.h.Events {
			if e.ID == id {
				taken = true
				break
			}
		}
		if !taken {
			break
		}
		id++
	}
	cv.h.Events = append(cv.h.Events, trace.EventDef{ID: id, Name: name})
	cv.evDef[name] = id
	return id
}

// location converts the events of one location into process p.
func (cv *converter) location(ctx context.Context, p int32, loc Location) error {
	le, err := cv.ar.OpenEvents(loc)
	if err != nil || le == nil {
		return err
	}
	defer le.Close()
	cv.proc, cv.lastT, cv.queue, cv.qbase, cv.reqs, cv.colls, cv.file, cv.recvTot = p, math.MinInt64, cv.queue[:0], 0, map[uint64]int{}, cv.colls[:0], le.f.Name(), 0
	cv.open = cv.open[:0]
	var ev Event
	for n := 0; ; n++ {
		if n&0xffff == 0xffff {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		err := le.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := EventName(ev.Type)
		cv.stats.Events[name]++
		if err := cv.event(&ev, name); err != nil {
			return err
		}
	}
	cv.stats.Attributes += int64(le.Attributes)
	// Operations that never completed: a send is written with an unknown
	// completion time; a posted receive or a begun collective, which lack
	// their peer and sizes, are dropped.
	for i := range cv.queue {
		if s := &cv.queue[i]; s.open {
			s.open = false
			s.drop = s.rec.Kind != trace.KindSend
			cv.h.Repair(RepairIncomplete, 1)
		}
	}
	if err := cv.flush(); err != nil {
		return err
	}
	if cv.recvTot > 0 {
		cv.h.Procs[len(cv.h.Procs)-len(cv.locs)+int(p)].Extra["otf2.collective_bytes_received"] = strconv.FormatInt(cv.recvTot, 10)
	}
	return nil
}

func (cv *converter) errorf(ev *Event, f string, args ...any) error {
	return format.OffsetError(cv.file, ev.Offset, f, args...)
}

// peer resolves a rank of a communicator to a process.
func (cv *converter) peer(ev *Event, comm, rank uint32) (int32, error) {
	ci, ok := cv.comms[comm]
	if !ok {
		return 0, cv.errorf(ev, "%s refers to undefined communicator %d", EventName(ev.Type), comm)
	}
	if ci.self {
		if rank != 0 {
			return 0, cv.errorf(ev, "%s: rank %d in a self communicator", EventName(ev.Type), rank)
		}
		return cv.proc, nil
	}
	if int64(rank) >= int64(len(ci.members)) {
		return 0, cv.errorf(ev, "%s: rank %d is outside communicator %d (%d members)", EventName(ev.Type), rank, comm, len(ci.members))
	}
	return ci.members[rank], nil
}

func (cv *converter) event(ev *Event, name string) error {
	if !ev.Decoded {
		cv.stats.Skipped[name]++
		return nil
	}
	t, ok := cv.ns(ev.Time)
	if !ok {
		return cv.errorf(ev, "timestamp %d is out of range", ev.Time)
	}
	if t < cv.lastT {
		t = cv.lastT
		cv.h.Repair(RepairClockReorder, 1)
	}
	cv.lastT = t
	run, p := cv.run, cv.proc
	switch ev.Type {
	case evEnter, evLeave:
		if _, ok := cv.d.Regions[ev.Ref]; !ok {
			return cv.errorf(ev, "%s refers to undefined region %d", name, ev.Ref)
		}
		id := int32(ev.Ref)
		if ev.Type == evEnter {
			cv.open = append(cv.open, id)
			return cv.emit(trace.Enter(run, p, t, id), false)
		}
		// Regions are made to nest here, once, so that every analysis
		// sees the same regions and info reports the repairs.
		i := len(cv.open) - 1
		for i >= 0 && cv.open[i] != id {
			i--
		}
		if i < 0 {
			cv.h.Repair(RepairLeaveWithoutEnter, 1)
			return nil
		}
		for j := len(cv.open) - 1; j >= i; j-- {
			if j > i {
				cv.h.Repair(RepairOutOfOrderLeave, 1)
			}
			if err := cv.emit(trace.Exit(run, p, t, cv.open[j]), false); err != nil {
				return err
			}
		}
		cv.open = cv.open[:i]
		return nil
	case evMpiSend, evMpiIsend, evMpiRecv, evMpiIrecv:
		peer, err := cv.peer(ev, ev.Comm, ev.Peer)
		if err != nil {
			return err
		}
		if ev.Length > math.MaxInt64 {
			return cv.errorf(ev, "%s: message length %d is out of range", name, ev.Length)
		}
		switch ev.Type {
		case evMpiSend:
			return cv.emit(trace.Send(run, p, t, 0, peer, int64(ev.Length), int32(ev.Tag), int32(ev.Comm)), false)
		case evMpiRecv:
			return cv.emit(trace.Recv(run, p, t, 0, peer, int64(ev.Length), int32(ev.Tag), int32(ev.Comm)), false)
		case evMpiIsend:
			r := trace.Send(run, p, t, 0, peer, int64(ev.Length), int32(ev.Tag), int32(ev.Comm))
			r.Seq = int32(ev.Request & math.MaxInt32)
			cv.reqs[ev.Request] = cv.qbase + len(cv.queue)
			return cv.emit(r, true)
		default: // MpiIrecv completes a receive posted by MpiIrecvRequest
			if i, ok := cv.reqs[ev.Request]; ok {
				delete(cv.reqs, ev.Request)
				s := &cv.queue[i-cv.qbase]
				s.rec = trace.Recv(run, p, s.rec.T, t, peer, int64(ev.Length), int32(ev.Tag), int32(ev.Comm))
				s.rec.Seq = int32(ev.Request & math.MaxInt32)
				s.open = false
				return cv.flush()
			}
			r := trace.Recv(run, p, t, t, peer, int64(ev.Length), int32(ev.Tag), int32(ev.Comm))
			r.Seq = int32(ev.Request & math.MaxInt32)
			return cv.emit(r, false)
		}
	case evMpiIrecvRequest:
		cv.reqs[ev.Request] = cv.qbase + len(cv.queue)
		return cv.emit(trace.Recv(run, p, t, 0, trace.NoPeer, 0, 0, 0), true)
	case evMpiIsendComplete:
		if i, ok := cv.reqs[ev.Request]; ok {
			delete(cv.reqs, ev.Request)
			s := &cv.queue[i-cv.qbase]
			s.rec.End = t
			s.open = false
			return cv.flush()
		}
		cv.stats.Skipped[name]++ // completion of a send we did not see
		return nil
	case evMpiRequestCanceled:
		if i, ok := cv.reqs[ev.Request]; ok {
			delete(cv.reqs, ev.Request)
			s := &cv.queue[i-cv.qbase]
			s.open, s.drop = false, true
			cv.h.Repair(RepairCancelled, 1)
			return cv.flush()
		}
		return nil
	case evMpiRequestTest:
		cv.stats.Skipped[name]++
		return nil
	case evMpiCollBegin:
		cv.colls = append(cv.colls, cv.qbase+len(cv.queue))
		return cv.emit(trace.Coll(run, p, t, 0, trace.OpUnknown, trace.NoPeer, 0, 0), true)
	case evMpiCollEnd:
		root := trace.NoPeer
		switch ev.Peer {
		case undef32, undef32 - 2: // no root, "this group"
		case undef32 - 1: // self
			root = p
		default:
			r, err := cv.peer(ev, ev.Comm, ev.Peer)
			if err != nil {
				return err
			}
			root = r
		}
		if _, ok := cv.comms[ev.Comm]; !ok {
			return cv.errorf(ev, "%s refers to undefined communicator %d", name, ev.Comm)
		}
		if ev.Length > math.MaxInt64 || ev.Received > math.MaxInt64 {
			return cv.errorf(ev, "%s: size out of range", name)
		}
		cv.recvTot += int64(ev.Received)
		if n := len(cv.colls); n > 0 {
			i := cv.colls[n-1]
			cv.colls = cv.colls[:n-1]
			s := &cv.queue[i-cv.qbase]
			s.rec = trace.Coll(run, p, s.rec.T, t, collOp(ev.Op), root, int64(ev.Length), int32(ev.Comm))
			s.open = false
			return cv.flush()
		}
		return cv.emit(trace.Coll(run, p, t, t, collOp(ev.Op), root, int64(ev.Length), int32(ev.Comm)), false)
	case evMetric:
		members, ok := cv.d.MetricClasses[ev.Ref]
		if !ok {
			cls, ok2 := cv.d.MetricInstances[ev.Ref]
			if !ok2 {
				return cv.errorf(ev, "METRIC refers to undefined metric %d", ev.Ref)
			}
			members = cv.d.MetricClasses[cls]
		}
		if len(members) != len(ev.MetricValues) {
			return cv.errorf(ev, "METRIC has %d values, but metric %d has %d members", len(ev.MetricValues), ev.Ref, len(members))
		}
		for i, m := range members {
			var v float64
			raw := ev.MetricValues[i]
			switch ev.MetricTypes[i] {
			case 4: // UINT64
				v = float64(raw)
			case 8: // INT64
				v = float64(int64(raw))
			case 10: // DOUBLE
				v = math.Float64frombits(raw)
			default:
				return cv.errorf(ev, "METRIC value %d has type %d (expected 4 UINT64, 8 INT64 or 10 DOUBLE)", i, ev.MetricTypes[i])
			}
			if err := cv.emit(trace.Counter(run, p, t, int32(m), v), false); err != nil {
				return err
			}
		}
		return nil
	case evParamInt, evParamUint, evParamString:
		prm, ok := cv.d.Parameters[ev.Ref]
		if !ok {
			return cv.errorf(ev, "%s refers to undefined parameter %d", name, ev.Ref)
		}
		pname := "parameter " + cv.d.String(prm.Name)
		val := int64(ev.Value)
		if ev.Type == evParamString {
			s, ok := cv.d.Strings[uint32(ev.Value)]
			if !ok {
				return cv.errorf(ev, "%s refers to undefined string %d", name, ev.Value)
			}
			pname += "=" + s
			val = 0
		}
		return cv.emit(trace.Event(run, p, t, cv.eventID(pname), val), false)
	case evProgramBegin:
		prog, ok := cv.d.Strings[ev.Ref]
		if !ok {
			return cv.errorf(ev, "PROGRAM_BEGIN refers to undefined string %d", ev.Ref)
		}
		var args []string
		for _, a := range ev.Args {
			s, ok := cv.d.Strings[a]
			if !ok {
				return cv.errorf(ev, "PROGRAM_BEGIN refers to undefined string %d", a)
			}
			args = append(args, s)
		}
		if !cv.prog && cv.h.Meta.Program == "" {
			cv.h.Meta.Program, cv.h.Meta.CommandLine, cv.prog = prog, append([]string{prog}, args...), true
		}
		return cv.emit(trace.Event(run, p, t, cv.eventID("program_begin"), int64(len(args))), false)
	case evProgramEnd:
		return cv.emit(trace.Event(run, p, t, cv.eventID("program_end"), int64(ev.Value)), false)
	}
	cv.stats.Skipped[name]++
	return nil
}

// collOp maps an OTF2 collective operation to the model's.
func collOp(op uint8) trace.CollectiveOp {
	switch op {
	case 0:
		return trace.OpBarrier
	case 1:
		return trace.OpBcast
	case 2, 3:
		return trace.OpGather
	case 4, 5:
		return trace.OpScatter
	case 6, 7:
		return trace.OpAllgather
	case 8, 9, 10:
		return trace.OpAlltoall
	case 11:
		return trace.OpAllreduce
	case 12:
		return trace.OpReduce
	case 13, 16:
		return trace.OpReduceScatter
	case 14:
		return trace.OpScan
	case 15:
		return trace.OpExscan
	}
	return trace.OpUnknown
}

// emit writes r, or queues it behind (or as) an open operation.
func (cv *converter) emit(r trace.Record, open bool) error {
	if !open && len(cv.queue) == 0 {
		cv.stats.Records++
		return cv.w.Add(r)
	}
	cv.queue = append(cv.queue, slot{rec: r, open: open})
	return nil
}

// flush writes the queued records up to the first open one.
func (cv *converter) flush() error {
	i := 0
	for ; i < len(cv.queue) && !cv.queue[i].open; i++ {
		if cv.queue[i].drop {
			continue
		}
		cv.stats.Records++
		if err := cv.w.Add(cv.queue[i].rec); err != nil {
			return fmt.Errorf("%s: %w", cv.file, err)
		}
	}
	if i == len(cv.queue) {
		cv.qbase += i
		cv.queue = cv.queue[:0]
		return nil
	}
	if i > 1024 && i > len(cv.queue)/2 {
		n := copy(cv.queue, cv.queue[i:])
		cv.queue = cv.queue[:n]
		cv.qbase += i
	} else if i > 0 {
		// Mark written slots so they are not written again.
		for j := 0; j < i; j++ {
			cv.queue[j].drop = true
		}
	}
	return nil
}

// finish records the event counts in the run's metadata.
func (cv *converter) finish() {
	ex := cv.h.Runs[cv.run].Extra
	for n, c := range cv.stats.Events {
		ex["otf2.events."+n] = strconv.FormatInt(c, 10)
	}
	for n, c := range cv.stats.Skipped {
		ex["otf2.skipped."+n] = strconv.FormatInt(c, 10)
	}
	if cv.stats.Attributes > 0 {
		ex["otf2.skipped.ATTRIBUTE_LIST"] = strconv.FormatInt(cv.stats.Attributes, 10)
	}
}
