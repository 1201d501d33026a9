// Package comm ties communication to code structure (Jones et
// al. 2007, sections 4–6): it builds the code-structure tree of a trace (regions
// nested as they were entered), and for every structure the n×n matrices of
// bytes and of messages sent inside it, alone or aggregated over its nested
// structures, the communication degree of every process, and the working
// sets (the pairs used during each entry of the structure).
//
// A message belongs to the innermost region open on its sender when the send
// is posted. Matrices are built from the send side; the receive side is
// checked with trace.Matcher and unmatched sends and receives are reported.
// Collectives are decomposed into point-to-point messages with
// trace.Decompose by the algorithm the caller picks; each process's part of
// the decomposition is attributed to the structure that process is in when
// its collective record begins.
//
// The Accumulator takes records one at a time (each process's records in
// time order, processes interleaved in any way), so traces of any length
// are analysed in memory proportional to the tree, not to the trace.
package comm

import (
	"context"
	"fmt"

	"github.com/parscope/parscope/trace"
)

// Selection is what an analysis takes of a trace's communication: the
// run, and how its collectives count. The communication analysis and the
// optical circuit switch simulation (package ocs) take the same.
type Selection struct {
	// Run is the run of the ensemble to analyse; records of other runs are ignored.
	Run int32
	// Decompose is the algorithm collectives are decomposed with.
	Decompose trace.Decomposition
	// NoCollectives leaves collectives out.
	NoCollectives bool
	// UnknownCommAsWorld decomposes the collectives of a communicator
	// whose members the trace does not give (trace.CommDef.Unknown) over
	// every process of the run, for a user who knows it is the world;
	// otherwise they are counted in Problems.UnknownComm and left out.
	UnknownCommAsWorld bool
}

// Options select what an Accumulator computes.
type Options struct {
	Selection
	// NoMatch skips checking the receive side (faster; Problems then
	// reports no unmatched messages).
	NoMatch bool
	// WorkingSets records, per structure and per entry, the set of pairs
	// used (memory proportional to the distinct pairs per entry).
	WorkingSets bool
}

// MaxProcs bounds the processes of a run: matrices are dense (n×n per
// structure that communicates).
const MaxProcs = 1024

// RootName is the name of the tree's root, the whole program.
const RootName = "program"

// maxExamples bounds the unmatched records kept as examples.
const maxExamples = 20

// Problems counts what the input got wrong. Nothing is silently dropped:
// every record left out of a matrix is counted here.
type Problems struct {
	// UnmatchedSends and UnmatchedRecvs count point-to-point sides without
	// their other side at the end of the trace (their sends are in the
	// matrices; an unmatched receive's message is not, as its sender never
	// recorded it).
	UnmatchedSends int64 `json:"unmatched_sends"`
	UnmatchedRecvs int64 `json:"unmatched_recvs"`
	// Unmatched holds up to 20 of them, in time order.
	Unmatched []string `json:"unmatched,omitempty"`
	// BadPeer counts sends whose destination is not a process of the run.
	BadPeer int64 `json:"bad_peer,omitempty"`
	// OutsideComm counts collective records of a process that is not a
	// member of the communicator, or whose root is not.
	OutsideComm int64 `json:"outside_comm,omitempty"`
	// Undecomposed counts collectives of an operation that cannot be
	// decomposed (unknown operations).
	Undecomposed int64 `json:"undecomposed,omitempty"`
	// UnknownComm counts collective records on a communicator whose
	// members the trace does not give (trace.CommDef.Unknown): they are
	// left out of the matrices rather than decomposed over a guessed
	// membership such as every process.
	UnknownComm int64 `json:"unknown_comm,omitempty"`
	// UnbalancedExits counts exits of a region that was not the innermost
	// open one (regions above it are closed too) or was not open at all.
	UnbalancedExits int64 `json:"unbalanced_exits,omitempty"`
	// Unclosed counts regions still open at the end of the trace.
	Unclosed int64 `json:"unclosed,omitempty"`
}

func (p *Problems) add(o *Problems) {
	p.UnmatchedSends += o.UnmatchedSends
	p.UnmatchedRecvs += o.UnmatchedRecvs
	p.BadPeer += o.BadPeer
	p.OutsideComm += o.OutsideComm
	p.Undecomposed += o.Undecomposed
	p.UnknownComm += o.UnknownComm
	p.UnbalancedExits += o.UnbalancedExits
	p.Unclosed += o.Unclosed
}

type node struct {
	parent  int
	region  int32
	depth   int
	bytes   []int64 // n×n, allocated at the first message
	count   []int64
	entries []int32    // per process: entries so far
	windows [][]uint64 // per entry index: pairs src<<32|dst
	kids    []kid      // the first children, searched before the map
}

// maxKids is the number of children a node keeps in its kids list.
const maxKids = 8

type kid struct {
	region int32
	node   int
}

type childKey struct {
	parent int
	region int32
}

type frame struct {
	node   int
	region int32 // the node's region, so exits need not look the node up
	k      int32 // entry index of node by this process
	dsts   []int32
	set    map[int32]struct{}
}

func (f *frame) addDst(d int32) {
	if f.set != nil {
		if _, ok := f.set[d]; !ok {
			f.set[d] = struct{}{}
			f.dsts = append(f.dsts, d)
		}
		return
	}
	for _, x := range f.dsts {
		if x == d {
			return
		}
	}
	f.dsts = append(f.dsts, d)
	if len(f.dsts) > 32 {
		f.set = make(map[int32]struct{}, 64)
		for _, x := range f.dsts {
			f.set[x] = struct{}{}
		}
	}
}

type collKey struct {
	op   trace.CollectiveOp
	comm int32
	root int
}

// unitEdge is one message of a decomposition with one byte of payload
// (bytes is 0 for a barrier's synchronisation messages, else 1).
type unitEdge struct {
	dst   int32
	bytes int64
}

type decomposition struct {
	bySrc map[int32][]unitEdge
}

// Accumulator builds the tree and the matrices record by record. The zero
// value is not usable; call New.
type Accumulator struct {
	h        *trace.Header
	idx      *trace.Index
	opts     Options
	n        int
	nodes    []*node
	children map[childKey]int
	stacks   [][]frame // per process; [0] is the root frame
	top      []*node   // per process: the node of its innermost frame
	seen     []bool
	match    trace.Matcher
	matched  int64
	comms    *trace.Communicators
	coll     map[collKey]*decomposition
	problems Problems
}

// New returns an Accumulator for run opts.Run of a trace with header h.
func New(h *trace.Header, opts Options) (*Accumulator, error) {
	a, err := newAccumulator(h, opts)
	if err != nil {
		return nil, fmt.Errorf("comm: %w", err)
	}
	return a, nil
}

// newAccumulator is New, its errors without the package's name (the
// engine names the analysis).
func newAccumulator(h *trace.Header, opts Options) (*Accumulator, error) {
	var n int
	found := false
	for _, r := range h.Runs {
		if r.ID == opts.Run {
			n, found = int(r.Procs), true
		}
	}
	if !found {
		return nil, fmt.Errorf("the trace has no run %d", opts.Run)
	}
	if n <= 0 || n > MaxProcs {
		return nil, fmt.Errorf("run %d has %d processes (want 1..%d)", opts.Run, n, MaxProcs)
	}
	a := &Accumulator{h: h, idx: trace.NewIndex(h), opts: opts, n: n,
		children: map[childKey]int{}, comms: trace.NewCommunicators(h, n), coll: map[collKey]*decomposition{}}
	a.nodes = []*node{{parent: -1, region: -1, entries: make([]int32, n)}}
	a.stacks = make([][]frame, n)
	a.top = make([]*node, n)
	a.seen = make([]bool, n)
	for p := range a.stacks {
		a.stacks[p] = []frame{{node: 0, region: -1}}
		a.top[p] = a.nodes[0]
	}
	a.nodes[0].windows = make([][]uint64, 1)
	a.match.OnMatch = func(_, _ *trace.Record) { a.matched++ }
	return a, nil
}

// child returns the node of region entered inside parent, creating it.
func (a *Accumulator) child(parent int, region int32) int {
	pn := a.nodes[parent]
	for _, c := range pn.kids {
		if c.region == region {
			return c.node
		}
	}
	// The first 8 children are in kids; only the others go in the map, so
	// a deep tree of few children per node needs no map entry per node.
	k := childKey{parent, region}
	if len(pn.kids) == maxKids {
		if id, ok := a.children[k]; ok {
			return id
		}
	}
	id := len(a.nodes)
	a.nodes = append(a.nodes, &node{parent: parent, region: region, depth: a.nodes[parent].depth + 1,
		entries: make([]int32, a.n)})
	if len(pn.kids) < maxKids {
		pn.kids = append(pn.kids, kid{region, id})
	} else {
		a.children[k] = id
	}
	return id
}

// staticParent returns the node a region entered at the top level nests
// under: the chain of its RegionDef parents, or the root.
func (a *Accumulator) staticParent(region int32, depth int) int {
	def := a.idx.Region(region)
	if def == nil || def.Parent < 0 || def.Parent == region || depth > 64 {
		return 0
	}
	return a.child(a.staticParent(def.Parent, depth+1), def.Parent)
}

// Add feeds one record. Records of each process must come in time order.
// Bad input is counted in Problems, never a panic; Add returns an error only
// for a record whose process is outside the run.
func (a *Accumulator) Add(r *trace.Record) error {
	if r.Run != a.opts.Run {
		return nil
	}
	p := r.Proc
	if uint32(p) >= uint32(a.n) {
		return fmt.Errorf("comm: record %v: process %d is outside run %d of %d processes", r, p, r.Run, a.n)
	}
	a.seen[p] = true
	switch r.Kind {
	case trace.KindSend:
		if !a.opts.NoMatch {
			a.match.Add(r)
		}
		if uint32(r.Peer) >= uint32(a.n) {
			a.problems.BadPeer++
			return nil
		}
		a.send(p, r.Peer, r.Value)
	case trace.KindRecv:
		if !a.opts.NoMatch {
			a.match.Add(r)
		}
	case trace.KindEnter:
		st := a.stacks[p]
		parent := st[len(st)-1].node
		if parent == 0 {
			parent = a.staticParent(r.ID, 0)
		}
		id := a.child(parent, r.ID)
		nd := a.nodes[id]
		k := nd.entries[p]
		nd.entries[p]++
		if a.opts.WorkingSets && int(k) >= len(nd.windows) {
			nd.windows = append(nd.windows, make([][]uint64, int(k)+1-len(nd.windows))...)
		}
		f := frame{node: id, region: r.ID, k: k}
		if len(st) < cap(st) { // reuse the destination list of a popped frame
			f.dsts = st[:len(st)+1][len(st)].dsts[:0]
		}
		a.stacks[p] = append(st, f)
		a.top[p] = nd
	case trace.KindExit:
		st := a.stacks[p]
		at := -1
		for i := len(st) - 1; i > 0; i-- {
			if st[i].region == r.ID {
				at = i
				break
			}
		}
		if at < 0 {
			a.problems.UnbalancedExits++
			return nil
		}
		if at != len(st)-1 {
			a.problems.UnbalancedExits++
		}
		for len(a.stacks[p]) > at {
			a.pop(p)
		}
	case trace.KindCollective:
		if !a.opts.NoCollectives {
			a.collective(r)
		}
	}
	return nil
}

func (a *Accumulator) send(p, dst int32, bytes int64) {
	nd := a.top[p]
	if nd.bytes == nil {
		nd.bytes = make([]int64, a.n*a.n)
		nd.count = make([]int64, a.n*a.n)
	}
	i := int(p)*a.n + int(dst)
	nd.bytes[i] += bytes
	nd.count[i]++
	if a.opts.WorkingSets {
		st := a.stacks[p]
		st[len(st)-1].addDst(dst)
	}
}

// pop closes the innermost open region of process p.
func (a *Accumulator) pop(p int32) {
	st := a.stacks[p]
	f := st[len(st)-1]
	if a.opts.WorkingSets {
		nd := a.nodes[f.node]
		w := nd.windows[f.k]
		for _, d := range f.dsts {
			w = append(w, uint64(p)<<32|uint64(d))
		}
		nd.windows[f.k] = w
		parent := &st[len(st)-2]
		for _, d := range f.dsts {
			parent.addDst(d)
		}
	}
	a.stacks[p] = st[:len(st)-1]
	a.top[p] = a.nodes[st[len(st)-2].node]
}

func (a *Accumulator) collective(r *trace.Record) {
	op := trace.CollectiveOp(r.ID)
	mem, ok := a.comms.MembersOrWorld(r.Comm, r.Proc, a.opts.UnknownCommAsWorld)
	if !ok {
		a.problems.UnknownComm++
		return
	}
	root := 0
	if r.Peer >= 0 {
		root = -1
		for i, m := range mem {
			if m == r.Peer {
				root = i
			}
		}
		if root < 0 {
			a.problems.OutsideComm++
			return
		}
	}
	k := collKey{op, r.Comm, root}
	d := a.coll[k]
	if d == nil {
		msgs, err := trace.Decompose(op, a.opts.Decompose, a.opts.Run, mem, root, 1, r.Comm, 0, 0)
		if err != nil {
			a.problems.Undecomposed++
			return
		}
		d = &decomposition{bySrc: map[int32][]unitEdge{}}
		for _, m := range msgs {
			d.bySrc[m.Src] = append(d.bySrc[m.Src], unitEdge{dst: m.Dst, bytes: m.Bytes})
		}
		a.coll[k] = d
	}
	member := false
	for _, m := range mem {
		if m == r.Proc {
			member = true
			break
		}
	}
	if !member {
		a.problems.OutsideComm++
		return
	}
	for _, e := range d.bySrc[r.Proc] {
		if e.dst < 0 || int(e.dst) >= a.n {
			a.problems.BadPeer++
			continue
		}
		a.send(r.Proc, e.dst, e.bytes*r.Value)
	}
}

// Merge adds the records b has seen into a. a and b must have been created
// for the same header and options and fed disjoint sets of processes (for
// example one accumulator per process, read in parallel); the receive
// sides b could not match are matched against a's. b must not be used
// afterwards.
func (a *Accumulator) Merge(b *Accumulator) error {
	if a.n != b.n || a.opts != b.opts {
		return fmt.Errorf("comm: merging accumulators of different runs or options")
	}
	for p := range b.seen {
		if a.seen[p] && b.seen[p] {
			return fmt.Errorf("comm: merging accumulators that both saw process %d", p)
		}
	}
	remap := make([]int, len(b.nodes))
	for id, nd := range b.nodes {
		if id == 0 {
			continue
		}
		remap[id] = a.child(remap[nd.parent], nd.region)
	}
	for id, nd := range b.nodes {
		an := a.nodes[remap[id]]
		if nd.bytes != nil {
			if an.bytes == nil {
				an.bytes = make([]int64, a.n*a.n)
				an.count = make([]int64, a.n*a.n)
			}
			for i := range nd.bytes {
				an.bytes[i] += nd.bytes[i]
				an.count[i] += nd.count[i]
			}
		}
		for p := range nd.entries {
			an.entries[p] += nd.entries[p]
		}
		if len(nd.windows) > len(an.windows) {
			an.windows = append(an.windows, make([][]uint64, len(nd.windows)-len(an.windows))...)
		}
		for k, w := range nd.windows {
			an.windows[k] = append(an.windows[k], w...)
		}
	}
	for p := range b.seen {
		if !b.seen[p] {
			continue
		}
		a.seen[p] = true
		st := make([]frame, len(b.stacks[p]))
		for i, f := range b.stacks[p] {
			f.node = remap[f.node]
			st[i] = f
		}
		a.stacks[p] = st
		a.top[p] = a.nodes[st[len(st)-1].node]
	}
	sends, recvs := b.match.Unmatched()
	a.matched += b.matched
	for i := range sends {
		a.match.Add(&sends[i])
	}
	for i := range recvs {
		a.match.Add(&recvs[i])
	}
	a.problems.add(&b.problems)
	return nil
}

// Analyze feeds every record of rd to a new Accumulator and returns its
// Result.
func Analyze(ctx context.Context, h *trace.Header, rd trace.Reader, opts Options) (*Result, error) {
	a, err := New(h, opts)
	if err != nil {
		return nil, err
	}
	var n int
	err = trace.Each(rd, func(r *trace.Record) error {
		n++
		if n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return a.Add(r)
	})
	if err != nil {
		return nil, err
	}
	return a.Result(), nil
}
