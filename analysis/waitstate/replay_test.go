package waitstate

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// Region ids of the random traces.
const (
	rCompute int32 = iota + 1
	rSend
	rIsend
	rRecv
	rIrecv
	rWait
	rWaitall
	rBarrier
	rAllreduce
	rBcast
	rReduce
)

var randomRegions = []trace.RegionDef{
	{ID: rCompute, Function: "compute"}, {ID: rSend, Function: "MPI_Send"}, {ID: rIsend, Function: "MPI_Isend"},
	{ID: rRecv, Function: "MPI_Recv"}, {ID: rIrecv, Function: "MPI_Irecv"}, {ID: rWait, Function: "MPI_Wait"},
	{ID: rWaitall, Function: "MPI_Waitall"}, {ID: rBarrier, Function: "MPI_Barrier"},
	{ID: rAllreduce, Function: "MPI_Allreduce"}, {ID: rBcast, Function: "MPI_Bcast"}, {ID: rReduce, Function: "MPI_Reduce"},
}

// randomOptions add to randomMPI's traces.
type randomOptions struct {
	// collectives is the number of collective operations (barrier,
	// allreduce, bcast, reduce, on every process) each process takes part
	// in, between its messages.
	collectives int
	// acyclic sends every message from a lower process to a higher one,
	// so that constant clock offsets always restore the clock condition.
	acyclic bool
	// self keeps the messages a process sends itself (randomMPI sends
	// them to the next process instead).
	self bool
	// skew shifts each process's clock by a random offset of up to skew
	// ns either way (after moving every time skew ns forward, so that none
	// is negative).
	skew int64
}

// randomMPI builds a random MPI trace of procs processes: each sends its
// share of msgs messages (a unique tag each, so the matching is fixed) in
// MPI_Send or MPI_Isend, and receives its own in MPI_Recv, or in MPI_Irecv
// completed by a later MPI_Wait or MPI_Waitall of several, or completed
// outside every call; some receives have no send. Times are random, with
// ties, and need not respect causality (clock condition violations).
func randomMPI(seed uint64, procs, msgs int) []trace.Record {
	return randomMPIWith(seed, procs, msgs, randomOptions{})
}

// randomMPIWith builds randomMPI's trace with the additions of opt, drawn
// from a random source of their own, so that without them the trace is
// randomMPI's.
func randomMPIWith(seed uint64, procs, msgs int, opt randomOptions) []trace.Record {
	rng := rand.New(rand.NewPCG(seed, 3))
	more := rand.New(rand.NewPCG(seed, 5))
	type coll struct {
		region int32
		op     trace.CollectiveOp
		root   int32
	}
	colls := make([]coll, opt.collectives)
	for i := range colls {
		c := []coll{{rBarrier, trace.OpBarrier, trace.NoPeer}, {rAllreduce, trace.OpAllreduce, trace.NoPeer},
			{rBcast, trace.OpBcast, 0}, {rReduce, trace.OpReduce, 0}}[more.IntN(4)]
		if c.root == 0 {
			c.root = int32(more.IntN(procs))
		}
		colls[i] = c
	}
	type op struct {
		send  bool
		peer  int32
		tag   int32
		order float64
	}
	ops := make([][]op, procs)
	for m := range msgs {
		src, dst := int32(rng.IntN(procs)), int32(rng.IntN(procs))
		if src == dst && !opt.self {
			dst = (src + 1) % int32(procs)
		}
		if opt.acyclic && src > dst {
			src, dst = dst, src
		}
		if rng.IntN(20) != 0 { // a receive without its send now and then
			ops[src] = append(ops[src], op{send: true, peer: dst, tag: int32(m), order: rng.Float64()})
		}
		ops[dst] = append(ops[dst], op{peer: src, tag: int32(m), order: rng.Float64()})
	}
	var recs []trace.Record
	step := func() int64 { return int64(rng.IntN(4)) * 5 } // ties are common
	for p := range int32(procs) {
		slices.SortFunc(ops[p], func(a, b op) int {
			switch {
			case a.order < b.order:
				return -1
			case a.order > b.order:
				return 1
			}
			return 0
		})
		t := int64(rng.IntN(10))
		type posted struct {
			peer, tag int32
			t         int64
		}
		var irecvs []posted
		// complete ends the non-blocking receives posted so far in one
		// MPI_Wait (one of them) or MPI_Waitall (all), or outside every
		// call.
		complete := func() {
			if len(irecvs) == 0 {
				return
			}
			n := len(irecvs)
			region := rWaitall
			if n == 1 || rng.IntN(3) == 0 {
				n, region = 1, rWait
			}
			if rng.IntN(10) == 0 { // completed outside every call
				for _, ir := range irecvs[:n] {
					t += step()
					r := trace.Recv(0, p, ir.t, t, ir.peer, 8, ir.tag, 0)
					r.Seq = 1
					recs = append(recs, r)
				}
				irecvs = irecvs[n:]
				return
			}
			enter := t
			recs = append(recs, trace.Enter(0, p, enter, region))
			for _, ir := range irecvs[:n] {
				t += step()
				r := trace.Recv(0, p, ir.t, t, ir.peer, 8, ir.tag, 0)
				r.Seq = 1
				recs = append(recs, r)
			}
			t += step()
			recs = append(recs, trace.Exit(0, p, t, region))
			irecvs = irecvs[n:]
		}
		// at[i] is the number of the process's ops before its i-th
		// collective.
		at := make([]int, len(colls))
		for i := range at {
			at[i] = more.IntN(len(ops[p]) + 1)
		}
		slices.Sort(at)
		next := 0
		collective := func(before int) {
			for ; next < len(at) && at[next] <= before; next++ {
				c := colls[next]
				t += int64(more.IntN(20))
				enter := t
				t += 1 + int64(more.IntN(30))
				recs = append(recs, trace.Enter(0, p, enter, c.region), trace.Coll(0, p, enter, t, c.op, c.root, 8, 0),
					trace.Exit(0, p, t, c.region))
			}
		}
		for i, o := range ops[p] {
			collective(i)
			if rng.IntN(3) == 0 {
				recs = append(recs, trace.Enter(0, p, t, rCompute))
				t += 1 + int64(rng.IntN(40))
				recs = append(recs, trace.Exit(0, p, t, rCompute))
			}
			t += step()
			switch {
			case o.send && rng.IntN(2) == 0:
				recs = append(recs, trace.Enter(0, p, t, rSend), trace.Send(0, p, t, t, o.peer, 8, o.tag, 0))
				t += step()
				recs = append(recs, trace.Exit(0, p, t, rSend))
			case o.send:
				r := trace.Send(0, p, t, t, o.peer, 8, o.tag, 0)
				r.Seq = 1
				recs = append(recs, trace.Enter(0, p, t, rIsend), r)
				t += step()
				recs = append(recs, trace.Exit(0, p, t, rIsend))
			case rng.IntN(2) == 0:
				enter := t
				recs = append(recs, trace.Enter(0, p, enter, rRecv))
				t += step() + int64(rng.IntN(30))
				recs = append(recs, trace.Recv(0, p, enter, t, o.peer, 8, o.tag, 0), trace.Exit(0, p, t, rRecv))
			default:
				recs = append(recs, trace.Enter(0, p, t, rIrecv))
				irecvs = append(irecvs, posted{o.peer, o.tag, t})
				t += step()
				recs = append(recs, trace.Exit(0, p, t, rIrecv))
				if rng.IntN(3) == 0 {
					complete()
				}
			}
		}
		for len(irecvs) > 0 {
			complete()
		}
		collective(len(ops[p]))
	}
	if opt.skew > 0 {
		skews := make([]int64, procs)
		for p := range skews {
			skews[p] = opt.skew + more.Int64N(2*opt.skew+1) - opt.skew
		}
		for i := range recs {
			r := &recs[i]
			d := skews[r.Proc]
			if r.End != 0 || r.T == 0 { // an End of 0 after a T is none
				r.End += d
			}
			r.T += d
		}
	}
	slices.SortStableFunc(recs, trace.Compare)
	return recs
}

// randomTrace is the Trace of randomMPI's traces of procs processes.
func randomTrace(procs int) *engine.Trace {
	h := &trace.Header{Regions: randomRegions, Runs: []trace.RunInfo{{ID: 0, Procs: int32(procs)}}}
	return &engine.Trace{Header: h, Stats: &store.Stats{}}
}

// runBatches runs the analysis over recs in batches of size n (all at
// once when n is 0), replaying the receives early or not, in as many
// passes as it asks for (engine.Repeater), as engine.Run does.
func runBatches(t *testing.T, recs []trace.Record, procs int, p *Params, n int, early bool) *Result {
	t.Helper()
	defer func(old bool) { replayEarly = old }(replayEarly)
	replayEarly = early
	a, err := New(randomTrace(procs), p)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		n = len(recs)
	}
	for again := true; again; {
		for i := 0; i < len(recs); i += n {
			if err := a.Add(recs[i:min(i+n, len(recs))]); err != nil {
				t.Fatal(err)
			}
		}
		if again, err = a.Again(); err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	return res.(*Result)
}

// TestReplayWhileReading checks that replaying the wrong order search's
// receives while the trace is read gives what replaying them all at the
// end gives, on random MPI traces read in batches of every size, and that
// the traces do have wrong order waits to find.
func TestReplayWhileReading(t *testing.T) {
	withWO := 0
	for seed := range uint64(300) {
		procs := 2 + int(seed%4)
		recs := randomMPI(seed, procs, 10+int(seed%50))
		p := DefaultParams()
		p.Top = 0
		want := runBatches(t, recs, procs, p, 0, false)
		if want.Runs[0].SubPatterns[LateSenderWrongOrder].WaitNS > 0 {
			withWO++
		}
		for _, n := range []int{1, 3, 16, 0} {
			if got := runBatches(t, recs, procs, p, n, true); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, batches of %d: replayed while reading\n%+v\nat the end\n%+v", seed, n, got.Runs[0], want.Runs[0])
			}
		}
	}
	if withWO < 50 {
		t.Errorf("only %d of 300 random traces have a wrong order wait", withWO)
	}
}

// TestReplayMemory checks that the receives waiting for their replay stay
// few on a long trace: two processes exchanging messages in MPI_Recv and
// MPI_Irecv + MPI_Waitall, read in batches.
func TestReplayMemory(t *testing.T) {
	h := &trace.Header{Regions: randomRegions, Runs: []trace.RunInfo{{ID: 0, Procs: 2}}}
	a, err := New(&engine.Trace{Header: h, Stats: &store.Stats{}}, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 20000
	most := 0
	var batch []trace.Record
	for k := range int64(rounds) {
		t0 := 100 * k
		// p0 sends two messages; p1 posts two receives first and waits
		// for both, the second sent first.
		s1 := trace.Send(0, 0, t0+30, t0+30, 1, 8, 1, 0)
		s2 := trace.Send(0, 0, t0+20, t0+20, 1, 8, 2, 0)
		r1 := trace.Recv(0, 1, t0+1, t0+40, 0, 8, 1, 0)
		r1.Seq = 1
		r2 := trace.Recv(0, 1, t0+2, t0+41, 0, 8, 2, 0)
		r2.Seq = 2
		batch = append(batch,
			trace.Enter(0, 1, t0, rIrecv), trace.Exit(0, 1, t0+1, rIrecv), trace.Enter(0, 1, t0+1, rIrecv), trace.Exit(0, 1, t0+2, rIrecv),
			trace.Enter(0, 1, t0+5, rWaitall),
			trace.Enter(0, 0, t0+20, rSend), s2, trace.Exit(0, 0, t0+25, rSend),
			trace.Enter(0, 0, t0+30, rSend), s1, trace.Exit(0, 0, t0+35, rSend),
			r1, r2, trace.Exit(0, 1, t0+42, rWaitall))
		if len(batch) >= 4096 || k == rounds-1 {
			slices.SortStableFunc(batch, trace.Compare)
			if err := a.Add(batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
			r, _ := a.runs.Of(0)
			for _, ps := range r.procs {
				most = max(most, len(ps.recvs)+len(ps.open))
			}
		}
	}
	if most > 2000 {
		t.Errorf("up to %d receives held between batches of 4096 records, want about one batch's (%d)", most, 2*4096/15)
	}
	res, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	w := res.(*Result).Runs[0]
	// Each round p1 waits in MPI_Waitall from 5 to 30, the last send's
	// start: Late Sender 25 ns a round. Its two messages complete in the
	// other order than they were sent (tag 1, sent at 30, first), but in
	// one Waitall, whose wait joins the buffer only after its receives
	// were compared: nothing is in wrong order.
	if ls := w.Patterns[LateSender].WaitNS; ls != 25*rounds {
		t.Errorf("late sender %d ns, want %d", ls, 25*rounds)
	}
	if wo := w.SubPatterns[LateSenderWrongOrder].WaitNS; wo != 0 {
		t.Errorf("wrong order %d ns, want 0", wo)
	}
	t.Logf("late sender %d ns, at most %d receives held", w.Patterns[LateSender].WaitNS, most)
}

// TestOwnCallsReference checks the analysis against the reference on
// traces whose messages and collectives are outside every MPI region, so
// that each record is its own call (a sideCall), and the calls of
// measured sends are reused for later messages: randomMPI's traces
// without their MPI regions, each blocking send spanning what was its
// MPI_Send, read in batches of 1, 3, 16 records and all at once. The
// traces must have Late Sender, Late Receiver and wrong order waits for
// the comparison to mean something.
func TestOwnCallsReference(t *testing.T) {
	var ls, lr, wo int
	for seed := range uint64(200) {
		procs := 2 + int(seed%4)
		opt := randomOptions{collectives: int(seed % 3)}
		var recs []trace.Record
		lastSend := map[int32]int{}
		for _, r := range randomMPIWith(seed, procs, 10+int(seed%50), opt) {
			switch {
			case r.Kind == trace.KindSend && r.Seq == trace.NoRequest:
				lastSend[r.Proc] = len(recs)
			case r.Kind == trace.KindExit && r.ID == rSend:
				recs[lastSend[r.Proc]].End = r.T
			}
			if (r.Kind == trace.KindEnter || r.Kind == trace.KindExit) && r.ID != rCompute {
				continue
			}
			recs = append(recs, r)
		}
		p := DefaultParams()
		p.Top, p.ClockCorrection = 0, false
		tr := func() *engine.Trace {
			h := &trace.Header{Regions: randomRegions[:1], Runs: []trace.RunInfo{{ID: 0, Procs: int32(procs)}}}
			return &engine.Trace{Header: h, Stats: &store.Stats{}}
		}
		want := runReferenceOn(t, tr(), recs, p)
		w := want.Runs[0]
		if w.Patterns[LateSender].WaitNS > 0 {
			ls++
		}
		if w.Patterns[LateReceiver].WaitNS > 0 {
			lr++
		}
		if w.SubPatterns[LateSenderWrongOrder].WaitNS > 0 {
			wo++
		}
		for _, n := range []int{1, 3, 16, 0} {
			a, err := New(tr(), p)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(recs); i += max(n, 1) {
				end := len(recs)
				if n > 0 {
					end = min(i+n, len(recs))
				}
				if err := a.Add(recs[i:end]); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
			}
			got, err := a.Result()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, batches of %d:\n%s", seed, n, diffWaits(got.(*Result).Runs[0], w))
			}
		}
	}
	t.Logf("of 200 traces, %d have Late Sender, %d Late Receiver, %d wrong order waits", ls, lr, wo)
	if ls < 50 || lr < 50 || wo < 20 {
		t.Errorf("of 200 traces, %d have Late Sender, %d Late Receiver, %d wrong order waits; want at least 50, 50, 20", ls, lr, wo)
	}
}
