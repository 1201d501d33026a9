package critpath

// This file keeps the analysis as it was before it computed the path
// forwards (it stored every region instance, message and collective and
// walked backwards at Result), as the reference the differential tests
// compare the implementation with.

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// refFrame is one region refInstance of a process.
type refFrame struct {
	region      int32
	parent      int32 // index of the enclosing refFrame, -1: none
	enter, exit int64
	mpi         bool
}

// refChange says that from t on the innermost open refFrame is refFrame (-1: none).
type refChange struct {
	t        int64
	refFrame int32
}

// refProcState is what is kept of one process.
type refProcState struct {
	frames  []refFrame
	stack   []int32
	changes []refChange
	first   int64
	last    int64
	seen    bool
}

// refSide is one refSide of a message, or one member's collective record.
type refSide struct {
	proc   int32
	t, end int64
}

// refCollKey identifies a collective operation: the seq-th on comm.
type refCollKey struct {
	comm int32
	seq  int64
}

// refInstance is a collective operation being collected.
type refInstance struct {
	op      trace.CollectiveOp
	root    int32
	members int
	sides   []refSide
}

// refRunState is the running state of one run.
type refRunState struct {
	run     int32
	procs   map[int32]*refProcState
	comms   *trace.Communicators
	match   trace.Matcher
	sides   map[int64]refSide
	nextID  int64
	pairs   [][2]refSide
	seq     map[[2]int32]int64
	colls   map[refCollKey]*refInstance
	done    []*refInstance
	unc     Uncomputed
	scratch trace.Record
}

// refAccumulator is the analysis' engine.Accumulator.
type refAccumulator struct {
	t     *engine.Trace
	p     *Params
	names map[int32]string
	mpi   map[int32]bool
	runs  engine.PerRun[*refRunState]
	res   *Result
}

// New returns an accumulator of the critical paths of the trace t.
func newRef(t *engine.Trace, p *Params) (*refAccumulator, error) {
	if p.Top < 0 || p.Segments < 0 {
		return nil, fmt.Errorf("top %d, segments %d: want 0 or more", p.Top, p.Segments)
	}
	a := &refAccumulator{t: t, p: p, names: map[int32]string{}, mpi: map[int32]bool{}}
	a.runs.New = a.newRun
	for _, r := range t.Header.Regions {
		n := r.Label
		if n == "" {
			n = r.Function
		}
		a.names[r.ID] = n
		a.mpi[r.ID] = r.IsMPI()
	}
	return a, nil
}

// newRun makes the state of a run on its first record.
func (a *refAccumulator) newRun(run int32) (*refRunState, error) {
	r := &refRunState{run: run, procs: map[int32]*refProcState{}, comms: trace.NewCommunicators(a.t.Header, a.t.Procs(run)),
		sides: map[int64]refSide{}, seq: map[[2]int32]int64{}, colls: map[refCollKey]*refInstance{}}
	r.match.OnMatch = func(s, rv *trace.Record) {
		r.pairs = append(r.pairs, [2]refSide{r.sides[s.Value], r.sides[rv.Value]})
		delete(r.sides, s.Value)
		delete(r.sides, rv.Value)
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
		ps = &refProcState{}
		r.procs[p] = ps
	}
	return ps
}

// Add implements engine.Accumulator.
func (a *refAccumulator) Add(batch []trace.Record) error {
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
			ps.frames = append(ps.frames, refFrame{region: rec.ID, parent: parent, enter: rec.T, exit: -1, mpi: a.mpi[rec.ID]})
			idx := int32(len(ps.frames) - 1)
			ps.stack = append(ps.stack, idx)
			ps.changes = append(ps.changes, refChange{rec.T, idx})
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
			r.sides[id] = refSide{proc: rec.Proc, t: rec.T, end: rec.EndTime()}
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
func (ps *refProcState) closeTo(j int, t int64) {
	for k := len(ps.stack) - 1; k >= j; k-- {
		ps.frames[ps.stack[k]].exit = t
	}
	ps.stack = ps.stack[:j]
	top := int32(-1)
	if j > 0 {
		top = ps.stack[j-1]
	}
	ps.changes = append(ps.changes, refChange{t, top})
}

// collective groups a collective record with the other members'.
func (r *refRunState) collective(rec *trace.Record) {
	if !r.comms.Known(rec.Comm) {
		r.unc.UnknownComm++
		return
	}
	members := r.comms.MembersOf(rec.Comm, rec.Proc)
	if len(members) == 0 || !slices.Contains(members, rec.Proc) {
		r.unc.UnknownComm++
		return
	}
	if len(members) == 1 {
		return
	}
	sk := [2]int32{rec.Comm, rec.Proc}
	k := refCollKey{rec.Comm, r.seq[sk]}
	r.seq[sk]++
	in := r.colls[k]
	if in == nil {
		in = &refInstance{op: trace.CollectiveOp(rec.ID), root: rec.Peer, members: len(members)}
		r.colls[k] = in
	}
	in.sides = append(in.sides, refSide{proc: rec.Proc, t: rec.T, end: rec.EndTime()})
	if len(in.sides) == in.members {
		delete(r.colls, k)
		r.done = append(r.done, in)
	}
}

// Merge implements engine.Accumulator: other must hold other runs.
func (a *refAccumulator) Merge(o engine.Accumulator) error {
	b, ok := o.(*refAccumulator)
	if !ok {
		return fmt.Errorf("critpath: merging a %T", o)
	}
	if a.res != nil || b.res != nil {
		return fmt.Errorf("critpath: Merge after Result")
	}
	return a.runs.MergeWhole(&b.runs, "critpath")
}

// Result implements engine.Accumulator.
func (a *refAccumulator) Result() (any, error) {
	if a.res != nil {
		return a.res, nil
	}
	res := &Result{Runs: []RunPath{}}
	for _, r := range a.runs.Values() {
		res.Runs = append(res.Runs, a.finish(r))
	}
	a.res = res
	return res, nil
}

// name returns the name of region id.
func (a *refAccumulator) name(id int32) string {
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

// frameAt returns the innermost refFrame open at t (strict: open just before
// t, so that a refFrame left at t still counts), or -1.
func (ps *refProcState) frameAt(t int64, strict bool) int32 {
	i := sort.Search(len(ps.changes), func(i int) bool {
		if strict {
			return ps.changes[i].t >= t
		}
		return ps.changes[i].t > t
	})
	if i == 0 {
		return -1
	}
	return ps.changes[i-1].refFrame
}

// mpiFrame returns the innermost MPI refFrame among f and its ancestors, or nil.
func (ps *refProcState) mpiFrame(f int32) *refFrame {
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
func (ps *refProcState) callSpan(t, end int64) (int64, int64) {
	if ps == nil {
		return t, end
	}
	if f := ps.mpiFrame(ps.frameAt(t, false)); f != nil {
		return f.enter, max(f.exit, end)
	}
	return t, end
}

// refDep is an incoming dependency of a process: at arrival it was released
// by src at srcT.
type refDep struct {
	arrival int64
	src     int32
	srcT    int64
	coll    bool
}

// finish closes the regions left open, finds the dependencies and walks
// the path.
func (a *refAccumulator) finish(r *refRunState) RunPath {
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
	r.unc.Incomplete = int64(len(r.colls))

	deps := map[int32][]refDep{}
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
			deps[rv.proc] = append(deps[rv.proc], refDep{arrival: arrival, src: s.proc, srcT: sendT})
		}
	}
	for _, in := range r.done {
		a.collDeps(r, in, deps)
	}
	for _, ds := range deps {
		slices.SortFunc(ds, func(x, y refDep) int {
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
		rp.Regions = append(rp.Regions, RegionShare{Region: id, Name: a.name(id), NS: n, SharePct: refPct(n, rp.LengthNS)})
	}
	slices.SortFunc(rp.Regions, func(x, y RegionShare) int {
		return cmp.Or(cmp.Compare(y.NS, x.NS), cmp.Compare(x.Name, y.Name), cmp.Compare(x.Region, y.Region))
	})
	if a.p.Top > 0 && len(rp.Regions) > a.p.Top {
		rp.RegionsOmitted = len(rp.Regions) - a.p.Top
		rp.Regions = rp.Regions[:a.p.Top]
	}
	for id, n := range procs {
		rp.Processes = append(rp.Processes, ProcShare{Proc: id, NS: n, SharePct: refPct(n, rp.LengthNS)})
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
func (a *refAccumulator) collDeps(r *refRunState, in *refInstance, deps map[int32][]refDep) {
	enter := make([]int64, len(in.sides))
	exit := make([]int64, len(in.sides))
	for i, s := range in.sides {
		enter[i], exit[i] = r.procs[s.proc].callSpan(s.t, s.end)
	}
	// add makes member i depend on member j when i entered first.
	add := func(i, j int) {
		if i != j && enter[i] < enter[j] && enter[j] <= exit[i] {
			p := in.sides[i].proc
			deps[p] = append(deps[p], refDep{arrival: exit[i], src: in.sides[j].proc, srcT: enter[j], coll: true})
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
func (a *refAccumulator) computation(segs []Segment, ps *refProcState, p int32, from, to int64) []Segment {
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
	var cuts []refChange
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
		emit(c.t, region(c.refFrame))
	}
	emit(to, reg)
	slices.Reverse(fwd)
	return append(segs, fwd...)
}

// refPct returns part as a percentage of whole (0 when whole is 0).
func refPct(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
