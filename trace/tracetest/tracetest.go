// Package tracetest provides synthetic traces for tests and benchmarks of
// packages that consume the trace model, as net/http/httptest does for HTTP.
package tracetest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/parscope/parscope/trace"
)

// Stream is a trace.Reader that synthesises a time-merged stream of one
// run of Procs processes, Limit records long, without holding it in
// memory. Every 1 µs step, each process enters a state and a region; even
// processes send 1 KiB to the next process, which receives it; every
// process leaves the region; every tenth step adds an event and a counter
// sample per process.
type Stream struct {
	Procs int32
	Limit int // records to produce
	// From is the first 1 µs step produced (0: the beginning), so that
	// streams of consecutive time ranges can be generated in parallel.
	From int64

	n    int
	step int64
	pend []trace.Record
	back []trace.Record // pend's storage, reused
}

// Header returns the header of a Stream of procs processes: run 0 with
// them, the five states S0–S4 and the three regions R0–R2 it enters, on a
// 1 ns clock.
func Header(procs int32) *trace.Header {
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: procs}}}
	for s := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: s, Name: fmt.Sprintf("S%d", s)})
	}
	for r := range int32(3) {
		h.Regions = append(h.Regions, trace.RegionDef{ID: r, Label: fmt.Sprintf("R%d", r), Parent: -1})
	}
	return h
}

// Produced returns the number of records read so far.
func (g *Stream) Produced() int { return g.n }

// Read implements trace.Reader.
func (g *Stream) Read(buf []trace.Record) (int, error) {
	k := 0
	for k < len(buf) && g.n < g.Limit {
		if len(g.pend) == 0 {
			g.pend = g.back[:0]
			g.fill()
			g.back = g.pend
		}
		c := min(copy(buf[k:], g.pend), g.Limit-g.n)
		g.pend = g.pend[c:]
		k += c
		g.n += c
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

func (g *Stream) fill() {
	s := g.From + g.step
	t := s * 1000
	g.step++
	for p := int32(0); p < g.Procs; p++ {
		g.pend = append(g.pend, trace.State(0, p, t, int32(s%5)), trace.Enter(0, p, t, int32(s%3)))
	}
	for p := int32(0); p < g.Procs; p++ {
		if p%2 == 0 {
			g.pend = append(g.pend, trace.Send(0, p, t+100, t+300, p+1, 1024, 0, 0))
		} else {
			g.pend = append(g.pend, trace.Recv(0, p, t+100, t+400, p-1, 1024, 0, 0))
		}
	}
	for p := int32(0); p < g.Procs; p++ {
		g.pend = append(g.pend, trace.Exit(0, p, t+500, int32(s%3)))
		if s%10 == 0 {
			g.pend = append(g.pend, trace.Event(0, p, t+500, 1, s), trace.Counter(0, p, t+500, 0, float64(s)/3))
		}
	}
}

// RandomStates is a trace.Reader of one run of Procs processes in which
// record i, at time i ns, puts a random process in a random one of States
// states (PCG of Seed): nearly every record makes a macrostate, and a
// class of parallel states, not seen before, the worst case of the
// occupancy and entropy tables. It produces Limit records without holding
// them.
type RandomStates struct {
	Procs, States int32
	Limit         int
	Seed          uint64

	n   int
	rng *rand.Rand
}

// Header returns the header of the trace: run 0 with Procs processes and
// the states S0..S(States-1), on a 1 ns clock.
func (g *RandomStates) Header() *trace.Header {
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: g.Procs}}}
	for s := range g.States {
		h.States = append(h.States, trace.StateDef{ID: s, Name: fmt.Sprintf("S%d", s)})
	}
	return h
}

// Read implements trace.Reader.
func (g *RandomStates) Read(buf []trace.Record) (int, error) {
	if g.rng == nil {
		g.rng = rand.New(rand.NewPCG(g.Seed, g.Seed^0x9e3779b97f4a7c15))
	}
	k := 0
	for ; k < len(buf) && g.n < g.Limit; k++ {
		buf[k] = trace.State(0, g.rng.Int32N(g.Procs), int64(g.n), g.rng.Int32N(g.States))
		g.n++
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// ComputeThenSend returns a trace of two processes under "main", one run
// per value c of cs, on a 1 ns clock: in "compute", process 0 works for c
// ns and process 1 for c/2; then process 0 sends 100 bytes to process 1
// in "MPI_Send", which process 1 receives in "MPI_Recv" from c/2 to c+10;
// both leave main at c+20.
func ComputeThenSend(cs ...int64) (*trace.Header, []trace.Record) {
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}}
	h.Regions = []trace.RegionDef{{ID: 1, Label: "main", Parent: -1}, {ID: 2, Label: "compute", Parent: -1},
		{ID: 3, Label: "MPI_Send", Parent: -1}, {ID: 4, Label: "MPI_Recv", Parent: -1}}
	var recs []trace.Record
	for run, c := range cs {
		r := int32(run)
		h.Runs = append(h.Runs, trace.RunInfo{ID: r, Procs: 2})
		recs = append(recs,
			trace.Enter(r, 0, 0, 1), trace.Enter(r, 1, 0, 1), trace.Enter(r, 0, 0, 2), trace.Enter(r, 1, 0, 2),
			trace.Exit(r, 1, c/2, 2), trace.Enter(r, 1, c/2, 4), trace.Recv(r, 1, c/2, c+10, 0, 100, 0, 0),
			trace.Exit(r, 0, c, 2), trace.Enter(r, 0, c, 3), trace.Send(r, 0, c, c+10, 1, 100, 0, 0),
			trace.Exit(r, 0, c+10, 3), trace.Exit(r, 1, c+10, 4), trace.Exit(r, 0, c+20, 1), trace.Exit(r, 1, c+20, 1))
	}
	return h, recs
}

// Region ids of MPIRing.
const (
	RingMain int32 = iota
	RingCompute
	RingAllreduce
	RingIrecv
	RingSend
	RingWait
)

// MPIRing returns a trace of one run of a ring exchange among procs
// processes (ranks), steps steps long, with its MPI calls as regions, on a
// 1 ns clock: the same program at any number of ranks, each doing the
// same work. Every rank is in step: step k begins at S = 4,000 k; rank r
// computes in "compute" from S for c = 1,000 ns (even ranks) or 2,000 (odd
// ones), enters MPI_Allreduce at S + c, every rank leaving it at S +
// 2,500, posts an MPI_Irecv from its left neighbour (S + 2,500 to S +
// 2,600; request k), sends 8 bytes to its right one in MPI_Send (S + 2,600
// to S + 3,600) and waits in MPI_Wait (S + 3,600 to S + 4,000) for its
// receive, which completes at S + 3,900; all inside "main", from 0 to
// 4,000 steps. The records are in time-merged order.
func MPIRing(procs, steps int) (*trace.Header, []trace.Record) {
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: int32(procs)}},
		Regions: []trace.RegionDef{{ID: RingMain, Label: "main", Parent: -1}, {ID: RingCompute, Label: "compute", Parent: -1},
			{ID: RingAllreduce, Label: "MPI_Allreduce", Parent: -1}, {ID: RingIrecv, Label: "MPI_Irecv", Parent: -1},
			{ID: RingSend, Label: "MPI_Send", Parent: -1}, {ID: RingWait, Label: "MPI_Wait", Parent: -1}}}
	var recs []trace.Record
	for p := range int32(procs) {
		left, right := (p+int32(procs)-1)%int32(procs), (p+1)%int32(procs)
		c := int64(1_000 * (1 + p%2))
		recs = append(recs, trace.Enter(0, p, 0, RingMain))
		for k := range int64(steps) {
			s := 4_000 * k
			rv := trace.Recv(0, p, s+2_500, s+3_900, left, 8, 0, 0)
			rv.Seq = int32(k)
			recs = append(recs,
				trace.Enter(0, p, s, RingCompute), trace.Exit(0, p, s+c, RingCompute),
				trace.Enter(0, p, s+c, RingAllreduce), trace.Coll(0, p, s+c, s+2_500, trace.OpAllreduce, trace.NoPeer, 8, 0),
				trace.Exit(0, p, s+2_500, RingAllreduce),
				trace.Enter(0, p, s+2_500, RingIrecv), rv, trace.Exit(0, p, s+2_600, RingIrecv),
				trace.Enter(0, p, s+2_600, RingSend), trace.Send(0, p, s+2_600, s+3_600, right, 8, 0, 0), trace.Exit(0, p, s+3_600, RingSend),
				trace.Enter(0, p, s+3_600, RingWait), trace.Exit(0, p, s+4_000, RingWait))
		}
		recs = append(recs, trace.Exit(0, p, 4_000*int64(steps), RingMain))
	}
	slices.SortStableFunc(recs, trace.Compare)
	return h, recs
}
