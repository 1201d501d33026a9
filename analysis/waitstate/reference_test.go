package waitstate

// This file keeps the analysis as it was before the clock correction took
// two passes: it held every matched message and collective of a run to
// the end, shifted the calls by the offsets estimated from all of them,
// and measured everything then (the whole-run way, which without the
// correction gives what measuring while reading gives). The differential
// tests compare the implementation with it.

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// call is one MPI call: its span, its site, and the wait charged to it.
type refCall struct {
	proc        int32
	enter, exit int64
	// region is the call's MPI region (NoRegion: none; label then names
	// it); caller the innermost non-MPI region below it.
	region, caller int32
	label          string
	done           bool
	// longest is the longest wait of each pattern raised so far, share
	// what each pattern is charged of the call (see charge).
	longest [numPatterns]int64
	share   [numPatterns]int64
	// ls is the Late Sender time charged to the call, wo the part of it
	// charged as wrong order, woCharged the sub-patterns charged.
	ls, wo    int64
	woCharged [numSubPatterns]bool
	// shifted marks a call whose times the clock correction moved.
	shifted bool
	// entries and left count the receives the call completes that were
	// measured, as entries
	// of the wrong order search, and those not replayed yet; longestEntry
	// is the entry of its longest Late Sender wait (the first in replay
	// order among equals), valid when entries > 0.
	entries, left int
	longestEntry  refRecvEntry
}

func (c *refCall) dur() int64 { return max(c.exit-c.enter, 0) }

// refFrame is an open region of a process's stack.
type refFrame struct {
	region int32
	enter  int64
	mpi    bool
	c      *refCall // the call this MPI refFrame is, made when first needed
}

// refSide is one refSide of a message: the call that posted it and, for a
// receive, the call that waited for it (the same call when blocking).
type refSide struct {
	post, wait *refCall
	// end is a non-blocking receive's completion time; pending while its
	// completing call is looked for.
	end      int64
	blocking bool
	noWait   bool
	recv     bool
	// proc is the refSide's process, t its record's time (a send's send
	// time), seq its order of arrival; fin is a receive's completion
	// time, when finOK.
	proc  int32
	t     int64
	seq   int64
	fin   int64
	finOK bool
}

// refRecvEntry is a receive, as the wrong order search replays them on the
// receiving process: in the order of their completion.
type refRecvEntry struct {
	fin, seq int64
	// sendT is the matched send's time, src its process.
	sendT int64
	src   int32
	// idle is the receive's Late Sender wait (0: none), charged to c.
	idle int64
	c    *refCall
}

// refPair is a matched message.
type refPair struct{ send, recv *refSide }

// refInstance is a collective operation being collected.
type refInstance struct {
	op    trace.CollectiveOp
	root  int32
	procs []int32
	calls []*refCall
}

// refProcState is the running state of one process.
type refProcState struct {
	proc  int32
	stack []refFrame
	// left is the MPI refFrame the process left last, at leftExit, with
	// the region it was called from; leftOK while no region was entered
	// since. A record stamped at the instant its call returns (Extrae's
	// logical times) belongs to it.
	left       refFrame
	leftExit   int64
	leftCaller int32
	leftOK     bool
	// pending are the non-blocking receives whose completing call is
	// looked for.
	pending []*refSide
	last    int64
	mpiNS   int64
	waits   [numPatterns]Amount
	sub     [numSubPatterns]Amount
	// recvs are the process's measured receives, a heap in replay order;
	// buf is the wrong order search's buffer of the latest Late Sender
	// waits.
	recvs refEntryHeap
	buf   []refRecvEntry
}

type refSiteKey struct {
	p              Pattern
	region, caller int32
	label          string
}

// refRunState is the running state of one run.
type refRunState struct {
	run     int32
	procs   map[int32]*refProcState
	comms   *trace.Communicators
	match   trace.Matcher
	sides   map[int64]*refSide
	nextID  int64
	pairs   []refPair
	colls   trace.Gathering[refInstance]
	ready   []*refInstance
	sites   map[refSiteKey]*Amount
	msgs    int64
	ncolls  int64
	unc     Uncomputed
	scratch trace.Record
	// clock counts the clock condition violations, by refPair in
	// clockPairs; corrected is set once the correction was applied
	// (violations are then counted before it).
	clock      ClockCheck
	clockPairs map[[2]int32]*ClockPair
	corrected  bool
	// now is the time of the latest record: every later record of the
	// run is at now or after.
	now int64
}

// refAccumulator is the analysis' engine.Accumulator.
type refAccumulator struct {
	t     *engine.Trace
	p     *Params
	names map[int32]string
	mpi   map[int32]bool
	// nonBlocking marks the MPI regions that post a non-blocking message
	// (MPI_Isend, MPI_Irecv, …).
	nonBlocking map[int32]bool
	// spans is true when a record outside every MPI region may be taken
	// as its call (see recordSpans).
	spans bool
	runs  engine.PerRun[*refRunState]
	res   *Result
}

// newRef returns an accumulator of the wait states of the trace t.
func newRef(t *engine.Trace, p *Params) (*refAccumulator, error) {
	if p.Top < 0 {
		return nil, fmt.Errorf("top %d: want 0 or more", p.Top)
	}
	if p.ClockMinLatency < 0 {
		return nil, fmt.Errorf("clock min latency %d: want 0 or more", p.ClockMinLatency)
	}
	a := &refAccumulator{t: t, p: p, names: map[int32]string{}, mpi: map[int32]bool{}, nonBlocking: map[int32]bool{}}
	a.runs.New = a.newRun
	anyMPI := false
	for _, r := range t.Header.Regions {
		a.names[r.ID] = r.Name()
		a.mpi[r.ID] = r.IsMPI()
		a.nonBlocking[r.ID] = isNonBlocking(r.Label) || isNonBlocking(r.Function)
		anyMPI = anyMPI || a.mpi[r.ID]
	}
	a.spans = recordSpans(t.Header, anyMPI)
	return a, nil
}

// newRun makes the state of a run on its first record.
func (a *refAccumulator) newRun(run int32) (*refRunState, error) {
	r := &refRunState{run: run, procs: map[int32]*refProcState{}, comms: trace.NewCommunicators(a.t.Header, a.t.Procs(run)),
		sides: map[int64]*refSide{}, sites: map[refSiteKey]*Amount{},
		clockPairs: map[[2]int32]*ClockPair{}}
	r.match.OnMatch = func(s, rv *trace.Record) {
		ss, rs := r.sides[s.Value], r.sides[rv.Value]
		delete(r.sides, s.Value)
		delete(r.sides, rv.Value)
		r.pairs = append(r.pairs, refPair{ss, rs})
	}
	return r, nil
}

func (a *refAccumulator) runOf(run int32) *refRunState {
	r, _ := a.runs.Of(run) // newRun does not fail
	return r
}

func (r *refRunState) proc(p int32) *refProcState {
	ps := r.procs[p]
	if ps == nil {
		ps = &refProcState{proc: p}
		r.procs[p] = ps
	}
	return ps
}

// Add implements engine.Accumulator.
func (a *refAccumulator) Add(batch []trace.Record) error {
	if a.res != nil {
		return fmt.Errorf("waitstates: Add after Result")
	}
	for i := range batch {
		rec := &batch[i]
		r := a.runOf(rec.Run)
		r.now = max(r.now, rec.T)
		ps := r.proc(rec.Proc)
		switch rec.Kind {
		case trace.KindEnter:
			ps.stack = append(ps.stack, refFrame{region: rec.ID, enter: rec.T, mpi: a.mpi[rec.ID]})
			ps.leftOK = false
		case trace.KindExit:
			j := len(ps.stack) - 1
			for j >= 0 && ps.stack[j].region != rec.ID {
				j--
			}
			for j >= 0 && len(ps.stack) > j {
				r.pop(ps, rec.T)
			}
		case trace.KindSend, trace.KindRecv:
			a.message(r, ps, rec)
		case trace.KindCollective:
			a.collective(r, ps, rec)
		}
		ps.last = max(ps.last, rec.EndTime())
	}
	return nil
}

// pop closes the process's innermost region at t: its call ends, and the
// non-blocking receives completed inside it find their waiting call.
func (r *refRunState) pop(ps *refProcState, t int64) {
	n := len(ps.stack) - 1
	f := ps.stack[n]
	ps.stack = ps.stack[:n]
	if !f.mpi {
		return
	}
	outer := true
	caller := NoRegion
	for _, g := range ps.stack {
		outer = outer && !g.mpi
		if !g.mpi {
			caller = g.region
		}
	}
	if outer {
		ps.mpiNS += max(t-f.enter, 0)
	}
	if len(ps.pending) > 0 {
		keep := ps.pending[:0]
		for _, s := range ps.pending {
			if s.end >= f.enter && s.end <= t {
				s.setWait(refFrameCall(ps, &f, n))
			} else {
				keep = append(keep, s)
			}
		}
		ps.pending = keep
	}
	if f.c != nil {
		f.c.exit, f.c.done = t, true
	}
	ps.left, ps.leftExit, ps.leftCaller, ps.leftOK = f, t, caller, true
}

// refFrameCall returns the call of the MPI refFrame f, at depth d of the stack.
func refFrameCall(ps *refProcState, f *refFrame, d int) *refCall {
	if f.c == nil {
		caller := NoRegion
		for j := d - 1; j >= 0; j-- {
			if !ps.stack[j].mpi {
				caller = ps.stack[j].region
				break
			}
		}
		f.c = &refCall{proc: ps.proc, enter: f.enter, region: f.region, caller: caller}
	}
	return f.c
}

// refCallAt returns the call a record at t (now) on the process belongs to:
// the innermost open MPI region's, or the MPI region the process left at
// t (no region entered since), or nil outside every MPI region.
func refCallAt(ps *refProcState, t int64) *refCall {
	for j := len(ps.stack) - 1; j >= 0; j-- {
		if ps.stack[j].mpi {
			return refFrameCall(ps, &ps.stack[j], j)
		}
	}
	if ps.leftOK && ps.leftExit == t {
		if ps.left.c == nil {
			ps.left.c = &refCall{proc: ps.proc, enter: ps.left.enter, exit: t, region: ps.left.region, caller: ps.leftCaller, done: true}
		}
		return ps.left.c
	}
	return nil
}

// refSpanCall returns the call of a record outside every MPI region, spanning
// the record, or nil when its span is not known.
func refSpanCall(ps *refProcState, rec *trace.Record, label string) *refCall {
	if rec.End < rec.T || (rec.End == 0 && rec.T != 0) {
		return nil
	}
	caller := NoRegion
	if n := len(ps.stack); n > 0 {
		caller = ps.stack[n-1].region
	}
	ps.mpiNS += rec.End - rec.T
	return &refCall{proc: rec.Proc, enter: rec.T, exit: rec.End, region: NoRegion, caller: caller, label: label, done: true}
}

// message feeds a send or receive record.
func (a *refAccumulator) message(r *refRunState, ps *refProcState, rec *trace.Record) {
	s := &refSide{recv: rec.Kind == trace.KindRecv, blocking: rec.Seq == trace.NoRequest, proc: rec.Proc, t: rec.T, seq: r.nextID}
	label := "(send)"
	if s.recv {
		label = "(receive)"
	}
	c := refCallAt(ps, rec.T)
	switch {
	case c != nil:
		// A message posted in MPI_Isend or MPI_Irecv is non-blocking
		// whatever its record says (Paraver's say nothing).
		s.blocking = s.blocking && !a.nonBlocking[c.region]
	case !a.spans:
	case s.blocking:
		c = refSpanCall(ps, rec, label)
	default:
		// A non-blocking message posted outside every MPI region: its
		// post is the record's time.
		caller := NoRegion
		if n := len(ps.stack); n > 0 {
			caller = ps.stack[n-1].region
		}
		c = &refCall{proc: rec.Proc, enter: rec.T, exit: rec.T, region: NoRegion, caller: caller, label: label, done: true}
	}
	if c == nil {
		r.unc.UnknownSpan++
	}
	s.post = c
	switch {
	case s.recv && s.blocking:
		s.setWait(c)
	case s.recv && rec.End == rec.T && c != nil:
		s.setWait(c) // completed in the call that posted it
	case s.recv:
		if rec.End < rec.T || (rec.End == 0 && rec.T != 0) {
			s.noWait = true
		} else {
			s.end = rec.End
			ps.pending = append(ps.pending, s)
		}
	}
	switch {
	case !s.recv:
	case s.blocking:
		// A blocking receive's record spans its call, or is stamped at
		// its completion (OTF2's, without End).
		s.fin, s.finOK = rec.EndTime(), true
	case !s.noWait:
		s.fin, s.finOK = rec.End, true
	}
	id := r.nextID
	r.nextID++
	r.sides[id] = s
	r.scratch = *rec
	r.scratch.Value = id
	r.match.Add(&r.scratch)
}

// collective feeds a collective record.
func (a *refAccumulator) collective(r *refRunState, ps *refProcState, rec *trace.Record) {
	op := trace.CollectiveOp(rec.ID)
	c := refCallAt(ps, rec.T)
	if c == nil && a.spans {
		c = refSpanCall(ps, rec, op.String()) // in the MPI time in any case
	}
	members, m := r.comms.Membership(rec.Comm, rec.Proc)
	switch m {
	case trace.UnknownMembers, trace.NoMembers:
		r.unc.UnknownComm++
		return
	case trace.NotMember:
		r.unc.OutsideComm++
		return
	case trace.Alone:
		return // a process alone waits for no one
	}
	in, first, complete := r.colls.Join(rec.Comm, rec.Proc, len(members))
	if first {
		*in = refInstance{op: op, root: rec.Peer}
	}
	in.procs = append(in.procs, rec.Proc)
	in.calls = append(in.calls, c) // nil: span unknown
	if c == nil {
		r.unc.UnknownSpan++
	}
	if complete {
		r.ready = append(r.ready, in)
	}
}

// settle computes the waits of the matched messages and complete
// collectives whose calls have ended; at the end (final) every one left.
func (r *refRunState) settle(final bool) {
	keep := r.pairs[:0]
	for _, p := range r.pairs {
		if !final && !(p.send.ready() && p.recv.ready()) {
			keep = append(keep, p)
			continue
		}
		r.message(p)
	}
	clear(r.pairs[len(keep):])
	r.pairs = keep
	keepC := r.ready[:0]
	for _, in := range r.ready {
		ok := true
		for _, c := range in.calls {
			ok = ok && (c == nil || c.done)
		}
		if !ok && !final {
			keepC = append(keepC, in)
			continue
		}
		r.collective(in)
	}
	clear(r.ready[len(keepC):])
	r.ready = keepC
}

// ready reports whether the refSide's calls are known and ended (or known
// never to be).
func (s *refSide) ready() bool {
	if s.post != nil && !s.post.done {
		return false
	}
	if s.recv && !s.blocking && !s.noWait && (s.wait == nil || !s.wait.done) {
		return false
	}
	return true
}

// charge charges a wait of w ns of pattern p to the call c: a call is
// charged its longest wait once (a Waitall for several late senders, a
// Sendrecv both late sender and late receiver), never more than its
// duration. The patterns share it in their order (Late Sender first):
// each is charged what its longest wait adds to those of the patterns
// before it. So the shares depend only on each pattern's longest wait,
// never on the order in which the messages of the call were measured
// (which follows how the trace was read).
func (r *refRunState) charge(c *refCall, p Pattern, w int64) {
	if c == nil || !c.done {
		return
	}
	w = min(w, c.dur())
	if w <= c.longest[p] {
		return
	}
	c.longest[p] = w
	ps := r.proc(c.proc)
	waited := int64(0)
	for q := range numPatterns {
		share := max(c.longest[q]-waited, 0)
		waited = max(waited, c.longest[q])
		old := c.share[q]
		if share == old {
			continue
		}
		c.share[q] = share
		calls := int64(0)
		switch {
		case old == 0:
			calls = 1
		case share == 0:
			calls = -1
		}
		am := &ps.waits[q]
		am.WaitNS += share - old
		am.Calls += calls
		k := refSiteKey{p: q, region: c.region, caller: c.caller, label: c.label}
		st := r.sites[k]
		if st == nil {
			st = &Amount{}
			r.sites[k] = st
		}
		st.WaitNS += share - old
		st.Calls += calls
		if st.Calls == 0 && st.WaitNS == 0 {
			delete(r.sites, k)
		}
	}
	c.ls = c.share[LateSender]
}

// message computes the Late Sender and Late Receiver waits of a refPair.
func (r *refRunState) message(p refPair) {
	r.msgs++
	snd, rcv := p.send, p.recv
	if rcv.recv && !rcv.blocking && !rcv.noWait && rcv.wait == nil {
		rcv.noWait = true
	}
	if rcv.noWait {
		r.unc.NoWaitCall++
	}
	idle := int64(0)
	if s, w := snd.post, rcv.wait; s != nil && w != nil && s.done && w.done {
		idle = max(min(s.enter-w.enter, w.dur()), 0)
		r.charge(w, LateSender, s.enter-w.enter)
	}
	if rcv.finOK {
		rp := r.proc(rcv.proc)
		e := refRecvEntry{fin: rcv.fin, seq: rcv.seq, sendT: snd.t, src: snd.proc, idle: idle, c: rcv.wait}
		if c := e.c; c != nil {
			c.entries++
			c.left++
			if c.entries == 1 || e.idle > c.longestEntry.idle || (e.idle == c.longestEntry.idle && e.before(c.longestEntry)) {
				c.longestEntry = e
			}
		}
		heap.Push(&rp.recvs, e)
		if !r.corrected {
			r.checkClock(snd, rcv)
		}
	}
	if s, rp := snd.post, rcv.post; snd.blocking && s != nil && rp != nil && s.done && rp.done {
		r.charge(s, LateReceiver, rp.enter-s.enter)
	}
}

// checkClock counts the message snd → rcv if its receive completes
// before it was sent.
func (r *refRunState) checkClock(snd, rcv *refSide) {
	v := snd.t - rcv.fin
	if !rcv.finOK || v <= 0 {
		return
	}
	r.clock.Violations++
	r.clock.MaxNS = max(r.clock.MaxNS, v)
	k := [2]int32{snd.proc, rcv.proc}
	cp := r.clockPairs[k]
	if cp == nil {
		cp = &ClockPair{Sender: snd.proc, Receiver: rcv.proc}
		r.clockPairs[k] = cp
	}
	cp.Violations++
	cp.MaxNS = max(cp.MaxNS, v)
}

// correctClocks counts the clock condition violations of every matched
// message, then estimates each process's offset and shifts the times of
// the messages' and collectives' calls by it: the least non-negative
// offsets o with o[receiver] − o[sender] ≥ send time − receive completion
// + minLat for every message between two processes, the longest paths of
// that system of difference constraints (Bellman-Ford from a source
// joined to every process by an edge of weight 0). A positive cycle
// means no constant offsets satisfy every message: nothing is shifted.
func (r *refRunState) correctClocks(minLat int64) *ClockCorrection {
	cc := &ClockCorrection{MinLatencyNS: minLat, Offsets: []ProcOffset{}}
	edges := map[[2]int32]int64{}
	nodes := map[int32]bool{}
	for _, p := range r.pairs {
		snd, rcv := p.send, p.recv
		r.checkClock(snd, rcv)
		if !rcv.finOK || snd.proc == rcv.proc {
			continue
		}
		w := snd.t - rcv.fin + minLat
		k := [2]int32{snd.proc, rcv.proc}
		if old, ok := edges[k]; !ok || w > old {
			edges[k] = w
		}
		nodes[snd.proc], nodes[rcv.proc] = true, true
	}
	r.corrected = true
	type edge struct {
		from, to int32
		w        int64
	}
	es := make([]edge, 0, len(edges))
	for k, w := range edges {
		es = append(es, edge{k[0], k[1], w})
	}
	slices.SortFunc(es, func(x, y edge) int { return cmp.Or(cmp.Compare(x.from, y.from), cmp.Compare(x.to, y.to)) })
	off := map[int32]int64{}
	changed := true
	for i := 0; changed && i <= len(nodes); i++ {
		changed = false
		for _, e := range es {
			if d := off[e.from] + e.w; d > off[e.to] {
				off[e.to] = d
				changed = true
			}
		}
	}
	if changed {
		return cc // a positive cycle: no offsets satisfy every message
	}
	cc.Applied = true
	for p, o := range off {
		if o != 0 {
			cc.Offsets = append(cc.Offsets, ProcOffset{Proc: p, OffsetNS: o})
		}
	}
	slices.SortFunc(cc.Offsets, func(x, y ProcOffset) int { return cmp.Compare(x.Proc, y.Proc) })
	shift := func(c *refCall) {
		if c != nil && !c.shifted {
			c.shifted = true
			o := off[c.proc]
			c.enter += o
			c.exit += o
		}
	}
	for _, p := range r.pairs {
		for _, sd := range []*refSide{p.send, p.recv} {
			o := off[sd.proc]
			sd.t += o
			sd.fin += o
			shift(sd.post)
			shift(sd.wait)
		}
		if p.recv.finOK && p.send.t-p.recv.fin > 0 {
			cc.Violations++
		}
	}
	for _, in := range r.ready {
		for _, c := range in.calls {
			shift(c)
		}
	}
	return cc
}

// before reports whether e comes before o in the replay order.
func (e refRecvEntry) before(o refRecvEntry) bool {
	return cmp.Or(cmp.Compare(e.fin, o.fin), cmp.Compare(e.seq, o.seq)) < 0
}

// refEntryHeap is a min-heap of receives in replay order.
type refEntryHeap []refRecvEntry

func (h refEntryHeap) Len() int           { return len(h) }
func (h refEntryHeap) Less(i, j int) bool { return h[i].before(h[j]) }
func (h refEntryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refEntryHeap) Push(x any)        { *h = append(*h, x.(refRecvEntry)) }
func (h *refEntryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = refRecvEntry{}
	*h = old[:len(old)-1]
	return e
}

// setWait makes c the call that completes the receive s.
func (s *refSide) setWait(c *refCall) {
	s.wait = c
}

// replayAll replays every receive left, at the end of the run.
func (r *refRunState) replayAll(ps *refProcState) {
	for len(ps.recvs) > 0 {
		r.replay(ps, heap.Pop(&ps.recvs).(refRecvEntry))
	}
	ps.buf = nil
}

// replay is one step of the wrong order search: the receive e, next in
// replay order on the process ps.
func (r *refRunState) replay(ps *refProcState, e refRecvEntry) {
	multi := e.c != nil && e.c.entries > 1
	if e.c != nil && !multi {
		ps.join(e)
	}
	keep := ps.buf[:0]
	for _, b := range ps.buf {
		if b.sendT > e.sendT {
			sub := WrongOrderDifferentSource
			if b.src == e.src {
				sub = WrongOrderSameSource
			}
			r.chargeWO(b.c, sub, b.idle)
		} else {
			keep = append(keep, b)
		}
	}
	clear(ps.buf[len(keep):])
	ps.buf = keep
	if multi {
		if e.c.left--; e.c.left == 0 {
			ps.join(e.c.longestEntry)
		}
	}
}

// join adds a Late Sender wait to the buffer of the latest
// WrongOrderWindow.
func (ps *refProcState) join(e refRecvEntry) {
	if e.idle > 0 {
		if len(ps.buf) == WrongOrderWindow {
			copy(ps.buf, ps.buf[1:])
			ps.buf = ps.buf[:len(ps.buf)-1]
		}
		ps.buf = append(ps.buf, e)
	}
}

// chargeWO charges a wrong order wait of w ns to the call c, in the
// sub-pattern sub and in LateSenderWrongOrder: the call's wrong order time
// is its longest such wait, never more than its Late Sender time.
func (r *refRunState) chargeWO(c *refCall, sub SubPattern, w int64) {
	w = min(w, c.ls)
	if w <= c.wo {
		return
	}
	inc := w - c.wo
	c.wo = w
	ps := r.proc(c.proc)
	for _, p := range []SubPattern{LateSenderWrongOrder, sub} {
		ps.sub[p].WaitNS += inc
		if !c.woCharged[p] {
			c.woCharged[p] = true
			ps.sub[p].Calls++
		}
	}
}

// collective computes the waits of one complete collective operation.
func (r *refRunState) collective(in *refInstance) {
	r.ncolls++
	for _, c := range in.calls {
		if c == nil || !c.done {
			return // counted as unknown span
		}
	}
	last := in.calls[0].enter
	for _, c := range in.calls {
		last = max(last, c.enter)
	}
	switch in.op {
	case trace.OpBarrier, trace.OpAllreduce, trace.OpAllgather, trace.OpAlltoall, trace.OpReduceScatter:
		p := WaitNxN
		if in.op == trace.OpBarrier {
			p = WaitBarrier
		}
		for _, c := range in.calls {
			r.charge(c, p, last-c.enter)
		}
	case trace.OpBcast, trace.OpScatter, trace.OpReduce, trace.OpGather:
		ri := slices.Index(in.procs, in.root)
		if ri < 0 {
			r.unc.NoRoot++
			return
		}
		root := in.calls[ri]
		if in.op == trace.OpBcast || in.op == trace.OpScatter {
			for i, c := range in.calls {
				if i != ri {
					r.charge(c, LateBroadcast, root.enter-c.enter)
				}
			}
			return
		}
		first := int64(0)
		seen := false
		for i, c := range in.calls {
			if i != ri && (!seen || c.enter < first) {
				first, seen = c.enter, true
			}
		}
		r.charge(root, EarlyReduce, first-root.enter)
	default:
		r.unc.OtherCollectives++
	}
}

// Result implements engine.Accumulator.
func (a *refAccumulator) Result() (any, error) {
	if a.res == nil {
		a.res = &Result{Runs: engine.FinishRuns(&a.runs, a.finish)}
	}
	return a.res, nil
}

// name returns the name of region id.
func (a *refAccumulator) name(id int32) string {
	if id == NoRegion {
		return "(none)"
	}
	if n := a.names[id]; n != "" {
		return n
	}
	return fmt.Sprintf("region %d", id)
}

// finish closes the regions left open, settles what is left and builds
// the run's result.
func (a *refAccumulator) finish(r *refRunState) RunWaits {
	for _, ps := range r.procs {
		for len(ps.stack) > 0 {
			r.pop(ps, max(ps.last, ps.stack[len(ps.stack)-1].enter))
		}
		for _, s := range ps.pending {
			s.noWait = true
		}
		ps.pending = nil
	}
	var cc *ClockCorrection
	if a.p.ClockCorrection {
		cc = r.correctClocks(a.p.ClockMinLatency)
	}
	r.settle(true)
	for _, ps := range r.procs {
		r.replayAll(ps)
	}
	sends, recvs := r.match.Unmatched()
	r.unc.UnmatchedSends, r.unc.UnmatchedRecvs = int64(len(sends)), int64(len(recvs))
	r.unc.Incomplete = int64(r.colls.Open())

	rw := RunWaits{Run: r.run, Patterns: amounts(nil), ByProcess: []ProcWaits{}, Sites: []Site{},
		Messages: r.msgs, Collectives: r.ncolls, Uncomputed: r.unc, SubPatterns: subAmounts(nil), Clock: r.clock}
	rw.Clock.Pairs = []ClockPair{}
	for _, cp := range r.clockPairs {
		rw.Clock.Pairs = append(rw.Clock.Pairs, *cp)
	}
	slices.SortFunc(rw.Clock.Pairs, func(x, y ClockPair) int {
		return cmp.Or(cmp.Compare(x.Sender, y.Sender), cmp.Compare(x.Receiver, y.Receiver))
	})
	rw.Clock.Correction = cc
	procs := make([]int32, 0, len(r.procs))
	for p := range r.procs {
		procs = append(procs, p)
	}
	slices.Sort(procs)
	for _, p := range procs {
		ps := r.procs[p]
		pw := ProcWaits{Proc: p, MPINS: ps.mpiNS, Patterns: amounts(&ps.waits), SubPatterns: subAmounts(&ps.sub)}
		for i, am := range ps.waits {
			pw.WaitNS += am.WaitNS
			rw.Patterns[i].WaitNS += am.WaitNS
			rw.Patterns[i].Calls += am.Calls
		}
		for i, am := range ps.sub {
			rw.SubPatterns[i].WaitNS += am.WaitNS
			rw.SubPatterns[i].Calls += am.Calls
		}
		rw.MPINS += pw.MPINS
		rw.WaitNS += pw.WaitNS
		rw.ByProcess = append(rw.ByProcess, pw)
	}
	for k, am := range r.sites {
		call := k.label
		if k.region != NoRegion {
			call = a.name(k.region)
		}
		rw.Sites = append(rw.Sites, Site{Pattern: k.p.String(), CallRegion: k.region, Call: call, Region: k.caller,
			RegionName: a.name(k.caller), WaitNS: am.WaitNS, Calls: am.Calls})
	}
	slices.SortFunc(rw.Sites, func(x, y Site) int {
		return cmp.Or(cmp.Compare(y.WaitNS, x.WaitNS), cmp.Compare(x.Pattern, y.Pattern), cmp.Compare(x.Call, y.Call),
			cmp.Compare(x.RegionName, y.RegionName), cmp.Compare(x.CallRegion, y.CallRegion), cmp.Compare(x.Region, y.Region))
	})
	if a.p.Top > 0 && len(rw.Sites) > a.p.Top {
		rw.SitesOmitted = len(rw.Sites) - a.p.Top
		rw.Sites = rw.Sites[:a.p.Top]
	}
	return rw
}
