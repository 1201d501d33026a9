package overview_test

import (
	"encoding/json"
	"testing"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// writeStore writes three runs mixing every timed kind (trace/tracetest)
// and basic block vectors, run 2 with a name and named processes.
func writeStore(t *testing.T) *store.Store {
	t.Helper()
	h := &trace.Header{}
	for id := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: id, Name: "s"})
	}
	h.Runs = append(h.Runs, trace.RunInfo{ID: 0}, trace.RunInfo{ID: 1}, trace.RunInfo{ID: 2, Name: "large"})
	h.Procs = append(h.Procs, trace.ProcInfo{Run: 2, Proc: 1, Name: "pid 4242"}, trace.ProcInfo{Run: 2, Proc: 0, Name: "rank 0"})
	var all []trace.Record
	for run := range int32(3) {
		recs, err := trace.ReadAll(&tracetest.Stream{Procs: 3 + run, Limit: 5_000 * int(run+1)})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			r.Run = run
			all = append(all, r)
		}
		for seq := range int32(3) {
			all = append(all, trace.Record{Kind: trace.KindBBV, Run: run, Proc: 0, Seq: seq, ID: 7, Value: 10})
		}
	}
	return storetest.New(t, "mix.pst", h, all)
}

// TestOverviewMatchesManifest checks the overview computed in one pass
// against the figures the store counted while writing: records by kind,
// and each run's records, processes and span; and that every level counts
// each timed record once.
func TestOverviewMatchesManifest(t *testing.T) {
	s := writeStore(t)
	res := enginetest.Run(t, s, engine.Request{Analysis: overview.Name}).Envelopes[0].Result.(*overview.Result)
	st := s.Manifest().Stats
	if len(res.Records) != len(st.Records) {
		t.Errorf("records %v, manifest %v", res.Records, st.Records)
	}
	for k, n := range st.Records {
		if res.Records[k] != n {
			t.Errorf("%s: %d records, manifest %d", k, res.Records[k], n)
		}
	}
	if res.Records["bbv"] != 9 {
		t.Errorf("%d bbv records, want 9", res.Records["bbv"])
	}
	if len(res.Runs) != 3 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	for i, r := range res.Runs {
		m := st.Runs[i]
		if r.Run != m.Run || r.Records != m.Records || r.Procs != m.Procs || r.BeginNS != m.TMin || r.EndNS != m.TMax {
			t.Errorf("run %d: %+v, manifest %+v", i, r.RunSummary, m)
		}
		if r.Procs != 3+int32(i) {
			t.Errorf("run %d: %d procs, want %d", i, r.Procs, 3+i)
		}
		want := []int{overview.DefaultWindows, 256, 64, 16, 4}
		if len(r.Levels) != len(want) {
			t.Fatalf("run %d: %d levels", i, len(r.Levels))
		}
		for li, l := range r.Levels {
			var n int64
			for _, c := range l.Counts {
				n += c
			}
			if l.Windows != want[li] || n != r.Records-3 || len(l.Counts) != l.Windows*len(res.Kinds) {
				t.Errorf("run %d level %d: %d windows counting %d records, want %d and %d", i, li, l.Windows, n, want[li], r.Records-3)
			}
		}
	}
	if r := res.Runs[2]; r.Name != "large" || len(r.ProcessNames) != 1 || r.ProcessNames[0] != (overview.ProcessName{Proc: 1, Name: "pid 4242"}) {
		t.Errorf("run 2: name %q, process names %+v; want large and pid 4242 only", r.Name, r.ProcessNames)
	}
	// A query of the whole run at 20 windows answers from the level of 16.
	sl, ok := res.Query(1, 0, 0, 20)
	if !ok || sl.Level != 3 || len(sl.StartsNS) != 16 || len(sl.Counts) != 16*len(res.Kinds) {
		t.Errorf("query: ok %v, level %d, %d windows", ok, sl.Level, len(sl.StartsNS))
	}
	if _, ok := res.Query(7, 0, 0, 10); ok {
		t.Error("a query of an unknown run answered")
	}
}

// TestOverviewRunsAndMerge checks that a selection of runs counts those
// runs only, that running beside another analysis changes nothing, and
// that merging the accumulators of two run selections gives the whole.
func TestOverviewRunsAndMerge(t *testing.T) {
	s := writeStore(t)
	alone := enginetest.Run(t, s, engine.Request{Analysis: overview.Name})
	both := enginetest.Run(t, s, engine.Request{Analysis: overview.Name}, engine.Request{Analysis: occupancy.Name, Options: &occupancy.Params{Start: "s"}})
	a, _ := json.Marshal(alone.Envelopes[0])
	b, _ := json.Marshal(both.Envelopes[0])
	if string(a) != string(b) {
		t.Errorf("beside occupancy the overview differs:\n%.300s\n%.300s", b, a)
	}
	one := enginetest.Run(t, s, engine.Request{Analysis: overview.Name, Runs: []int32{1}}).Envelopes[0].Result.(*overview.Result)
	if len(one.Runs) != 1 || one.Runs[0].Run != 1 || one.Records["bbv"] != 3 || one.Runs[0].Records != s.Manifest().Stats.Runs[1].Records {
		t.Errorf("runs 1: %+v, records %v", one.Runs, one.Records)
	}
	an, _ := engine.Lookup(overview.Name)
	tr := engine.TraceOf(s)
	accs := make([]engine.Accumulator, 2)
	for i, runs := range [][]int32{{0, 2}, {1, 2}} {
		acc, err := an.New(tr, overview.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		// Run 2 is split between the two: its first half in one, the rest
		// in the other.
		recs, err := trace.ReadAll(s.Records(store.ReadOptions{Runs: runs}))
		if err != nil {
			t.Fatal(err)
		}
		bbvRuns := runs
		if i == 1 {
			bbvRuns = runs[:1]
		}
		bbv, _ := trace.ReadAll(s.BBV(store.ReadOptions{Runs: bbvRuns}))
		n2 := int(s.Manifest().Stats.Runs[2].Records) - 3
		var keep []trace.Record
		k := 0
		for _, r := range recs {
			if r.Run != 2 {
				keep = append(keep, r)
				continue
			}
			if (i == 0) == (k < n2/2) {
				keep = append(keep, r)
			}
			k++
		}
		if err := acc.Add(append(keep, bbv...)); err != nil {
			t.Fatal(err)
		}
		accs[i] = acc
	}
	if err := accs[0].Merge(accs[1]); err != nil {
		t.Fatal(err)
	}
	merged, err := accs[0].Result()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(merged)
	w, _ := json.Marshal(alone.Envelopes[0].Result)
	if string(m) != string(w) {
		t.Errorf("merged accumulators differ from one pass:\n%.300s\n%.300s", m, w)
	}
}
