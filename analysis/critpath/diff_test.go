package critpath

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// The regions of the random traces: some of them MPI calls.
const (
	gMain int32 = iota
	gCompute
	gIO
	gSend
	gRecv
	gIrecv
	gWait
	gWaitall
	gBarrier
	gBcast
	gReduce
	gAllreduce
	gRegions
)

var genRegions = []trace.RegionDef{
	{ID: gMain, Label: "main", Parent: -1}, {ID: gCompute, Label: "compute", Parent: -1},
	{ID: gIO, Label: "io", Parent: -1}, {ID: gSend, Label: "MPI_Send", Parent: -1},
	{ID: gRecv, Label: "MPI_Recv", Parent: -1}, {ID: gIrecv, Label: "MPI_Irecv", Parent: -1},
	{ID: gWait, Label: "MPI_Wait", Parent: -1}, {ID: gWaitall, Label: "MPI_Waitall", Parent: -1},
	{ID: gBarrier, Label: "MPI_Barrier", Parent: -1}, {ID: gBcast, Label: "MPI_Bcast", Parent: -1},
	{ID: gReduce, Label: "MPI_Reduce", Parent: -1}, {ID: gAllreduce, Label: "MPI_Allreduce", Parent: -1},
}

// Communicators of the random traces: 0 is MPI_COMM_WORLD, 1 holds
// processes 0 and 1, 2 is a self communicator, 3 has unknown members.
const (
	cWorld int32 = iota
	cPair
	cSelf
	cUnknown
)

// genTrace returns a random trace of one run, made from seed: its header
// and its records in the engine's order (time, process, stream order).
func genTrace(seed uint64) (*engine.Trace, []trace.Record) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	procs := int32(2 + rng.IntN(5))
	world := make([]int32, procs)
	for i := range world {
		world[i] = int32(i)
	}
	h := &trace.Header{Regions: genRegions, Runs: []trace.RunInfo{{ID: 0, Procs: procs}},
		Comms: []trace.CommDef{{ID: cWorld, Name: "MPI_COMM_WORLD", Members: world}, {ID: cPair, Members: []int32{0, 1}},
			{ID: cSelf, Self: true}, {ID: cUnknown, Unknown: true}}}
	// The collectives every process runs on MPI_COMM_WORLD, in order.
	type coll struct {
		op   trace.CollectiveOp
		root int32
	}
	ops := []trace.CollectiveOp{trace.OpBarrier, trace.OpBcast, trace.OpReduce, trace.OpAllreduce, trace.OpGather,
		trace.OpScatter, trace.OpAlltoall, trace.OpScan, trace.OpUnknown}
	colls := make([]coll, rng.IntN(6))
	for i := range colls {
		colls[i] = coll{ops[rng.IntN(len(ops))], int32(rng.IntN(int(procs)))}
		if rng.IntN(8) == 0 {
			colls[i].root = trace.NoPeer
		}
	}
	steps := 10 + rng.IntN(60)
	if seed%8 == 7 {
		steps = 100 + rng.IntN(300) // long enough for the summaries to fold
	}
	maxStep := int64(1 + rng.IntN(4))
	var recs []trace.Record
	for p := range procs {
		t := int64(rng.IntN(5))
		var stack []int32
		nextColl := 0
		lastColl := len(colls)
		if rng.IntN(12) == 0 && lastColl > 0 {
			lastColl-- // this process never records the last collective
		}
		add := func(r trace.Record) { recs = append(recs, r) }
		enter := func(id int32) { add(trace.Enter(0, p, t, id)); stack = append(stack, id) }
		leave := func() {
			if n := len(stack); n > 0 {
				add(trace.Exit(0, p, t, stack[n-1]))
				stack = stack[:n-1]
			}
		}
		adv := func() { t += rng.Int64N(maxStep + 1) }
		end := func() int64 {
			switch rng.IntN(4) {
			case 0:
				return 0 // unknown: the record's time
			case 1:
				return t
			}
			return t + rng.Int64N(6)
		}
		// Mostly a ring, so that most messages find their other side.
		dst := func() int32 {
			if rng.IntN(4) == 0 {
				return int32(rng.IntN(int(procs)))
			}
			return (p + 1) % procs
		}
		src := func() int32 {
			if rng.IntN(4) == 0 {
				return int32(rng.IntN(int(procs)))
			}
			return (p + procs - 1) % procs
		}
		tag := func() int32 {
			if rng.IntN(4) == 0 {
				return int32(rng.IntN(3))
			}
			return 0
		}
		comm := func() int32 {
			if rng.IntN(10) == 0 {
				return cPair
			}
			return cWorld
		}
		if rng.IntN(3) > 0 {
			enter(gMain)
		}
		for range steps {
			adv()
			switch k := rng.IntN(22); {
			case k < 3: // a computation region
				enter([]int32{gCompute, gIO, gMain}[rng.IntN(3)])
				adv()
				if rng.IntN(3) > 0 {
					leave()
				}
			case k < 6: // a blocking send in MPI_Send
				enter(gSend)
				adv()
				add(trace.Send(0, p, t, end(), dst(), 8, tag(), comm()))
				adv()
				leave()
			case k < 8: // a blocking receive in MPI_Recv
				enter(gRecv)
				adv()
				from := src()
				if rng.IntN(6) == 0 {
					from = trace.NoPeer
				}
				add(trace.Recv(0, p, t, end(), from, 8, tag(), comm()))
				adv()
				leave()
			case k < 10: // a non-blocking receive completed in MPI_Wait or MPI_Waitall
				enter(gIrecv)
				from, tg, cm := src(), tag(), comm()
				dumpi := rng.IntN(3) == 0
				t0 := t
				adv()
				leave()
				adv()
				enter([]int32{gWait, gWaitall}[rng.IntN(2)])
				adv()
				if dumpi {
					add(trace.Recv(0, p, t0, t+rng.Int64N(3), from, 8, tg, cm))
				} else {
					add(trace.Recv(0, p, t, end(), from, 8, tg, cm))
				}
				adv()
				if rng.IntN(8) > 0 {
					leave()
				}
			case k < 13: // a collective in its MPI region
				if nextColl >= lastColl {
					continue
				}
				c := colls[nextColl]
				nextColl++
				id := map[trace.CollectiveOp]int32{trace.OpBarrier: gBarrier, trace.OpBcast: gBcast, trace.OpReduce: gReduce}[c.op]
				if id == 0 {
					id = gAllreduce
				}
				enter(id)
				adv()
				add(trace.Coll(0, p, t, end(), c.op, c.root, 8, cWorld))
				adv()
				leave()
			case k < 14: // a record outside any MPI call
				switch rng.IntN(4) {
				case 0:
					add(trace.Send(0, p, t, end(), dst(), 8, tag(), comm()))
				case 1:
					add(trace.Recv(0, p, t, end(), src(), 8, tag(), comm()))
				case 2:
					if nextColl < lastColl {
						c := colls[nextColl]
						nextColl++
						add(trace.Coll(0, p, t, end(), c.op, c.root, 8, cWorld))
					}
				case 3:
					add(trace.Coll(0, p, t, end(), trace.OpBarrier, trace.NoPeer, 8, []int32{cSelf, cUnknown, 9}[rng.IntN(3)]))
				}
			case k < 15: // a zero-length call
				enter([]int32{gSend, gRecv, gWait, gBarrier, gCompute}[rng.IntN(5)])
				leave()
			case k < 16: // an exit out of order, or of a region not open
				if len(stack) > 1 && rng.IntN(2) == 0 {
					id := stack[rng.IntN(len(stack)-1)]
					add(trace.Exit(0, p, t, id))
					stack = stack[:slices.Index(stack, id)]
				} else {
					add(trace.Exit(0, p, t, int32(rng.IntN(int(gRegions)))))
				}
			case k < 17:
				add(trace.Event(0, p, t, 1, 0))
			case k < 18: // any region entered, nested at random
				enter(int32(rng.IntN(int(gRegions))))
			case k < 20:
				leave()
			default: // an MPI call with records inside at random
				enter(gSend + int32(rng.IntN(int(gRegions-gSend))))
				for range rng.IntN(3) {
					adv()
					if rng.IntN(2) == 0 {
						add(trace.Send(0, p, t, end(), dst(), 8, tag(), comm()))
					} else {
						add(trace.Recv(0, p, t, end(), src(), 8, tag(), comm()))
					}
				}
				adv()
				leave()
			}
		}
		for rng.IntN(3) > 0 && len(stack) > 0 {
			adv()
			leave()
		}
	}
	slices.SortStableFunc(recs, trace.Compare)
	return &engine.Trace{Name: fmt.Sprint("random ", seed), Header: h}, recs
}

// feed adds recs to a in batches of random sizes.
func feed(tb testing.TB, a engine.Accumulator, recs []trace.Record, seed uint64) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	for len(recs) > 0 {
		n := min(len(recs), 1+rng.IntN(40))
		if err := a.Add(recs[:n]); err != nil {
			tb.Fatal(err)
		}
		recs = recs[n:]
	}
}

// compare runs the analysis and the reference over the random trace of
// seed with the options p and reports where they differ.
func compare(tb testing.TB, seed uint64, p Params) {
	tb.Helper()
	tr, recs := genTrace(seed)
	ref, err := newRef(tr, &p)
	if err != nil {
		tb.Fatal(err)
	}
	acc, err := New(tr, &p)
	if err != nil {
		tb.Fatal(err)
	}
	feed(tb, ref, recs, seed)
	feed(tb, acc, recs, seed)
	want, err := ref.Result()
	if err != nil {
		tb.Fatal(err)
	}
	got, err := acc.Result()
	if err != nil {
		tb.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, w := got.(*Result), want.(*Result)
		tb.Errorf("seed %d, %+v, %d records: the result differs from the reference's", seed, p, len(recs))
		for i := range max(len(g.Runs), len(w.Runs)) {
			if i >= len(g.Runs) || i >= len(w.Runs) {
				tb.Errorf("run %d missing", i)
				continue
			}
			diffRun(tb, g.Runs[i], w.Runs[i])
		}
	}
}

// diffRun reports the fields of two paths that differ.
func diffRun(tb testing.TB, g, w RunPath) {
	tb.Helper()
	gv, wv := reflect.ValueOf(g), reflect.ValueOf(w)
	for i := range gv.NumField() {
		if gv.Type().Field(i).Name == "Segments" {
			gs, ws := g.Segments, w.Segments
			for j := range max(len(gs), len(ws)) {
				if j >= len(gs) || j >= len(ws) || gs[j] != ws[j] {
					tb.Errorf("Segments differ from %d of %d (want %d)", j, len(gs), len(ws))
					for k := max(j-2, 0); k < min(j+3, max(len(gs), len(ws))); k++ {
						if k < len(gs) {
							tb.Errorf(" got  %d %+v", k, gs[k])
						}
						if k < len(ws) {
							tb.Errorf(" want %d %+v", k, ws[k])
						}
					}
					break
				}
			}
			continue
		}
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			tb.Errorf("%s:\n got  %+v\n want %+v", gv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
}

// seeds is the number of random traces TestAgainstReference compares.
const seeds = 600

// TestAgainstReference compares the analysis with the reference (the
// backward walk over every stored record) on random traces, with every
// segment and region kept and with the defaults.
func TestAgainstReference(t *testing.T) {
	n := uint64(seeds)
	if testing.Short() {
		n = 100
	}
	for seed := range n {
		compare(t, seed, Params{})
		compare(t, seed, *DefaultParams())
		compare(t, seed, Params{Top: 2, Segments: 3})
		if t.Failed() {
			t.Fatalf("stopped at seed %d", seed)
		}
	}
}

// TestAgainstReferenceFolding compares them with the chains of path
// summaries folded at every step, and at every other, and the regions of
// a piece indexed from the second on.
func TestAgainstReferenceFolding(t *testing.T) {
	defer func(d int32, n int) { foldDepth, regIndexAt = d, n }(foldDepth, regIndexAt)
	for _, d := range []int32{1, 2} {
		foldDepth, regIndexAt = d, int(d)
		for seed := range uint64(seeds / 4) {
			compare(t, seed, Params{})
			compare(t, seed, Params{Top: 2, Segments: 3})
			if t.Failed() {
				t.Fatalf("fold depth %d: stopped at seed %d", d, seed)
			}
		}
	}
}

// TestAgainstReferenceRuns compares them on two random traces given as
// two runs, their records interleaved, and as two accumulators merged.
func TestAgainstReferenceRuns(t *testing.T) {
	for seed := range uint64(50) {
		tr, recs0 := genTrace(2 * seed)
		_, recs1 := genTrace(2*seed + 1)
		tr.Header.Runs = append(tr.Header.Runs, trace.RunInfo{ID: 1, Procs: 6})
		for i := range recs1 {
			recs1[i].Run = 1
		}
		var both []trace.Record
		for i := 0; i < max(len(recs0), len(recs1)); i += 7 {
			both = append(both, recs0[min(i, len(recs0)):min(i+7, len(recs0))]...)
			both = append(both, recs1[min(i, len(recs1)):min(i+7, len(recs1))]...)
		}
		p := Params{}
		ref, _ := newRef(tr, &p)
		feed(t, ref, both, seed)
		want, _ := ref.Result()
		a, _ := New(tr, &p)
		feed(t, a, both, seed)
		got, _ := a.Result()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d, two runs interleaved: the result differs", seed)
		}
		a0, _ := New(tr, &p)
		a1, _ := New(tr, &p)
		feed(t, a0, recs0, seed)
		feed(t, a1, recs1, seed)
		if err := a0.Merge(a1); err != nil {
			t.Fatal(err)
		}
		got, _ = a0.Result()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d, two runs merged: the result differs", seed)
		}
	}
}

// FuzzAgainstReference is TestAgainstReference over the seeds the fuzzer
// chooses.
func FuzzAgainstReference(f *testing.F) {
	for seed := range uint64(16) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		compare(t, seed, Params{})
		compare(t, seed, Params{Top: 1, Segments: 2})
	})
}

// TestReferenceSelf checks that the generator makes the cases the
// comparison is for: message and collective jumps, unmatched messages,
// incomplete and unusable collectives.
func TestReferenceSelf(t *testing.T) {
	var sum RunPath
	for seed := range uint64(200) {
		tr, recs := genTrace(seed)
		ref, err := newRef(tr, &Params{})
		if err != nil {
			t.Fatal(err)
		}
		feed(t, ref, recs, seed)
		res, _ := ref.Result()
		for _, r := range res.(*Result).Runs {
			sum.MessageJumps += r.MessageJumps
			sum.CollectiveJumps += r.CollectiveJumps
			sum.Uncomputed.UnmatchedSends += r.Uncomputed.UnmatchedSends
			sum.Uncomputed.UnmatchedRecvs += r.Uncomputed.UnmatchedRecvs
			sum.Uncomputed.Incomplete += r.Uncomputed.Incomplete
			sum.Uncomputed.OtherCollectives += r.Uncomputed.OtherCollectives
			sum.Uncomputed.UnknownComm += r.Uncomputed.UnknownComm
		}
	}
	t.Logf("%+v", sum)
	u := sum.Uncomputed
	if sum.MessageJumps == 0 || sum.CollectiveJumps == 0 || u.UnmatchedSends == 0 || u.UnmatchedRecvs == 0 ||
		u.Incomplete == 0 || u.OtherCollectives == 0 || u.UnknownComm == 0 {
		t.Errorf("the random traces miss a case: %+v", sum)
	}
}
