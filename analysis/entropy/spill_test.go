package entropy

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// manyClasses is a trace of runs runs of p processes each entering a
// random one of n blocks at every step: nearly every state is a class of
// its own.
func manyClasses(runs int32, p, n, steps int) (*trace.Header, []trace.Record) {
	h := &trace.Header{}
	for id := range int32(n) {
		h.States = append(h.States, trace.StateDef{ID: id})
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var recs []trace.Record
	for run := range runs {
		h.Runs = append(h.Runs, trace.RunInfo{ID: run, Procs: int32(p)})
		for i := range steps {
			recs = append(recs, trace.State(run, int32(rng.IntN(p)), int64(i)*10+int64(rng.IntN(7)), int32(rng.IntN(n))))
		}
	}
	// Records of a run in time order (the random jitter above may not be).
	for i := 1; i < len(recs); i++ {
		if recs[i].Run == recs[i-1].Run && recs[i].T < recs[i-1].T {
			recs[i].T = recs[i-1].T
		}
	}
	return h, recs
}

// TestSpilledEqualsInMemory computes the measures of a trace of some ten
// thousand classes with the default budget, which holds them, and with a
// budget of 64 classes, which spills some hundred runs (merged into one
// past spill.MaxRuns): alone, in shards merged, and through the analysis
// over three runs (each run's accumulator merged into the measures of all
// runs). The results must be equal, the measures summed in the same class
// order either way, and no temporary file may be left.
func TestSpilledEqualsInMemory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	// A budget of 64 classes: about a hundred runs of the 6,000 classes.
	const tiny = 64 * classCost
	h, recs := manyClasses(1, 24, 6, 12000)
	for _, weighted := range []bool{false, true} {
		rows := 0
		if err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(*state.Row) error {
			rows++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		run := func(budget int64, shards int) Result {
			opts := Options{Blocks: 6, TimeWeighted: weighted, Budget: budget}
			accs := make([]*Accumulator, shards)
			for s := range accs {
				accs[s] = NewAccumulator(opts)
			}
			i := 0
			if err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
				i++
				return accs[(i-1)*shards/rows].Add(r)
			}); err != nil {
				t.Fatal(err)
			}
			acc := accs[0]
			for _, a := range accs[1:] {
				if err := acc.Merge(a); err != nil {
					t.Fatal(err)
				}
			}
			if budget > 0 && (acc.runs == nil || acc.runs.Len() == 0) {
				t.Fatalf("budget %d, %d shards: nothing spilled", budget, shards)
			}
			defer acc.Close()
			return result(t, acc)
		}
		want := run(0, 1)
		if want.DistinctClasses < 5000 {
			t.Fatalf("%d classes: too few to test spilling", want.DistinctClasses)
		}
		if got := run(tiny, 1); got != want {
			t.Fatalf("time-weighted %v: spilled\n%+v\nwant\n%+v", weighted, got, want)
		}
		for _, shards := range []int{2, 9} {
			got := run(tiny, shards)
			// The histogram entropy is a sum of row terms: the shards
			// add it in another order.
			if !near(got.HistogramEntropyMean, want.HistogramEntropyMean, 1e-12) {
				t.Fatalf("%d shards: histogram entropy %v, want %v", shards, got.HistogramEntropyMean, want.HistogramEntropyMean)
			}
			got.HistogramEntropyMean = want.HistogramEntropyMean
			if got != want {
				t.Fatalf("time-weighted %v, %d spilled shards merged:\n%+v\nwant\n%+v", weighted, shards, got, want)
			}
		}
	}

	h3, recs3 := manyClasses(3, 16, 5, 6000)
	var stats []store.RunStats
	for run := range int32(3) {
		stats = append(stats, store.RunStats{Run: run, Procs: 16, TMax: 60000})
	}
	tr := &engine.Trace{Name: "random.pst", Header: h3, Stats: &store.Stats{Runs: stats}}
	analyse := func(budget int64) string {
		p := DefaultParams()
		p.Window = 5000
		a, err := newAnalysis(tr, p)
		if err != nil {
			t.Fatal(err)
		}
		a.opts.Budget = budget
		a.all = NewAccumulator(a.opts)
		for i := 0; i < len(recs3); i += 1000 {
			if err := a.Add(recs3[i:min(i+1000, len(recs3))]); err != nil {
				t.Fatal(err)
			}
		}
		v, err := a.Result()
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(v)
		return string(js)
	}
	want := analyse(0)
	if got := analyse(tiny); got != want {
		t.Fatalf("the analysis of three runs, spilled:\n%.600s\nwant\n%.600s", got, want)
	}
	// Run 0 on one accumulator, encoded (engine.Portable), decoded into
	// another that takes runs 1 and 2, both spilling.
	fresh := func() *analysis {
		p := DefaultParams()
		p.Window = 5000
		a, err := newAnalysis(tr, p)
		if err != nil {
			t.Fatal(err)
		}
		a.opts.Budget = tiny
		a.all = NewAccumulator(a.opts)
		return a
	}
	first := fresh()
	cut := len(recs3) / 3
	if err := first.Add(recs3[:cut]); err != nil {
		t.Fatal(err)
	}
	data, err := first.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.close(); err != nil {
		t.Fatal(err)
	}
	second := fresh()
	if err := second.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if second.all.runs == nil {
		t.Fatal("the decoded measures of run 0 did not spill")
	}
	if err := second.Add(recs3[cut:]); err != nil {
		t.Fatal(err)
	}
	v, err := second.Result()
	if err != nil {
		t.Fatal(err)
	}
	if js, _ := json.Marshal(v); string(js) != want {
		t.Fatalf("run 0 encoded and decoded, then runs 1 and 2, spilled:\n%.600s\nwant\n%.600s", js, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d temporary files left in %s", len(ents), dir)
	}
}
