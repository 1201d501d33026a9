package main

import (
	"fmt"
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

func run(t testing.TB, cfg Config) (*tracecheck.Trace, []float64) {
	t.Helper()
	return tracecheck.RecordRun(t, instrument.Options{States: blocks}, Run, cfg)
}

func TestMasterWorker(t *testing.T) {
	cfg := Config{Workers: 3, Tasks: 10, Calc: 8, Work: 10, Seed: 5}
	tr, out := run(t, cfg)
	bl := tr.Blocks()
	if len(bl) != 4 {
		t.Fatalf("%d processes, want 4", len(bl))
	}
	ix := trace.NewIndex(tr.Header)
	for p, rs := range tr.Procs {
		// Every block is paired with the event of the same name, in order.
		var fromBlocks, fromEvents []string
		for _, r := range rs {
			switch r.Kind {
			case trace.KindState:
				fromBlocks = append(fromBlocks, ix.StateName(r.ID))
			case trace.KindEvent:
				fromEvents = append(fromEvents, ix.EventName(r.ID))
			}
		}
		if fmt.Sprint(fromBlocks) != fmt.Sprint(fromEvents) {
			t.Errorf("process %d: blocks %v, events %v", p, fromBlocks, fromEvents)
		}
		seq := bl[p]
		if seq[0] != blockStart || seq[len(seq)-1] != blockStop {
			t.Errorf("process %d: %v does not run from program_st to program_sp", p, seq)
		}
	}
	// Process w handles tasks w, w+4, ... of 0..9: count its blocks.
	counts := map[int32]map[int32]int{}
	for p, seq := range bl {
		counts[p] = map[int32]int{}
		for _, b := range seq {
			counts[p][b]++
		}
	}
	if c := counts[0]; c[blockSend] != 7 || c[blockRecvRes] != 7 || c[blockRecv] != 0 {
		t.Errorf("master blocks %v: want 7 sends and 7 result receipts", c)
	}
	for w, n := range map[int32]int{1: 3, 2: 2, 3: 2} {
		if c := counts[w]; c[blockRecv] != n+1 || c[blockSendRes] != n {
			t.Errorf("worker %d blocks %v: want %d tasks", w, c, n)
		}
	}
	if n := tr.CheckMessages(t); n != 14 {
		t.Errorf("%d messages matched, want 14", n)
	}
	tr2, out2 := run(t, cfg)
	if fmt.Sprint(tr2.Blocks()) != fmt.Sprint(bl) || fmt.Sprint(out2) != fmt.Sprint(out) {
		t.Error("same seed, different block sequences or results")
	}
	cfg.Seed++
	if tr3, _ := run(t, cfg); fmt.Sprint(tr3.Blocks()) == fmt.Sprint(bl) {
		t.Error("different seeds, same do_calc counts")
	}
}

// BenchmarkSlowdown times the workload recorded and not recorded.
func BenchmarkSlowdown(b *testing.B) {
	cfg := Config{Workers: 8, Tasks: 64, Calc: 100, Work: 2000, Seed: 1}
	tracecheck.Slowdown(b, blocks, func(rec *instrument.Recorder) error {
		_, err := Run(rec, cfg)
		return err
	})
}
