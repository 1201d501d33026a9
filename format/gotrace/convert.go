package gotrace

import (
	"context"
	"fmt"
	"strconv"

	xtrace "golang.org/x/exp/trace"

	"github.com/parscope/parscope/trace"
)

// converter turns trace events into records. Its dictionaries span the
// runs of one Import; the rest is reset per run.
type converter struct {
	ctx     context.Context
	w       trace.Writer
	h       *trace.Header
	byP     bool
	partial bool

	counts     map[string]int64 // Meta.Extra counters, without the prefix
	eventIDs   map[eventKey]int32
	nextEvent  int32
	regionIDs  map[string]int32
	nextRegion int32

	// Per run.
	run     int32
	read    int64           // events read
	written int64           // records written
	started bool            // t0 is set
	t0      int64           // time of the first event
	last    int64           // time of the last event, relative to t0
	procOf  map[int64]int32 // goroutine (or P) id -> process
	procs   []procEntry     // per process
}

// procEntry is what the converter knows about one process.
type procEntry struct {
	id      int64        // goroutine or P id
	name    string       // function name, "" until known
	creator string       // function that created the goroutine, if seen
	regions []openRegion // open user regions, innermost last
	written bool         // a record of this process has been written
}

// openRegion is a user region that has begun and not ended.
type openRegion struct {
	id   int32
	task xtrace.TaskID
}

// eventKey identifies an event name: a kind of event and its text.
type eventKey struct {
	kind     uint8 // one of the ek constants
	from, to int32 // states, for ekTransition
	text     string
}

const (
	ekBlock uint8 = iota
	ekStop
	ekTransition
	ekTaskBegin
	ekTaskEnd
	ekLog
	ekRangeBegin
	ekRangeEnd
	ekRangeActive
	ekLabel
	ekRegionBegin
	ekRegionEnd
)

// name returns the event name of a key.
func (k eventKey) name() string {
	switch k.kind {
	case ekBlock:
		return "block: " + k.text
	case ekStop:
		return "stop: " + k.text
	case ekTransition:
		return stateDefs[k.from].Name + "->" + stateDefs[k.to].Name + ": " + k.text
	case ekTaskBegin:
		return "task begin: " + k.text
	case ekTaskEnd:
		return "task end: " + k.text
	case ekLog:
		return "log: " + k.text
	case ekRangeBegin:
		return k.text + " begin"
	case ekRangeEnd:
		return k.text + " end"
	case ekRangeActive:
		return k.text + " active"
	case ekLabel:
		return "label: " + k.text
	case ekRegionBegin:
		return "region begin: " + k.text
	case ekRegionEnd:
		return "region end: " + k.text
	}
	return fmt.Sprintf("event kind %d: %s", k.kind, k.text)
}

// eventID returns the id of an event name, defining it the first time.
func (c *converter) eventID(k eventKey) int32 {
	return define(c.eventIDs, &c.nextEvent, k, func(id int32) {
		c.h.Events = append(c.h.Events, trace.EventDef{ID: id, Name: k.name()})
	})
}

// regionID returns the id of a user region type, defining it the first time.
func (c *converter) regionID(label string) int32 {
	return define(c.regionIDs, &c.nextRegion, label, func(id int32) {
		c.h.Regions = append(c.h.Regions, trace.RegionDef{ID: id, Kind: trace.RegionUser, Label: label, Parent: -1})
	})
}

// define returns the id ids holds for key; the first time, it gives key
// the next id (counted in next) and calls add with it to define it.
func define[K comparable](ids map[K]int32, next *int32, key K, add func(id int32)) int32 {
	if id, ok := ids[key]; ok {
		return id
	}
	id := *next
	*next++
	ids[key] = id
	add(id)
	return id
}

// beginRun resets the per-run state.
func (c *converter) beginRun(run int32) {
	c.run, c.read, c.written, c.started, c.t0, c.last = run, 0, 0, false, 0, 0
	c.procOf = map[int64]int32{}
	c.procs = c.procs[:0]
}

// endRun closes open regions and describes the run and its processes.
func (c *converter) endRun(run int32, path, version string) error {
	for p := range c.procs {
		if err := c.closeRegions(int32(p), c.last); err != nil {
			return err
		}
	}
	c.h.EnsureRun(run, int32(len(c.procs)))
	ri := &c.h.Runs[run]
	ri.Name = baseName(path)
	if ri.Extra == nil {
		ri.Extra = map[string]string{}
	}
	ri.Extra["go_version"] = version
	ri.Extra["duration_ns"] = strconv.FormatInt(c.last, 10)
	for p, ps := range c.procs {
		info := trace.ProcInfo{Run: run, Proc: int32(p), Extra: map[string]string{}}
		if c.byP {
			info.Name = "P" + strconv.FormatInt(ps.id, 10)
			info.Extra["pid"] = strconv.FormatInt(ps.id, 10)
		} else {
			info.Name = ps.name
			if info.Name == "" {
				info.Name = "goroutine " + strconv.FormatInt(ps.id, 10)
			}
			info.Extra["goid"] = strconv.FormatInt(ps.id, 10)
			if ps.creator != "" {
				info.Extra["created_by"] = ps.creator
			}
		}
		c.h.Procs = append(c.h.Procs, info)
	}
	c.counts["events"] += c.read
	return nil
}

// closeRegions closes the regions still open on process p at time t,
// innermost first, counting each as RepairUnendedRegion.
func (c *converter) closeRegions(p int32, t int64) error {
	ps := &c.procs[p]
	for i := len(ps.regions) - 1; i >= 0; i-- {
		if err := c.add(trace.Exit(c.run, p, t, ps.regions[i].id)); err != nil {
			return err
		}
		c.h.Repair(RepairUnendedRegion, 1)
	}
	ps.regions = ps.regions[:0]
	return nil
}

// proc returns the process of a goroutine or P id, numbering it on first sight.
func (c *converter) proc(id int64) int32 {
	if p, ok := c.procOf[id]; ok {
		return p
	}
	p := int32(len(c.procs))
	c.procOf[id] = p
	c.procs = append(c.procs, procEntry{id: id})
	return p
}

// gProc returns the process of a goroutine (by goroutine).
func (c *converter) gProc(g xtrace.GoID) int32 { return c.proc(int64(g)) }

// contextProc returns the process an event executes on: its goroutine, or
// its P when by P; ok is false when it has none.
func (c *converter) contextProc(ev *xtrace.Event) (int32, bool) {
	if c.byP {
		if p := ev.Proc(); p != xtrace.NoProc {
			return c.proc(int64(p)), true
		}
		return 0, false
	}
	if g := ev.Goroutine(); g != xtrace.NoGoroutine {
		return c.gProc(g), true
	}
	return 0, false
}

// resourceProc returns the process of a resource an event names (a range's
// scope, a label's target): the resource itself when it is of the mode's
// kind, otherwise the event's own context.
func (c *converter) resourceProc(r xtrace.ResourceID, ev *xtrace.Event) (int32, bool) {
	switch {
	case r.Kind == xtrace.ResourceGoroutine && !c.byP:
		return c.gProc(r.Goroutine()), true
	case r.Kind == xtrace.ResourceProc && c.byP:
		return c.proc(int64(r.Proc())), true
	}
	return c.contextProc(ev)
}

// skip counts an event that produces no record under key (a constant,
// so that counting does not allocate).
func (c *converter) skip(key string) { c.counts[key]++ }

// event converts one trace event.
func (c *converter) event(ev *xtrace.Event) error {
	t := int64(ev.Time())
	if !c.started {
		c.started, c.t0 = true, t
	}
	t -= c.t0
	if t < c.last {
		c.h.Repair(RepairTimeClamped, 1)
		t = c.last
	}
	c.last = t
	switch ev.Kind() {
	case xtrace.EventStateTransition:
		return c.transition(ev, t)
	case xtrace.EventRegionBegin, xtrace.EventRegionEnd:
		return c.region(ev, t)
	case xtrace.EventTaskBegin, xtrace.EventTaskEnd:
		task := ev.Task()
		kind := ekTaskBegin
		if ev.Kind() == xtrace.EventTaskEnd {
			kind = ekTaskEnd
		}
		return c.addEvent(ev, t, eventKey{kind: kind, text: task.Type}, int64(task.ID))
	case xtrace.EventLog:
		l := ev.Log()
		return c.addEvent(ev, t, eventKey{kind: ekLog, text: l.Category}, int64(l.Task))
	case xtrace.EventRangeBegin, xtrace.EventRangeEnd, xtrace.EventRangeActive:
		r := ev.Range()
		kind := ekRangeBegin
		switch ev.Kind() {
		case xtrace.EventRangeEnd:
			kind = ekRangeEnd
		case xtrace.EventRangeActive:
			kind = ekRangeActive
		}
		p, ok := c.resourceProc(r.Scope, ev)
		if !ok {
			c.skip("skipped.unattributed")
			return nil
		}
		return c.add(trace.Event(c.run, p, t, c.eventID(eventKey{kind: kind, text: r.Name}), 0))
	case xtrace.EventLabel:
		l := ev.Label()
		p, ok := c.resourceProc(l.Resource, ev)
		if !ok {
			c.skip("skipped.unattributed")
			return nil
		}
		return c.add(trace.Event(c.run, p, t, c.eventID(eventKey{kind: ekLabel, text: l.Label}), 0))
	case xtrace.EventMetric:
		c.skip("skipped.metric")
	case xtrace.EventStackSample:
		c.skip("skipped.stack-sample")
	case xtrace.EventSync:
		c.skip("skipped.sync")
	case xtrace.EventExperimental:
		c.skip("skipped.experimental")
	default:
		c.skip("skipped.other")
	}
	return nil
}

// addEvent writes a named event on the event's own process.
func (c *converter) addEvent(ev *xtrace.Event, t int64, k eventKey, value int64) error {
	p, ok := c.contextProc(ev)
	if !ok {
		c.skip("skipped.unattributed")
		return nil
	}
	c.nameFromStack(p, ev.Stack(), false)
	return c.add(trace.Event(c.run, p, t, c.eventID(k), value))
}

// transition converts a state transition.
func (c *converter) transition(ev *xtrace.Event, t int64) error {
	st := ev.StateTransition()
	switch st.Resource.Kind {
	case xtrace.ResourceGoroutine:
		from, to := st.Goroutine()
		var p int32
		if c.byP {
			c.skip("skipped.goroutine-transition")
			if st.Reason == "" {
				return nil
			}
			var ok bool
			if p, ok = c.contextProc(ev); !ok {
				c.skip("skipped.unattributed")
				return nil
			}
		} else {
			p = c.gProc(st.Resource.Goroutine())
			if from == xtrace.GoNotExist && to != xtrace.GoNotExist {
				// Created here: st.Stack is where it starts, ev.Stack the creator's.
				c.nameFromStack(p, st.Stack, true)
				if c.procs[p].creator == "" {
					c.procs[p].creator = topFunc(ev.Stack())
				}
			} else {
				c.nameFromStack(p, st.Stack, false)
			}
			if to == xtrace.GoNotExist {
				if err := c.closeRegions(p, t); err != nil {
					return err
				}
			}
			if err := c.add(trace.State(c.run, p, c.statusTime(p, from, t), goState(to))); err != nil {
				return err
			}
			if st.Reason == "" {
				return nil
			}
		}
		k := eventKey{text: st.Reason}
		switch {
		case to == xtrace.GoWaiting:
			k.kind = ekBlock
		case from == xtrace.GoRunning && to == xtrace.GoRunnable:
			k.kind = ekStop
		default:
			k.kind, k.from, k.to = ekTransition, goState(from), goState(to)
		}
		return c.add(trace.Event(c.run, p, t, c.eventID(k), 0))
	case xtrace.ResourceProc:
		if !c.byP {
			c.skip("skipped.proc-transition")
			return nil
		}
		from, to := st.Proc()
		p := c.proc(int64(st.Resource.Proc()))
		t0 := t
		if from == xtrace.ProcUndetermined {
			t0 = c.statusTime(p, xtrace.GoUndetermined, t)
		}
		return c.add(trace.State(c.run, p, t0, procState(to)))
	}
	c.skip("skipped.other")
	return nil
}

// statusTime returns the time of the state record of a goroutine's
// transition from state from at time t. A transition from Undetermined is
// the reader's rendering of a status event of the trace's first generation:
// the goroutine (or P) existed before the trace began, and was in that
// state since. Its first record is then put at the run's start, 0, so that
// the goroutine is shown from the trace's start rather than absent until
// the reader reaches its status (which can be late in the first
// generation). A goroutine created in the trace has no such transition and
// starts at its creation. When the process already has a record (an event
// attributed to it before its status), t is kept, so that its records stay
// in time order.
func (c *converter) statusTime(p int32, from xtrace.GoState, t int64) int64 {
	if from == xtrace.GoUndetermined && !c.procs[p].written {
		return 0
	}
	return t
}

// region converts a user region's begin or end.
func (c *converter) region(ev *xtrace.Event, t int64) error {
	r := ev.Region()
	begin := ev.Kind() == xtrace.EventRegionBegin
	if c.byP {
		k := eventKey{kind: ekRegionEnd, text: r.Type}
		if begin {
			k.kind = ekRegionBegin
		}
		return c.addEvent(ev, t, k, int64(r.Task))
	}
	p, ok := c.contextProc(ev)
	if !ok {
		c.skip("skipped.unattributed")
		return nil
	}
	c.nameFromStack(p, ev.Stack(), false)
	id := c.regionID(r.Type)
	ps := &c.procs[p]
	if begin {
		ps.regions = append(ps.regions, openRegion{id: id, task: r.Task})
		return c.add(trace.Enter(c.run, p, t, id))
	}
	i := len(ps.regions) - 1
	for i >= 0 && (ps.regions[i].id != id || ps.regions[i].task != r.Task) {
		i--
	}
	if i < 0 {
		c.h.Repair(RepairUnmatchedEnd, 1)
		return nil
	}
	for j := len(ps.regions) - 1; j >= i; j-- {
		if j > i {
			c.h.Repair(RepairImplicitExit, 1)
		}
		if err := c.add(trace.Exit(c.run, p, t, ps.regions[j].id)); err != nil {
			return err
		}
	}
	ps.regions = ps.regions[:i]
	return nil
}

// nameFromStack names a goroutine's process after a stack's outermost
// frame, unless it already has a name (or, with force, always).
func (c *converter) nameFromStack(p int32, s xtrace.Stack, force bool) {
	if c.byP || (c.procs[p].name != "" && !force) || s == xtrace.NoStack {
		return
	}
	var outer string
	for f := range s.Frames() {
		outer = f.Func
	}
	if outer != "" {
		c.procs[p].name = outer
	}
}

// topFunc returns the innermost function of a stack, or "".
func topFunc(s xtrace.Stack) string {
	if s == xtrace.NoStack {
		return ""
	}
	for f := range s.Frames() {
		return f.Func
	}
	return ""
}

// add writes one record.
func (c *converter) add(r trace.Record) error {
	c.written++
	c.procs[r.Proc].written = true
	return c.w.Add(r)
}
