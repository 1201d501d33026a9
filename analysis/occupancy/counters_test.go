package occupancy_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/instrument"
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
