package instrument

import (
	"math"
	"slices"

	"github.com/parscope/parscope/trace"
)

// Process records one process of the run (a rank, a worker goroutine, a
// node). Its recording methods must be called by one goroutine at a time;
// they take no lock and do not allocate, except when a full buffer is handed
// to the spill writer. A nil *Process records nothing, so code can be run
// uninstrumented by passing nil handles.
type Process struct {
	buf  []entry
	n    int
	slow bool // a filter, a throttle, occupancy or BBV counting is on
	id   int32

	filter   Filter
	drops    int64 // events dropped since the last kept record
	lastDrop int64 // ticks of the last dropped event whose time was read
	// untimed: some of the drops were blocks the throttle dropped without
	// reading the clock (quickThrottle); the count's event then takes the
	// time of the record it precedes.
	untimed bool
	lastT   int64 // ticks of the last entry written
	// quickThrottle: the throttle is on, and nothing else needs a block's
	// time before the throttle drops it (no occupancy or BBV counting, the
	// wall clock): a throttled block costs a count, not a clock reading,
	// which is most of a dropped block's cost (a third of spectral-norm's
	// run recording, perf).
	quickThrottle bool
	dropEv        int32
	t0            int64
	scale         float64

	occ *occupancy
	bbv *bbvCounter

	throttle int64   // Options.Throttle
	tally    *tally  // per state and region: kept and dropped, when filtering or throttling
	openDrop []int32 // per region id: enters dropped by the throttle whose exit is pending

	sim *SimClock // the simulated clock, nil on the wall clock
	vt  int64     // virtual time in ns on the simulated clock

	rec     *Recorder
	done    bool
	spilled bool // some buffer was handed to the spill writer (see more)
}

// now is the time of a record: the virtual time on the simulated clock,
// the hot-path clock's ticks otherwise.
func (p *Process) now() int64 {
	if p.sim != nil {
		return p.vt
	}
	return ticks()
}

// ID returns the process id.
func (p *Process) ID() int {
	if p == nil {
		return -1
	}
	return int(p.id)
}

// The recording methods below are each a nil test around a call, small
// enough for the compiler to inline: with recording disabled (a nil
// handle) a call site costs one predictable branch and no call. The
// inlining is checked by TestRecordingMethodsInline.

// Block records entry into state (basic block) id.
func (p *Process) Block(id int32) {
	if p != nil {
		p.block(id)
	}
}

// Enter records entry into region id.
func (p *Process) Enter(region int32) {
	if p != nil {
		p.record(trace.KindEnter, region, trace.NoPeer, 0, 0)
	}
}

// Exit records exit from region id.
func (p *Process) Exit(region int32) {
	if p != nil {
		p.record(trace.KindExit, region, trace.NoPeer, 0, 0)
	}
}

// Send records the send of a message of the given size and tag to process dst.
func (p *Process) Send(dst int, bytes int64, tag int32) {
	if p != nil {
		p.record(trace.KindSend, 0, int32(dst), bytes, tag)
	}
}

// Recv records the receipt of a message of the given size and tag from
// process src (-1 if unknown).
func (p *Process) Recv(src int, bytes int64, tag int32) {
	if p != nil {
		p.record(trace.KindRecv, 0, int32(src), bytes, tag)
	}
}

// Event records the named event id (see Recorder.EventID).
func (p *Process) Event(id int32) {
	if p != nil {
		p.record(trace.KindEvent, id, trace.NoPeer, 0, 0)
	}
}

// EventValue records the named event id with a value.
func (p *Process) EventValue(id int32, value int64) {
	if p != nil {
		p.record(trace.KindEvent, id, trace.NoPeer, value, 0)
	}
}

// block is Block on a non-nil handle.
func (p *Process) block(id int32) {
	if p.quickThrottle {
		// throttles' test for a block, written out: this is the hot path
		// of a throttled program, and a call costs more than the test.
		if c := p.tally.slot(trace.KindState, id); c != nil && c[kept]+c[dropFiltered] >= p.throttle {
			c[dropThrottled]++
			p.drops++
			p.untimed = true
			return
		}
	}
	t := p.now()
	if p.sim != nil {
		p.vt += p.sim.BlockCost
	}
	if p.slow && !p.blockHooks(id, t) {
		return
	}
	p.add(t, 0, id, trace.NoPeer, 0, trace.KindState)
}

// record is the other recording methods on a non-nil handle.
func (p *Process) record(k trace.Kind, id, peer int32, v int64, tag int32) {
	if p.quickThrottle && (k == trace.KindEnter || k == trace.KindExit) {
		// As block: a region's enter or exit the throttle drops needs no
		// time.
		if p.throttles(k, id) {
			p.drops++
			p.untimed = true
			return
		}
		t := p.now()
		if p.admit(k, id, t) {
			p.add(t, v, id, peer, tag, k)
		}
		return
	}
	t := p.now()
	if p.slow && !p.recordHooks(k, id, t) {
		return
	}
	p.add(t, v, id, peer, tag, k)
}

// recordHooks applies the throttle and the filter to a record other than
// a block and reports whether it is kept.
func (p *Process) recordHooks(k trace.Kind, id int32, t int64) bool {
	if p.throttle > 0 && (k == trace.KindEnter || k == trace.KindExit) && p.throttled(k, id, t) {
		return false
	}
	return p.admit(k, id, t)
}

// admit applies the filter to a record the throttle kept, counts it kept
// or dropped, and reports whether it is kept; a kept record first gets
// the count of the events dropped before it.
func (p *Process) admit(k trace.Kind, id int32, t int64) bool {
	if p.filter != nil && !p.keep(k, id, t) {
		p.tally.count(k, id, dropFiltered)
		return false
	}
	p.tally.count(k, id, kept)
	if p.drops != 0 {
		p.flushDrops(t)
	}
	return true
}

// throttled reports whether the throttle drops a block or a region's
// enter or exit (the exit of an enter it dropped), counting the drop at
// time t.
func (p *Process) throttled(k trace.Kind, id int32, t int64) bool {
	if !p.throttles(k, id) {
		return false
	}
	p.drops++
	p.lastDrop = t
	return true
}

// throttles is throttled without the time: whether the throttle drops
// the record, counting it in the tally (not in drops).
func (p *Process) throttles(k trace.Kind, id int32) bool {
	switch k {
	case trace.KindExit:
		if id < 0 || int(id) >= len(p.openDrop) || p.openDrop[id] == 0 {
			return false
		}
		p.openDrop[id]--
	case trace.KindEnter:
		c := p.tally.slot(k, id)
		if c == nil || c[kept]+c[dropFiltered] < p.throttle {
			return false
		}
		if int(id) >= len(p.openDrop) { // id < maxTallyID: slot is not nil
			p.openDrop = append(p.openDrop, make([]int32, int(id)+1-len(p.openDrop))...)
		}
		p.openDrop[id]++
		c[dropThrottled]++
	default:
		c := p.tally.slot(k, id)
		if c == nil || c[kept]+c[dropFiltered] < p.throttle {
			return false
		}
		c[dropThrottled]++
	}
	return true
}

// add appends one entry, making room first when the buffer is full (see
// more). It stores the fields one by one: assigning a composite literal
// builds the entry on the stack and copies it in 16-byte halves, which
// the processor cannot forward from the narrower stores that built it, a
// stall at each record. The padding is never written: a buffer starts
// zeroed (make) and holds nothing but entries.
func (p *Process) add(t, v int64, id, peer, tag int32, k trace.Kind) {
	if p.n == len(p.buf) {
		p.more()
	}
	e := &p.buf[p.n]
	e.T, e.V, e.ID, e.Peer, e.Tag, e.Kind = t, v, id, peer, tag, k
	p.n++
	p.lastT = t
}

// blockHooks feeds a block entry to the occupancy and BBV counters (which
// see every block, kept or not) and reports whether the filter keeps it.
func (p *Process) blockHooks(id int32, t int64) bool {
	if p.occ != nil {
		p.occ.enter(id, t)
	}
	if p.bbv != nil && p.bbv.count(id) {
		p.bbvFlush(t)
	}
	if p.throttle > 0 && p.throttled(trace.KindState, id, t) {
		return false
	}
	return p.admit(trace.KindState, id, t)
}

// keep asks the filter; a dropped event is counted, and the count is
// written as a DroppedEvent just before the next kept record.
func (p *Process) keep(k trace.Kind, id int32, t int64) bool {
	if !p.filter.Keep(int(p.id), k, id, int64(float64(t-p.t0)*p.scale)) {
		p.drops++
		p.lastDrop = t
		return false
	}
	if p.drops != 0 {
		p.flushDrops(t)
	}
	return true
}

// dropGap is how many ticks before the record it precedes the count of
// untimed drops is put: at least a nanosecond on any clock parscope reads
// (a time stamp counter of up to 64 GHz, or nanoseconds).
const dropGap = 64

// flushDrops writes the count of the events dropped since the last kept
// record, just before the record of time t (or the process's end): at the
// time of the last of them, or, when the throttle dropped some without
// reading the clock, dropGap ticks before t (not before the last record
// written), so that it still sorts before the record it precedes once
// ticks are nanoseconds.
func (p *Process) flushDrops(t int64) {
	at := p.lastDrop
	if p.untimed {
		at = max(t-dropGap, p.lastT)
	}
	p.add(at, p.drops, p.dropEv, trace.NoPeer, 0, trace.KindEvent)
	p.drops, p.untimed = 0, false
}

// bbvFlush writes the finished interval's vector, blocks in id order.
func (p *Process) bbvFlush(t int64) {
	b := p.bbv
	slices.Sort(b.touched)
	for _, id := range b.touched {
		p.add(t, b.take(id), id, trace.NoPeer, b.interval, trace.KindBBV)
	}
	b.touched = b.touched[:0]
	b.interval++
	b.n = 0
}

// firstBuffer is how many entries a process's first buffer holds. It
// doubles as the process records, up to Options.BufferRecords, before
// anything is handed to the spill writer: a program with many short-lived
// processes (a goroutine each) that record a few entries allocates half a
// kilobyte for each, not a whole buffer (128 KiB by default), and the
// trace is built at Close from as little memory. (It was 64 entries: at
// tens of thousands of goroutines alive at once, those 2 KiB were most
// of what each allocated, and so most of the collections a recording
// added.)
const firstBuffer = 16

// more makes room in a full buffer: a buffer smaller than
// Options.BufferRecords doubles; a full-sized one is handed to the spill
// writer and recording continues in a recycled buffer, or a new one.
func (p *Process) more() {
	full := p.rec.opts.BufferRecords
	if p.n > 0 && p.n < full {
		b := make([]entry, min(2*p.n, full))
		copy(b, p.buf[:p.n])
		p.buf = b
		return
	}
	p.queue()
	select {
	case b := <-p.rec.sp.free:
		p.buf = b[:cap(b)]
	default:
		if p.spilled {
			p.buf = make([]entry, full)
		} else {
			p.buf = make([]entry, min(firstBuffer, full))
		}
	}
}

// queue hands the buffered entries to the spill writer. The process holds
// no buffer afterwards until it records again (see more): a process that
// is done, or flushed and idle, keeps no memory.
func (p *Process) queue() {
	if p.n == 0 {
		return
	}
	p.rec.sp.reqs <- spillReq{proc: p.id, buf: p.buf[:p.n]}
	p.buf, p.n, p.spilled = nil, 0, true
}

// finish closes the process's counters at end (ticks): occupancy counters,
// the last partial BBV interval and a pending count of dropped events.
func (p *Process) finish(end int64) {
	if p.done {
		return
	}
	p.done = true
	if p.drops != 0 {
		p.flushDrops(end)
	}
	if p.bbv != nil && p.bbv.n > 0 {
		p.bbvFlush(end)
	}
	if p.occ != nil {
		p.occ.enter(math.MinInt32, end)
		ids := p.occ.states()
		for _, id := range ids {
			// Tag 1: the value is a duration in ticks, converted when the
			// trace is built.
			p.add(end, p.occ.total(id), id, trace.NoPeer, 1, trace.KindCounter)
		}
		p.rec.addOccupancyStates(ids)
	}
}

// Done ends the process: it closes the occupancy and BBV counters at this
// time and hands the process's records to the spill writer, which writes
// them with its next write (another process's full buffer, a flush point,
// Close), or at once when the finished processes' records held in memory
// pass Options.MemoryLimit. Done does not wait for the write nor wake the
// writer for it: in a parallel program a thread woken at every
// goroutine's end takes a core from the computation. So the records of a
// process that is done survive the program's death only once written; a
// goroutine whose records must survive an os.Exit right after it calls
// Flush before Done. Call Done from the process's goroutine when it has
// finished; the process must not record afterwards.
func (p *Process) Done() error {
	if p == nil {
		return nil
	}
	return p.rec.whileOpen(func() error {
		p.finish(p.now())
		if p.n == 0 {
			return nil
		}
		if p.spilled {
			p.queue()
			return nil
		}
		p.rec.sp.hold(p.id, p.buf[:p.n])
		p.buf, p.n, p.spilled = nil, 0, true
		return nil
	})
}

// Flush writes this process's buffered records to the spill file and
// returns once they are there: they then survive os.Exit, a panic or a
// kill of the program (not a power failure), and Recover turns them into a
// trace. Call it from the goroutine that records the process.
func (p *Process) Flush() error {
	if p == nil {
		return nil
	}
	return p.rec.whileOpen(p.flush)
}

// flush does Flush's work; the caller holds the recorder's closing lock.
func (p *Process) flush() error {
	r := p.rec
	p.queue()
	if err := r.sp.sync(); err != nil {
		return err
	}
	if err := r.firstHeader(); err != nil {
		return err
	}
	return r.writeHeaderIfChanged()
}
