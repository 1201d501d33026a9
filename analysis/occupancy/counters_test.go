package occupancy_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/instrument"
	_ "github.com/parscope/parscope/instrument/pst" // Close builds the .pst (see package pst)
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

func spin(n int) float64 {
	x := 1.0
	for i := 0; i < n; i++ {
		x = x*1.0000001 + 1e-9
	}
	return x
}

// TestCountersMatchGlobal records a small workload with the instrument
// library's occupancy counters and checks the local collection against
// the occupancies computed from the state records: per process and mode,
// and the mean node occupancies.
func TestCountersMatchGlobal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.pst")
	states := []trace.StateDef{{ID: 0, Name: "init"}, {ID: 1, Name: "U"}, {ID: 2, Name: "S"}, {ID: 3, Name: "R"}, {ID: 4, Name: "end"}}
	rec, err := instrument.Start(instrument.Options{Path: path, Occupancy: true, States: states, BufferRecords: 64})
	if err != nil {
		t.Fatal(err)
	}
	const procs = 4
	var wg sync.WaitGroup
	sink := make([]float64, procs)
	for rank := range procs {
		wg.Go(func() {
			p := rec.Process(rank)
			p.Block(0)
			for i := range 60 {
				p.Block(1)
				sink[rank] += spin(200 * (rank + 1))
				p.Block(2)
				sink[rank] += spin(50 + 10*(i%7))
				p.Block(3)
				sink[rank] += spin(100)
			}
			p.Block(4)
			if err := p.Done(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	s := storetest.Open(t, path)
	h := s.Header()
	modes := occupancy.StateModes(h)
	counters, err := occupancy.ReadCounters(context.Background(), h, s.Records(store.ReadOptions{}), modes)
	if err != nil {
		t.Fatal(err)
	}
	global, err := occupancy.Compute(context.Background(), h, s.Records(store.ReadOptions{}), modes, occupancy.Options{Start: "init"})
	if err != nil {
		t.Fatal(err)
	}
	if len(counters) != 1 || len(global) != 1 || len(counters[0].Local) != procs {
		t.Fatalf("%d counter runs, %d global runs", len(counters), len(global))
	}
	// The modes between the first and the last state are closed by a state
	// record in both collections; init (before the first state) and end
	// (after the process's Done) are where the two legitimately differ.
	const tol = 2 * 3 * 60 // ns: rounding of each interval's ends to ns
	for p := range procs {
		for _, k := range []int{1, 2, 3} {
			loc, glob := counters[0].Local[p][k], float64(global[0].Local[p][k])
			if glob <= 0 || math.Abs(loc-glob) > tol {
				t.Errorf("process %d mode %s: counters %v ns, state records %v ns", p, modes.Names[k], loc, glob)
			}
		}
	}
	cm, gm, lm := counters[0].Mean(), global[0].Mean(), global[0].LocalMean()
	for _, k := range []int{1, 2, 3} {
		if math.Abs(cm[k]-gm[k]) > tol || math.Abs(lm[k]-gm[k]) > 1e-6*gm[k] {
			t.Errorf("mode %s: mean from counters %v, from the table %v, from reconstructed local counters %v", modes.Names[k], cm[k], gm[k], lm[k])
		}
	}
}

func TestReadCountersErrors(t *testing.T) {
	h := &trace.Header{States: []trace.StateDef{{ID: 1, Name: "U"}}, Runs: []trace.RunInfo{{Procs: 1}},
		Counters: []trace.CounterDef{{ID: 1, Name: "occupancy U"}, {ID: 2, Name: "occupancy V"}}}
	_, err := occupancy.ReadCounters(context.Background(), h, trace.NewSliceReader(nil), occupancy.StateModes(h))
	if err == nil || !strings.Contains(err.Error(), `counter "occupancy V" names no state`) {
		t.Errorf("err = %v", err)
	}
	h.Counters = nil
	_, err = occupancy.ReadCounters(context.Background(), h, trace.NewSliceReader(nil), occupancy.StateModes(h))
	if err == nil || !strings.Contains(err.Error(), "no occupancy counters") {
		t.Errorf("err = %v", err)
	}
}

// TestCountersWithoutStates runs the occupancy analysis with the counters
// on a trace of the local collection alone in one run (the instrument
// library with DropKinds(KindState): counters, no state records) and of
// both in another: each run has a report with the counters' means and
// span; the run without state records has no process in any mode (or all
// in the start mode). Without the counters such a trace is refused.
func TestCountersWithoutStates(t *testing.T) {
	h := &trace.Header{
		States:   []trace.StateDef{{ID: 1, Name: "U"}, {ID: 2, Name: "S"}},
		Counters: []trace.CounterDef{{ID: 0, Name: "occupancy U", Unit: "ns"}, {ID: 1, Name: "occupancy S", Unit: "ns"}},
		Runs:     []trace.RunInfo{{ID: 0, Procs: 2}, {ID: 1, Procs: 2}},
	}
	recs := []trace.Record{
		// Run 0: process 0 began at 100 (1000 − 600 − 300), process 1 at
		// 200; the last ended at 1200.
		trace.Counter(0, 0, 1000, 0, 600), trace.Counter(0, 0, 1000, 1, 300),
		trace.Counter(0, 1, 1200, 0, 500), trace.Counter(0, 1, 1200, 1, 500),
		// Run 1: states and their counters.
		trace.State(1, 0, 0, 1), trace.State(1, 1, 0, 1), trace.State(1, 0, 40, 2), trace.State(1, 1, 60, 2),
		trace.Counter(1, 0, 100, 0, 40), trace.Counter(1, 0, 100, 1, 60),
		trace.Counter(1, 1, 100, 0, 60), trace.Counter(1, 1, 100, 1, 40),
	}
	s := storetest.New(t, "local.pst", h, recs)
	p := &occupancy.Params{Counters: true, Top: 1}
	rep := enginetest.Result[*occupancy.Report](t, s, engine.Request{Analysis: occupancy.Name, Options: p})
	defer rep.Close()
	if len(rep.Runs) != 2 || rep.Runs[0].Run != 0 || rep.Runs[1].Run != 1 {
		t.Fatalf("runs %+v, want a report of runs 0 and 1", rep.Runs)
	}
	for _, c := range []struct {
		run              int
		records          int64
		global, counters []float64
		span             float64
	}{
		{0, 0, []float64{0, 0}, []float64{550, 400}, 1100},
		{1, 4, []float64{50, 50}, []float64{50, 50}, 100},
	} {
		r := rep.Runs[c.run]
		if r.StateRecords != c.records || r.CountersSpanNS != c.span {
			t.Errorf("run %d: %d state records, counters span %v ns; want %d, %v", c.run, r.StateRecords, r.CountersSpanNS, c.records, c.span)
		}
		for j, m := range r.Mean {
			if m.GlobalNS != c.global[j] || m.CountersNS == nil || *m.CountersNS != c.counters[j] {
				t.Errorf("run %d mode %s: global %v, counters %v; want %v, %v", c.run, m.Mode, m.GlobalNS, m.CountersNS, c.global[j], c.counters[j])
			}
		}
	}
	if r := rep.Runs[0]; r.AbsentNS != 2*(r.EndNS-r.BeginNS) || r.BeginNS != 1000 || r.EndNS != 1200 {
		t.Errorf("run 0: absent %d ns over [%d, %d]: want every process absent from the first record to the last", r.AbsentNS, r.BeginNS, r.EndNS)
	}
	// With a start mode the processes are in it throughout.
	p.Start = "U"
	rep2 := enginetest.Result[*occupancy.Report](t, s, engine.Request{Analysis: occupancy.Name, Options: p})
	defer rep2.Close()
	if m := rep2.Runs[0].Mean; m[0].GlobalNS != 1200 || m[1].GlobalNS != 0 || *m[0].CountersNS != 550 {
		t.Errorf("run 0 with start mode U: means %+v, want U 1200 from the table and 550 from the counters", m)
	}
	// The JSON result holds the span.
	var buf strings.Builder
	if err := engine.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"counters_span_ns": 1100`) {
		t.Errorf("JSON without the counters' span:\n%s", buf.String())
	}
	// Without the counters: the state records are needed.
	_, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: occupancy.Name, Options: &occupancy.Params{Top: 1}, Runs: []int32{0}}})
	if err == nil || !strings.Contains(err.Error(), "no state records in the runs selected") {
		t.Errorf("run 0 without the counters: %v", err)
	}
	only := storetest.New(t, "counters.pst", h, recs[:4])
	_, err = engine.Run(context.Background(), only, []engine.Request{{Analysis: occupancy.Name}})
	var missing *engine.MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "counters.pst: occupancy needs state records") {
		t.Errorf("counters alone without --counters: %v", err)
	}
	// Counters of no occupancy: named as such.
	h2 := *h
	h2.Counters = []trace.CounterDef{{ID: 0, Name: "bytes"}, {ID: 1, Name: "flops"}}
	other := storetest.New(t, "other.pst", &h2, recs[:4])
	_, err = engine.Run(context.Background(), other, []engine.Request{{Analysis: occupancy.Name, Options: &occupancy.Params{Counters: true}}})
	if !errors.Is(err, occupancy.ErrNoCounters) {
		t.Errorf("counters that are not occupancy counters: %v, want ErrNoCounters", err)
	}
}
