package ocs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/trace"
)

// Options select what a Builder takes from a trace, as for the
// communication analysis; with NoCollectives, the collectives' time stays
// as compute.
type Options = comm.Selection

// Problems counts what the trace got wrong. Nothing is dropped silently.
type Problems struct {
	// UnmatchedSends are sends no receive matched: they are still sent
	// (they load the network) but nobody waits for them.
	UnmatchedSends int64 `json:"unmatched_sends"`
	// UnmatchedRecvs are receives no send matched: the replay does not
	// wait for them.
	UnmatchedRecvs int64 `json:"unmatched_recvs"`
	// BadPeer counts sends and receives whose peer is not a process of the
	// run (left out).
	BadPeer int64 `json:"bad_peer,omitempty"`
	// OutsideComm counts collective records of a process that is not in the
	// communicator, or whose root is not (left out).
	OutsideComm int64 `json:"outside_comm,omitempty"`
	// UnknownComm counts collective records on a communicator whose
	// members the trace does not give (left out unless
	// Options.UnknownCommAsWorld).
	UnknownComm int64 `json:"unknown_comm,omitempty"`
	// Undecomposed counts collectives of an unknown operation (left out).
	Undecomposed int64 `json:"undecomposed,omitempty"`
	// CollectiveMismatch counts collective records whose operation or root
	// differs from that of the first member that reached the same instance
	// (the k-th collective on the communicator); the first member's is used.
	CollectiveMismatch int64 `json:"collective_mismatch,omitempty"`
	// IncompleteCollectives counts collective instances some member never
	// reached: the messages of absent members are not sent and not waited for.
	IncompleteCollectives int64 `json:"incomplete_collectives,omitempty"`
}

// message is one point-to-point message of the workload.
type message struct {
	src, dst int32
	bytes    int64
	sent     bool // a process of the trace sends it
}

// Step kinds.
const (
	stepSend     uint8 = iota // inject msg
	stepSendDone              // wait until msg has left
	stepRecv                  // wait for msg to arrive (msg < 0: unmatched)
	stepColl                  // inject outs, then wait for every in
)

// step is one point of a process's replay.
type step struct {
	gap  int64 // compute time before the step, ns
	msg  int32 // message id, or the first index into Workload.lists
	nOut int32 // collectives: outgoing messages lists[msg:msg+nOut]
	nIn  int32 // collectives: incoming messages lists[msg+nOut:msg+nOut+nIn]
	kind uint8
}

// point is a step before the gaps are known: at original time t.
type point struct {
	t     int64 // the post, or the completion of a send or receive
	end   int64 // collectives: the original end
	post  int64 // completions: the original post
	step  step
	recv  int32 // stepRecv: the receive slot (resolved to a message at Finish)
	order int32 // stream order, to keep ties stable
}

type collInst struct {
	op      trace.CollectiveOp
	root    int
	first   int32 // first message id
	edges   []edge
	arrived int
}

type edge struct {
	src, dst int32
	unit     int64 // 0 for barrier messages, else 1
}

type decompKey struct {
	op   trace.CollectiveOp
	comm int32
	root int
}

// Builder builds a Workload record by record: each process's records in
// time order, processes interleaved in time-merged order (the order
// trace.Matcher needs to resolve MPI_ANY_SOURCE receives).
type Builder struct {
	h       *trace.Header
	opts    Options
	n       int
	acc     *comm.Accumulator
	match   trace.Matcher
	msgs    []message
	recvMsg []int32 // per receive slot: the matched message, or -1
	points  [][]point
	markers [][]int64 // per process: the times of its records
	first   int64
	last    []int64
	comms   *trace.Communicators
	decomp  map[decompKey][]edge
	colls   map[[2]int32]*collInst // (comm, k)
	collK   map[[2]int32]int32     // (proc, comm) → collectives so far
	lists   []int32
	prob    Problems
	tmp     trace.Record // the copy of a send or receive given to the matcher, End = its message or slot
}

// NewBuilder returns a Builder for run opts.Run of a trace with header h.
func NewBuilder(h *trace.Header, opts Options) (*Builder, error) {
	b, err := newBuilder(h, opts)
	if err != nil {
		return nil, fmt.Errorf("ocs: %w", err)
	}
	return b, nil
}

// newBuilder is NewBuilder, its errors without the package's name (the
// engine names the analysis).
func newBuilder(h *trace.Header, opts Options) (*Builder, error) {
	acc, err := comm.New(h, comm.Options{Selection: opts, NoMatch: true})
	if err != nil {
		return nil, err
	}
	var n int
	for _, r := range h.Runs {
		if r.ID == opts.Run {
			n = int(r.Procs)
		}
	}
	b := &Builder{h: h, opts: opts, n: n, acc: acc, points: make([][]point, n), markers: make([][]int64, n),
		first: math.MaxInt64, last: make([]int64, n), comms: trace.NewCommunicators(h, n), decomp: map[decompKey][]edge{},
		colls: map[[2]int32]*collInst{}, collK: map[[2]int32]int32{}}
	for i := range b.last {
		b.last[i] = math.MinInt64
	}
	b.match.OnMatch = func(s, r *trace.Record) {
		b.recvMsg[r.End] = int32(s.End)
	}
	return b, nil
}

// Add feeds one record. It returns an error only for a record whose process
// is outside the run; other bad input is counted in Problems.
func (b *Builder) Add(r *trace.Record) error {
	if r.Run != b.opts.Run || r.Kind == trace.KindBBV { // BBVs are ordered by interval, not time
		return nil
	}
	if err := b.acc.Add(r); err != nil {
		return fmt.Errorf("ocs: %w", err)
	}
	p := r.Proc
	b.first = min(b.first, r.T)
	b.last[p] = max(b.last[p], r.T, r.EndTime())
	b.markers[p] = append(b.markers[p], r.T)
	pts := &b.points[p]
	order := int32(len(*pts))
	switch r.Kind {
	case trace.KindSend:
		if uint32(r.Peer) >= uint32(b.n) {
			b.prob.BadPeer++
			return nil
		}
		if len(b.msgs) >= math.MaxInt32 {
			return fmt.Errorf("ocs: more than %d messages", math.MaxInt32)
		}
		id := int32(len(b.msgs))
		b.msgs = append(b.msgs, message{src: p, dst: r.Peer, bytes: r.Value, sent: true})
		*pts = append(*pts, point{t: r.T, order: order, step: step{kind: stepSend, msg: id}},
			point{t: r.EndTime(), post: r.T, order: order + 1, step: step{kind: stepSendDone, msg: id}})
		b.tmp = *r
		b.tmp.End = int64(id)
		b.match.Add(&b.tmp)
	case trace.KindRecv:
		if r.Peer != trace.NoPeer && uint32(r.Peer) >= uint32(b.n) {
			b.prob.BadPeer++
			return nil
		}
		slot := int32(len(b.recvMsg))
		b.recvMsg = append(b.recvMsg, -1)
		*pts = append(*pts, point{t: r.EndTime(), post: r.T, order: order, recv: slot, step: step{kind: stepRecv}})
		b.tmp = *r
		b.tmp.End = int64(slot)
		b.match.Add(&b.tmp)
	case trace.KindCollective:
		if !b.opts.NoCollectives {
			b.collective(r)
		}
	}
	return nil
}

func (b *Builder) collective(r *trace.Record) {
	op := trace.CollectiveOp(r.ID)
	mem, ok := b.comms.MembersOrWorld(r.Comm, r.Proc, b.opts.UnknownCommAsWorld)
	if !ok {
		b.prob.UnknownComm++
		return
	}
	if len(mem) == 1 && mem[0] == r.Proc {
		return // a collective of one process (MPI_COMM_SELF) sends nothing
	}
	if !slices.Contains(mem, r.Proc) {
		b.prob.OutsideComm++
		return
	}
	root := 0
	if r.Peer >= 0 {
		if root = slices.Index(mem, r.Peer); root < 0 {
			b.prob.OutsideComm++
			return
		}
	}
	dk := decompKey{op, r.Comm, root}
	edges, ok := b.decomp[dk]
	if !ok {
		msgs, err := trace.Decompose(op, b.opts.Decompose, b.opts.Run, mem, root, 1, r.Comm, 0, 0)
		if err != nil {
			edges = nil
		} else {
			for _, m := range msgs {
				if uint32(m.Src) < uint32(b.n) && uint32(m.Dst) < uint32(b.n) && m.Src != m.Dst {
					edges = append(edges, edge{m.Src, m.Dst, m.Bytes})
				}
			}
			if edges == nil {
				edges = []edge{}
			}
		}
		b.decomp[dk] = edges
	}
	if edges == nil {
		b.prob.Undecomposed++
		return
	}
	pk := [2]int32{r.Proc, r.Comm}
	k := b.collK[pk]
	b.collK[pk] = k + 1
	ik := [2]int32{r.Comm, k}
	inst := b.colls[ik]
	if inst == nil {
		inst = &collInst{op: op, root: root, first: int32(len(b.msgs)), edges: edges}
		for _, e := range edges {
			b.msgs = append(b.msgs, message{src: e.src, dst: e.dst})
		}
		b.colls[ik] = inst
	} else if inst.op != op || inst.root != root {
		b.prob.CollectiveMismatch++
	}
	inst.arrived++
	start := int32(len(b.lists))
	var nOut, nIn int32
	for i, e := range inst.edges {
		if e.src == r.Proc {
			id := inst.first + int32(i)
			b.msgs[id].bytes = e.unit * r.Value
			b.msgs[id].sent = true
			b.lists = append(b.lists, id)
			nOut++
		}
	}
	for i, e := range inst.edges {
		if e.dst == r.Proc {
			b.lists = append(b.lists, inst.first+int32(i))
			nIn++
		}
	}
	b.points[r.Proc] = append(b.points[r.Proc], point{t: r.T, end: r.EndTime(), order: int32(len(b.points[r.Proc])),
		step: step{kind: stepColl, msg: start, nOut: nOut, nIn: nIn}})
	if inst.arrived == len(mem) {
		delete(b.colls, ik)
	}
}

// Workload is a trace reduced to what the network simulation replays: the
// messages (matched point-to-point messages and collectives decomposed into
// point-to-point ones) and, per process, the sequence of sends and waits with
// the compute time between them. It is immutable once built; Simulate may be
// called concurrently.
type Workload struct {
	// Procs is the number of processes (nodes).
	Procs int
	// Comm is the code-structure tree with the matrices of the trace;
	// Comm.Nodes[0] (the whole program) gives the connections the static
	// strategies rank, and any structure's matrix can be ranked instead.
	Comm *comm.Result
	// Problems are what the trace got wrong.
	Problems Problems
	// Span is the time of the trace from its first record to its last, ns.
	Span int64

	msgs  []message
	steps [][]step
	tail  []int64 // per process: compute after its last step, ns
	lists []int32
}

// Messages returns the number of messages the workload sends.
func (w *Workload) Messages() int {
	n := 0
	for i := range w.msgs {
		if w.msgs[i].sent {
			n++
		}
	}
	return n
}

// Finish returns the workload of what the builder has seen. The builder must
// not be used afterwards.
func (b *Builder) Finish() *Workload {
	w := &Workload{Procs: b.n, Comm: b.acc.Result(), msgs: b.msgs, steps: make([][]step, b.n), tail: make([]int64, b.n), lists: b.lists}
	sends, recvs := b.match.Unmatched()
	w.Problems = b.prob
	w.Problems.UnmatchedSends = int64(len(sends))
	w.Problems.UnmatchedRecvs = int64(len(recvs))
	w.Problems.IncompleteCollectives = int64(len(b.colls))
	if b.first == math.MaxInt64 {
		b.first = 0
	}
	for p := range b.n {
		pts := b.points[p]
		sort.SliceStable(pts, func(i, j int) bool {
			if pts[i].t != pts[j].t {
				return pts[i].t < pts[j].t
			}
			return pts[i].order < pts[j].order
		})
		marks := b.markers[p]
		steps := make([]step, len(pts))
		o := b.first // the original time up to which the process is accounted for
		for i, pt := range pts {
			st := pt.step
			if st.kind == stepRecv {
				st.msg = b.recvMsg[pt.recv]
			}
			switch st.kind {
			case stepSend:
				st.gap = max(0, pt.t-o)
				o = max(o, pt.t)
			case stepColl:
				// The process computed until it entered the collective,
				// which held it until its original end.
				st.gap = max(0, pt.t-o)
				o = max(o, pt.t, pt.end)
			default:
				// The completion of a send or receive, blocking or not:
				// the process computed until its last record before the
				// completion (the post itself, a region entry or exit,
				// an event, a state, another operation) and waited from
				// there until the original completion.
				busy := max(o, pt.post)
				if j := sort.Search(len(marks), func(j int) bool { return marks[j] >= pt.t }); j > 0 {
					busy = max(busy, marks[j-1])
				}
				if i > 0 {
					busy = max(busy, min(pts[i-1].t, pt.t))
				}
				st.gap = max(0, busy-o)
				o = max(o, pt.t)
			}
			steps[i] = st
		}
		w.steps[p] = steps
		if b.last[p] != math.MinInt64 {
			w.tail[p] = max(0, b.last[p]-o)
			w.Span = max(w.Span, b.last[p]-b.first)
		}
	}
	return w
}

// Load builds the Workload of run opts.Run from a time-merged stream.
func Load(ctx context.Context, h *trace.Header, rd trace.Reader, opts Options) (*Workload, error) {
	b, err := NewBuilder(h, opts)
	if err != nil {
		return nil, err
	}
	n := 0
	err = trace.Each(rd, func(r *trace.Record) error {
		n++
		if n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return b.Add(r)
	})
	if err != nil {
		return nil, err
	}
	return b.Finish(), nil
}
