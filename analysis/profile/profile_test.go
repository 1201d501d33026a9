package profile_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parscope/parscope/analysis/profile"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// write stores recs (with the header's regions and states) and opens it.
func write(t *testing.T, regions []trace.RegionDef, states []trace.StateDef, runs int, recs []trace.Record) *store.Store {
	t.Helper()
	h := &trace.Header{Regions: regions, States: states}
	for r := range runs {
		h.Runs = append(h.Runs, trace.RunInfo{ID: int32(r)})
	}
	return storetest.New(t, "p.pst", h, recs)
}

func profileOf(t *testing.T, s *store.Store, p *profile.Params) *profile.Result {
	t.Helper()
	return enginetest.Result[*profile.Result](t, s, engine.Request{Analysis: profile.Name, Options: p})
}

var regions = []trace.RegionDef{{ID: 1, Label: "main", Parent: -1}, {ID: 2, Label: "solve", Parent: -1}, {ID: 3, Label: "MPI_Send", Parent: -1}, {ID: 4, Label: "fib", Parent: -1}}

func enter(p int32, t int64, id int32) trace.Record { return trace.Enter(0, p, t, id) }
func exit(p int32, t int64, id int32) trace.Record  { return trace.Exit(0, p, t, id) }

// TestFlatAndTree: two processes, times by hand.
//
//	process 0: main [0,100): solve [10,60): MPI_Send [20,30) sends 100 B to 1
//	                                        MPI_Send [40,45) sends 3000 B to 1
//	                         MPI_Send [70,80) sends 0 B to 1
//	process 1: main [0,50): solve [5,45)
func TestFlatAndTree(t *testing.T) {
	recs := []trace.Record{
		enter(0, 0, 1), enter(1, 0, 1), enter(1, 5, 2), enter(0, 10, 2), enter(0, 20, 3),
		trace.Send(0, 0, 25, 25, 1, 100, 0, 0), exit(0, 30, 3), enter(0, 40, 3),
		trace.Send(0, 0, 42, 42, 1, 3000, 0, 0), exit(0, 45, 3), exit(1, 45, 2), exit(1, 50, 1),
		exit(0, 60, 2), enter(0, 70, 3), trace.Send(0, 0, 75, 75, 1, 0, 0, 0), exit(0, 80, 3), exit(0, 100, 1),
	}
	s := write(t, regions, nil, 1, recs)
	p := profile.DefaultParams()
	p.PerProcess = true
	r := profileOf(t, s, p)
	if r.Of != "regions" || len(r.Runs) != 1 {
		t.Fatalf("%+v", r)
	}
	run := r.Runs[0]
	if run.Procs != 2 || run.TotalNS != 150 || run.OutsideNS != 0 {
		t.Fatalf("procs %d total %d outside %d, want 2, 150, 0", run.Procs, run.TotalNS, run.OutsideNS)
	}
	// main: incl 100+50, excl (10+40)+(5+5) = 60; solve: incl 50+40,
	// excl (50-15)+40 = 75; MPI_Send: 3 visits, incl = excl = 25.
	want := []string{
		"solve visits 2 procs 2 incl 90 excl 75 share 0.500 excl[min 35 p0 mean 37.5 max 40 p1]",
		"main visits 2 procs 2 incl 150 excl 50 share 0.333 excl[min 10 p1 mean 25.0 max 40 p0]",
		"MPI_Send visits 3 procs 1 incl 25 excl 25 share 0.167 excl[min 0 p1 mean 12.5 max 25 p0]",
	}
	if len(run.Flat) != len(want) {
		t.Fatalf("%d flat rows: %+v", len(run.Flat), run.Flat)
	}
	for i, e := range run.Flat {
		got := fmt.Sprintf("%s visits %d procs %d incl %d excl %d share %.3f excl[min %d p%d mean %.1f max %d p%d]", e.Name, e.Visits, e.Procs,
			e.InclusiveNS, e.ExclusiveNS, e.ExclusiveShare, e.Exclusive.MinNS, e.Exclusive.MinProc, e.Exclusive.MeanNS, e.Exclusive.MaxNS, e.Exclusive.MaxProc)
		if got != want[i] {
			t.Errorf("flat %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
	if b := run.Flat[0].ByProcess; len(b) != 2 || b[0] != (profile.ProcEntry{Proc: 0, Visits: 1, InclusiveNS: 50, ExclusiveNS: 35}) ||
		b[1] != (profile.ProcEntry{Proc: 1, Visits: 1, InclusiveNS: 40, ExclusiveNS: 40}) {
		t.Errorf("solve by process: %+v", b)
	}
	// Call tree: main → solve → MPI_Send, and main → MPI_Send.
	var tree []string
	for _, n := range run.Tree {
		tree = append(tree, fmt.Sprintf("%d<%d %d:%s v%d i%d e%d", n.ID, n.Parent, n.Depth, n.Name, n.Visits, n.InclusiveNS, n.ExclusiveNS))
	}
	wantTree := "[0<-1 0:main v2 i150 e50 1<0 1:solve v2 i90 e75 2<1 2:MPI_Send v2 i15 e15 3<0 1:MPI_Send v1 i10 e10]"
	if fmt.Sprint(tree) != wantTree {
		t.Errorf("tree\n got %v\nwant %s", tree, wantTree)
	}
	// Messages: 3 sends, 3100 B; buckets [0,1), [64,128), [2048,4096).
	m := run.Messages
	if m.Count != 3 || m.Bytes != 3100 || fmt.Sprint(m.BySize) != "[{0 1 1 0} {64 128 1 100} {2048 4096 1 3000}]" {
		t.Errorf("messages %d %d by size %v", m.Count, m.Bytes, m.BySize)
	}
	if len(m.ByRegion) != 1 || m.ByRegion[0] != (profile.RegionMessages{Region: 3, Name: "MPI_Send", Count: 3, Bytes: 3100}) {
		t.Errorf("by region %+v", m.ByRegion)
	}
	if len(m.ByPair) != 1 || m.ByPair[0] != (profile.PairMessages{Src: 0, Dst: 1, Count: 3, Bytes: 3100}) {
		t.Errorf("by pair %+v", m.ByPair)
	}
	if run.Problems != (profile.Problems{}) {
		t.Errorf("problems %+v", run.Problems)
	}

	// Sorting and top.
	p = profile.DefaultParams()
	p.Sort, p.Top = profile.SortVisits, 1
	if f := profileOf(t, s, p).Runs[0]; len(f.Flat) != 1 || f.Flat[0].Name != "MPI_Send" || f.FlatOmitted != 2 {
		t.Errorf("--sort visits --top 1: %+v", f.Flat)
	}
	p.Sort, p.Top = profile.SortInclusive, 0
	if f := profileOf(t, s, p).Runs[0]; f.Flat[0].Name != "main" || f.Flat[2].Name != "MPI_Send" {
		t.Errorf("--sort inclusive: %+v", f.Flat)
	}
	p.Sort = profile.SortName
	if f := profileOf(t, s, p).Runs[0]; f.Flat[0].Name != "MPI_Send" || f.Flat[1].Name != "main" {
		t.Errorf("--sort name: %+v", f.Flat)
	}
	p.Sort, p.MaxNodes = profile.SortExclusive, 2
	if f := profileOf(t, s, p).Runs[0]; len(f.Tree) != 2 || f.TreeOmitted != 2 || f.Tree[1].Name != "solve" {
		t.Errorf("--max-nodes 2: %+v omitted %d", f.Tree, f.TreeOmitted)
	}
}

// TestRecursionAndBrokenNesting: a recursive region's inclusive time counts
// its outermost calls once; exits out of order and regions left open are
// repaired and counted.
func TestRecursionAndBrokenNesting(t *testing.T) {
	recs := []trace.Record{
		// process 0: fib [0,100) ⊃ fib [10,60) ⊃ fib [20,30).
		enter(0, 0, 4), enter(0, 10, 4), enter(0, 20, 4), exit(0, 30, 4), exit(0, 60, 4), exit(0, 100, 4),
		// process 1: main [0, ...) solve [10, ...); main exits at 50
		// (closing solve: mismatched), then an exit of solve with no
		// entry (unmatched), then solve entered at 60 and left open to
		// the last record at 90.
		enter(1, 0, 1), enter(1, 10, 2), exit(1, 50, 1), exit(1, 55, 2), enter(1, 60, 2),
		trace.Send(0, 1, 90, 90, 0, 8, 0, 0),
	}
	s := write(t, regions, nil, 1, recs)
	r := profileOf(t, s, profile.DefaultParams()).Runs[0]
	by := map[string]profile.Entry{}
	for _, e := range r.Flat {
		by[e.Name] = e
	}
	if f := by["fib"]; f.Visits != 3 || f.InclusiveNS != 100 || f.ExclusiveNS != 100 {
		t.Errorf("fib: %+v; want 3 visits, 100 inclusive (not 160), 100 exclusive", f)
	}
	if m, s := by["main"], by["solve"]; m.InclusiveNS != 50 || m.ExclusiveNS != 10 || s.Visits != 2 || s.InclusiveNS != 40+30 || s.ExclusiveNS != 70 {
		t.Errorf("main %+v\nsolve %+v", m, s)
	}
	if r.Problems != (profile.Problems{UnmatchedExits: 1, MismatchedExits: 1, Unclosed: 1}) {
		t.Errorf("problems %+v", r.Problems)
	}
	// Process 1: from 0 to 90, 10 ns outside every region (50 to 60).
	if r.TotalNS != 190 || r.OutsideNS != 10 {
		t.Errorf("total %d outside %d, want 190 and 10", r.TotalNS, r.OutsideNS)
	}
	// The sender was in solve.
	if m := r.Messages.ByRegion; len(m) != 1 || m[0].Name != "solve" {
		t.Errorf("by region %+v", m)
	}
}

// TestStates: a trace without regions is profiled by its states, each
// state lasting to the process's next state record; runs are separate.
func TestStates(t *testing.T) {
	states := []trace.StateDef{{ID: 0, Name: "compute"}, {ID: 1, Name: "wait", Description: "waiting for a message"}}
	recs := []trace.Record{
		trace.State(0, 0, 0, 0), trace.State(0, 0, 30, 1), trace.State(0, 0, 40, 0), trace.State(0, 0, 100, 1),
		trace.State(1, 0, 0, 1), trace.State(1, 0, 5, 0), trace.Send(1, 0, 20, 20, 1, 4, 0, 0),
	}
	s := write(t, nil, states, 2, recs)
	r := profileOf(t, s, profile.DefaultParams())
	if r.Of != "states" || len(r.Runs) != 2 {
		t.Fatalf("%+v", r)
	}
	// Run 0: compute 30 + 60, wait 10 (+0 at the end: the last record).
	if f := r.Runs[0].Flat; len(f) != 2 || f[0].Name != "compute" || f[0].ExclusiveNS != 90 || f[0].Visits != 2 ||
		f[1].Name != "waiting for a message" || f[1].ExclusiveNS != 10 || f[1].Visits != 2 || r.Runs[0].TotalNS != 100 {
		t.Errorf("run 0: %+v total %d", f, r.Runs[0].TotalNS)
	}
	// Run 1: wait 5, compute to the send at 20.
	if f := r.Runs[1].Flat; len(f) != 2 || f[0].Name != "compute" || f[0].ExclusiveNS != 15 || f[1].ExclusiveNS != 5 {
		t.Errorf("run 1: %+v", f)
	}
	if m := r.Runs[1].Messages.ByRegion; len(m) != 1 || m[0].Name != "compute" {
		t.Errorf("run 1 messages by state %+v", m)
	}
}

// TestNeedsRegionsOrStates: a trace of messages only is refused.
func TestNeedsRegionsOrStates(t *testing.T) {
	s := write(t, nil, nil, 1, []trace.Record{trace.Send(0, 0, 1, 1, 1, 8, 0, 0)})
	_, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: profile.Name}})
	if err == nil || err.Error() != "p.pst: profile needs enter or state records, and the trace has none" {
		t.Errorf("error %v", err)
	}
	p := profile.DefaultParams()
	p.Sort = "size"
	if _, err := engine.Run(context.Background(), write(t, regions, nil, 1, []trace.Record{enter(0, 0, 1)}),
		[]engine.Request{{Analysis: profile.Name, Options: p}}); err == nil {
		t.Error("--sort size accepted")
	}
}

// TestMergeRuns: accumulators over different runs merge; over one run
// they refuse.
func TestMergeRuns(t *testing.T) {
	recs := []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 0, 10, 1), trace.State(1, 0, 0, 1), trace.State(1, 0, 7, 0)}
	s := write(t, nil, []trace.StateDef{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}}, 2, recs)
	tr := engine.TraceOf(s)
	acc := func(run int32) engine.Accumulator {
		return enginetest.RunAccumulator(t, profile.Name, tr, profile.DefaultParams(), recs, run)
	}
	a := acc(0)
	if err := a.Merge(acc(1)); err != nil {
		t.Fatal(err)
	}
	res, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	whole := profileOf(t, s, profile.DefaultParams())
	if fmt.Sprint(res) != fmt.Sprint(whole) {
		t.Errorf("merged\n%+v\nwhole\n%+v", res, whole)
	}
	if err := acc(0).Merge(acc(0)); err == nil {
		t.Error("merging two accumulators of run 0 succeeded")
	}
}
