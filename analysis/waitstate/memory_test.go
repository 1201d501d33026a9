package waitstate

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/memlimit"
	"github.com/parscope/parscope/trace"
)

// skewedExchange feeds add, in batches of about engine.BatchSize, the
// records of rounds of a two-process exchange, made as they go, with p1's
// clock 1000 ns behind p0's. Round k, from b = 2000 + 100k on p0's clock
// (p1's times are 1000 ns less):
//
//	p0  MPI_Send b+20..b+25 (tag 2)  MPI_Send b+30..b+35 (tag 1)  MPI_Recv b+40..b+70  MPI_Barrier b+80..b+95
//	p1  MPI_Irecv b..b+1 (tag 1)  MPI_Irecv b+1..b+2 (tag 2)  MPI_Waitall b+5..b+42 (tag 1 done at b+40, tag 2 at b+41)
//	    MPI_Send b+60..b+65 (to p0)  MPI_Barrier b+85..b+95
//
// On the true clocks each message takes at least 10 ns (tag 1, and p1's
// message, received at b+70): corrected with a least latency of 10 ns, p1
// is moved 1000 ns forward exactly. Each round then has 25 ns of Late
// Sender in p1's Waitall (the later send, entered at b+30), 20 in p0's
// Recv (p1's send entered at b+60) and 5 of Wait at Barrier on p0; MPI
// time 55 ns on p0, 54 on p1. As read, both of p0's messages violate the
// clock condition, by 990 ns (tag 1) and 979 (tag 2).
func skewedExchange(tb testing.TB, add func([]trace.Record) error, rounds int) {
	tb.Helper()
	batch := make([]trace.Record, 0, engine.BatchSize+32)
	for k := range int64(rounds) {
		b := 2000 + 100*k
		c := b - 1000 // p1's clock
		r1 := trace.Recv(0, 1, c+1, c+40, 0, 8, 1, 0)
		r1.Seq = 1
		r2 := trace.Recv(0, 1, c+2, c+41, 0, 8, 2, 0)
		r2.Seq = 2
		round := []trace.Record{
			trace.Enter(0, 0, b+20, rSend), trace.Send(0, 0, b+20, b+20, 1, 8, 2, 0), trace.Exit(0, 0, b+25, rSend),
			trace.Enter(0, 0, b+30, rSend), trace.Send(0, 0, b+30, b+30, 1, 8, 1, 0), trace.Exit(0, 0, b+35, rSend),
			trace.Enter(0, 0, b+40, rRecv), trace.Recv(0, 0, b+40, b+70, 1, 8, 3, 0), trace.Exit(0, 0, b+70, rRecv),
			trace.Enter(0, 0, b+80, rBarrier), trace.Coll(0, 0, b+80, b+95, trace.OpBarrier, trace.NoPeer, 0, 0), trace.Exit(0, 0, b+95, rBarrier),
			trace.Enter(0, 1, c, rIrecv), trace.Exit(0, 1, c+1, rIrecv), trace.Enter(0, 1, c+1, rIrecv), trace.Exit(0, 1, c+2, rIrecv),
			trace.Enter(0, 1, c+5, rWaitall), r1, r2, trace.Exit(0, 1, c+42, rWaitall),
			trace.Enter(0, 1, c+60, rSend), trace.Send(0, 1, c+60, c+60, 0, 8, 3, 0), trace.Exit(0, 1, c+65, rSend),
			trace.Enter(0, 1, c+85, rBarrier), trace.Coll(0, 1, c+85, c+95, trace.OpBarrier, trace.NoPeer, 0, 0), trace.Exit(0, 1, c+95, rBarrier),
		}
		batch = append(batch, round...)
		if len(batch) >= engine.BatchSize || k == int64(rounds)-1 {
			// p1's records of a round all come before p0's, 1000 ns
			// earlier: the batch is in time order as a whole.
			slices.SortStableFunc(batch, trace.Compare)
			if err := add(batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// liveHeap returns the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestClockCorrectionMemory analyses 300,000 rounds of skewedExchange
// (7.8 million records, 900,000 messages) with the clock correction under
// a memory limit of 256 MiB, and checks that the accumulator holds less
// than 4 MiB at the end of each pass: the first keeps the violations and
// one constraint per ordered pair of processes, the second measures while
// reading, so neither holds the messages. The correction and the waits
// are checked against their values by hand.
func TestClockCorrectionMemory(t *testing.T) {
	rounds := 300_000
	if memlimit.Race {
		rounds = 10_000
	}
	memlimit.Run(t, 256<<20, func(t *testing.T) {
		h := &trace.Header{Regions: randomRegions, Runs: []trace.RunInfo{{ID: 0, Procs: 2}}}
		p := DefaultParams()
		p.ClockCorrection, p.ClockMinLatency = true, 10
		before := liveHeap()
		a, err := New(&engine.Trace{Header: h}, p)
		if err != nil {
			t.Fatal(err)
		}
		passes := 0
		for again := true; again; {
			skewedExchange(t, a.Add, rounds)
			passes++
			held := liveHeap() - before
			t.Logf("pass %d: %.2f MiB held", passes, float64(held)/(1<<20))
			if held > 4<<20 {
				t.Errorf("pass %d: %d bytes held after %d rounds, want at most 4 MiB", passes, held, rounds)
			}
			if r, ok := any(a).(engine.Repeater); ok {
				if again, err = r.Again(); err != nil {
					t.Fatal(err)
				}
			} else {
				again = false
			}
		}
		res, err := a.Result()
		if err != nil {
			t.Fatal(err)
		}
		w := res.(*Result).Runs[0]
		n := int64(rounds)
		if passes != 2 {
			t.Errorf("%d passes, want 2", passes)
		}
		if c := w.Clock; c.Violations != 2*n || c.MaxNS != 990 || fmt.Sprint(c.Pairs) != fmt.Sprintf("[{0 1 %d 990}]", 2*n) ||
			c.Correction == nil || fmt.Sprintf("%+v", *c.Correction) != "{MinLatencyNS:10 Applied:true Offsets:[{Proc:1 OffsetNS:1000}] Violations:0}" {
			t.Errorf("clock %+v, correction %+v", c, c.Correction)
		}
		if w.Messages != 3*n || w.Collectives != n || w.Uncomputed != (Uncomputed{}) || w.MPINS != 109*n ||
			w.WaitNS != 50*n || w.Patterns[LateSender] != (Amount{Pattern: "late_sender", WaitNS: 45 * n, Calls: 2 * n}) ||
			w.Patterns[WaitBarrier] != (Amount{Pattern: "wait_barrier", WaitNS: 5 * n, Calls: n}) ||
			w.SubPatterns[LateSenderWrongOrder].WaitNS != 0 {
			t.Errorf("messages %d, collectives %d, uncomputed %+v, MPI %d ns, wait %d ns, patterns %+v, sub-patterns %+v",
				w.Messages, w.Collectives, w.Uncomputed, w.MPINS, w.WaitNS, w.Patterns, w.SubPatterns)
		}
		want := []ProcWaits{
			{Proc: 0, MPINS: 55 * n, WaitNS: 25 * n, Patterns: amountsOf(LateSender, 20*n, n, WaitBarrier, 5*n, n), SubPatterns: subAmounts(nil)},
			{Proc: 1, MPINS: 54 * n, WaitNS: 25 * n, Patterns: amountsOf(LateSender, 25*n, n), SubPatterns: subAmounts(nil)},
		}
		if !reflect.DeepEqual(w.ByProcess, want) {
			t.Errorf("by process\n%+v\nwant\n%+v", w.ByProcess, want)
		}
	})
}

// amountsOf returns the amounts of every pattern: those named in pvs
// (pattern, wait, calls, …) with their figures, the others zero.
func amountsOf(pvs ...any) []Amount {
	var w [numPatterns]Amount
	for i := 0; i < len(pvs); i += 3 {
		w[pvs[i].(Pattern)] = Amount{WaitNS: pvs[i+1].(int64), Calls: pvs[i+2].(int64)}
	}
	return amounts(&w)
}
