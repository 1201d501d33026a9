package report

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/internal/memlimit"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// TestLongTraceMemory builds the report of a .pst of 10^7 state records
// under a 512 MiB memory limit: four processes in three states, process i
// entering state (k+i) mod 3 at time 10·k. The report keeps results at the
// detail a browser draws, never a row per record. The occupancy numbers
// are checked against their closed form.
func TestLongTraceMemory(t *testing.T) {
	steps := int64(2_500_000)
	if memlimit.Race {
		steps = 25_000
	}
	memlimit.Run(t, 512<<20, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cycle.pst")
		w, err := store.Create(path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := w.Header()
		h.Meta.ClockResolution = 1
		h.States = []trace.StateDef{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}, {ID: 2, Name: "c"}}
		h.Runs = []trace.RunInfo{{ID: 0, Procs: 4}}
		for k := range steps {
			for p := range int64(4) {
				if err := w.Add(trace.State(0, int32(p), 10*k, int32((k+p)%3))); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := Build(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		occ := occRuns(t, b)
		if len(occ) != 1 {
			t.Fatalf("%d occupancy runs", len(occ))
		}
		o := occ[0]
		if o.StateRecords != 4*steps || o.EndNS != 10*(steps-1) || o.Microstates != steps-1 || o.MacrostateRows != steps-1 || o.ObservedMacrostates != 3 {
			t.Fatalf("%d records, end %d, %d microstates, %d rows, %d macrostates", o.StateRecords, o.EndNS, o.Microstates, o.MacrostateRows, o.ObservedMacrostates)
		}
		// Every mode holds two processes a third of the time and one the
		// rest: 4/3 processes on average, in every window (to a step in
		// the window's steps/256), and 1/3 of the run in each mode.
		tol := 2 * occupancy.DefaultWindows / float64(steps)
		for w, c := range o.ProcessesPerWindow {
			for j, v := range c {
				if math.Abs(v-4.0/3) > tol {
					t.Fatalf("window %d mode %d: %v processes, want 4/3", w, j, v)
				}
			}
		}
		for _, m := range o.Mean {
			if math.Abs(m.Share-1.0/3) > 1e-6 {
				t.Errorf("mode %s: share %v, want 1/3", m.Mode, m.Share)
			}
		}
		pc, ok := b.PCAResult()
		if !ok || len(pc.Runs) != 1 || len(pc.Runs[0].Index) > DefaultMaxPoints || b.Entropy == nil {
			t.Fatalf("the state analyses are missing or hold more than %d points", DefaultMaxPoints)
		}
		t.Logf("%d states, %d sampled", pc.Runs[0].States, len(pc.Runs[0].Index))
	})
}

// TestRandomTraceMemory builds the report of a .pst of 10^7 random state
// records (64 processes among 8 states, one record per ns: a new
// macrostate and a new class of parallel states nearly every record,
// millions in all) under a 384 MiB memory limit: the occupancy table, the
// entropy's classes and the states' distinct classes are spilled past
// their budgets instead of held (analyze took 1.37 GB on 3·10^6 such
// records). The figures computed by different analyses are checked
// against each other: the states and entropy analyses count the same
// classes, which are the occupancy's macrostates (the last state, of no
// duration, aside), and the mean node occupancy from the table equals
// that from the per-process counters.
func TestRandomTraceMemory(t *testing.T) {
	n := 10_000_000
	if memlimit.Race {
		n = 100_000
	}
	memlimit.Run(t, 384<<20, func(t *testing.T) {
		g := &tracetest.RandomStates{Procs: 64, States: 8, Limit: n, Seed: 2}
		path := filepath.Join(t.TempDir(), "random.pst")
		storetest.CreateFrom(t, path, g.Header(), g)
		b, err := Build(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := occRuns(t, b)[0]
		if o.StateRecords != int64(n) || o.ObservedMacrostates < n/3 || len(o.Table) != OccupancyTableRows || o.EndNS != int64(n-1) {
			t.Fatalf("occupancy: %d records, %d macrostates, %d rows, end %d", o.StateRecords, o.ObservedMacrostates, len(o.Table), o.EndNS)
		}
		for _, m := range o.Mean {
			if math.Abs(m.GlobalNS-m.LocalNS) > 1e-9*float64(o.EndNS) {
				t.Errorf("mode %s: %v ns from the table, %v from the per-process counters", m.Mode, m.GlobalNS, m.LocalNS)
			}
		}
		ent := b.Entropy.Result.(*entropy.Report).Runs[0]
		st := b.States.Result.(*state.Summary).Runs[0]
		if ent.Rows != int64(n) || st.DistinctClasses != ent.DistinctClasses ||
			ent.DistinctClasses != o.ObservedMacrostates && ent.DistinctClasses != o.ObservedMacrostates+1 {
			t.Fatalf("%d entropy rows; %d classes (entropy), %d (states), %d macrostates (occupancy)", ent.Rows, ent.DistinctClasses, st.DistinctClasses, o.ObservedMacrostates)
		}
		t.Logf("%d macrostates, %d classes", o.ObservedMacrostates, ent.DistinctClasses)
	})
}
