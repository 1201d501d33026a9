package instrument

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/trace"
)

// simRun records run on a simulated clock with model c and returns the
// header and each process's records as "kind id peer @time".
func simRun(t *testing.T, c SimClock, opts Options, run func(rec *Recorder)) (*trace.Header, map[int32][]string) {
	t.Helper()
	opts.Path = filepath.Join(t.TempDir(), "sim.pst")
	opts.SimClock = &c
	rec, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	run(rec)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	h, by := readBack(t, opts.Path)
	out := map[int32][]string{}
	for p, rs := range by {
		for _, r := range rs {
			out[p] = append(out[p], simDescribe(r))
		}
	}
	return h, out
}

func simDescribe(r trace.Record) string {
	switch r.Kind {
	case trace.KindState:
		return fmt.Sprintf("block %d @%d", r.ID, r.T)
	case trace.KindSend:
		return fmt.Sprintf("send %d %dB @%d", r.Peer, r.Value, r.T)
	case trace.KindRecv:
		return fmt.Sprintf("recv %d %dB @%d", r.Peer, r.Value, r.T)
	default:
		return fmt.Sprintf("%v %d @%d", r.Kind, r.ID, r.T)
	}
}

// checkSeq compares a process's records with want as sets: the store
// returns records of one process at the same time in an order of its own
// (states first), so only the times, not the order among equal times, are
// the model's.
func checkSeq(t *testing.T, what string, got, want []string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestSimClockTransfer(t *testing.T) {
	c := SimClock{Latency: 1000, Bandwidth: 2.5}
	for _, tc := range []struct{ bytes, want int64 }{
		{0, 1000}, {1, 1001}, {5, 1002}, {6, 1003}, {2176, 1000 + 871},
	} {
		if got := c.Transfer(tc.bytes); got != tc.want {
			t.Errorf("Transfer(%d) = %d, want %d", tc.bytes, got, tc.want)
		}
	}
	inf := SimClock{Latency: 7}
	if got := inf.Transfer(1 << 40); got != 7 {
		t.Errorf("infinite bandwidth: Transfer = %d, want the latency 7", got)
	}
	d := DefaultSimClock()
	if d.BlockCost != 100 || d.Latency != 2000 || d.Bandwidth != 1 {
		t.Errorf("DefaultSimClock() = %+v, the documented defaults are 100 ns, 2000 ns, 1 byte/ns", d)
	}
}

// A send/receive pair: the receiver, idle, waits for the message; the
// sender pays nothing for the send.
func TestSimClockSendRecv(t *testing.T) {
	c := SimClock{BlockCost: 10, Latency: 1000, Bandwidth: 2}
	h, got := simRun(t, c, Options{}, func(rec *Recorder) {
		p0, p1 := rec.Process(0), rec.Process(1)
		p0.Block(1)  // @0, then 10
		p0.Work(500) // 510
		s := p0.SendStamped(1, 100, 7)
		if s != 510 {
			t.Errorf("stamp %d, want 510", s)
		}
		p0.Block(2)                  // @510
		p1.Block(1)                  // @0, then 10
		p1.RecvStamped(0, 100, 7, s) // max(10, 510+1000+50) = 1560
		p1.Block(2)                  // @1560
		if p1.VirtualTime() != 1570 || p0.VirtualTime() != 520 {
			t.Errorf("virtual times %d, %d, want 520, 1570", p0.VirtualTime(), p1.VirtualTime())
		}
		p0.Done()
		p1.Done()
	})
	checkSeq(t, "process 0", got[0], []string{"block 1 @0", "send 1 100B @510", "block 2 @510"})
	checkSeq(t, "process 1", got[1], []string{"block 1 @0", "recv 0 100B @1560", "block 2 @1560"})
	x := h.Meta.Extra
	if x["clock"] != "simulated" || x["sim_block_ns"] != "10" || x["sim_latency_ns"] != "1000" || x["sim_bandwidth_bytes_per_ns"] != "2" {
		t.Errorf("metadata %v", x)
	}
	if _, ok := x["start"]; ok {
		t.Errorf("a simulated trace stores the wall-clock start %q", x["start"])
	}
}

// A receiver that is already later than the message's arrival does not
// wait: its time stays its own.
func TestSimClockNoWaitWhenLate(t *testing.T) {
	c := SimClock{Latency: 100}
	_, got := simRun(t, c, Options{}, func(rec *Recorder) {
		p0, p1 := rec.Process(0), rec.Process(1)
		s := p0.SendStamped(1, 8, 0) // 0
		p1.Work(5000)
		p1.RecvStamped(0, 8, 0, s) // max(5000, 100)
		p1.Block(3)
	})
	checkSeq(t, "process 1", got[1], []string{"recv 0 8B @5000", "block 3 @5000"})
}

// A chain 0 → 1 → 2 → 3 run by goroutines in any order: each hop adds
// its work and the transfer, and the times do not depend on who runs
// first.
func TestSimClockChain(t *testing.T) {
	c := SimClock{BlockCost: 1, Latency: 100, Bandwidth: 1}
	const procs = 4
	want := map[int32][]string{
		0: {"block 1 @0", "send 1 50B @1000"}, // 1 + 999
		// arrival 1000+100+50 = 1150, then 999 of work
		1: {"block 1 @0", "recv 0 50B @1150", "send 2 50B @2149"},
		2: {"block 1 @0", "recv 1 50B @2299", "send 3 50B @3298"},
		3: {"block 1 @0", "recv 2 50B @3448"},
	}
	for round := 0; round < 3; round++ {
		_, got := simRun(t, c, Options{}, func(rec *Recorder) {
			ch := make([]chan int64, procs)
			for i := range ch {
				ch[i] = make(chan int64, 1)
			}
			var wg sync.WaitGroup
			for me := procs - 1; me >= 0; me-- {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := rec.Process(me)
					p.Block(1)
					if me > 0 {
						p.RecvStamped(me-1, 50, 0, <-ch[me])
					}
					if me < procs-1 {
						p.Work(999)
						ch[me+1] <- p.SendStamped(me+1, 50, 0)
					}
					p.Done()
				}()
			}
			wg.Wait()
		})
		for p := int32(0); p < procs; p++ {
			checkSeq(t, fmt.Sprintf("round %d, process %d", round, p), got[p], want[p])
		}
	}
}

// A gather: process 0 waits for the latest of three messages, whatever
// the order it receives them in.
func TestSimClockWaitsForLatest(t *testing.T) {
	c := SimClock{Latency: 10}
	for _, order := range [][]int{{1, 2, 3}, {3, 2, 1}, {2, 3, 1}} {
		_, got := simRun(t, c, Options{}, func(rec *Recorder) {
			stamps := map[int]int64{}
			for src, work := range map[int]int64{1: 300, 2: 700, 3: 200} {
				p := rec.Process(src)
				p.Work(work)
				stamps[src] = p.SendStamped(0, 8, 0)
			}
			p0 := rec.Process(0)
			for _, src := range order {
				p0.RecvStamped(src, 8, 0, stamps[src])
			}
			p0.Block(9)
		})
		if !slices.Contains(got[0], "block 9 @710") {
			t.Errorf("order %v: %v, want block 9 at 700+10", order, got[0])
		}
	}
}

// The block cost is the program's: a filter that drops blocks does not
// change the times of what it keeps.
func TestSimClockFilterKeepsTimes(t *testing.T) {
	c := SimClock{BlockCost: 5}
	_, got := simRun(t, c, Options{Filter: dropBlock{}}, func(rec *Recorder) {
		p := rec.Process(0)
		p.Block(1)
		p.Block(2)
		p.Event(rec.EventID("x"))
	})
	var ev []string
	for _, s := range got[0] {
		if !strings.HasPrefix(s, "block") {
			ev = append(ev, s[strings.LastIndex(s, "@"):])
		}
	}
	// The dropped-count event and the kept event, both at 10.
	checkSeq(t, "process 0 times", ev, []string{"@5", "@10"})
}

func TestSimClockInvalid(t *testing.T) {
	for _, c := range []SimClock{{BlockCost: -1}, {Latency: -1}, {Bandwidth: -2}} {
		_, err := Start(Options{Path: filepath.Join(t.TempDir(), "x.pst"), SimClock: &c})
		if err == nil || !strings.Contains(err.Error(), "simulated clock") {
			t.Errorf("%+v: %v, want an error", c, err)
		}
	}
}
