// Package waitstate measures the wait states of MPI traces the way
// Scalasca's pattern catalogue defines them: Late Sender (and its part
// Late Sender, Wrong Order, reported as sub-patterns), Late Receiver, Wait
// at N×N, Wait at Barrier, Late Broadcast and Early Reduce, from the
// point-to-point messages (paired by trace.Matcher) and the collective
// records the trace holds. Each wait is charged to the MPI call that
// waited, on its process, and to its call site: the call's own region and
// the region it was called from. Messages received before they were sent
// (the clock condition violated) are counted; Params.ClockCorrection
// shifts each process's clock by a constant offset before measuring: a
// first pass over the records finds the offsets, a second measures
// (engine.Repeater).
//
// A call's time span is that of the innermost MPI region (a region whose
// name begins with MPI_ or PMPI_) open on the process when its record
// occurs, or left at that very instant, when the trace records MPI calls
// as regions (OTF2 from Score-P, DUMPI, Extrae's Paraver); in a trace
// without MPI regions, the record's own span, T to End. A record in no
// call the trace shows (outside the MPI regions of a trace that has them,
// a Paraver record, whose times are logical and physical times rather
// than a call's, a blocking record without completion time) and a
// non-blocking receive whose completing call (an MPI region containing
// its completion time) is not in the trace have no known wait: they are
// counted in Uncomputed instead of guessed.
//
// The analysis is registered with package engine as "waitstates";
// `parscope waitstates` formats its Result. docs/wait-states.md has the
// definitions and their timelines.
package waitstate

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the analysis' name in the engine's registry.
const Name = "waitstates"

// Pattern is a wait-state pattern.
type Pattern int

// The patterns, in the order of every result.
const (
	LateSender Pattern = iota
	LateReceiver
	WaitNxN
	WaitBarrier
	LateBroadcast
	EarlyReduce
	numPatterns
)

var patternNames = [numPatterns]string{"late_sender", "late_receiver", "wait_nxn", "wait_barrier", "late_broadcast", "early_reduce"}

// String returns the pattern's name in results: "late_sender", ….
func (p Pattern) String() string {
	if p >= 0 && p < numPatterns {
		return patternNames[p]
	}
	return fmt.Sprintf("pattern(%d)", int(p))
}

// Patterns lists every pattern in result order.
var Patterns = []Pattern{LateSender, LateReceiver, WaitNxN, WaitBarrier, LateBroadcast, EarlyReduce}

// SubPattern is a part of a pattern's time, as in Scalasca's metric tree:
// its time is already counted in its parent's, and reported apart
// (RunWaits.SubPatterns) so that the patterns still add up to the wait.
type SubPattern int

// The sub-patterns, in the order of every result.
const (
	// LateSenderWrongOrder is the part of Late Sender spent waiting for
	// a message while another message, sent earlier, could have been
	// received instead (Scalasca's "MPI Late Sender, wrong order").
	LateSenderWrongOrder SubPattern = iota
	// WrongOrderSameSource is the part of LateSenderWrongOrder where
	// the earlier-sent message came from the same sender.
	WrongOrderSameSource
	// WrongOrderDifferentSource is the part where it came from another
	// sender.
	WrongOrderDifferentSource
	numSubPatterns
)

var subPatternNames = [numSubPatterns]string{"late_sender_wrong_order", "late_sender_wrong_order_same_source", "late_sender_wrong_order_different_source"}
var subPatternParents = [numSubPatterns]string{"late_sender", "late_sender_wrong_order", "late_sender_wrong_order"}

// String returns the sub-pattern's name in results:
// "late_sender_wrong_order", ….
func (p SubPattern) String() string {
	if p >= 0 && p < numSubPatterns {
		return subPatternNames[p]
	}
	return fmt.Sprintf("subpattern(%d)", int(p))
}

// Parent returns the name of the pattern or sub-pattern whose time
// contains p's.
func (p SubPattern) Parent() string {
	if p >= 0 && p < numSubPatterns {
		return subPatternParents[p]
	}
	return ""
}

// SubPatterns lists every sub-pattern in result order.
var SubPatterns = []SubPattern{LateSenderWrongOrder, WrongOrderSameSource, WrongOrderDifferentSource}

// WrongOrderWindow is the number of a process's latest Late Sender waits
// a receive is compared with to find a wrong order (Scalasca's buffer of
// 100 Late Sender instances).
const WrongOrderWindow = 100

// Params are the options of the analysis.
type Params struct {
	// Top bounds the call sites listed per run (those of the largest
	// wait; 0 keeps all).
	Top int `json:"top" flag:"top" help:"keep the N call sites of the largest wait per run (0: all)"`
	// ClockCorrection shifts each process's clock by a constant offset,
	// estimated from the matched messages, before measuring: the least
	// non-negative offsets under which every message's receive completes
	// at least ClockMinLatency after its send (docs/wait-states.md).
	ClockCorrection bool `json:"clock_correction" flag:"clock-correction" help:"correct each process's clock by a constant offset, the least that makes every receive complete after its send (plus --clock-min-latency), before measuring"`
	// ClockMinLatency is the least time (ns) a message is assumed to
	// take, from its send to its receive's completion, by the correction.
	ClockMinLatency int64 `json:"clock_min_latency_ns" flag:"clock-min-latency" help:"with --clock-correction: the least latency (ns) a message is assumed to take"`
}

// DefaultTop is the default of Params.Top.
const DefaultTop = 30

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{Top: DefaultTop} }

// Result holds the wait states of each run.
type Result struct {
	Runs []RunWaits `json:"runs"`
}

// RunWaits are the wait states of one run.
type RunWaits struct {
	Run int32 `json:"run"`
	// MPINS is the time the processes spent in MPI calls: in their
	// outermost MPI regions, or, in a trace without MPI regions, the
	// spans of the message and collective records. Every wait is part
	// of it.
	MPINS int64 `json:"mpi_ns"`
	// WaitNS is the sum of the waits of every pattern.
	WaitNS int64 `json:"wait_ns"`
	// Patterns holds the total of each pattern, in Patterns order.
	Patterns []Amount `json:"patterns"`
	// ByProcess holds each process's MPI time and waits, by process.
	ByProcess []ProcWaits `json:"by_process"`
	// Sites holds the waits of each pattern by call site, largest first;
	// SitesOmitted counts those Params.Top left out.
	Sites        []Site `json:"sites"`
	SitesOmitted int    `json:"sites_omitted"`
	// Messages and Collectives count the matched messages and the
	// complete collective operations (every member's record) examined.
	Messages    int64 `json:"messages"`
	Collectives int64 `json:"collectives"`
	// Uncomputed counts what the trace does not let the analysis measure.
	Uncomputed Uncomputed `json:"uncomputed"`
	// SubPatterns holds the total of each sub-pattern, in SubPatterns
	// order; each is part of its parent's time, not added to WaitNS.
	SubPatterns []Amount `json:"sub_patterns"`
	// Clock holds the messages that violate the clock condition and the
	// correction applied, if asked for.
	Clock ClockCheck `json:"clock"`
}

// ClockCheck counts the matched messages whose receive completes before
// their send (the send record's time): the logical clock condition is
// violated, the processes' clocks disagree, and waits measured across
// them are wrong by the disagreement. Violations are counted on the
// trace's own times.
type ClockCheck struct {
	Violations int64 `json:"violations"`
	// MaxNS is the largest violation: send time − receive completion.
	MaxNS int64 `json:"max_ns"`
	// Pairs lists the violations by sender and receiver.
	Pairs []ClockPair `json:"pairs"`
	// Correction is the correction applied (Params.ClockCorrection), or
	// nil.
	Correction *ClockCorrection `json:"correction,omitempty"`
}

// ClockPair counts the violations of the messages from Sender to
// Receiver.
type ClockPair struct {
	Sender     int32 `json:"sender"`
	Receiver   int32 `json:"receiver"`
	Violations int64 `json:"violations"`
	MaxNS      int64 `json:"max_ns"`
}

// ClockCorrection is the constant offset correction of a run.
type ClockCorrection struct {
	// MinLatencyNS is Params.ClockMinLatency.
	MinLatencyNS int64 `json:"min_latency_ns"`
	// Applied is false when no constant offsets satisfy every message
	// (the messages' constraints form a cycle of positive weight: clock
	// drift, or a latency below MinLatencyNS both ways); the run is then
	// measured on its own times.
	Applied bool `json:"applied"`
	// Offsets lists the processes whose clock was shifted, and by how
	// much (ns, added to each of their times).
	Offsets []ProcOffset `json:"offsets"`
	// Violations counts the messages that still violate the clock
	// condition after the correction.
	Violations int64 `json:"violations"`
}

// ProcOffset is the offset added to one process's times.
type ProcOffset struct {
	Proc     int32 `json:"proc"`
	OffsetNS int64 `json:"offset_ns"`
}

// Amount is the wait time of a pattern and the number of calls that
// waited (a call waiting for more than zero time).
type Amount struct {
	Pattern string `json:"pattern"`
	// Parent names the pattern whose time contains a sub-pattern's
	// (empty for a pattern).
	Parent string `json:"parent,omitempty"`
	WaitNS int64  `json:"wait_ns"`
	Calls  int64  `json:"calls"`
}

// ProcWaits are the waits of one process.
type ProcWaits struct {
	Proc  int32 `json:"proc"`
	MPINS int64 `json:"mpi_ns"`
	// WaitNS sums Patterns.
	WaitNS   int64    `json:"wait_ns"`
	Patterns []Amount `json:"patterns"`
	// SubPatterns holds the process's sub-patterns, in SubPatterns
	// order.
	SubPatterns []Amount `json:"sub_patterns"`
}

// Site is the wait of one pattern at one call site: the MPI call (its
// region, or the record's kind or collective operation when the trace has
// no MPI regions) and the innermost region it was called from.
type Site struct {
	Pattern string `json:"pattern"`
	// CallRegion is the MPI region's id (NoRegion: none); Call its name.
	CallRegion int32  `json:"call_region"`
	Call       string `json:"call"`
	// Region is the calling region's id (NoRegion: outside every
	// region); RegionName its name.
	Region     int32  `json:"region"`
	RegionName string `json:"region_name"`
	WaitNS     int64  `json:"wait_ns"`
	Calls      int64  `json:"calls"`
}

// Uncomputed counts the records and operations whose waits the trace does
// not let the analysis measure; none is guessed.
type Uncomputed struct {
	// UnknownSpan counts message and collective records in no call the
	// trace shows: outside the MPI regions of a trace that has them, in a
	// Paraver trace without them, or without a start or completion time
	// (a blocking OTF2 receive's record holds only its completion).
	UnknownSpan int64 `json:"unknown_span"`
	// NoWaitCall counts non-blocking receives whose completing call (an
	// MPI region containing their completion time) is not in the trace:
	// their Late Sender time is not computed.
	NoWaitCall int64 `json:"no_wait_call"`
	// UnmatchedSends and UnmatchedRecvs are messages missing their other
	// side.
	UnmatchedSends int64 `json:"unmatched_sends"`
	UnmatchedRecvs int64 `json:"unmatched_recvs"`
	// UnknownComm counts collective records on a communicator whose
	// members the trace does not give.
	UnknownComm int64 `json:"unknown_comm"`
	// OutsideComm counts collective records of a process that is not a
	// member of the record's communicator.
	OutsideComm int64 `json:"outside_comm"`
	// Incomplete counts collective operations some member never recorded.
	Incomplete int64 `json:"incomplete"`
	// NoRoot counts rooted collective operations (bcast, scatter, reduce,
	// gather) whose root is not a member.
	NoRoot int64 `json:"no_root"`
	// OtherCollectives counts collective operations of no pattern here
	// (scan, exscan, unknown operations).
	OtherCollectives int64 `json:"other_collectives"`
}

// NoRegion is the region id of "no region".
const NoRegion int32 = -1

func init() {
	engine.Register(&engine.Analysis{
		Name:  Name,
		Doc:   "MPI wait states (Scalasca): late sender (and its wrong order part), late receiver, wait at N×N, wait at barrier, late broadcast, early reduce; per process and call site; clock condition violations",
		Needs: []trace.Kind{trace.KindSend, trace.KindRecv, trace.KindCollective},
		Feeds: func(any) []trace.Kind {
			return []trace.Kind{trace.KindEnter, trace.KindExit, trace.KindSend, trace.KindRecv, trace.KindCollective}
		},
		Options: func() any { return DefaultParams() },
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return New(t, o.(*Params)) },
	})
}

// call is one MPI call: its span, its site, and the wait charged to it.
type call struct {
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
	// unsettled counts the receives the call completes whose message was
	// not measured yet; entries and left count those measured, as entries
	// of the wrong order search, and those not replayed yet; longestEntry
	// is the entry of its longest Late Sender wait (the first in replay
	// order among equals), valid when entries > 0.
	unsettled, entries, left int
	longestEntry             recvEntry
}

func (c *call) dur() int64 { return max(c.exit-c.enter, 0) }

// frame is an open region of a process's stack.
type frame struct {
	region int32
	enter  int64
	mpi    bool
	c      *call // the call this MPI frame is, made when first needed
}

// side is one side of a message: the call that posted it and, for a
// receive, the call that waited for it (the same call when blocking).
type side struct {
	post, wait *call
	// own is the sideCall the side and its post call are, for a message
	// outside every MPI region (nil otherwise).
	own *sideCall
	// end is a non-blocking receive's completion time; pending while its
	// completing call is looked for.
	end int64
	// t is the side's record's time (a send's send time), seq its order
	// of arrival; fin is a receive's completion time, when finOK.
	t   int64
	seq int64
	fin int64
	// open is the side's index in its process's heap of receives not yet
	// measured (openRecvs), -1 when not in it.
	open int
	// proc is the side's process.
	proc     int32
	blocking bool
	noWait   bool
	recv     bool
	finOK    bool
}

// recvEntry is a receive, as the wrong order search replays them on the
// receiving process: in the order of their completion.
type recvEntry struct {
	fin, seq int64
	// sendT is the matched send's time, src its process.
	sendT int64
	src   int32
	// idle is the receive's Late Sender wait (0: none), charged to c.
	idle int64
	c    *call
}

// pair is a matched message.
type pair struct{ send, recv *side }

// instance is a collective operation being collected.
type instance struct {
	op    trace.CollectiveOp
	root  int32
	procs []int32
	calls []*call
}

// procState is the running state of one process.
type procState struct {
	proc  int32
	stack []frame
	// left is the MPI frame the process left last, at leftExit, with
	// the region it was called from; leftOK while no region was entered
	// since. A record stamped at the instant its call returns (Extrae's
	// logical times) belongs to it.
	left       frame
	leftExit   int64
	leftCaller int32
	leftOK     bool
	// pending are the non-blocking receives whose completing call is
	// looked for.
	pending []*side
	last    int64
	mpiNS   int64
	waits   [numPatterns]Amount
	sub     [numSubPatterns]Amount
	// recvs are the process's measured receives not yet replayed by the
	// wrong order search, a heap in replay order; open are its receives
	// not yet measured (a heap by completion time); buf is the search's
	// buffer of the latest Late Sender waits (see wrongOrder).
	recvs entryHeap
	open  sideHeap
	buf   []recvEntry
}

type siteKey struct {
	p              Pattern
	region, caller int32
	label          string
}

// runState is the running state of one run.
type runState struct {
	run   int32
	procs map[int32]*procState
	cache trace.ProcCache[procState]
	comms *trace.Communicators
	match trace.Matcher
	// sides holds the sides waiting in match, by the id their record
	// carries; nextID numbers the sides in order of arrival.
	sides  trace.Slots[*side]
	nextID int64
	// spare are sideCalls of measured sends, for reuse.
	spare   []*sideCall
	pairs   []pair
	colls   trace.Gathering[instance]
	ready   []*instance
	sites   map[siteKey]*Amount
	msgs    int64
	ncolls  int64
	unc     Uncomputed
	scratch trace.Record
	// clock counts the clock condition violations, by pair in
	// clockPairs; corrected is set in the pass that measures on the
	// corrected clocks (the violations were counted, on the trace's own
	// times, in the pass before).
	clock      ClockCheck
	clockPairs map[[2]int32]*ClockPair
	corrected  bool
	// bounds holds, in the clock correction's first pass, the tightest
	// constraint of each ordered pair of processes (see bound); cc is the
	// correction found, off its offsets (nil: none applied), in the pass
	// that measures.
	bounds map[[2]int32]int64
	cc     *ClockCorrection
	off    map[int32]int64
	// now is the time of the latest record: every later record of the
	// run is at now or after.
	now int64
}

// Accumulator is the analysis' engine.Accumulator. With
// Params.ClockCorrection it is an engine.Repeater: a first pass matches
// the messages and keeps, per run, the violations and the tightest
// constraint of each ordered pair of processes; Again computes the
// offsets; a second pass measures the waits on the corrected clocks as a
// pass without the correction does, while reading. Either way its memory
// grows with the regions, processes and what is in flight, not with the
// records.
type Accumulator struct {
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
	runs  engine.PerRun[*runState]
	res   *Result
	// estimating is true in the clock correction's first pass; clocks
	// hold, after it, what each run of the second pass starts with.
	estimating bool
	clocks     map[int32]*runClock
}

// runClock is what the clock correction's first pass hands a run of the
// second: the violations counted on the trace's own times, by pair, and
// the correction found, with its offsets (nil: none applied).
type runClock struct {
	check ClockCheck
	pairs map[[2]int32]*ClockPair
	cc    *ClockCorrection
	off   map[int32]int64
}

// New returns an accumulator of the wait states of the trace t.
func New(t *engine.Trace, p *Params) (*Accumulator, error) {
	if p.Top < 0 {
		return nil, fmt.Errorf("top %d: want 0 or more", p.Top)
	}
	if p.ClockMinLatency < 0 {
		return nil, fmt.Errorf("clock min latency %d: want 0 or more", p.ClockMinLatency)
	}
	a := &Accumulator{t: t, p: p, names: map[int32]string{}, mpi: map[int32]bool{}, nonBlocking: map[int32]bool{}, estimating: p.ClockCorrection}
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

// recordSpans reports whether the message and collective records of a
// trace outside every MPI region may stand for their calls: their T is
// the call's start and End its completion, as the record kinds define
// them. Not when the trace has MPI regions (the calls are those; a record
// outside them is not in a call the trace shows), nor for Paraver, whose
// communication records hold the logical and physical send and receive
// times of Extrae, not the calls' spans (a receive's logical time is its
// MPI_Irecv's, its physical time the message's arrival).
func recordSpans(h *trace.Header, mpiRegions bool) bool {
	return !mpiRegions && h.Meta.Source != "prv"
}

// isNonBlocking reports whether the MPI call named name posts a
// non-blocking message: MPI_Isend, MPI_Ibsend, MPI_Issend, MPI_Irsend,
// MPI_Irecv, MPI_Imrecv (PMPI_ and Fortran names too).
func isNonBlocking(name string) bool {
	u := strings.TrimSuffix(strings.ToUpper(name), "_")
	u = strings.TrimPrefix(strings.TrimPrefix(u, "P"), "MPI_")
	switch u {
	case "ISEND", "IBSEND", "ISSEND", "IRSEND", "IRECV", "IMRECV":
		return true
	}
	return false
}

// newRun makes the state of a run on its first record. In the clock
// correction's second pass the run starts with the clock check and the
// correction of the first.
func (a *Accumulator) newRun(run int32) (*runState, error) {
	r := &runState{run: run, procs: map[int32]*procState{}, cache: trace.NewProcCache[procState](a.t.Procs(run)),
		comms: trace.NewCommunicators(a.t.Header, a.t.Procs(run)), sites: map[siteKey]*Amount{},
		clockPairs: map[[2]int32]*ClockPair{}}
	switch {
	case a.estimating:
		r.bounds = map[[2]int32]int64{}
	case a.p.ClockCorrection:
		k, ok := a.clocks[run]
		if !ok {
			return nil, fmt.Errorf("waitstates: run %d was not in the first pass: the records changed between the passes", run)
		}
		r.clock, r.clockPairs, r.cc, r.off, r.corrected = k.check, k.pairs, k.cc, k.off, true
	}
	r.match.OnMatch = func(s, rv *trace.Record) {
		ss, rs := r.sides.Take(s.Value), r.sides.Take(rv.Value)
		if a.estimating {
			r.bound(ss, rs, a.p.ClockMinLatency)
			return
		}
		r.pairs = append(r.pairs, pair{ss, rs})
	}
	return r, nil
}

func (r *runState) proc(p int32) *procState {
	if ps := r.cache.Get(p); ps != nil {
		return ps
	}
	ps := r.procs[p]
	if ps == nil {
		ps = &procState{proc: p}
		r.procs[p] = ps
	}
	r.cache.Put(p, ps)
	return ps
}

// Add implements engine.Accumulator.
func (a *Accumulator) Add(batch []trace.Record) error {
	if a.res != nil {
		return fmt.Errorf("waitstates: Add after Result")
	}
	for i := range batch {
		rec := &batch[i]
		r, err := a.runs.Of(rec.Run)
		if err != nil {
			return err
		}
		r.now = max(r.now, rec.T)
		ps := r.proc(rec.Proc)
		switch rec.Kind {
		case trace.KindEnter:
			ps.stack = append(ps.stack, frame{region: rec.ID, enter: rec.T, mpi: a.mpi[rec.ID]})
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
			if a.estimating {
				a.estimate(r, ps, rec)
			} else {
				a.message(r, ps, rec)
			}
		case trace.KindCollective:
			if !a.estimating {
				a.collective(r, ps, rec)
			}
		}
		ps.last = max(ps.last, rec.EndTime())
	}
	if a.estimating {
		return nil
	}
	a.runs.Each(func(r *runState) {
		if replayEarly {
			r.staleWaits()
		}
		r.settle(false)
		if replayEarly {
			r.release()
		}
	})
	return nil
}

// Again implements engine.Repeater: after the clock correction's first
// pass it computes each run's offsets and asks for the pass that
// measures; otherwise (and after that pass) it is done.
func (a *Accumulator) Again() (bool, error) {
	if !a.estimating {
		return false, nil
	}
	a.estimating = false
	a.clocks = map[int32]*runClock{}
	for _, r := range a.runs.Values() {
		k := &runClock{check: r.clock, pairs: r.clockPairs}
		k.cc, k.off = r.correction(a.p.ClockMinLatency)
		a.clocks[r.run] = k
	}
	a.runs = engine.PerRun[*runState]{New: a.newRun}
	return len(a.clocks) > 0, nil
}

// pop closes the process's innermost region at t: its call ends, and the
// non-blocking receives completed inside it find their waiting call.
func (r *runState) pop(ps *procState, t int64) {
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
				s.setWait(frameCall(ps, &f, n))
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

// frameCall returns the call of the MPI frame f, at depth d of the stack.
func frameCall(ps *procState, f *frame, d int) *call {
	if f.c == nil {
		caller := NoRegion
		for j := d - 1; j >= 0; j-- {
			if !ps.stack[j].mpi {
				caller = ps.stack[j].region
				break
			}
		}
		f.c = &call{proc: ps.proc, enter: f.enter, region: f.region, caller: caller}
	}
	return f.c
}

// callAt returns the call a record at t (now) on the process belongs to:
// the innermost open MPI region's, or the MPI region the process left at
// t (no region entered since), or nil outside every MPI region.
func callAt(ps *procState, t int64) *call {
	for j := len(ps.stack) - 1; j >= 0; j-- {
		if ps.stack[j].mpi {
			return frameCall(ps, &ps.stack[j], j)
		}
	}
	if ps.leftOK && ps.leftExit == t {
		if ps.left.c == nil {
			ps.left.c = &call{proc: ps.proc, enter: ps.left.enter, exit: t, region: ps.left.region, caller: ps.leftCaller, done: true}
		}
		return ps.left.c
	}
	return nil
}

// mpiRegion returns the MPI region of the call a record at t (now) on the
// process belongs to, as callAt finds it, without making the call; false
// outside every MPI region.
func mpiRegion(ps *procState, t int64) (int32, bool) {
	for j := len(ps.stack) - 1; j >= 0; j-- {
		if ps.stack[j].mpi {
			return ps.stack[j].region, true
		}
	}
	if ps.leftOK && ps.leftExit == t {
		return ps.left.region, true
	}
	return NoRegion, false
}

// spanKnown reports whether the span of the record rec is known: its End
// is set, and not before its time.
func spanKnown(rec *trace.Record) bool {
	return rec.End >= rec.T && (rec.End != 0 || rec.T == 0)
}

// spanCall returns the call of a record outside every MPI region, spanning
// the record, or nil when its span is not known.
func spanCall(ps *procState, rec *trace.Record, label string) *call {
	if !spanKnown(rec) {
		return nil
	}
	c := new(call)
	outsideCall(c, ps, rec, rec.End, label)
	return c
}

// outsideCall makes c the call, from the time of the record rec to exit,
// of a record outside every MPI region, counted in its process's MPI time.
func outsideCall(c *call, ps *procState, rec *trace.Record, exit int64, label string) {
	caller := NoRegion
	if n := len(ps.stack); n > 0 {
		caller = ps.stack[n-1].region
	}
	ps.mpiNS += exit - rec.T
	*c = call{proc: rec.Proc, enter: rec.T, exit: exit, region: NoRegion, caller: caller, label: label, done: true}
}

// sideCall is a message's side and the call it is posted in, allocated
// together when the call is the message's own (outside every MPI region).
type sideCall struct {
	s side
	c call
}

// maxSpare bounds the sideCalls a run keeps for reuse (320 KB): about
// the sends measured after one batch of the engine's.
const maxSpare = 1024

// sideCall returns a sideCall for the caller to fill whole (side and
// call), one of the run's spares if it has any: reused memory is in the
// cache, where a new one is not (allocating and first touching them was
// a third of the analysis' time).
func (r *runState) sideCall() *sideCall {
	n := len(r.spare)
	if n == 0 {
		return new(sideCall)
	}
	sc := r.spare[n-1]
	r.spare[n-1] = nil
	r.spare = r.spare[:n-1]
	return sc
}

// message feeds a send or receive record.
func (a *Accumulator) message(r *runState, ps *procState, rec *trace.Record) {
	recv, blocking := rec.Kind == trace.KindRecv, rec.Seq == trace.NoRequest
	label := "(send)"
	if recv {
		label = "(receive)"
	}
	var s *side
	var own *sideCall
	c := callAt(ps, rec.T)
	switch {
	case c != nil:
		// A message posted in MPI_Isend or MPI_Irecv is non-blocking
		// whatever its record says (Paraver's say nothing).
		blocking = blocking && !a.nonBlocking[c.region]
		s = new(side)
	case !a.spans, blocking && !spanKnown(rec):
		s = new(side)
	default:
		// The message's own call: spanning a blocking message's record;
		// at the record's time for a non-blocking one (its post).
		exit := rec.T
		if blocking {
			exit = rec.End
		}
		own = r.sideCall()
		s, c = &own.s, &own.c
		outsideCall(c, ps, rec, exit, label)
	}
	*s = side{own: own, recv: recv, blocking: blocking, proc: rec.Proc, t: rec.T, seq: r.nextID, open: -1}
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
		if !spanKnown(rec) {
			s.noWait = true
		} else {
			s.end = rec.End
			ps.pending = append(ps.pending, s)
		}
	}
	if s.recv {
		s.fin, s.finOK = completion(rec, s.blocking)
	}
	if s.recv && s.finOK {
		heap.Push(&ps.open, s)
	}
	r.post(s, rec)
}

// completion returns when the receive rec completes, blocking or not,
// and false when its record does not say (a non-blocking receive without
// its End).
func completion(rec *trace.Record, blocking bool) (int64, bool) {
	switch {
	case blocking:
		// A blocking receive's record spans its call, or is stamped at
		// its completion (OTF2's, without End).
		return rec.EndTime(), true
	case !spanKnown(rec):
		return 0, false
	}
	return rec.End, true
}

// post hands the side s of the message rec to the matcher.
func (r *runState) post(s *side, rec *trace.Record) {
	r.nextID++
	r.scratch = *rec
	r.scratch.Value = r.sides.Put(s)
	r.match.Add(&r.scratch)
}

// estimate feeds a send or receive record in the clock correction's
// first pass: what bound needs of it, its process, its time and a
// receive's completion, is kept until it is matched.
func (a *Accumulator) estimate(r *runState, ps *procState, rec *trace.Record) {
	s := &side{recv: rec.Kind == trace.KindRecv, proc: rec.Proc, t: rec.T, open: -1}
	if s.recv {
		blocking := rec.Seq == trace.NoRequest
		if region, ok := mpiRegion(ps, rec.T); ok {
			blocking = blocking && !a.nonBlocking[region]
		}
		s.fin, s.finOK = completion(rec, blocking)
	}
	r.post(s, rec)
}

// collective feeds a collective record.
func (a *Accumulator) collective(r *runState, ps *procState, rec *trace.Record) {
	op := trace.CollectiveOp(rec.ID)
	c := callAt(ps, rec.T)
	if c == nil && a.spans {
		c = spanCall(ps, rec, op.String()) // in the MPI time in any case
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
		*in = instance{op: op, root: rec.Peer}
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
func (r *runState) settle(final bool) {
	keep := r.pairs[:0]
	for _, p := range r.pairs {
		if !final && !(p.send.ready() && p.recv.ready()) {
			keep = append(keep, p)
			continue
		}
		r.message(p)
		// A send outside every MPI region is referred to by nothing
		// once measured: its own call took its Late Receiver wait, the
		// one wait it can be charged. (A receive's call stays referred
		// to by its replay entry.)
		if sc := p.send.own; sc != nil && len(r.spare) < maxSpare {
			r.spare = append(r.spare, sc)
		}
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

// ready reports whether the side's calls are known and ended (or known
// never to be).
func (s *side) ready() bool {
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
func (r *runState) charge(c *call, p Pattern, w int64) {
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
		k := siteKey{p: q, region: c.region, caller: c.caller, label: c.label}
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

// message computes the Late Sender and Late Receiver waits of a pair.
func (r *runState) message(p pair) {
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
		late := r.at(s.proc, s.enter) - r.at(w.proc, w.enter)
		idle = max(min(late, w.dur()), 0)
		r.charge(w, LateSender, late)
	}
	if rcv.wait != nil {
		rcv.wait.unsettled--
	}
	if rcv.finOK {
		rp := r.proc(rcv.proc)
		if rcv.open >= 0 {
			heap.Remove(&rp.open, rcv.open)
		}
		// The replay order is that of the receives of one process: on
		// its own clock, which the correction shifts as a whole.
		e := recvEntry{fin: rcv.fin, seq: rcv.seq, sendT: r.at(snd.proc, snd.t), src: snd.proc, idle: idle, c: rcv.wait}
		if c := e.c; c != nil {
			c.entries++
			c.left++
			if c.entries == 1 || e.idle > c.longestEntry.idle || (e.idle == c.longestEntry.idle && e.before(c.longestEntry)) {
				c.longestEntry = e
			}
		}
		rp.recvs.push(e)
		switch {
		case !r.corrected:
			r.checkClock(snd, rcv)
		case r.cc.Applied && r.at(snd.proc, snd.t)-r.at(rcv.proc, rcv.fin) > 0:
			r.cc.Violations++
		}
	}
	if s, rp := snd.post, rcv.post; snd.blocking && s != nil && rp != nil && s.done && rp.done {
		r.charge(s, LateReceiver, r.at(rp.proc, rp.enter)-r.at(s.proc, s.enter))
	}
}

// checkClock counts the message snd → rcv if its receive completes
// before it was sent.
func (r *runState) checkClock(snd, rcv *side) {
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

// bound counts the message snd → rcv if it violates the clock condition
// and tightens the constraint its processes' offsets must meet, in the
// clock correction's first pass: o[receiver] − o[sender] ≥ send time −
// receive completion + minLat, of which only the largest right-hand side
// of each ordered pair of processes matters. A message without its
// completion time, or that a process sent itself, constrains nothing.
func (r *runState) bound(snd, rcv *side, minLat int64) {
	r.checkClock(snd, rcv)
	if !rcv.finOK || snd.proc == rcv.proc {
		return
	}
	w := snd.t - rcv.fin + minLat
	k := [2]int32{snd.proc, rcv.proc}
	if old, ok := r.bounds[k]; !ok || w > old {
		r.bounds[k] = w
	}
}

// correction estimates each process's offset from the constraints the
// first pass kept (bound): the least non-negative offsets meeting every
// one, the longest paths of that system of difference constraints
// (Bellman-Ford from a source joined to every process by an edge of
// weight 0). A positive cycle means no constant offsets satisfy every
// message: nothing is shifted (Applied false, off nil). off is nil too
// when no process is moved.
func (r *runState) correction(minLat int64) (*ClockCorrection, map[int32]int64) {
	cc := &ClockCorrection{MinLatencyNS: minLat, Offsets: []ProcOffset{}}
	type edge struct {
		from, to int32
		w        int64
	}
	es := make([]edge, 0, len(r.bounds))
	nodes := map[int32]bool{}
	for k, w := range r.bounds {
		es = append(es, edge{k[0], k[1], w})
		nodes[k[0]], nodes[k[1]] = true, true
	}
	r.bounds = nil
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
		return cc, nil // a positive cycle: no offsets satisfy every message
	}
	cc.Applied = true
	for p, o := range off {
		if o != 0 {
			cc.Offsets = append(cc.Offsets, ProcOffset{Proc: p, OffsetNS: o})
		}
	}
	if len(cc.Offsets) == 0 {
		return cc, nil
	}
	slices.SortFunc(cc.Offsets, func(x, y ProcOffset) int { return cmp.Compare(x.Proc, y.Proc) })
	return cc, off
}

// at returns the time t of process p on the corrected clocks: t plus the
// process's offset, t itself without a correction applied. Every wait
// compares times of two processes through it; times of one process are
// compared as they are, the offset being the same.
func (r *runState) at(p int32, t int64) int64 {
	if r.off == nil {
		return t
	}
	return t + r.off[p]
}

// The wrong order search finds the Late Sender waits of a process that
// are in wrong order, as Scalasca's MPI Late Sender, wrong order pattern
// does: the process's receives are replayed in the order they completed;
// each Late Sender wait joins a buffer of the latest WrongOrderWindow;
// each receive takes out of the buffer every wait whose message was sent
// later than its own: that wait was for a message sent after one the
// process could have received instead. A call completing one receive has
// its wait join before its receive is compared (it cannot match itself);
// a call completing several (an MPI_Waitall) has one Late Sender wait,
// that of its latest sender, which joins after the last of its receives
// was compared, as SCOUT notifies it when the call is left. A wait's time
// is charged as wrong order to the call that waited (at most the Late
// Sender time charged to that call, once per call, the way charge does),
// same source when both messages came from the same sender.
//
// The replay runs while the trace is read (release), so that its memory
// is the receives whose place in the order is not known yet, not every
// receive of the run: a measured receive is replayed once no receive of
// its process can still complete before it (every receive not measured
// yet completes later, and so does every receive of a later record), and
// once its call's receives are all measured and the call has ended. A
// receive that is never matched holds back the ones after it until the
// run ends. With the clock correction the same holds of its second pass:
// a process's replay order is that of its own clock, which its offset
// shifts as a whole.

// replayEarly makes the wrong order search replay receives while the trace
// is read; the tests turn it off to compare with replaying them all at the
// end, as the search is defined.
var replayEarly = true

// before reports whether e comes before o in the replay order.
func (e recvEntry) before(o recvEntry) bool {
	return cmp.Or(cmp.Compare(e.fin, o.fin), cmp.Compare(e.seq, o.seq)) < 0
}

// entryHeap is a min-heap of receives in replay order. Its push and pop
// take and give a recvEntry itself: container/heap's would box each one
// in an interface, two allocations a message.
type entryHeap []recvEntry

// push adds e to the heap.
func (h *entryHeap) push(e recvEntry) {
	a := append(*h, e)
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a[i].before(a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
	*h = a
}

// pop removes and returns the first receive in replay order.
func (h *entryHeap) pop() recvEntry {
	a := *h
	e := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a[n] = recvEntry{}
	a = a[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && a[r].before(a[l]) {
			l = r
		}
		if !a[l].before(a[i]) {
			break
		}
		a[i], a[l] = a[l], a[i]
		i = l
	}
	*h = a
	return e
}

// sideHeap is a min-heap of receive sides by completion time, each
// knowing its index (side.open).
type sideHeap []*side

func (h sideHeap) Len() int { return len(h) }
func (h sideHeap) Less(i, j int) bool {
	return cmp.Or(cmp.Compare(h[i].fin, h[j].fin), cmp.Compare(h[i].seq, h[j].seq)) < 0
}
func (h sideHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].open, h[j].open = i, j
}
func (h *sideHeap) Push(x any) {
	s := x.(*side)
	s.open = len(*h)
	*h = append(*h, s)
}
func (h *sideHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.open = -1
	return s
}

// setWait makes c the call that completes the receive s.
func (s *side) setWait(c *call) {
	s.wait = c
	if c != nil {
		c.unsettled++
	}
}

// staleWaits gives up looking for the completing call of the pending
// non-blocking receives that no call can complete any more: completed
// before now, outside every MPI region open on their process (a region
// entered later begins at now or after). finish does the same with those
// left at the end; doing it now lets them be measured.
func (r *runState) staleWaits() {
	for _, ps := range r.procs {
		if len(ps.pending) == 0 {
			continue
		}
		first := r.now
		for _, f := range ps.stack {
			if f.mpi {
				first = min(first, f.enter)
			}
		}
		keep := ps.pending[:0]
		for _, s := range ps.pending {
			if s.end < first {
				s.noWait = true
			} else {
				keep = append(keep, s)
			}
		}
		clear(ps.pending[len(keep):])
		ps.pending = keep
	}
}

// release replays the receives of each process whose place in the replay
// order is known.
func (r *runState) release() {
	for _, ps := range r.procs {
		bound := r.now
		if len(ps.open) > 0 {
			bound = min(bound, ps.open[0].fin)
		}
		for len(ps.recvs) > 0 {
			e := ps.recvs[0]
			if e.fin >= bound {
				break
			}
			if c := e.c; c != nil && !(c.done && c.unsettled == 0 && c.exit < r.now) {
				break
			}
			ps.recvs.pop()
			r.replay(ps, e)
		}
	}
}

// replayAll replays every receive left, at the end of the run.
func (r *runState) replayAll(ps *procState) {
	for len(ps.recvs) > 0 {
		r.replay(ps, ps.recvs.pop())
	}
	ps.buf = nil
}

// replay is one step of the wrong order search: the receive e, next in
// replay order on the process ps.
func (r *runState) replay(ps *procState, e recvEntry) {
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
func (ps *procState) join(e recvEntry) {
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
func (r *runState) chargeWO(c *call, sub SubPattern, w int64) {
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
func (r *runState) collective(in *instance) {
	r.ncolls++
	for _, c := range in.calls {
		if c == nil || !c.done {
			return // counted as unknown span
		}
	}
	enter := func(c *call) int64 { return r.at(c.proc, c.enter) }
	last := enter(in.calls[0])
	for _, c := range in.calls {
		last = max(last, enter(c))
	}
	switch in.op {
	case trace.OpBarrier, trace.OpAllreduce, trace.OpAllgather, trace.OpAlltoall, trace.OpReduceScatter:
		p := WaitNxN
		if in.op == trace.OpBarrier {
			p = WaitBarrier
		}
		for _, c := range in.calls {
			r.charge(c, p, last-enter(c))
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
					r.charge(c, LateBroadcast, enter(root)-enter(c))
				}
			}
			return
		}
		first := int64(0)
		seen := false
		for i, c := range in.calls {
			if i != ri && (!seen || enter(c) < first) {
				first, seen = enter(c), true
			}
		}
		r.charge(root, EarlyReduce, first-enter(root))
	default:
		r.unc.OtherCollectives++
	}
}

// Merge implements engine.Accumulator: other must hold other runs.
func (a *Accumulator) Merge(o engine.Accumulator) error {
	b, ok := o.(*Accumulator)
	if !ok {
		return fmt.Errorf("waitstates: merging a %T", o)
	}
	if a.estimating != b.estimating {
		return fmt.Errorf("waitstates: merging accumulators of different passes")
	}
	return a.runs.MergeWhole(&b.runs, "waitstates")
}

// Result implements engine.Accumulator.
func (a *Accumulator) Result() (any, error) {
	if a.estimating {
		return nil, fmt.Errorf("waitstates: the clock correction measures in a second pass over the records (engine.Repeater), and Result came after the first")
	}
	if a.res == nil {
		a.res = &Result{Runs: engine.FinishRuns(&a.runs, a.finish)}
	}
	return a.res, nil
}

// name returns the name of region id.
func (a *Accumulator) name(id int32) string {
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
func (a *Accumulator) finish(r *runState) RunWaits {
	for _, ps := range r.procs {
		for len(ps.stack) > 0 {
			r.pop(ps, max(ps.last, ps.stack[len(ps.stack)-1].enter))
		}
		for _, s := range ps.pending {
			s.noWait = true
		}
		ps.pending = nil
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
	rw.Clock.Correction = r.cc
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

// amounts returns one Amount per pattern, named, with w's figures.
func amounts(w *[numPatterns]Amount) []Amount {
	out := make([]Amount, numPatterns)
	for i := range out {
		if w != nil {
			out[i] = w[i]
		}
		out[i].Pattern = Pattern(i).String()
	}
	return out
}

// subAmounts returns one Amount per sub-pattern, named, with w's figures.
func subAmounts(w *[numSubPatterns]Amount) []Amount {
	out := make([]Amount, numSubPatterns)
	for i := range out {
		if w != nil {
			out[i] = w[i]
		}
		out[i].Pattern, out[i].Parent = SubPattern(i).String(), SubPattern(i).Parent()
	}
	return out
}
