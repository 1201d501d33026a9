package ocs

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Params are the network's parameters.
type Params struct {
	// OpticalBW is the bandwidth of one circuit, bytes per second.
	OpticalBW float64 `json:"optical_bw"`
	// SwitchLatency is the time to set up a circuit, seconds (MEMS
	// switches take milliseconds).
	SwitchLatency float64 `json:"switch_latency"`
	// ElecBW is the bandwidth of a node's link to the electronic packet
	// switch, bytes per second (one port out and one in per node).
	ElecBW float64 `json:"elec_bw"`
	// ElecLatency is the electronic network's latency per message, seconds.
	ElecLatency float64 `json:"elec_latency"`
	// Threshold is the size from which a message requests a circuit under
	// the runtime strategy, bytes.
	Threshold int64 `json:"threshold"`
}

// DefaultParams are the parameters the CLI starts from: 40 Gbit/s circuits
// set up in 1 ms, a 1 Gbit/s electronic network with 5 µs latency, and a
// 4 KiB runtime threshold (the paper does not print its values; these are in
// the range section 5.1 gives: optical "10's of gigabits/s", electronic "on
// the order of Gb/s", switching "on the order of milliseconds").
func DefaultParams() Params {
	return Params{OpticalBW: 40e9 / 8, SwitchLatency: 1e-3, ElecBW: 1e9 / 8, ElecLatency: 5e-6, Threshold: 4096}
}

// Validate checks that the parameters are usable.
func (p Params) Validate() error {
	switch {
	case !(p.OpticalBW > 0) || math.IsInf(p.OpticalBW, 0):
		return fmt.Errorf("ocs: optical bandwidth %g: want a positive number of bytes per second", p.OpticalBW)
	case !(p.ElecBW > 0) || math.IsInf(p.ElecBW, 0):
		return fmt.Errorf("ocs: electronic bandwidth %g: want a positive number of bytes per second", p.ElecBW)
	case !(p.SwitchLatency >= 0) || math.IsInf(p.SwitchLatency, 0):
		return fmt.Errorf("ocs: switching latency %g: want a non-negative number of seconds", p.SwitchLatency)
	case !(p.ElecLatency >= 0) || math.IsInf(p.ElecLatency, 0):
		return fmt.Errorf("ocs: electronic latency %g: want a non-negative number of seconds", p.ElecLatency)
	case p.Threshold < 0:
		return fmt.Errorf("ocs: threshold %d: want a non-negative number of bytes", p.Threshold)
	}
	return nil
}

// Result is one simulation: a strategy with a number of planes.
type Result struct {
	Strategy Strategy `json:"strategy"`
	Planes   int      `json:"planes"`
	// Time is the completion time, seconds: when the last process ends.
	Time float64 `json:"time"`
	// Delay is the average message delay, seconds: from the message's
	// injection (the sender's post) to its arrival at the receiver,
	// queueing and circuit set-up included.
	Delay float64 `json:"delay"`
	// Messages and Bytes count the messages simulated on the network
	// (messages a process sends to itself are local and not counted).
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	// CircuitMessages and CircuitBytes went over optical circuits;
	// CircuitFraction is CircuitBytes / Bytes.
	CircuitMessages int64   `json:"circuit_messages"`
	CircuitBytes    int64   `json:"circuit_bytes"`
	CircuitFraction float64 `json:"circuit_fraction"`
	// Circuits is the number of circuits established: before the run for
	// the static strategies, set-ups during it for the runtime strategy.
	Circuits int64 `json:"circuits"`
	// Evictions counts circuits the runtime strategy tore down.
	Evictions int64 `json:"evictions,omitempty"`
	// PlanesUsed is the number of planes that held a circuit.
	PlanesUsed int `json:"planes_used"`
	// BrokenWaits counts waits the replay had to give up because the
	// processes waited for each other in a cycle (a trace whose matching or
	// order is inconsistent); 0 for a consistent trace.
	BrokenWaits int64 `json:"broken_waits,omitempty"`
}

// circuit is one optical circuit.
type circuit struct {
	src, dst int32
	plane    int32
	uses     int64
	free     float64 // ns: when it has sent everything queued on it
}

// sim is the state of one simulation.
type sim struct {
	w        *Workload
	p        Params
	strat    Strategy
	planes   int
	n        int
	optNs    float64 // bytes per ns
	elecNs   float64
	elecLat  float64 // ns
	switchNs float64

	pc     []int32   // per process: next step
	sub    []int32   // per process in a collective: 0 before its sends, then 1 + the next incoming message
	clock  []float64 // per process: replay time of its next action
	done   []bool
	wait   []int32   // per process: the message it is blocked on, or -1
	arr    []float64 // per message: arrival time (NaN: not injected)
	left   []float64 // per message: when its last byte left the sender
	eOut   []float64 // electronic ports
	eIn    []float64
	pair   []int32 // n×n: circuit of (src, dst), or -1
	circs  []circuit
	outC   []int32 // planes×n: circuit leaving node on plane, or -1
	inC    []int32
	heap   procHeap
	res    Result
	delay  float64
	blocks int // processes blocked on a message
}

// Simulate replays the workload on an OCS network with the given number of
// planes and strategy, and returns its completion time and message delay.
//
// The model (a trace replay with eager sends and per-link serialisation):
//
//   - Each process replays its communication in the trace's order of posts
//     and completions. The time the trace shows it outside communication is
//     kept as compute: the time before each post, and before each
//     completion the time up to the process's last record before it (the
//     post itself, a region entry or exit, an event, a state, another
//     operation); the rest of the original wait is replaced by the
//     simulated one. A blocking operation is one whose completion follows
//     its post with nothing in between; a non-blocking one completes where
//     its wait (its End) was.
//   - A send injects its message when the sender posts it (eager protocol:
//     the sender never waits for the receiver); its completion waits until
//     the message has left the sender.
//   - A receive's completion waits until the matched message has arrived.
//     Receives no send matched do not wait.
//   - A collective is decomposed into point-to-point messages
//     (Options.Decompose) sent in one round: each member injects its
//     outgoing messages when it reaches the collective and returns when
//     they have left and all its incoming ones have arrived (the stages of
//     a tree or ring are not ordered).
//   - A message on a circuit occupies it for bytes/OpticalBW, first come
//     first served, and arrives when its last byte has (no optical latency).
//     A message on the electronic network occupies the sender's output port
//     and the receiver's input port for bytes/ElecBW, first come first
//     served, and arrives ElecLatency later.
//   - Static strategies: connections ranked and assigned by Assign before
//     the run (no set-up cost); every message of a connection with a circuit
//     uses it, the others the electronic network.
//   - Runtime strategy: a message uses its connection's circuit if there is
//     one; otherwise, if it has at least Threshold bytes, it requests one: on
//     the first plane where its source has no outgoing and its destination no
//     incoming circuit, else on the plane whose conflicting circuits (at most
//     two) have been used by the fewest messages (least frequently used),
//     which are torn down once idle. The new circuit is ready SwitchLatency
//     later. While a circuit is being set up, a message for it (the one
//     that requested it included) takes the circuit if it would arrive
//     there no later than over the electronic network, else the electronic
//     network. Smaller messages without a circuit use the electronic
//     network. A circuit's use count counts the messages that requested or
//     took it.
//
// The completion time is the time the last process finishes (its compute
// after its last communication included), from the trace's first record.
func (w *Workload) Simulate(s Strategy, planes int, p Params) (*Result, error) {
	if err := w.checkSim(planes, p); err != nil {
		return nil, err
	}
	st := w.newSim(s, planes, p)
	switch {
	case s.Static():
		ranked, err := Rank(w.ProgramConnections(), s)
		if err != nil {
			return nil, err
		}
		if err := st.preassign(ranked); err != nil {
			return nil, err
		}
	case s != Runtime:
		return nil, fmt.Errorf("ocs: unknown strategy %v", s)
	}
	st.run()
	return &st.res, nil
}

// SimulateRanked is Simulate for a static assignment of a ranking the
// caller made (for example from the matrix of one code structure); the
// strategy recorded in the result is s.
func (w *Workload) SimulateRanked(s Strategy, ranked []Connection, planes int, p Params) (*Result, error) {
	if err := w.checkSim(planes, p); err != nil {
		return nil, err
	}
	st := w.newSim(Best, planes, p)
	st.res.Strategy = s
	if err := st.preassign(ranked); err != nil {
		return nil, err
	}
	st.run()
	return &st.res, nil
}

// MaxSimBytes bounds the memory of a simulation's tables: a P×P table of
// the plane carrying each pair and, for the runtime strategy, a planes×P
// table per direction.
const MaxSimBytes = 1 << 30

// SimBytes returns the memory (in bytes) the tables of a simulation of w
// on planes planes need.
func (w *Workload) SimBytes(planes int) float64 {
	n := float64(w.Procs)
	return 4*n*n + 8*float64(planes)*n
}

// checkSim refuses a simulation on planes planes with p before it starts:
// invalid parameters, a negative number of planes, or too much memory
// (checkSimMemory).
func (w *Workload) checkSim(planes int, p Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if planes < 0 {
		return fmt.Errorf("ocs: %d planes", planes)
	}
	return w.checkSimMemory(planes)
}

// checkSimMemory refuses, before allocating, a simulation whose tables
// would need more than MaxSimBytes.
func (w *Workload) checkSimMemory(planes int) error {
	if need := w.SimBytes(planes); need > MaxSimBytes {
		return fmt.Errorf("ocs: simulating %d processes on %d planes needs %.1f GiB of tables (at most %d GiB)", w.Procs, planes, need/(1<<30), MaxSimBytes>>30)
	}
	return nil
}

func (w *Workload) newSim(s Strategy, planes int, p Params) *sim {
	n := w.Procs
	st := &sim{w: w, p: p, strat: s, planes: planes, n: n,
		optNs: p.OpticalBW / 1e9, elecNs: p.ElecBW / 1e9, elecLat: p.ElecLatency * 1e9, switchNs: p.SwitchLatency * 1e9,
		pc: make([]int32, n), sub: make([]int32, n), clock: make([]float64, n), done: make([]bool, n), wait: make([]int32, n),
		arr: make([]float64, len(w.msgs)), left: make([]float64, len(w.msgs)), eOut: make([]float64, n), eIn: make([]float64, n),
		pair: make([]int32, n*n)}
	if s == Runtime {
		st.outC, st.inC = make([]int32, planes*n), make([]int32, planes*n)
		for i := range st.outC {
			st.outC[i], st.inC[i] = -1, -1
		}
	}
	st.res = Result{Strategy: s, Planes: planes}
	for i := range st.arr {
		st.arr[i] = math.NaN()
	}
	for i := range st.pair {
		st.pair[i] = -1
	}
	return st
}

func (st *sim) preassign(ranked []Connection) error {
	a, err := Assign(st.n, ranked, st.planes)
	if err != nil {
		return err
	}
	for i, k := range a.Plane {
		if k < 0 {
			continue
		}
		c := a.Ranked[i]
		st.pair[int(c.Src)*st.n+int(c.Dst)] = int32(len(st.circs))
		st.circs = append(st.circs, circuit{src: c.Src, dst: c.Dst, plane: int32(k)})
	}
	st.res.Circuits = int64(len(st.circs))
	st.res.PlanesUsed = a.Used
	return nil
}

// run is the event loop: the process whose next action is earliest acts.
func (st *sim) run() {
	w := st.w
	for p := 0; p < st.n; p++ {
		st.wait[p] = -1
		if len(w.steps[p]) == 0 {
			st.clock[p], st.done[p] = float64(w.tail[p]), true
			continue
		}
		st.clock[p] = float64(w.steps[p][0].gap)
		st.heap.push(int32(p), st.clock[p])
	}
	for {
		for st.heap.len() > 0 {
			p, _ := st.heap.pop()
			st.advance(p)
		}
		if st.blocks == 0 {
			break
		}
		// Every process left is blocked on a message no running process
		// will send: a cycle the trace's order cannot satisfy. Release the
		// earliest.
		best := int32(-1)
		for p := range st.n {
			if st.wait[p] >= 0 && (best < 0 || st.clock[p] < st.clock[best]) {
				best = int32(p)
			}
		}
		st.wait[best] = -1
		st.blocks--
		st.res.BrokenWaits++
		st.skipWait(best)
		st.heap.push(best, st.clock[best])
	}
	for p := 0; p < st.n; p++ {
		st.res.Time = max(st.res.Time, st.clock[p])
	}
	st.res.Time /= 1e9
	if st.res.Messages > 0 {
		st.res.Delay = st.delay / float64(st.res.Messages) / 1e9
	}
	if st.res.Bytes > 0 {
		st.res.CircuitFraction = float64(st.res.CircuitBytes) / float64(st.res.Bytes)
	}
	if st.strat == Runtime {
		used := make([]bool, st.planes)
		for _, c := range st.circs {
			used[c.plane] = true
		}
		for _, u := range used {
			if u {
				st.res.PlanesUsed++
			}
		}
	}
}

// skipWait moves process p past the wait it was blocked on.
func (st *sim) skipWait(p int32) {
	s := &st.w.steps[p][st.pc[p]]
	if s.kind == stepColl {
		st.sub[p]++
		return
	}
	st.next(p)
}

// next moves process p to its next step, adding the compute before it.
func (st *sim) next(p int32) {
	st.pc[p]++
	st.sub[p] = 0
	steps := st.w.steps[p]
	if int(st.pc[p]) == len(steps) {
		st.clock[p] += float64(st.w.tail[p])
		st.done[p] = true
		return
	}
	st.clock[p] += float64(steps[st.pc[p]].gap)
}

// advance runs process p from its clock until it blocks, finishes, or its
// next action is later than another process's.
func (st *sim) advance(p int32) {
	w := st.w
	steps := w.steps[p]
	for !st.done[p] {
		s := &steps[st.pc[p]]
		t := st.clock[p]
		switch s.kind {
		case stepSend:
			st.inject(s.msg, t)
		case stepSendDone:
			st.clock[p] = max(t, st.left[s.msg])
		case stepRecv:
			if s.msg >= 0 && w.msgs[s.msg].sent {
				a := st.arr[s.msg]
				if math.IsNaN(a) {
					st.block(p, s.msg)
					return
				}
				st.clock[p] = max(t, a)
			}
		case stepColl:
			outs := w.lists[s.msg : s.msg+s.nOut]
			ins := w.lists[s.msg+s.nOut : s.msg+s.nOut+s.nIn]
			// sub 0: the outgoing messages are still to be sent; sub
			// k > 0: incoming message k-1 is the next to wait for.
			if st.sub[p] == 0 {
				for _, m := range outs {
					st.inject(m, t)
					st.clock[p] = max(st.clock[p], st.left[m])
				}
				st.sub[p] = 1
			}
			for int(st.sub[p]) <= len(ins) {
				m := ins[st.sub[p]-1]
				if w.msgs[m].sent {
					a := st.arr[m]
					if math.IsNaN(a) {
						st.block(p, m)
						return
					}
					st.clock[p] = max(st.clock[p], a)
				}
				st.sub[p]++
			}
		}
		st.next(p)
		if !st.done[p] && st.heap.len() > 0 && st.clock[p] > st.heap.minKey() {
			st.heap.push(p, st.clock[p])
			return
		}
	}
}

// block parks process p until message m arrives.
func (st *sim) block(p, m int32) {
	st.wait[p] = m
	st.blocks++
}

// inject sends message m at time t (ns) and wakes its receiver if it waits
// for it.
func (st *sim) inject(m int32, t float64) {
	msg := &st.w.msgs[m]
	if msg.src == msg.dst {
		st.left[m], st.arr[m] = t, t
	} else {
		st.res.Messages++
		st.res.Bytes += msg.bytes
		c := st.route(msg, t)
		eLeave := max(t, st.eOut[msg.src], st.eIn[msg.dst]) + float64(msg.bytes)/st.elecNs
		leave, arrive := eLeave, eLeave+st.elecLat
		optical := false
		if c >= 0 {
			ci := &st.circs[c]
			ci.uses++
			cLeave := max(t, ci.free) + float64(msg.bytes)/st.optNs
			// Static circuits always carry their connection; a runtime
			// circuit still being set up carries the message only if it
			// delivers it no later than the electronic network would.
			if optical = st.strat != Runtime || cLeave <= arrive; optical {
				leave, arrive = cLeave, cLeave
				ci.free = cLeave
				st.res.CircuitMessages++
				st.res.CircuitBytes += msg.bytes
			}
		}
		if !optical {
			st.eOut[msg.src], st.eIn[msg.dst] = leave, leave
		}
		st.left[m], st.arr[m] = leave, arrive
		st.delay += arrive - t
	}
	d := msg.dst
	if st.wait[d] == m {
		st.wait[d] = -1
		st.blocks--
		st.clock[d] = max(st.clock[d], st.arr[m])
		st.heap.push(d, st.clock[d])
	}
}

// route returns the circuit message msg uses at time t, setting one up for
// the runtime strategy, or -1 for the electronic network.
func (st *sim) route(msg *message, t float64) int32 {
	key := int(msg.src)*st.n + int(msg.dst)
	if c := st.pair[key]; c >= 0 || st.strat != Runtime {
		return c
	}
	if st.planes == 0 || msg.bytes < st.p.Threshold {
		return -1
	}
	n := st.n
	// The first plane with room, else the plane whose conflicting
	// circuits carried the fewest messages (the lowest such plane).
	best, bestCost := -1, int64(math.MaxInt64)
	for k := 0; k < st.planes; k++ {
		o, i := st.outC[k*n+int(msg.src)], st.inC[k*n+int(msg.dst)]
		if o < 0 && i < 0 {
			best = k
			break
		}
		cost := int64(0)
		if o >= 0 {
			cost += st.circs[o].uses
		}
		if i >= 0 && i != o {
			cost += st.circs[i].uses
		}
		if cost < bestCost {
			best, bestCost = k, cost
		}
	}
	ready := t
	for _, old := range []int32{st.outC[best*n+int(msg.src)], st.inC[best*n+int(msg.dst)]} {
		if old < 0 {
			continue
		}
		oc := &st.circs[old]
		if st.pair[int(oc.src)*n+int(oc.dst)] != old {
			continue // already torn down (it was both the out and the in)
		}
		ready = max(ready, oc.free)
		st.pair[int(oc.src)*n+int(oc.dst)] = -1
		st.outC[best*n+int(oc.src)] = -1
		st.inC[best*n+int(oc.dst)] = -1
		st.res.Evictions++
	}
	c := int32(len(st.circs))
	st.circs = append(st.circs, circuit{src: msg.src, dst: msg.dst, plane: int32(best), free: ready + st.switchNs})
	st.pair[key] = c
	st.outC[best*n+int(msg.src)] = c
	st.inC[best*n+int(msg.dst)] = c
	st.res.Circuits++
	return c
}

// procHeap is a binary min-heap of processes keyed by time (ties by
// process id, so that runs are deterministic).
type procHeap struct {
	p []int32
	k []float64
}

func (h *procHeap) len() int { return len(h.p) }

func (h *procHeap) minKey() float64 { return h.k[0] }

func (h *procHeap) less(i, j int) bool {
	return h.k[i] < h.k[j] || (h.k[i] == h.k[j] && h.p[i] < h.p[j])
}

func (h *procHeap) swap(i, j int) {
	h.p[i], h.p[j] = h.p[j], h.p[i]
	h.k[i], h.k[j] = h.k[j], h.k[i]
}

func (h *procHeap) push(p int32, k float64) {
	h.p = append(h.p, p)
	h.k = append(h.k, k)
	for i := len(h.p) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *procHeap) pop() (int32, float64) {
	p, k := h.p[0], h.k[0]
	last := len(h.p) - 1
	h.swap(0, last)
	h.p, h.k = h.p[:last], h.k[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.p) && h.less(l, m) {
			m = l
		}
		if r < len(h.p) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.swap(i, m)
		i = m
	}
	return p, k
}

// Curves are the results of a sweep: for each strategy, one Result per
// number of planes (Figures 12 and 13 of the paper).
type Curves struct {
	Params     Params     `json:"params"`
	Planes     []int      `json:"planes"`
	Strategies []Strategy `json:"strategies"`
	// Results[i][j] is strategy Strategies[i] with Planes[j] planes.
	Results [][]Result `json:"results"`
	// Electronic is the reference with no planes: everything electronic.
	Electronic Result `json:"electronic"`
}

// Sweep simulates every strategy with every number of planes, the static
// strategies ranking the connections of the whole program.
func (w *Workload) Sweep(ctx context.Context, planes []int, strategies []Strategy, p Params) (*Curves, error) {
	return w.SweepConnections(ctx, w.ProgramConnections(), planes, strategies, p)
}

// ProgramConnections returns the connections of the whole program (the
// root of Comm), the ones Simulate ranks.
func (w *Workload) ProgramConnections() []Connection {
	return Connections(w.Comm.Nodes[0].AggregateMatrix())
}

// SweepConnections is Sweep with the static strategies ranking conns (for
// example the connections of one code structure, as the paper plans
// circuits from a loop's matrix). The simulations are spread over
// GOMAXPROCS goroutines.
func (w *Workload) SweepConnections(ctx context.Context, conns []Connection, planes []int, strategies []Strategy, p Params) (*Curves, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ranked := make([][]Connection, len(strategies))
	for i, s := range strategies {
		if s.Static() {
			var err error
			if ranked[i], err = Rank(conns, s); err != nil {
				return nil, err
			}
		} else if s != Runtime {
			return nil, fmt.Errorf("ocs: unknown strategy %v", s)
		}
	}
	c := &Curves{Params: p, Planes: planes, Strategies: strategies, Results: make([][]Result, len(strategies))}
	e, err := w.Simulate(Best, 0, p)
	if err != nil {
		return nil, err
	}
	c.Electronic = *e
	type job struct{ i, j int }
	jobs := make(chan job)
	errs := make([]error, len(strategies)*len(planes))
	for i := range strategies {
		c.Results[i] = make([]Result, len(planes))
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(errs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jb := range jobs {
				var r *Result
				var err error
				if s := strategies[jb.i]; s.Static() {
					r, err = w.SimulateRanked(s, ranked[jb.i], planes[jb.j], p)
				} else {
					r, err = w.Simulate(s, planes[jb.j], p)
				}
				if err != nil {
					errs[jb.i*len(planes)+jb.j] = err
					continue
				}
				c.Results[jb.i][jb.j] = *r
			}
		}()
	}
feed:
	for i := range strategies {
		for j := range planes {
			select {
			case jobs <- job{i, j}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}
