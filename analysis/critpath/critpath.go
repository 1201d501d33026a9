// Package critpath finds the critical path of each run of a trace: the
// chain of computation and messages that determines when the run ends,
// with each region's and each process's share of it.
//
// The path is found by walking backwards from the process that finishes
// last, from the run's end. On a process the walk goes back along the
// process's own timeline until the latest incoming dependency that made
// it wait, then jumps to the process that released it, at the time it did,
// and goes on from there, until the run's beginning. A dependency is
//
//   - a late sender: a receive completed by a message whose send began
//     after the receiving call began waiting (the receive's MPI region, or
//     for a non-blocking receive the MPI call, MPI_Wait…, in which it
//     completed). The receiver depends, at the end of its waiting call, on
//     the sender at the start of its sending call;
//   - the last arrival at a collective: in a barrier, allreduce,
//     allgather, alltoall or reduce_scatter every member that entered
//     before the last entrant depends, at its exit, on the last entrant at
//     its entry; in a bcast or scatter, the members that entered before
//     the root depend on the root; in a reduce or gather, the root, when
//     it entered first, depends on the last of the others.
//
// Between the jump's two ends, the time from the send (or last entry) to
// the end of the waiting call, the path is in communication: a message
// transfer gap, charged to the receiving process's segment of kind
// "communication". The rest of the path is computation (which includes the
// MPI calls' own time outside those gaps), charged to the innermost region
// open on the process. The path's segments are contiguous: their lengths
// sum to the run's span, from its first record to the last one's end.
//
// Messages are paired by trace.Matcher, MPI calls are the regions
// trace.RegionDef.IsMPI names (a call's span is its MPI region's, or, in a
// trace without them, its record's), collectives are grouped by
// communicator as package waitstate groups them, and regions closed out
// of order are closed as the profile and the wait states close them (the
// regions above the one closed are closed with it).
//
// # How it is computed, and the memory it needs
//
// The path is defined by that backward walk, but it is computed forwards,
// as the records go by, so that the analysis keeps no record. The walk
// from a process at a time only changes course at the process's incoming
// dependencies: with none before, it is the process's computation from the
// run's beginning; else it is the walk from the latest dependency's
// source, at the time it released it, then the communication, then the
// process's computation since. So each process keeps a summary of the path
// reaching it (its time per region and per process, its communication,
// its jumps, its number of segments and the first Params.Segments of
// them) and adds its computation to it as time goes; at a dependency it
// takes the summary its source had at the release, which it saved at that
// point (an MPI call's entry, or a send or collective record outside MPI
// calls). Summaries are immutable nodes sharing their beginnings, folded
// into totals when a chain gets deeper than 32; a saved one lives as long
// as the call, message or collective that may still need it.
//
// A dependency is only known once its message is matched, its waiting call
// has ended and its collective is complete. The summaries are therefore
// computed behind a frontier, the earliest time at which an unresolved
// receive or collective record could still add one (its record's end); the
// region changes and saving points after it wait in a queue. In a
// well-formed trace the wait is short. MaxPending bounds the queue: past
// it, the analysis stops waiting for the oldest unresolved record, and a
// dependency that then turns up too late is counted in
// Uncomputed.TooLate instead of being followed.
//
// The memory is thus bounded by the regions and processes (the summaries'
// totals, the open regions), what is in flight (unmatched messages, open
// calls, incomplete collectives, the queue), and, with Params.Segments 0,
// the segments listed; not by the records. Up to MaxPending, the result
// is the backward walk's over the whole trace.
//
// The analysis is registered with package engine as "critpath";
// `parscope critpath` formats its Result. docs/critical-path.md has the
// definition and a timeline.
package critpath

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the analysis' name in the engine's registry.
const Name = "critpath"

// NoRegion is the region id of "no region" (time outside every region).
const NoRegion int32 = -1

// CommRegion is the region id under which the path's communication (its
// message transfer gaps) is listed among the regions.
const CommRegion int32 = -2

// Segment kinds.
const (
	// Computation is time a process spent on the path on its own.
	Computation = "computation"
	// Communication is a message transfer gap: from a send (or the last
	// entry into a collective) to the end of the call that waited for it.
	Communication = "communication"
)

// Params are the options of the analysis.
type Params struct {
	// Top bounds the regions listed per run (those of the longest time
	// on the path; 0 keeps all).
	Top int `json:"top" flag:"top" help:"keep the N regions of the longest time on the path per run (0: all)"`
	// Segments bounds the segments listed per run (the first ones; 0
	// keeps all). The totals count every segment.
	Segments int `json:"segments" flag:"segments" help:"list the first N segments of the path per run (0: all)"`
}

// DefaultTop is the default of Params.Top.
const DefaultTop = 20

// DefaultSegments is the default of Params.Segments.
const DefaultSegments = 100

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{Top: DefaultTop, Segments: DefaultSegments} }

// Result holds the critical path of each run.
type Result struct {
	Runs []RunPath `json:"runs"`
}

// RunPath is the critical path of one run.
type RunPath struct {
	Run int32 `json:"run"`
	// BeginNS and EndNS are the run's span: its first record's time and
	// its last record's end. The path covers it.
	BeginNS int64 `json:"begin_ns"`
	EndNS   int64 `json:"end_ns"`
	// LengthNS is the path's length, EndNS − BeginNS.
	LengthNS int64 `json:"length_ns"`
	// EndProc is the process that finishes last, where the path ends.
	EndProc int32 `json:"end_proc"`
	// ComputationNS and CommunicationNS split LengthNS by segment kind.
	ComputationNS   int64 `json:"computation_ns"`
	CommunicationNS int64 `json:"communication_ns"`
	// Jumps counts the dependencies the path follows from one process to
	// another: MessageJumps through messages, CollectiveJumps through
	// collectives.
	MessageJumps    int64 `json:"message_jumps"`
	CollectiveJumps int64 `json:"collective_jumps"`
	// Segments are the path's pieces in time order (the first
	// Params.Segments of them); SegmentsTotal counts them all.
	Segments      []Segment `json:"segments"`
	SegmentsTotal int       `json:"segments_total"`
	// Regions holds each region's time on the path, longest first, the
	// communication listed as the region CommRegion; RegionsOmitted
	// counts those Params.Top left out.
	Regions        []RegionShare `json:"regions"`
	RegionsOmitted int           `json:"regions_omitted"`
	// Processes holds each process's computation time on the path, by
	// process; those never on it are left out.
	Processes []ProcShare `json:"processes"`
	// Uncomputed counts what the trace does not let the analysis use as
	// a dependency.
	Uncomputed Uncomputed `json:"uncomputed"`
}

// Segment is one piece of the path: a process's computation in one
// region, or a message transfer gap ending on a process.
type Segment struct {
	Proc   int32 `json:"proc"`
	FromNS int64 `json:"from_ns"`
	ToNS   int64 `json:"to_ns"`
	// Kind is Computation or Communication.
	Kind string `json:"kind"`
	// Region is the innermost region open (NoRegion: none; CommRegion
	// for communication); RegionName its name.
	Region     int32  `json:"region"`
	RegionName string `json:"region_name"`
	// Peer is, for communication, the process the path jumps to (the
	// sender, last entrant or root); -1 for computation.
	Peer int32 `json:"peer"`
}

// RegionShare is a region's time on the path.
type RegionShare struct {
	Region int32  `json:"region"`
	Name   string `json:"name"`
	NS     int64  `json:"ns"`
	// SharePct is NS as a percentage of the path's length.
	SharePct float64 `json:"share_pct"`
}

// ProcShare is a process's computation time on the path.
type ProcShare struct {
	Proc int32 `json:"proc"`
	NS   int64 `json:"ns"`
	// SharePct is NS as a percentage of the path's length.
	SharePct float64 `json:"share_pct"`
}

// Uncomputed counts the messages and collectives the analysis cannot use.
type Uncomputed struct {
	// UnmatchedSends and UnmatchedRecvs are messages missing their
	// other side.
	UnmatchedSends int64 `json:"unmatched_sends"`
	UnmatchedRecvs int64 `json:"unmatched_recvs"`
	// UnknownComm counts collective records on a communicator whose
	// members are unknown or that do not include the process.
	UnknownComm int64 `json:"unknown_comm"`
	// Incomplete counts collective operations some member never recorded.
	Incomplete int64 `json:"incomplete"`
	// OtherCollectives counts collective operations whose dependency is
	// not defined here (scan, exscan, unknown operations, rooted ones
	// whose root is not a member).
	OtherCollectives int64 `json:"other_collectives"`
	// TooLate counts dependencies found only after the path had been
	// computed past their arrival: the analysis stops waiting for an
	// unresolved receive or collective (one whose other side or last
	// member comes very much later, or whose waiting call stays open)
	// when more than MaxPending region changes are held back behind it,
	// so that its memory stays bounded. The path ignores them.
	TooLate int64 `json:"too_late"`
}

// MaxPending bounds the region changes and snapshot points (about one per
// record) held back while an unresolved message or collective could still
// change the path before them; past it the analysis stops waiting for the
// oldest one and counts it in Uncomputed.TooLate if it turns out to matter.
// At 32 bytes each, the changes held back take about 64 MiB at most.
const MaxPending = 1 << 21

// maxPending is MaxPending, lowered by the tests.
var maxPending = MaxPending

// regIndexAt is the number of regions of a piece past which they are
// indexed by a map. (A variable for the tests.)
var regIndexAt = 16

// foldDepth bounds the chains of path summaries: a longer chain is folded
// into one node holding its totals. (A variable for the tests.)
var foldDepth int32 = 32

func init() {
	engine.Register(&engine.Analysis{
		Name:     Name,
		Recorded: true,
		Doc:      "critical path: the chain of computation and messages that determines a run's end; each region's and process's share",
		Needs:    []trace.Kind{trace.KindEnter, trace.KindSend, trace.KindRecv, trace.KindCollective},
		Feeds:    func(any) []trace.Kind { return trace.TimedKinds() },
		Options:  func() any { return DefaultParams() },
		New:      func(t *engine.Trace, o any) (engine.Accumulator, error) { return New(t, o.(*Params)) },
	})
}

// regNS is a region's time in a path summary.
type regNS struct {
	region int32
	ns     int64
}

// chunk is a piece of a path's stored segments, after those of prev.
type chunk struct {
	prev *chunk
	segs []Segment
}

// dropLast returns the chunks of c without their last segment.
func dropLast(c *chunk) *chunk {
	if len(c.segs) == 1 {
		return c.prev
	}
	n := len(c.segs) - 1
	return &chunk{prev: c.prev, segs: c.segs[:n:n]}
}

// node is an immutable summary of a path from the run's beginning: its
// parent's path followed by this node's piece. A root (folded) node holds
// totals instead.
type node struct {
	parent *node
	depth  int32
	root   bool
	// The piece's time per region (a root's: regionsMap), the computation
	// of proc in it (a root's: procsMap), its communication and jumps.
	regions    []regNS
	proc       int32
	comp, comm int64
	msgJ       int64
	collJ      int64
	regionsMap map[int32]int64
	procsMap   map[int32]int64
	// nseg counts the path's segments; chunk holds the first of them
	// (Params.Segments).
	nseg  int
	chunk *chunk
}

// link sets n's depth under its parent, folding the chain into a root
// when it is deeper than foldDepth.
func link(n *node) *node {
	n.depth = n.parent.depth + 1
	if n.depth <= foldDepth {
		return n
	}
	var chain []*node
	m := n
	for !m.root {
		chain = append(chain, m)
		m = m.parent
	}
	f := &node{root: true, regionsMap: make(map[int32]int64, len(m.regionsMap)+4), procsMap: make(map[int32]int64, len(m.procsMap)+2),
		comp: m.comp, comm: m.comm, msgJ: m.msgJ, collJ: m.collJ, nseg: n.nseg, chunk: n.chunk}
	maps.Copy(f.regionsMap, m.regionsMap)
	maps.Copy(f.procsMap, m.procsMap)
	for _, c := range chain {
		f.add(c)
	}
	return f
}

// add adds the piece of the non-root node c to the root f's totals.
func (f *node) add(c *node) {
	for _, g := range c.regions {
		f.regionsMap[g.region] += g.ns
	}
	if c.comp > 0 {
		f.procsMap[c.proc] += c.comp
	}
	f.comp += c.comp
	f.comm += c.comm
	f.msgJ += c.msgJ
	f.collJ += c.collJ
}

// snapRef holds the summary of the path reaching a process at a point a
// dependency may leave it from: the entry of an MPI call, or a send or
// collective record outside MPI calls (want says it is one).
type snapRef struct {
	snap *node
	want bool
}

// frame is an MPI call of a process (an instance of an MPI region).
type frame struct {
	snapRef
	enter, exit int64 // exit: -1 while open
	// waiters are the sides waiting for the call's exit to be resolved.
	waiters []*side
}

// level is one open region of a process.
type level struct {
	region int32
	enter  int64
	// mpi is the innermost MPI call open at this level (nil: none); own
	// says it is this level's.
	mpi *frame
	own bool
}

// none is the level of a process outside every region.
var none = level{region: NoRegion}

// sideKind says what a side is.
type sideKind uint8

const (
	sendSide sideKind = iota
	recvSide
	collSide
)

// side is one side of a message, or one member's collective record,
// until its dependency is resolved.
type side struct {
	snapRef // a send's or collective's own point, outside MPI calls
	ps      *procState
	t, end  int64
	kind    sideKind
	// probed: f, the MPI call of the record, is known (nil: none).
	probed bool
	// done: resolved; blocking: in runState.blocking, holding the
	// commit frontier; ready: a collective side's call is known and has
	// ended.
	done, blocking, ready bool
	f                     *frame
	// strictF and nsF are the calls open just before and at the probe's
	// time, until the side is settled.
	strictF, nsF *frame
	peer         *side     // the other side of a matched message
	in           *instance // a collective's operation
}

// probeX returns the time at which the side's call is looked up.
func (s *side) probeX() int64 {
	if s.kind == recvSide {
		return s.end
	}
	return s.t
}

// procState is what is kept of one process: its open regions, and the
// summary of the path reaching it at the commit frontier.
type procState struct {
	id    int32
	stack []level
	// cur is the innermost level; before is what it was before the
	// changes at lastT, the time of the last change.
	cur, before level
	lastT       int64
	changed     bool
	first, last int64
	seen        bool
	closeAt     int64
	// prov are sides waiting for the process's next record to settle.
	prov []*side

	// The path reaching the process (behind the commit frontier): parent
	// and the pieces since, the current link's computation from t0 on in
	// region, and the open segment.
	parent      *node
	regs        []regNS
	regIdx      map[int32]int // regs' index, when they are many
	comp, comm  int64
	msgJ, collJ int64
	dirty       bool
	nseg        int
	segs        []Segment
	replaceLast bool
	open        bool
	openInNode  bool
	extended    bool
	openSeg     Segment
	openIdx     int
	region      int32
	t0          int64
	// at and after are the best dependencies arriving at the time
	// committed (at: those counting at that very time).
	at, after       dep
	hasAt, hasAfter bool
	atNode          *node
}

// instance is a collective operation being collected.
type instance struct {
	op       trace.CollectiveOp
	root     int32
	sides    []*side
	complete bool
	resolved bool
	// unready counts the sides whose call is not known or has not ended.
	unready int
}

// dep is an incoming dependency of process q: at arrival it was released
// by src at srcT, whose path is ref's.
type dep struct {
	arrival, srcT int64
	q             *procState
	src           int32
	coll          bool
	ref           *snapRef
}

// better says whether d is chosen over e, of the same arrival, as the
// backward walk chooses: the later in (srcT, src) order, a collective
// over a message, the later found.
func (d *dep) better(e *dep) bool {
	return cmp.Or(cmp.Compare(d.srcT, e.srcT), cmp.Compare(d.src, e.src), cmp.Compare(b2i(d.coll), b2i(e.coll))) >= 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// event is a region change (ref nil) or a snapshot point of a process,
// held until the commit frontier passes its time.
type event struct {
	t      int64
	ps     *procState
	ref    *snapRef
	region int32
}

// minHeap is a binary heap ordered by less.
type minHeap[T any] struct {
	a    []T
	less func(x, y *T) bool
}

func (h *minHeap[T]) push(x T) {
	h.a = append(h.a, x)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(&h.a[i], &h.a[p]) {
			break
		}
		h.a[i], h.a[p] = h.a[p], h.a[i]
		i = p
	}
}

func (h *minHeap[T]) pop() T {
	x := h.a[0]
	n := len(h.a) - 1
	h.a[0] = h.a[n]
	var zero T
	h.a[n] = zero
	h.a = h.a[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && h.less(&h.a[r], &h.a[l]) {
			l = r
		}
		if !h.less(&h.a[l], &h.a[i]) {
			break
		}
		h.a[i], h.a[l] = h.a[l], h.a[i]
		i = l
	}
	return x
}

// runState is the running state of one run.
type runState struct {
	run     int32
	limit   int
	procs   map[int32]*procState
	cache   trace.ProcCache[procState]
	last    *procState
	comms   *trace.Communicators
	match   trace.Matcher
	sides   trace.Slots[*side] // the sides waiting in match, by their record's id
	colls   trace.Gathering[instance]
	unc     Uncomputed
	scratch trace.Record

	started bool
	begin   int64
	now     int64 // the latest record's time
	// committed: the path summaries are computed for every time before it.
	committed int64
	empty     *node
	probes    minHeap[*side]
	probeNow  []*side // the sides to look up at the stream's next time
	blocking  minHeap[*side]
	deps      minHeap[dep]
	events    []event
	head      int
	touched   []*procState
}

// Accumulator is the analysis' engine.Accumulator.
type Accumulator struct {
	t     *engine.Trace
	p     *Params
	names map[int32]string
	mpi   map[int32]bool
	runs  engine.PerRun[*runState]
	res   *Result
}

// New returns an accumulator of the critical paths of the trace t.
func New(t *engine.Trace, p *Params) (*Accumulator, error) {
	if p.Top < 0 || p.Segments < 0 {
		return nil, fmt.Errorf("top %d, segments %d: want 0 or more", p.Top, p.Segments)
	}
	a := &Accumulator{t: t, p: p, names: map[int32]string{}, mpi: map[int32]bool{}}
	a.runs.New = a.newRun
	for _, r := range t.Header.Regions {
		a.names[r.ID] = r.Name()
		a.mpi[r.ID] = r.IsMPI()
	}
	return a, nil
}

// newRun makes the state of a run on its first record.
func (a *Accumulator) newRun(run int32) (*runState, error) {
	r := &runState{run: run, limit: a.p.Segments, procs: map[int32]*procState{}, cache: trace.NewProcCache[procState](a.t.Procs(run)), comms: trace.NewCommunicators(a.t.Header, a.t.Procs(run)),
		empty: &node{root: true}}
	r.probes.less = func(x, y **side) bool { return (*x).probeX() < (*y).probeX() }
	r.blocking.less = func(x, y **side) bool { return (*x).end < (*y).end }
	r.deps.less = func(x, y *dep) bool { return x.arrival < y.arrival }
	r.match.OnMatch = func(s, rv *trace.Record) {
		ss, vs := r.sides.Take(s.Value), r.sides.Take(rv.Value)
		ss.peer, vs.peer = vs, ss
		r.tryPair(vs)
	}
	return r, nil
}

func (a *Accumulator) runOf(run int32) *runState {
	r, _ := a.runs.Of(run) // newRun does not fail
	return r
}

func (r *runState) proc(p int32) *procState {
	if r.last != nil && r.last.id == p {
		return r.last
	}
	ps := r.cache.Get(p)
	if ps == nil {
		if ps = r.procs[p]; ps == nil {
			ps = &procState{id: p, cur: none, parent: r.empty, region: NoRegion, t0: r.begin}
			r.procs[p] = ps
		}
		r.cache.Put(p, ps)
	}
	r.last = ps
	return ps
}

// Add implements engine.Accumulator.
func (a *Accumulator) Add(batch []trace.Record) error {
	if a.res != nil {
		return fmt.Errorf("critpath: Add after Result")
	}
	for i := range batch {
		rec := &batch[i]
		r := a.runOf(rec.Run)
		if !r.started {
			r.started, r.begin, r.now, r.committed = true, rec.T, rec.T, rec.T
		} else if rec.T > r.now {
			r.advance(rec.T)
		}
		ps := r.proc(rec.Proc)
		if len(ps.prov) > 0 {
			r.settleProv(ps, false)
		}
		if !ps.seen {
			ps.first, ps.seen = rec.T, true
		}
		ps.first = min(ps.first, rec.T)
		switch rec.Kind {
		case trace.KindEnter:
			lv := level{region: rec.ID, enter: rec.T, mpi: ps.cur.mpi}
			if a.mpi[rec.ID] {
				f := &frame{enter: rec.T, exit: -1}
				f.want = true
				lv.mpi, lv.own = f, true
				r.events = append(r.events, event{t: rec.T, ps: ps, ref: &f.snapRef})
			}
			ps.stack = append(ps.stack, lv)
			r.change(ps, rec.T, lv, true)
		case trace.KindExit:
			j := len(ps.stack) - 1
			for j >= 0 && ps.stack[j].region != rec.ID {
				j--
			}
			if j >= 0 {
				r.closeTo(ps, j, rec.T, true)
			}
		case trace.KindSend, trace.KindRecv:
			s := &side{ps: ps, t: rec.T, end: rec.EndTime(), kind: sendSide}
			if rec.Kind == trace.KindRecv {
				s.kind = recvSide
				s.blocking = true
				r.blocking.push(s)
			} else {
				r.events = append(r.events, event{t: rec.T, ps: ps, ref: &s.snapRef})
			}
			r.probeAt(s)
			r.scratch = *rec
			r.scratch.Value = r.sides.Put(s)
			r.match.Add(&r.scratch)
		case trace.KindCollective:
			r.collective(rec, ps)
		}
		ps.last = max(ps.last, rec.EndTime())
	}
	return nil
}

// change makes lv the innermost level of ps from t on.
func (r *runState) change(ps *procState, t int64, lv level, record bool) {
	if !ps.changed || ps.lastT != t {
		ps.before, ps.lastT, ps.changed = ps.cur, t, true
	}
	ps.cur = lv
	if record {
		r.events = append(r.events, event{t: t, ps: ps, region: lv.region})
	}
}

// closeTo closes the levels of ps's stack from depth j up at t.
func (r *runState) closeTo(ps *procState, j int, t int64, record bool) {
	for k := len(ps.stack) - 1; k >= j; k-- {
		if lv := ps.stack[k]; lv.own {
			f := lv.mpi
			f.exit = t
			ws := f.waiters
			f.waiters = nil
			for _, s := range ws {
				r.retry(s)
			}
		}
	}
	clear(ps.stack[j:])
	ps.stack = ps.stack[:j]
	top := none
	if j > 0 {
		top = ps.stack[j-1]
	}
	r.change(ps, t, top, record)
}

// collective groups a collective record with the other members'.
func (r *runState) collective(rec *trace.Record, ps *procState) {
	members, m := r.comms.Membership(rec.Comm, rec.Proc)
	switch m {
	case trace.UnknownMembers, trace.NoMembers, trace.NotMember:
		r.unc.UnknownComm++
		return
	case trace.Alone:
		return
	}
	in, first, complete := r.colls.Join(rec.Comm, rec.Proc, len(members))
	if first {
		*in = instance{op: trace.CollectiveOp(rec.ID), root: rec.Peer}
	}
	s := &side{ps: ps, t: rec.T, end: rec.EndTime(), kind: collSide, in: in, blocking: true}
	r.events = append(r.events, event{t: rec.T, ps: ps, ref: &s.snapRef})
	r.probeAt(s)
	r.blocking.push(s)
	in.sides = append(in.sides, s)
	in.unready++
	if complete {
		in.complete = true
		r.tryColl(in)
	}
}

// probeAt queues the side for its call to be looked up once the stream
// has passed its time.
func (r *runState) probeAt(s *side) {
	if s.probeX() <= r.now {
		r.probeNow = append(r.probeNow, s)
	} else {
		r.probes.push(s)
	}
}

// advance moves the stream's time to t: the calls of the records before
// it are looked up, and the path computed as far as nothing unresolved
// can change it.
func (r *runState) advance(t int64) {
	now := r.probeNow
	r.probeNow = nil
	for _, s := range now {
		r.probe(s, false)
	}
	clear(now)
	if r.probeNow == nil {
		r.probeNow = now[:0]
	}
	for len(r.probes.a) > 0 && r.probes.a[0].probeX() < t {
		r.probe(r.probes.pop(), false)
	}
	r.now = t
	r.commit(r.frontier())
	for len(r.events)-r.head > maxPending && len(r.blocking.a) > 0 {
		// Stop waiting for the oldest unresolved side.
		r.blocking.pop().blocking = false
		r.commit(r.frontier())
	}
}

// frontier returns the time before which nothing unresolved can add a
// dependency: a receive or a collective side can only arrive at or after
// its record's end.
func (r *runState) frontier() int64 {
	f := r.now
	for len(r.blocking.a) > 0 {
		s := r.blocking.a[0]
		if !s.blocking {
			r.blocking.pop()
			continue
		}
		f = min(f, s.end)
		break
	}
	return f
}

// probe finds the MPI call of the side's record: the call open at its
// time (a receive: just before its end, else at its end). final: at the
// end of the trace, the levels still open to be closed at closeAt.
//
// When the process's last record ends at that time with levels open,
// they may be closed there at the end of the trace, and the call open at
// that time is then none: the side waits for the process's next record,
// or the end of the trace, to settle.
func (r *runState) probe(s *side, final bool) {
	ps := s.ps
	x := s.probeX()
	strict := ps.cur
	if ps.changed && ps.lastT == x {
		strict = ps.before
	}
	s.strictF, s.nsF = strict.mpi, ps.cur.mpi
	if !final && ps.last == x && len(ps.stack) > 0 && s.nsF != nil && (s.kind != recvSide || s.strictF == nil) {
		if s.kind != recvSide {
			s.want = true
		}
		ps.prov = append(ps.prov, s)
		return
	}
	r.settle(s, final && len(ps.stack) > 0 && x >= ps.closeAt)
}

// settle sets the side's call; closed: the levels open at its time are
// closed there.
func (r *runState) settle(s *side, closed bool) {
	f := s.nsF
	if closed {
		f = nil
	}
	if s.kind == recvSide && s.strictF != nil {
		f = s.strictF
	}
	s.f, s.strictF, s.nsF = f, nil, nil
	s.probed = true
	if f == nil && s.kind != recvSide {
		s.want = true
	}
	if f != nil && f.exit < 0 {
		f.waiters = append(f.waiters, s)
	}
	r.retry(s)
}

// settleProv settles the sides of ps waiting for its next record.
func (r *runState) settleProv(ps *procState, final bool) {
	prov := ps.prov
	ps.prov = nil
	for _, s := range prov {
		r.settle(s, final && len(ps.stack) > 0 && s.probeX() >= ps.closeAt)
	}
}

// retry resolves what the side belongs to if it can now be.
func (r *runState) retry(s *side) {
	switch s.kind {
	case recvSide:
		r.tryPair(s)
	case sendSide:
		if s.peer != nil {
			r.tryPair(s.peer)
		}
	case collSide:
		if !s.ready && s.probed && (s.f == nil || s.f.exit >= 0) {
			s.ready = true
			s.in.unready--
		}
		if s.in.complete {
			r.tryColl(s.in)
		}
	}
}

// tryPair adds the dependency of the matched receive v, if any, once its
// calls are known: when its send began (its MPI call's entry) after the
// call that waited for it began and not after that call ended.
func (r *runState) tryPair(v *side) {
	s := v.peer
	if v.done || s == nil || !v.probed || !s.probed || (v.f != nil && v.f.exit < 0) {
		return
	}
	v.done, v.blocking, s.done = true, false, true
	sendT, ref := s.t, &s.snapRef
	if s.f != nil {
		sendT, ref = s.f.enter, &s.f.snapRef
	}
	waitT, arrival := v.t, v.end
	if v.f != nil {
		waitT, arrival = v.f.enter, max(v.f.exit, v.end)
	}
	isDep := sendT > waitT && sendT <= arrival
	// The send's own point is needed only as this dependency's source.
	s.want = isDep && s.f == nil
	if isDep {
		r.addDep(dep{arrival: arrival, q: v.ps, src: s.ps.id, srcT: sendT, ref: ref})
	}
	v.peer, s.peer, v.f, s.f = nil, nil, nil, nil
}

// tryColl adds the dependencies of a complete collective operation once
// its members' calls are known and have ended.
func (r *runState) tryColl(in *instance) {
	if in.resolved || in.unready > 0 {
		return
	}
	in.resolved = true
	n := len(in.sides)
	enter := make([]int64, n)
	exit := make([]int64, n)
	refs := make([]*snapRef, n)
	for i, s := range in.sides {
		s.done, s.blocking = true, false
		s.want = false // unless a dependency leaves from it (add)
		enter[i], exit[i], refs[i] = s.t, s.end, &s.snapRef
		if s.f != nil {
			enter[i], exit[i], refs[i] = s.f.enter, max(s.f.exit, s.end), &s.f.snapRef
		}
		s.f = nil
	}
	// add makes member i depend on member j when i entered first.
	add := func(i, j int) {
		if i != j && enter[i] < enter[j] && enter[j] <= exit[i] {
			refs[j].want = true
			r.addDep(dep{arrival: exit[i], q: in.sides[i].ps, src: in.sides[j].ps.id, srcT: enter[j], coll: true, ref: refs[j]})
		}
	}
	last := func(skip int) int {
		l := -1
		for i := range in.sides {
			if i != skip && (l < 0 || enter[i] > enter[l]) {
				l = i
			}
		}
		return l
	}
	root := -1
	for i, s := range in.sides {
		if s.ps.id == in.root {
			root = i
		}
	}
	switch in.op {
	case trace.OpBarrier, trace.OpAllreduce, trace.OpAllgather, trace.OpAlltoall, trace.OpReduceScatter:
		l := last(-1)
		for i := range in.sides {
			add(i, l)
		}
	case trace.OpBcast, trace.OpScatter:
		if root < 0 {
			r.unc.OtherCollectives++
			return
		}
		for i := range in.sides {
			add(i, root)
		}
	case trace.OpReduce, trace.OpGather:
		if root < 0 {
			r.unc.OtherCollectives++
			return
		}
		add(root, last(root))
	default:
		r.unc.OtherCollectives++
	}
}

// addDep queues a dependency for the commit, or counts it when the path
// was computed past its arrival.
func (r *runState) addDep(d dep) {
	if d.arrival < r.committed {
		r.unc.TooLate++
		return
	}
	r.deps.push(d)
}

// commit computes the path summaries of every time before f, in time
// order: at each time, first the snapshots (the path reaching the
// process at that very time), then the dependencies arriving (the path
// then continues from their source), then the region changes.
func (r *runState) commit(f int64) {
	for {
		var t int64
		have := false
		if r.head < len(r.events) {
			t, have = r.events[r.head].t, true
		}
		if len(r.deps.a) > 0 && (!have || r.deps.a[0].arrival < t) {
			t, have = r.deps.a[0].arrival, true
		}
		if !have || t >= f {
			break
		}
		for len(r.deps.a) > 0 && r.deps.a[0].arrival == t {
			d := r.deps.pop()
			q := d.q
			if !q.hasAt && !q.hasAfter {
				r.touched = append(r.touched, q)
			}
			if d.srcT < t && (!q.hasAt || d.better(&q.at)) {
				q.at, q.hasAt = d, true
			}
			if !q.hasAfter || d.better(&q.after) {
				q.after, q.hasAfter = d, true
			}
		}
		end := r.head
		for end < len(r.events) && r.events[end].t == t {
			e := &r.events[end]
			if e.ref != nil && e.ref.want {
				e.ref.snap = r.snapshot(e.ps, t)
			}
			end++
		}
		for _, q := range r.touched {
			if q.after.ref.snap == nil {
				// Its source's point was passed unsaved, which only
				// records out of time order can cause.
				r.unc.TooLate++
			} else {
				r.jump(q, &q.after, t)
			}
			q.at, q.after, q.hasAt, q.hasAfter, q.atNode = dep{}, dep{}, false, false, nil
		}
		clear(r.touched)
		r.touched = r.touched[:0]
		for i := r.head; i < end; i++ {
			if e := &r.events[i]; e.ref == nil {
				e.ps.change(t, e.region, r.limit)
			}
		}
		clear(r.events[r.head:end])
		r.head = end
	}
	r.committed = max(r.committed, f)
	if r.head > 4096 && r.head*2 > len(r.events) {
		n := copy(r.events, r.events[r.head:])
		clear(r.events[n:])
		r.events = r.events[:n]
		r.head = 0
	}
}

// stored says whether the segment of index i is listed.
func stored(i, limit int) bool { return limit == 0 || i < limit }

// snapshot returns the summary of the path reaching ps at t.
func (r *runState) snapshot(ps *procState, t int64) *node {
	if !ps.hasAt || ps.at.ref.snap == nil {
		return ps.freeze(t, r.limit)
	}
	if ps.atNode == nil {
		d := &ps.at
		p := d.ref.snap
		n := &node{parent: p, proc: ps.id, nseg: p.nseg, chunk: p.chunk}
		if t > d.srcT {
			n.regions = []regNS{{CommRegion, t - d.srcT}}
			n.comm = t - d.srcT
			if stored(n.nseg, r.limit) {
				n.chunk = &chunk{prev: p.chunk, segs: []Segment{commSeg(ps.id, d, t)}}
			}
			n.nseg++
		}
		if d.coll {
			n.collJ = 1
		} else {
			n.msgJ = 1
		}
		ps.atNode = link(n)
	}
	return ps.atNode
}

// commSeg returns the communication segment of d arriving on p at t.
func commSeg(p int32, d *dep, t int64) Segment {
	return Segment{Proc: p, FromNS: d.srcT, ToNS: t, Kind: Communication, Region: CommRegion, Peer: d.src}
}

// jump makes the path reaching ps from t on that of d's source, followed
// by the communication from it.
func (r *runState) jump(ps *procState, d *dep, t int64) {
	ps.parent = d.ref.snap
	ps.regs, ps.regIdx = ps.regs[:0], nil
	ps.comp, ps.comm, ps.msgJ, ps.collJ = 0, 0, 0, 0
	ps.segs, ps.replaceLast, ps.open, ps.openInNode, ps.extended = nil, false, false, false, false
	ps.nseg = ps.parent.nseg
	if t > d.srcT {
		ps.addReg(CommRegion, t-d.srcT)
		ps.comm = t - d.srcT
		if stored(ps.nseg, r.limit) {
			ps.segs = append(ps.segs, commSeg(ps.id, d, t))
		}
		ps.nseg++
	}
	if d.coll {
		ps.collJ++
	} else {
		ps.msgJ++
	}
	ps.dirty = true
	ps.t0 = t
}

// change makes region the innermost one of the process from t on.
func (ps *procState) change(t int64, region int32, limit int) {
	if t > ps.t0 {
		ps.piece(ps.region, ps.t0, t, limit)
		ps.t0 = t
	}
	ps.region = region
}

// addReg adds ns of region to the open piece.
func (ps *procState) addReg(region int32, ns int64) {
	if ps.regIdx != nil {
		if i, ok := ps.regIdx[region]; ok {
			ps.regs[i].ns += ns
			return
		}
		ps.regIdx[region] = len(ps.regs)
		ps.regs = append(ps.regs, regNS{region, ns})
		return
	}
	for i := len(ps.regs) - 1; i >= 0; i-- {
		if ps.regs[i].region == region {
			ps.regs[i].ns += ns
			return
		}
	}
	ps.regs = append(ps.regs, regNS{region, ns})
	if len(ps.regs) > regIndexAt {
		// Many regions between two saved points: index them.
		ps.regIdx = make(map[int32]int, 2*len(ps.regs))
		for i, g := range ps.regs {
			ps.regIdx[g.region] = i
		}
	}
}

// piece adds the computation in region over [from, to) to the path.
func (ps *procState) piece(region int32, from, to int64, limit int) {
	n := to - from
	ps.addReg(region, n)
	ps.comp += n
	ps.dirty = true
	if ps.open && ps.openSeg.Region == region {
		ps.openSeg.ToNS = to
		ps.extended = true
		return
	}
	ps.closeOpen(limit)
	ps.openSeg = Segment{Proc: ps.id, FromNS: from, ToNS: to, Kind: Computation, Region: region, Peer: -1}
	ps.openIdx = ps.nseg
	ps.nseg++
	ps.open, ps.openInNode, ps.extended = true, false, true
}

// closeOpen stores the open segment if it is listed and not stored yet
// as it is.
func (ps *procState) closeOpen(limit int) {
	if ps.open && stored(ps.openIdx, limit) && (!ps.openInNode || ps.extended) {
		ps.segs = append(ps.segs, ps.openSeg)
		if ps.openInNode {
			ps.replaceLast = true // it extends the parent's last segment
		}
	}
	ps.open = false
}

// freeze returns the summary of the path reaching the process at t,
// making the pieces since the last one a node.
func (ps *procState) freeze(t int64, limit int) *node {
	if t > ps.t0 {
		ps.piece(ps.region, ps.t0, t, limit)
		ps.t0 = t
	}
	if !ps.dirty {
		return ps.parent
	}
	if ps.open && stored(ps.openIdx, limit) && (!ps.openInNode || ps.extended) {
		ps.segs = append(ps.segs, ps.openSeg)
		if ps.openInNode {
			ps.replaceLast = true
		}
	}
	p := ps.parent
	ch := p.chunk
	if ps.replaceLast {
		ch = dropLast(ch)
	}
	if len(ps.segs) > 0 {
		ch = &chunk{prev: ch, segs: ps.segs}
	}
	n := link(&node{parent: p, regions: slices.Clone(ps.regs), proc: ps.id, comp: ps.comp, comm: ps.comm,
		msgJ: ps.msgJ, collJ: ps.collJ, nseg: ps.nseg, chunk: ch})
	ps.parent = n
	ps.regs, ps.regIdx = ps.regs[:0], nil
	ps.comp, ps.comm, ps.msgJ, ps.collJ = 0, 0, 0, 0
	ps.segs, ps.replaceLast, ps.dirty = nil, false, false
	ps.openInNode, ps.extended = ps.open, false
	return n
}

// Merge implements engine.Accumulator: other must hold other runs.
func (a *Accumulator) Merge(o engine.Accumulator) error {
	b, ok := o.(*Accumulator)
	if !ok {
		return fmt.Errorf("critpath: merging a %T", o)
	}
	return a.runs.MergeWhole(&b.runs, "critpath")
}

// Result implements engine.Accumulator.
func (a *Accumulator) Result() (any, error) {
	if a.res == nil {
		a.res = &Result{Runs: engine.FinishRuns(&a.runs, a.finish)}
	}
	return a.res, nil
}

// name returns the name of region id.
func (a *Accumulator) name(id int32) string {
	switch id {
	case NoRegion:
		return "(none)"
	case CommRegion:
		return "(communication)"
	}
	if n := a.names[id]; n != "" {
		return n
	}
	return fmt.Sprintf("region %d", id)
}

// finish closes the regions left open, resolves what can be, computes
// the path to the end of the process that finishes last and sums it up.
func (a *Accumulator) finish(r *runState) RunPath {
	rp := RunPath{Run: r.run, EndProc: -1, Segments: []Segment{}, Regions: []RegionShare{}, Processes: []ProcShare{}}
	for _, ps := range r.procs {
		if len(ps.stack) > 0 {
			ps.closeAt = max(ps.last, ps.stack[len(ps.stack)-1].enter)
		}
	}
	for _, s := range r.probeNow {
		r.probe(s, true)
	}
	r.probeNow = nil
	for len(r.probes.a) > 0 {
		r.probe(r.probes.pop(), true)
	}
	for _, ps := range r.procs {
		r.settleProv(ps, true)
	}
	first := true
	for p, ps := range r.procs {
		if len(ps.stack) > 0 {
			// The regions closed at the end change the path only after
			// every point it can reach the process.
			r.closeTo(ps, 0, ps.closeAt, false)
		}
		if first || ps.first < rp.BeginNS {
			rp.BeginNS = ps.first
		}
		if first || ps.last > rp.EndNS || (ps.last == rp.EndNS && p < rp.EndProc) {
			rp.EndNS, rp.EndProc = ps.last, p
		}
		first = false
	}
	sends, recvs := r.match.Unmatched()
	r.unc.UnmatchedSends, r.unc.UnmatchedRecvs = int64(len(sends)), int64(len(recvs))
	r.unc.Incomplete = int64(r.colls.Open())
	rp.LengthNS = rp.EndNS - rp.BeginNS
	if rp.EndProc < 0 {
		rp.Uncomputed = r.unc
		return rp
	}
	end := &snapRef{want: true}
	r.events = append(r.events, event{t: rp.EndNS, ps: r.procs[rp.EndProc], ref: end})
	r.commit(math.MaxInt64)

	// Sum the path up.
	n := end.snap
	regions := map[int32]int64{}
	procs := map[int32]int64{}
	m := n
	for ; !m.root; m = m.parent {
		for _, g := range m.regions {
			regions[g.region] += g.ns
		}
		if m.comp > 0 {
			procs[m.proc] += m.comp
		}
		rp.ComputationNS += m.comp
		rp.CommunicationNS += m.comm
		rp.MessageJumps += m.msgJ
		rp.CollectiveJumps += m.collJ
	}
	for id, ns := range m.regionsMap {
		regions[id] += ns
	}
	for p, ns := range m.procsMap {
		procs[p] += ns
	}
	rp.ComputationNS += m.comp
	rp.CommunicationNS += m.comm
	rp.MessageJumps += m.msgJ
	rp.CollectiveJumps += m.collJ

	for id, ns := range regions {
		rp.Regions = append(rp.Regions, RegionShare{Region: id, Name: a.name(id), NS: ns, SharePct: pct(ns, rp.LengthNS)})
	}
	slices.SortFunc(rp.Regions, func(x, y RegionShare) int {
		return cmp.Or(cmp.Compare(y.NS, x.NS), cmp.Compare(x.Name, y.Name), cmp.Compare(x.Region, y.Region))
	})
	if a.p.Top > 0 && len(rp.Regions) > a.p.Top {
		rp.RegionsOmitted = len(rp.Regions) - a.p.Top
		rp.Regions = rp.Regions[:a.p.Top]
	}
	for id, ns := range procs {
		rp.Processes = append(rp.Processes, ProcShare{Proc: id, NS: ns, SharePct: pct(ns, rp.LengthNS)})
	}
	slices.SortFunc(rp.Processes, func(x, y ProcShare) int { return cmp.Compare(x.Proc, y.Proc) })
	var chunks []*chunk
	for c := n.chunk; c != nil; c = c.prev {
		chunks = append(chunks, c)
	}
	for i := len(chunks) - 1; i >= 0; i-- {
		for _, s := range chunks[i].segs {
			s.RegionName = a.name(s.Region)
			rp.Segments = append(rp.Segments, s)
		}
	}
	rp.SegmentsTotal = n.nseg
	rp.Uncomputed = r.unc
	return rp
}

// pct returns part as a percentage of whole (0 when whole is 0).
func pct(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
