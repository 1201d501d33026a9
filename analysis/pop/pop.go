// Package pop computes the efficiency metrics of the POP Centre of
// Excellence (Performance Optimisation and Productivity) for each run of a
// trace: the load balance, the communication efficiency and their product,
// the parallel efficiency, and, when the trace holds its messages or
// collectives, their split into serialisation and transfer efficiency by a
// replay of the run on an ideal network.
//
// Useful time is the time a process spends outside MPI and the runtime:
// outside every region whose name matches Params.RuntimeRegions (by
// default the MPI and PMPI functions), or, on a trace without regions,
// outside the states whose name matches. docs/pop.md gives the formulas.
//
// The metrics are an analysis of package engine ("pop"): `parscope pop`
// and every other face format the one Result.
package pop

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the analysis' name in the engine's registry.
const Name = "pop"

// DefaultRuntimeRegions is the default of Params.RuntimeRegions: the MPI
// functions and their profiling interface.
const DefaultRuntimeRegions = `^P?MPI_`

// Params are the options of the pop analysis.
type Params struct {
	// RuntimeRegions is a regular expression: the regions (or states)
	// whose name it matches are MPI or runtime time, the rest is useful.
	RuntimeRegions string `json:"runtime_regions" flag:"runtime-regions" help:"regular expression naming the MPI/runtime regions (or states): time inside them is not useful computation"`
	// Of reads "regions", "states", or "" for regions when the trace has
	// region records, else states.
	Of string `json:"of,omitempty" flag:"of" help:"tell useful time by regions or by states (default: regions when the trace has them, else states)"`
	// WithoutInit counts each process's time from its exit of MPI_Init
	// (or MPI_Init_thread) to its entry into MPI_Finalize, as a POP
	// analysis of a whole run does; a process without them keeps its
	// whole time.
	WithoutInit bool `json:"without_init" flag:"without-init" help:"count each process's time from its exit of MPI_Init to its entry into MPI_Finalize"`
}

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{RuntimeRegions: DefaultRuntimeRegions} }

// Result holds the POP metrics of each run.
type Result struct {
	// Of is what told useful time from runtime time: "regions" or "states".
	Of string `json:"of"`
	// Runs holds one entry per run, in run order.
	Runs []Run `json:"runs"`
}

// Run is the POP metrics of one run.
type Run struct {
	Run int32 `json:"run"`
	// Procs is the number of processes that recorded a region (state).
	Procs int `json:"procs"`
	// RuntimeNS is T, the largest elapsed time of a process.
	RuntimeNS int64 `json:"runtime_ns"`
	// UsefulMeanNS and UsefulMaxNS are the mean and maximum of the
	// processes' useful times; UsefulMaxProc holds the maximum.
	UsefulMeanNS  float64 `json:"useful_mean_ns"`
	UsefulMaxNS   int64   `json:"useful_max_ns"`
	UsefulMaxProc int32   `json:"useful_max_proc"`
	// LoadBalance is UsefulMeanNS / UsefulMaxNS.
	LoadBalance float64 `json:"load_balance"`
	// CommunicationEfficiency is UsefulMaxNS / RuntimeNS.
	CommunicationEfficiency float64 `json:"communication_efficiency"`
	// ParallelEfficiency is LoadBalance × CommunicationEfficiency, which
	// is UsefulMeanNS / RuntimeNS.
	ParallelEfficiency float64 `json:"parallel_efficiency"`
	// Ideal is the replay on an ideal network, absent when the run has
	// no matched message and no collective to replay.
	Ideal *Ideal `json:"ideal,omitempty"`
	// RuntimeNames are the regions (states) counted as runtime time that
	// the run's processes entered, by name.
	RuntimeNames []string `json:"runtime_names"`
	// Processes are the figures of each process, in process order.
	Processes []Process `json:"processes"`
	// Problems counts what the records got wrong.
	Problems Problems `json:"problems"`
}

// Ideal is the replay of a run on an ideal network: MPI calls take no
// time and messages no time to travel, so a process waits only for a
// message not yet sent or for the last member of a collective.
type Ideal struct {
	// RuntimeNS is T_ideal, the replay's largest process time.
	RuntimeNS int64 `json:"runtime_ns"`
	// SerializationEfficiency is UsefulMaxNS / RuntimeNS (ideal).
	SerializationEfficiency float64 `json:"serialization_efficiency"`
	// TransferEfficiency is the ideal RuntimeNS over the run's.
	TransferEfficiency float64 `json:"transfer_efficiency"`
	// Messages counts the matched messages replayed; Collectives the
	// collective operations (instances) replayed as barriers.
	Messages    int64 `json:"messages"`
	Collectives int64 `json:"collectives"`
}

// Process is one process's figures.
type Process struct {
	Proc int32 `json:"proc"`
	// BeginNS and EndNS bound the time counted: from the process's first
	// region (state) record to its last record (with WithoutInit, from
	// its exit of MPI_Init to its entry into MPI_Finalize).
	BeginNS int64 `json:"begin_ns"`
	EndNS   int64 `json:"end_ns"`
	// ElapsedNS is EndNS − BeginNS; UsefulNS its part outside the
	// runtime regions and MPINS its part inside them.
	ElapsedNS int64 `json:"elapsed_ns"`
	UsefulNS  int64 `json:"useful_ns"`
	MPINS     int64 `json:"mpi_ns"`
	// UsefulShare is UsefulNS / ElapsedNS: the share of computation.
	UsefulShare float64 `json:"useful_share"`
	// IdealNS is the process's time in the ideal replay (absent without
	// a replay).
	IdealNS int64 `json:"ideal_ns,omitempty"`
}

// Problems counts what the records got wrong; nothing is dropped silently.
type Problems struct {
	// UnmatchedExits, MismatchedExits and Unclosed are repaired as the
	// profile repairs them (docs/profiles.md).
	UnmatchedExits  int64 `json:"unmatched_exits,omitempty"`
	MismatchedExits int64 `json:"mismatched_exits,omitempty"`
	Unclosed        int64 `json:"unclosed,omitempty"`
	// UnmatchedSends and UnmatchedRecvs are messages with one side only:
	// nobody waits for them in the replay.
	UnmatchedSends int64 `json:"unmatched_sends,omitempty"`
	UnmatchedRecvs int64 `json:"unmatched_recvs,omitempty"`
	// UnknownComm counts collective records on a communicator whose
	// members the trace does not give, OutsideComm those of a process
	// outside its communicator: not replayed as barriers.
	UnknownComm int64 `json:"unknown_comm,omitempty"`
	OutsideComm int64 `json:"outside_comm,omitempty"`
	// IncompleteCollectives counts collective instances some member never
	// reached; the others wait for those that did.
	IncompleteCollectives int64 `json:"incomplete_collectives,omitempty"`
	// ForcedWaits counts the waits the replay had to give up to go on (a
	// cycle of waits, which a consistent trace does not have, or an
	// incomplete collective).
	ForcedWaits int64 `json:"forced_waits,omitempty"`
	// CollectiveRegionsWithoutRecords counts visits of regions named as
	// collectives (MPI_Allreduce …) in a trace without collective
	// records: their synchronisation is missing from the replay.
	CollectiveRegionsWithoutRecords int64 `json:"collective_regions_without_records,omitempty"`
}

func init() {
	engine.Register(&engine.Analysis{
		Name:     Name,
		Recorded: true,
		Doc:      "POP efficiencies: load balance, communication, serialisation and transfer efficiency, parallel efficiency, useful time per process",
		Needs:    []trace.Kind{trace.KindEnter, trace.KindState},
		Feeds:    func(any) []trace.Kind { return trace.TimedKinds() },
		Options:  func() any { return DefaultParams() },
		New:      func(t *engine.Trace, o any) (engine.Accumulator, error) { return New(t, o.(*Params)) },
	})
}

// Accumulator is the pop analysis' engine.Accumulator.
type Accumulator struct {
	t       *engine.Trace
	of      string
	runtime map[int32]bool // region (state) ids that are runtime time
	names   map[int32]string
	collIDs map[int32]bool // regions named as collectives, without collective records
	initIDs map[int32]bool // with WithoutInit: MPI_Init and MPI_Init_thread
	finIDs  map[int32]bool // with WithoutInit: MPI_Finalize
	runs    engine.PerRun[*runAcc]
	res     *Result
}

// New returns an accumulator of the POP metrics of the trace t. It fails
// when no region (state) of the trace matches p.RuntimeRegions: useful
// time could not be told from the rest.
func New(t *engine.Trace, p *Params) (*Accumulator, error) {
	re, err := regexp.Compile(p.RuntimeRegions)
	if err != nil {
		return nil, fmt.Errorf("runtime-regions: %v", err)
	}
	of, err := engine.ResolveOf(t, p.Of)
	if err != nil {
		return nil, err
	}
	a := &Accumulator{t: t, of: of, runtime: map[int32]bool{}, names: map[int32]string{}, collIDs: map[int32]bool{},
		initIDs: map[int32]bool{}, finIDs: map[int32]bool{}}
	a.runs.New = a.newRun
	// mark notes, with WithoutInit, whether a region (state) of these
	// names is MPI_Init or MPI_Finalize.
	mark := func(id int32, names ...string) {
		for _, n := range names {
			if !p.WithoutInit || n == "" {
				continue
			}
			if initRE.MatchString(n) {
				a.initIDs[id] = true
			}
			if finalizeRE.MatchString(n) {
				a.finIDs[id] = true
			}
		}
	}
	if of == "regions" {
		noColl := t.Count(trace.KindCollective) == 0
		for _, r := range t.Header.Regions {
			name := r.Name()
			a.names[r.ID] = name
			mark(r.ID, r.Label, r.Function)
			if re.MatchString(r.Label) || (r.Function != "" && re.MatchString(r.Function)) {
				a.runtime[r.ID] = true
				if _, ok := trace.ParseCollectiveOp(name); ok && noColl {
					a.collIDs[r.ID] = true
				}
			}
		}
	} else {
		for _, s := range t.Header.States {
			name := s.Name
			if name == "" {
				name = s.Description
			}
			a.names[s.ID] = name
			mark(s.ID, s.Name, s.Description)
			if (s.Name != "" && re.MatchString(s.Name)) || (s.Description != "" && re.MatchString(s.Description)) {
				a.runtime[s.ID] = true
			}
		}
	}
	if len(a.runtime) == 0 {
		return nil, fmt.Errorf("no %s of the trace matches --runtime-regions %q, so useful time cannot be told from MPI or runtime time",
			map[string]string{"regions": "region", "states": "state"}[of], p.RuntimeRegions)
	}
	return a, nil
}

// initRE and finalizeRE name the regions Params.WithoutInit leaves out.
var (
	initRE     = regexp.MustCompile(`^P?MPI_Init(_thread)?$`)
	finalizeRE = regexp.MustCompile(`^P?MPI_Finalize$`)
)

// Point kinds of the replay.
const (
	ptSend    uint8 = iota // a send is posted: its message leaves
	ptRecv                 // a receive completes: it waits for its message
	ptCollIn               // a process reaches a collective
	ptCollOut              // it leaves the collective: it waits for every member
)

// point is one step of a process's replay.
type point struct {
	t     int64 // original time
	u     int64 // the process's useful time up to t
	order int32 // stream order, for ties
	kind  uint8
	id    int32 // message id, receive slot or collective instance
}

// pending is a completion whose useful time is known only once the
// process's records reach its time.
type pending struct {
	end int64
	pt  point
}

// frame is an open region: a runtime one (rt), MPI_Init or MPI_Finalize.
type frame struct {
	region        int32
	rt, init, fin bool
}

// procAcc is the running account of one process.
type procAcc struct {
	seen        bool
	first, last int64
	at          int64 // time up to which useful and MPI time are counted
	useful, mpi int64
	stack       []frame
	rtDepth     int // open runtime frames
	points      []point
	pending     []pending // by end time
	collK       map[int32]int32
	// With Params.WithoutInit: useful and MPI time at the exit of
	// MPI_Init (started), and the entry into MPI_Finalize (stopped at
	// stop), after which nothing is counted.
	base, mpiBase    int64
	started, stopped bool
	stop             int64
}

// clip bounds t by the entry into MPI_Finalize.
func (pa *procAcc) clip(t int64) int64 {
	if pa.stopped {
		return min(t, pa.stop)
	}
	return t
}

// inRuntime reports whether the process is in a runtime region (state).
func (pa *procAcc) inRuntime() bool { return pa.rtDepth > 0 }

// usefulAt returns the useful time up to t ≥ pa.at.
func (pa *procAcc) usefulAt(t int64) int64 {
	t = pa.clip(t)
	if !pa.seen || pa.inRuntime() || t <= pa.at {
		return pa.useful
	}
	return pa.useful + t - pa.at
}

// advance counts the time from pa.at to t.
func (pa *procAcc) advance(t int64) {
	t = pa.clip(t)
	if !pa.seen || t <= pa.at {
		return
	}
	if pa.inRuntime() {
		pa.mpi += t - pa.at
	} else {
		pa.useful += t - pa.at
	}
	pa.at = t
}

// settle turns the pending completions up to t into points.
func (pa *procAcc) settle(t int64) {
	n := 0
	for n < len(pa.pending) && pa.pending[n].end <= t {
		p := pa.pending[n].pt
		p.u = pa.usefulAt(p.t)
		pa.points = append(pa.points, p)
		n++
	}
	pa.pending = pa.pending[n:]
}

// push adds a point at the record's time, or a pending one at its end.
func (pa *procAcc) push(p point) {
	p.order = int32(len(pa.points) + len(pa.pending))
	if p.t <= pa.at {
		p.u = pa.usefulAt(p.t)
		pa.points = append(pa.points, p)
		return
	}
	i := sort.Search(len(pa.pending), func(i int) bool { return pa.pending[i].end > p.t })
	pa.pending = slices.Insert(pa.pending, i, pending{end: p.t, pt: p})
}

// open enters the region (state) of f at pa.at.
func (pa *procAcc) open(f frame) {
	pa.stack = append(pa.stack, f)
	if f.rt {
		pa.rtDepth++
	}
	if f.fin && !pa.stopped {
		pa.stopped, pa.stop = true, pa.at
	}
}

// pop leaves the innermost open region at pa.at.
func (pa *procAcc) pop() {
	f := pa.stack[len(pa.stack)-1]
	pa.stack = pa.stack[:len(pa.stack)-1]
	if f.rt {
		pa.rtDepth--
	}
	if f.init && !pa.started && !pa.stopped {
		pa.started = true
		pa.base, pa.mpiBase, pa.first = pa.useful, pa.mpi, pa.at
	}
}

// collInst is a collective instance: the k-th collective on a communicator.
type collInst struct {
	need    int // members
	arrived int
	maxIn   int64 // latest arrival in the replay
	waiters []int
}

// runAcc is the running account of one run.
type runAcc struct {
	run      int32
	procs    map[int32]*procAcc
	match    trace.Matcher
	tmp      trace.Record
	msgs     int32   // messages (send records) so far
	recvMsg  []int32 // receive slot → matched message, or −1
	colls    []*collInst
	collOf   map[[2]int32]int32 // (comm, k) → instance
	comms    *trace.Communicators
	visited  map[int32]bool
	problems Problems
}

// newRun makes the state of a run on its first record.
func (a *Accumulator) newRun(run int32) (*runAcc, error) {
	r := &runAcc{run: run, procs: map[int32]*procAcc{}, collOf: map[[2]int32]int32{},
		comms: trace.NewCommunicators(a.t.Header, a.t.Procs(run)), visited: map[int32]bool{}}
	r.match.OnMatch = func(s, rv *trace.Record) { r.recvMsg[rv.End] = int32(s.End) }
	return r, nil
}

func (a *Accumulator) runOf(run int32) *runAcc {
	r, _ := a.runs.Of(run) // newRun does not fail
	return r
}

func (r *runAcc) proc(p int32) *procAcc {
	pa := r.procs[p]
	if pa == nil {
		pa = &procAcc{collK: map[int32]int32{}}
		r.procs[p] = pa
	}
	return pa
}

// Add implements engine.Accumulator.
func (a *Accumulator) Add(batch []trace.Record) error {
	if a.res != nil {
		return fmt.Errorf("pop: Add after Result")
	}
	for i := range batch {
		rec := &batch[i]
		r := a.runOf(rec.Run)
		pa := r.proc(rec.Proc)
		pa.settle(rec.T)
		pa.advance(rec.T)
		switch rec.Kind {
		case trace.KindEnter, trace.KindExit:
			if a.of != "regions" {
				break
			}
			if !pa.seen {
				pa.seen, pa.first, pa.at = true, rec.T, rec.T
			}
			if rec.Kind == trace.KindEnter {
				rt := a.runtime[rec.ID]
				pa.open(frame{region: rec.ID, rt: rt, init: a.initIDs[rec.ID], fin: a.finIDs[rec.ID]})
				if rt {
					r.visited[rec.ID] = true
					if a.collIDs[rec.ID] {
						r.problems.CollectiveRegionsWithoutRecords++
					}
				}
				break
			}
			i := len(pa.stack) - 1
			for i >= 0 && pa.stack[i].region != rec.ID {
				i--
			}
			if i < 0 {
				r.problems.UnmatchedExits++
				break
			}
			if i != len(pa.stack)-1 {
				r.problems.MismatchedExits++
			}
			for len(pa.stack) > i {
				pa.pop()
			}
		case trace.KindState:
			if a.of != "states" {
				break
			}
			if !pa.seen {
				pa.seen, pa.first, pa.at = true, rec.T, rec.T
			}
			for len(pa.stack) > 0 {
				pa.pop()
			}
			rt := a.runtime[rec.ID]
			pa.open(frame{region: rec.ID, rt: rt, init: a.initIDs[rec.ID], fin: a.finIDs[rec.ID]})
			if rt {
				r.visited[rec.ID] = true
			}
		case trace.KindSend:
			id := r.msgs
			r.msgs++
			pa.push(point{t: rec.T, kind: ptSend, id: id})
			r.tmp = *rec
			r.tmp.End = int64(id)
			r.match.Add(&r.tmp)
		case trace.KindRecv:
			slot := int32(len(r.recvMsg))
			r.recvMsg = append(r.recvMsg, -1)
			pa.push(point{t: rec.EndTime(), kind: ptRecv, id: slot})
			r.tmp = *rec
			r.tmp.End = int64(slot)
			r.match.Add(&r.tmp)
		case trace.KindCollective:
			r.collective(pa, rec)
		}
		pa.last = max(pa.last, rec.EndTime())
	}
	return nil
}

// collective adds a process's part in a collective: its arrival at the
// record's time and its departure at the record's end.
func (r *runAcc) collective(pa *procAcc, rec *trace.Record) {
	mem, m := r.comms.Membership(rec.Comm, rec.Proc)
	switch m {
	case trace.UnknownMembers:
		r.problems.UnknownComm++
		return
	case trace.NoMembers, trace.NotMember:
		r.problems.OutsideComm++
		return
	case trace.Alone:
		return // nothing to wait for
	}
	k := pa.collK[rec.Comm]
	pa.collK[rec.Comm] = k + 1
	key := [2]int32{rec.Comm, k}
	id, ok := r.collOf[key]
	if !ok {
		id = int32(len(r.colls))
		r.colls = append(r.colls, &collInst{need: len(mem)})
		r.collOf[key] = id
	}
	pa.push(point{t: rec.T, kind: ptCollIn, id: id})
	pa.push(point{t: rec.EndTime(), kind: ptCollOut, id: id})
}

// Merge implements engine.Accumulator: other must hold other runs.
func (a *Accumulator) Merge(o engine.Accumulator) error {
	b, ok := o.(*Accumulator)
	if !ok {
		return fmt.Errorf("pop: merging a %T", o)
	}
	return a.runs.MergeWhole(&b.runs, "pop")
}

// Result implements engine.Accumulator.
func (a *Accumulator) Result() (any, error) {
	if a.res == nil {
		a.res = &Result{Of: a.of, Runs: engine.FinishRuns(&a.runs, a.finish)}
	}
	return a.res, nil
}

// ratio is x/y, or 0 when y is 0.
func ratio(x, y float64) float64 {
	if y == 0 {
		return 0
	}
	return x / y
}

// finish closes the processes' accounts and computes the run's metrics.
func (a *Accumulator) finish(r *runAcc) Run {
	out := Run{Run: r.run, RuntimeNames: []string{}, Processes: []Process{}}
	var procs []int32
	for p, pa := range r.procs {
		end := max(pa.last, pa.at)
		pa.settle(end)
		if !pa.seen {
			continue
		}
		pa.advance(end)
		if a.of == "regions" {
			r.problems.Unclosed += int64(len(pa.stack))
		}
		// Count from the exit of MPI_Init (with WithoutInit).
		pa.useful -= pa.base
		pa.mpi -= pa.mpiBase
		for i := range pa.points {
			pa.points[i].u = max(0, pa.points[i].u-pa.base)
		}
		procs = append(procs, p)
	}
	slices.Sort(procs)
	out.Procs = len(procs)
	var sum float64
	out.UsefulMaxProc = -1
	for _, p := range procs {
		pa := r.procs[p]
		end := pa.clip(max(pa.last, pa.at))
		el := end - pa.first
		out.RuntimeNS = max(out.RuntimeNS, el)
		sum += float64(pa.useful)
		if out.UsefulMaxProc < 0 || pa.useful > out.UsefulMaxNS {
			out.UsefulMaxNS, out.UsefulMaxProc = pa.useful, p
		}
		out.Processes = append(out.Processes, Process{Proc: p, BeginNS: pa.first, EndNS: end, ElapsedNS: el, UsefulNS: pa.useful, MPINS: pa.mpi,
			UsefulShare: ratio(float64(pa.useful), float64(el))})
	}
	if len(procs) > 0 {
		out.UsefulMeanNS = sum / float64(len(procs))
	}
	out.LoadBalance = ratio(out.UsefulMeanNS, float64(out.UsefulMaxNS))
	out.CommunicationEfficiency = ratio(float64(out.UsefulMaxNS), float64(out.RuntimeNS))
	out.ParallelEfficiency = ratio(out.UsefulMeanNS, float64(out.RuntimeNS))
	for id := range r.visited {
		out.RuntimeNames = append(out.RuntimeNames, a.name(id))
	}
	slices.Sort(out.RuntimeNames)
	out.RuntimeNames = slices.Compact(out.RuntimeNames)

	sends, recvs := r.match.Unmatched()
	r.problems.UnmatchedSends, r.problems.UnmatchedRecvs = int64(len(sends)), int64(len(recvs))
	var matched int64
	for _, m := range r.recvMsg {
		if m >= 0 {
			matched++
		}
	}
	if matched > 0 || len(r.colls) > 0 {
		ends := r.replay(procs)
		id := &Ideal{Messages: matched, Collectives: int64(len(r.colls))}
		for i := range procs {
			id.RuntimeNS = max(id.RuntimeNS, ends[i])
			out.Processes[i].IdealNS = ends[i]
		}
		id.SerializationEfficiency = ratio(float64(out.UsefulMaxNS), float64(id.RuntimeNS))
		id.TransferEfficiency = ratio(float64(id.RuntimeNS), float64(out.RuntimeNS))
		out.Ideal = id
	}
	out.Problems = r.problems
	return out
}

// name returns the name of region (state) id.
func (a *Accumulator) name(id int32) string {
	if n := a.names[id]; n != "" {
		return n
	}
	return fmt.Sprintf("%s %d", map[string]string{"regions": "region", "states": "state"}[a.of], id)
}

// replay replays the run on an ideal network and returns each process's
// time (procs order). Every process
// starts at 0 and keeps its order of points; between two points its clock
// advances by the useful time between them (MPI time takes none); a
// receive completes no earlier than its message's send was posted; a
// collective ends no earlier than its last member arrived.
func (r *runAcc) replay(procs []int32) []int64 {
	n := len(procs)
	pts := make([][]point, n)
	clock := make([]int64, n)
	next := make([]int, n)
	prevU := make([]int64, n)
	for i, p := range procs {
		ps := r.procs[p].points
		slices.SortStableFunc(ps, func(x, y point) int { return cmp.Or(cmp.Compare(x.t, y.t), cmp.Compare(x.order, y.order)) })
		pts[i] = ps
	}
	sent := make([]int64, r.msgs)
	isSent := make([]bool, r.msgs)
	msgWaiters := map[int32][]int{}
	ready := make([]int, 0, n)
	for i := range n {
		ready = append(ready, i)
	}
	blocked := make([]bool, n)
	// run advances process i until it blocks or ends.
	run := func(i int, force bool) {
		for next[i] < len(pts[i]) {
			pt := pts[i][next[i]]
			c := clock[i] + pt.u - prevU[i]
			switch pt.kind {
			case ptSend:
				sent[pt.id], isSent[pt.id] = c, true
				ready = append(ready, msgWaiters[pt.id]...)
				delete(msgWaiters, pt.id)
			case ptRecv:
				if m := r.recvMsg[pt.id]; m >= 0 {
					if !isSent[m] && !force {
						msgWaiters[m] = append(msgWaiters[m], i)
						blocked[i] = true
						return
					}
					if isSent[m] {
						c = max(c, sent[m])
					}
				}
			case ptCollIn:
				ci := r.colls[pt.id]
				ci.arrived++
				ci.maxIn = max(ci.maxIn, c)
				if ci.arrived == ci.need {
					ready = append(ready, ci.waiters...)
					ci.waiters = nil
				}
			case ptCollOut:
				ci := r.colls[pt.id]
				if ci.arrived < ci.need && !force {
					ci.waiters = append(ci.waiters, i)
					blocked[i] = true
					return
				}
				c = max(c, ci.maxIn)
			}
			force = false
			blocked[i] = false
			clock[i], prevU[i] = c, pt.u
			next[i]++
		}
		blocked[i] = false
	}
	for {
		for len(ready) > 0 {
			i := ready[len(ready)-1]
			ready = ready[:len(ready)-1]
			run(i, false)
		}
		stuck := -1
		for i := range n {
			if next[i] < len(pts[i]) {
				stuck = i
				break
			}
		}
		if stuck < 0 {
			break
		}
		// Every process left is waiting for one that never comes.
		r.problems.ForcedWaits++
		run(stuck, true)
	}
	for _, ci := range r.colls {
		if ci.arrived < ci.need {
			r.problems.IncompleteCollectives++
		}
	}
	ends := make([]int64, n)
	for i, p := range procs {
		ends[i] = clock[i] + r.procs[p].useful - prevU[i]
	}
	return ends
}
