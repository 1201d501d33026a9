package state

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/spill"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// TestDistinctClassesSpilled counts the distinct classes of three runs of
// random states (thousands of classes each) with the analysis' budget and
// with one of 64 class hashes, which spills them; both must equal the
// classes counted directly, alone and with the runs in two accumulators
// merged, and leave no temporary file.
func TestDistinctClassesSpilled(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	h := &trace.Header{}
	for id := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: id})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var recs [3][]trace.Record
	var stats []store.RunStats
	want := map[int32]int{}
	for run := range int32(3) {
		h.Runs = append(h.Runs, trace.RunInfo{ID: run, Procs: 20})
		stats = append(stats, store.RunStats{Run: run, Procs: 20, TMax: 40000})
		for i := range int64(4000) {
			recs[run] = append(recs[run], trace.State(run, int32(rng.IntN(20)), 10*i, int32(rng.IntN(5))))
		}
		seen := map[uint64]bool{}
		if err := Reconstruct(context.Background(), h, trace.NewSliceReader(recs[run]), Options{}, func(r *Row) error {
			seen[r.ClassHash()] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want[run] = len(seen)
	}
	tr := &engine.Trace{Name: "random.pst", Header: h, Stats: &store.Stats{Runs: stats}}
	acc := func(budget int64) *statesAcc {
		a, err := newStates(tr, DefaultStatesParams())
		if err != nil {
			t.Fatal(err)
		}
		if budget > 0 {
			a.classes = spill.NewSet("states", budget)
		}
		return a
	}
	summary := func(a *statesAcc) (string, *Summary) {
		v, err := a.Result()
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(v)
		return string(js), v.(*Summary)
	}
	var outs []string
	for _, budget := range []int64{0, 64 * 32} {
		whole := acc(budget)
		for _, rs := range recs {
			if err := whole.Add(rs); err != nil {
				t.Fatal(err)
			}
		}
		js, s := summary(whole)
		for _, r := range s.Runs {
			if r.DistinctClasses != want[r.Run] || want[r.Run] < 1000 {
				t.Fatalf("budget %d, run %d: %d distinct classes, want %d", budget, r.Run, r.DistinctClasses, want[r.Run])
			}
		}
		first, second := acc(budget), acc(budget)
		if err := first.Add(recs[0]); err != nil {
			t.Fatal(err)
		}
		for _, rs := range recs[1:] {
			if err := second.Add(rs); err != nil {
				t.Fatal(err)
			}
		}
		if err := first.Merge(second); err != nil {
			t.Fatal(err)
		}
		merged, _ := summary(first)
		if merged != js {
			t.Fatalf("budget %d: merged\n%.400s\nwhole\n%.400s", budget, merged, js)
		}
		// Run 0 encoded (engine.Portable) and decoded into an accumulator
		// that takes runs 1 and 2.
		first, second = acc(budget), acc(budget)
		if err := first.Add(recs[0]); err != nil {
			t.Fatal(err)
		}
		data, err := first.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := second.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		for _, rs := range recs[1:] {
			if err := second.Add(rs); err != nil {
				t.Fatal(err)
			}
		}
		if travelled, _ := summary(second); travelled != js {
			t.Fatalf("budget %d: run 0 encoded and decoded\n%.400s\nwhole\n%.400s", budget, travelled, js)
		}
		outs = append(outs, js)
	}
	if outs[0] != outs[1] {
		t.Fatalf("spilled\n%.400s\nin memory\n%.400s", outs[1], outs[0])
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d temporary files left in %s", len(ents), dir)
	}
}
