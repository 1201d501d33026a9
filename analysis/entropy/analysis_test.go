package entropy_test

import (
	"encoding/json"
	"testing"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// TestAloneAndMerged checks the accumulators of the states and entropy
// analyses used without the engine's stage (Add rebuilds the rows itself)
// and merged run by run: fed run 0 and run 1 apart and merged, they give
// the result of one accumulator fed both, and a merge of an earlier run
// is refused.
func TestAloneAndMerged(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 5}, {ID: 1, Procs: 5}}}
	for id := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: id})
	}
	var recs [2][]trace.Record
	for run := range int32(2) {
		all, err := trace.ReadAll(&tracetest.Stream{Procs: 5, Limit: 5000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range all {
			if r.Kind == trace.KindState {
				r.Run = run
				recs[run] = append(recs[run], r)
			}
		}
	}
	tr := &engine.Trace{Name: "gen.pst", Header: h, Stats: &store.Stats{Runs: []store.RunStats{{Run: 0, TMax: 5000}, {Run: 1, TMax: 5000}}}}
	ep := entropy.DefaultParams()
	ep.Subsets, ep.Window = 2, 700
	for name, opts := range map[string]any{state.Name: state.DefaultStatesParams(), entropy.Name: ep} {
		a, _ := engine.Lookup(name)
		acc := func() engine.Accumulator {
			x, err := a.New(tr, opts)
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		result := func(x engine.Accumulator) string {
			v, err := x.Result()
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(v)
			return string(js)
		}
		whole := acc()
		for _, rs := range recs {
			for i := 0; i < len(rs); i += 333 {
				if err := whole.Add(rs[i:min(i+333, len(rs))]); err != nil {
					t.Fatal(err)
				}
			}
		}
		first, second := acc(), acc()
		if err := first.Add(recs[0]); err != nil {
			t.Fatal(err)
		}
		if err := second.Add(recs[1]); err != nil {
			t.Fatal(err)
		}
		if err := first.Merge(second); err != nil {
			t.Fatal(err)
		}
		w, m := result(whole), result(first)
		if w != m || len(w) < 500 {
			t.Errorf("%s: merged\n%.400s\nwhole\n%.400s", name, m, w)
		}
		// Run 1, then run 0: not the order of the records.
		first, second = acc(), acc()
		first.Add(recs[1])
		second.Add(recs[0])
		if err := first.Merge(second); err == nil {
			t.Errorf("%s: merging run 0 after run 1 was accepted", name)
		}
	}
}
