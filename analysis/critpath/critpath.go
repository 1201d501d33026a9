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
// The analysis is registered with package engine as "critpath";
// `parscope critpath` formats its Result. docs/critical-path.md has the
// definition and a timeline.
package critpath

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

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
}

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

// frame is one region instance of a process.
type frame struct {
	region      int32
	parent      int32 // index of the enclosing frame, -1: none
	enter, exit int64
	mpi         bool
}

// change says that from t on the innermost open frame is frame (-1: none).
type change struct {
	t     int64
	frame int32
}

// procState is what is kept of one process.
type procState struct {
	frames  []frame
	stack   []int32
	changes []change
	first   int64
	last    int64
	seen    bool
}

// side is one side of a message, or one member's collective record.
type side struct {
	proc   int32
	t, end int64
}

// instance is a collective operation being collected.
type instance struct {
	op    trace.CollectiveOp
	root  int32
	sides []side
}

// runState is the running state of one run.
type runState struct {
	run     int32
	procs   map[int32]*procState
	comms   *trace.Communicators
	match   trace.Matcher
	sides   map[int64]side
	nextID  int64
	pairs   [][2]side
	colls   trace.Gathering[instance]
	done    []*instance
	unc     Uncomputed
	scratch trace.Record
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
	r := &runState{run: run, procs: map[int32]*procState{}, comms: trace.NewCommunicators(a.t.Header, a.t.Procs(run)),
		sides: map[int64]side{}}
	r.match.OnMatch = func(s, rv *trace.Record) {
		r.pairs = append(r.pairs, [2]side{r.sides[s.Value], r.sides[rv.Value]})
		delete(r.sides, s.Value)
		delete(r.sides, rv.Value)
	}
	return r, nil
}

func (a *Accumulator) runOf(run int32) *runState {
	r, _ := a.runs.Of(run) // newRun does not fail
	return r
}

func (r *runState) proc(p int32) *procState {
	ps := r.procs[p]
	if ps == nil {
		ps = &procState{}
		r.procs[p] = ps
	}
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
		ps := r.proc(rec.Proc)
		if !ps.seen {
			ps.first, ps.seen = rec.T, true
		}
		ps.first = min(ps.first, rec.T)
		switch rec.Kind {
		case trace.KindEnter:
			parent := int32(-1)
			if n := len(ps.stack); n > 0 {
				parent = ps.stack[n-1]
			}
			ps.frames = append(ps.frames, frame{region: rec.ID, parent: parent, enter: rec.T, exit: -1, mpi: a.mpi[rec.ID]})
			idx := int32(len(ps.frames) - 1)
			ps.stack = append(ps.stack, idx)
			ps.changes = append(ps.changes, change{rec.T, idx})
		case trace.KindExit:
			j := len(ps.stack) - 1
			for j >= 0 && ps.frames[ps.stack[j]].region != rec.ID {
				j--
			}
			if j >= 0 {
				ps.closeTo(j, rec.T)
			}
		case trace.KindSend, trace.KindRecv:
			id := r.nextID
			r.nextID++
			r.sides[id] = side{proc: rec.Proc, t: rec.T, end: rec.EndTime()}
			r.scratch = *rec
			r.scratch.Value = id
			r.match.Add(&r.scratch)
		case trace.KindCollective:
			r.collective(rec)
		}
		ps.last = max(ps.last, rec.EndTime())
	}
	return nil
}

// closeTo closes the frames of the stack from depth j up at t.
func (ps *procState) closeTo(j int, t int64) {
	for k := len(ps.stack) - 1; k >= j; k-- {
		ps.frames[ps.stack[k]].exit = t
	}
	ps.stack = ps.stack[:j]
	top := int32(-1)
	if j > 0 {
		top = ps.stack[j-1]
	}
	ps.changes = append(ps.changes, change{t, top})
}

// collective groups a collective record with the other members'.
func (r *runState) collective(rec *trace.Record) {
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
	in.sides = append(in.sides, side{proc: rec.Proc, t: rec.T, end: rec.EndTime()})
	if complete {
		r.done = append(r.done, in)
	}
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

// frameAt returns the innermost frame open at t (strict: open just before
// t, so that a frame left at t still counts), or -1.
func (ps *procState) frameAt(t int64, strict bool) int32 {
	i := sort.Search(len(ps.changes), func(i int) bool {
		if strict {
			return ps.changes[i].t >= t
		}
		return ps.changes[i].t > t
	})
	if i == 0 {
		return -1
	}
	return ps.changes[i-1].frame
}

// mpiFrame returns the innermost MPI frame among f and its ancestors, or nil.
func (ps *procState) mpiFrame(f int32) *frame {
	for f >= 0 {
		if ps.frames[f].mpi {
			return &ps.frames[f]
		}
		f = ps.frames[f].parent
	}
	return nil
}

// callSpan returns the span of the MPI call a record of the process at t
// (completed at end) belongs to: the MPI region open at t, or the record's
// own span.
func (ps *procState) callSpan(t, end int64) (int64, int64) {
	if ps == nil {
		return t, end
	}
	if f := ps.mpiFrame(ps.frameAt(t, false)); f != nil {
		return f.enter, max(f.exit, end)
	}
	return t, end
}

// dep is an incoming dependency of a process: at arrival it was released
// by src at srcT.
type dep struct {
	arrival int64
	src     int32
	srcT    int64
	coll    bool
}

// finish closes the regions left open, finds the dependencies and walks
// the path.
func (a *Accumulator) finish(r *runState) RunPath {
	rp := RunPath{Run: r.run, EndProc: -1, Segments: []Segment{}, Regions: []RegionShare{}, Processes: []ProcShare{}}
	first := true
	for p, ps := range r.procs {
		if len(ps.stack) > 0 {
			ps.closeTo(0, max(ps.last, ps.frames[ps.stack[len(ps.stack)-1]].enter))
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

	deps := map[int32][]dep{}
	for _, pr := range r.pairs {
		s, rv := pr[0], pr[1]
		sendT, _ := r.procs[s.proc].callSpan(s.t, s.end)
		// The call that waited: the MPI region in which the receive
		// completed (its own, or MPI_Wait's), else the record.
		ps := r.procs[rv.proc]
		waitT, arrival := rv.t, rv.end
		f := ps.mpiFrame(ps.frameAt(rv.end, true))
		if f == nil {
			f = ps.mpiFrame(ps.frameAt(rv.end, false))
		}
		if f != nil {
			waitT, arrival = f.enter, max(f.exit, rv.end)
		}
		if sendT > waitT && sendT <= arrival {
			deps[rv.proc] = append(deps[rv.proc], dep{arrival: arrival, src: s.proc, srcT: sendT})
		}
	}
	for _, in := range r.done {
		a.collDeps(r, in, deps)
	}
	for _, ds := range deps {
		slices.SortFunc(ds, func(x, y dep) int {
			return cmp.Or(cmp.Compare(x.arrival, y.arrival), cmp.Compare(x.srcT, y.srcT), cmp.Compare(x.src, y.src))
		})
	}
	rp.LengthNS = rp.EndNS - rp.BeginNS
	if rp.EndProc < 0 {
		rp.Uncomputed = r.unc
		return rp
	}

	// Walk backwards.
	var segs []Segment
	p, t := rp.EndProc, rp.EndNS
	for {
		ds := deps[p]
		i := sort.Search(len(ds), func(i int) bool { return ds[i].arrival > t }) - 1
		for i >= 0 && (ds[i].srcT >= t || ds[i].srcT < rp.BeginNS) {
			i--
		}
		if i < 0 {
			segs = a.computation(segs, r.procs[p], p, rp.BeginNS, t)
			break
		}
		d := ds[i]
		segs = a.computation(segs, r.procs[p], p, d.arrival, t)
		if d.arrival > d.srcT {
			segs = append(segs, Segment{Proc: p, FromNS: d.srcT, ToNS: d.arrival, Kind: Communication,
				Region: CommRegion, RegionName: a.name(CommRegion), Peer: d.src})
		}
		if d.coll {
			rp.CollectiveJumps++
		} else {
			rp.MessageJumps++
		}
		p, t = d.src, d.srcT
	}
	slices.Reverse(segs)

	regions := map[int32]int64{}
	procs := map[int32]int64{}
	for _, s := range segs {
		n := s.ToNS - s.FromNS
		regions[s.Region] += n
		if s.Kind == Communication {
			rp.CommunicationNS += n
		} else {
			rp.ComputationNS += n
			procs[s.Proc] += n
		}
	}
	for id, n := range regions {
		rp.Regions = append(rp.Regions, RegionShare{Region: id, Name: a.name(id), NS: n, SharePct: pct(n, rp.LengthNS)})
	}
	slices.SortFunc(rp.Regions, func(x, y RegionShare) int {
		return cmp.Or(cmp.Compare(y.NS, x.NS), cmp.Compare(x.Name, y.Name), cmp.Compare(x.Region, y.Region))
	})
	if a.p.Top > 0 && len(rp.Regions) > a.p.Top {
		rp.RegionsOmitted = len(rp.Regions) - a.p.Top
		rp.Regions = rp.Regions[:a.p.Top]
	}
	for id, n := range procs {
		rp.Processes = append(rp.Processes, ProcShare{Proc: id, NS: n, SharePct: pct(n, rp.LengthNS)})
	}
	slices.SortFunc(rp.Processes, func(x, y ProcShare) int { return cmp.Compare(x.Proc, y.Proc) })
	rp.SegmentsTotal = len(segs)
	if a.p.Segments > 0 && len(segs) > a.p.Segments {
		segs = segs[:a.p.Segments]
	}
	rp.Segments = append(rp.Segments, segs...)
	rp.Uncomputed = r.unc
	return rp
}

// collDeps adds the dependencies of one complete collective operation.
func (a *Accumulator) collDeps(r *runState, in *instance, deps map[int32][]dep) {
	enter := make([]int64, len(in.sides))
	exit := make([]int64, len(in.sides))
	for i, s := range in.sides {
		enter[i], exit[i] = r.procs[s.proc].callSpan(s.t, s.end)
	}
	// add makes member i depend on member j when i entered first.
	add := func(i, j int) {
		if i != j && enter[i] < enter[j] && enter[j] <= exit[i] {
			p := in.sides[i].proc
			deps[p] = append(deps[p], dep{arrival: exit[i], src: in.sides[j].proc, srcT: enter[j], coll: true})
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
		if s.proc == in.root {
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

// computation appends (backwards) the segments of the process's
// computation over [from, to], one per innermost region.
func (a *Accumulator) computation(segs []Segment, ps *procState, p int32, from, to int64) []Segment {
	if to <= from {
		return segs
	}
	region := func(f int32) int32 {
		if f < 0 {
			return NoRegion
		}
		return ps.frames[f].region
	}
	// The changes within (from, to), and the region open at from.
	var cuts []change
	cur := int32(-1)
	if ps != nil {
		cur = ps.frameAt(from, false)
		i := sort.Search(len(ps.changes), func(i int) bool { return ps.changes[i].t > from })
		for ; i < len(ps.changes) && ps.changes[i].t < to; i++ {
			cuts = append(cuts, ps.changes[i])
		}
	}
	var fwd []Segment
	start, reg := from, region(cur)
	emit := func(end int64, next int32) {
		if end > start {
			if n := len(fwd); n > 0 && fwd[n-1].Region == reg && fwd[n-1].ToNS == start {
				fwd[n-1].ToNS = end
			} else {
				fwd = append(fwd, Segment{Proc: p, FromNS: start, ToNS: end, Kind: Computation, Region: reg, RegionName: a.name(reg), Peer: -1})
			}
			start = end
		}
		reg = next
	}
	for _, c := range cuts {
		emit(c.t, region(c.frame))
	}
	emit(to, reg)
	slices.Reverse(fwd)
	return append(segs, fwd...)
}

// pct returns part as a percentage of whole (0 when whole is 0).
func pct(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
