package instrument

import (
	"fmt"
	"math"
	"strconv"

	"github.com/parscope/parscope/trace"
)

// SimClock is a simulated clock: a discrete-event model of a cluster with
// one core per process, for running a workload whose timing should not
// depend on the machine that runs it (a 2-core machine running 17
// processes, a loaded CI runner). With Options.SimClock set, no record
// reads the wall clock: each process keeps its own virtual time, in
// nanoseconds from 0, and every record it makes carries that time.
//
// A process's virtual time advances only
//
//   - by BlockCost at every Block (after the block's record, whether or
//     not a filter keeps it: the cost is the program's, not the
//     recorder's);
//   - by Process.Work, the workload's own model of a computation (for
//     example n floating-point operations at a modelled rate);
//   - at a receive, Process.RecvStamped, to max(own time, stamp +
//     Transfer(bytes)), where stamp is the sender's virtual time at the
//     send (Process.SendStamped returns it; the workload carries it in
//     its message, since the recorder cannot see the program's channels).
//
// A send costs the sender nothing (an eager, non-blocking send; messages
// to several destinations do not share a link, so there is no
// contention). The recorded times are the virtual times, so every
// analysis reads a simulated trace as it reads a measured one.
//
// The model is deterministic when the workload is: if each receive names
// the message it takes (a fixed source and order, not "whichever arrives
// first"), every process's records, and so the trace, are the same on
// every run, however the goroutines are scheduled.
type SimClock struct {
	// BlockCost is the virtual time in ns a process spends in the
	// bookkeeping of each block it enters (Process.Block).
	BlockCost int64
	// Latency is the time in ns from a send to the first byte's arrival.
	Latency int64
	// Bandwidth is the link's rate in bytes per ns (1 is 1 GB/s); a
	// message of b bytes arrives Latency + ceil(b/Bandwidth) ns after its
	// send. 0 means an infinite bandwidth.
	Bandwidth float64
}

// DefaultSimClock is the model's default: 100 ns of bookkeeping per block,
// and a network of 2 µs latency and 1 GB/s (1 byte per ns), about a
// commodity cluster's MPI over Ethernet-class interconnect with small
// messages.
func DefaultSimClock() SimClock {
	return SimClock{BlockCost: 100, Latency: 2000, Bandwidth: 1}
}

// Transfer is the time in ns from the send of a message of the given size
// to its arrival: Latency + ceil(bytes/Bandwidth).
func (c *SimClock) Transfer(bytes int64) int64 {
	t := c.Latency
	if c.Bandwidth > 0 && bytes > 0 {
		t += int64(math.Ceil(float64(bytes) / c.Bandwidth))
	}
	return t
}

// validate reports a model that would make time go backwards.
func (c *SimClock) validate() error {
	if c.BlockCost < 0 || c.Latency < 0 || c.Bandwidth < 0 || math.IsNaN(c.Bandwidth) || math.IsInf(c.Bandwidth, 0) {
		return fmt.Errorf("instrument: simulated clock with a negative or undefined cost: %+v", *c)
	}
	return nil
}

// meta describes the model in the trace's metadata.
func (c *SimClock) meta(extra map[string]string) {
	extra["clock"] = "simulated"
	extra["sim_block_ns"] = strconv.FormatInt(c.BlockCost, 10)
	extra["sim_latency_ns"] = strconv.FormatInt(c.Latency, 10)
	extra["sim_bandwidth_bytes_per_ns"] = strconv.FormatFloat(c.Bandwidth, 'g', -1, 64)
}

// Work advances the process's virtual time by ns, the modelled duration
// of a computation, on the simulated clock (Options.SimClock). It does
// nothing on the wall clock, where the computation takes the time it
// takes, nor on a nil handle.
func (p *Process) Work(ns int64) {
	if p != nil && p.sim != nil && ns > 0 {
		p.vt += ns
	}
}

// VirtualTime returns the process's virtual time in ns on the simulated
// clock, and 0 on the wall clock or a nil handle.
func (p *Process) VirtualTime() int64 {
	if p == nil || p.sim == nil {
		return 0
	}
	return p.vt
}

// SendStamped records the send of a message as Send does and returns its
// stamp: the sender's virtual time, which the program carries in the
// message to give to RecvStamped. On the wall clock (and a nil handle) it
// returns 0.
func (p *Process) SendStamped(dst int, bytes int64, tag int32) int64 {
	if p == nil {
		return 0
	}
	p.record(trace.KindSend, 0, int32(dst), bytes, tag)
	if p.sim == nil {
		return 0
	}
	return p.vt
}

// RecvStamped records the receipt of a message as Recv does; on the
// simulated clock the process first waits for the message: its virtual
// time becomes max(its time, stamp + Transfer(bytes)), stamp being what
// the sender's SendStamped returned, and the receive is recorded at that
// time. On the wall clock stamp is ignored.
func (p *Process) RecvStamped(src int, bytes int64, tag int32, stamp int64) {
	if p == nil {
		return
	}
	if p.sim != nil {
		p.vt = max(p.vt, stamp+p.sim.Transfer(bytes))
	}
	p.record(trace.KindRecv, 0, int32(src), bytes, tag)
}
