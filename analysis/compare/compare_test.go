package compare

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/pop"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

func build(t *testing.T, name string, cs ...int64) *report.Bundle {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	h, recs := tracetest.ComputeThenSend(cs...)
	storetest.Create(t, path, h, recs)
	b, err := report.Build(context.Background(), path, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// row returns the row name of the table title of the section analysis.
func row(t *testing.T, r *Result, analysis, title, name string) Row {
	t.Helper()
	for _, s := range r.Sections {
		if s.Analysis != analysis {
			continue
		}
		for _, tb := range s.Tables {
			if tb.Title != title {
				continue
			}
			for _, rw := range tb.Rows {
				if rw.Name == name {
					return rw
				}
			}
		}
	}
	t.Fatalf("no row %s / %s / %s", analysis, title, name)
	return Row{}
}

// TestDoubledCompute compares the trace with compute taking 100 ns on
// process 0 (50 on process 1) with the one where it takes twice as long:
// every difference is known.
func TestDoubledCompute(t *testing.T) {
	a, b := build(t, "before.pst", 100), build(t, "after.pst", 200)
	r, err := Bundles(a, b, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	check := func(analysis, title, name string, wa, wb float64) {
		t.Helper()
		rw := row(t, r, analysis, title, name)
		if rw.A != wa || rw.B != wb || rw.Diff != wb-wa || rw.DiffPct == nil || math.Abs(*rw.DiffPct-(wb-wa)/wa*100) > 1e-9 {
			t.Errorf("%s / %s / %s: %+v, want a %v b %v", analysis, title, name, rw, wa, wb)
		}
	}
	check(report.AnalysisOverview, "run", "span_ns", 120, 220)
	check(report.AnalysisOverview, "run", "procs", 2, 2)
	check(report.AnalysisProfile, "exclusive time by region", "compute", 150, 300)
	check(report.AnalysisProfile, "inclusive time by region", "main", 240, 440)
	check(report.AnalysisProfile, "visits by region", "compute", 2, 2)
	check(report.AnalysisProfile, "totals (regions)", "message_bytes", 100, 100)
	check(report.AnalysisCritPath, "path", "length_ns", 120, 220)
	check(report.AnalysisPOP, "times", "runtime_ns", 120, 220)
	// The largest mover comes first: compute's 150 ns.
	for _, s := range r.Sections {
		for _, tb := range s.Tables {
			if s.Analysis == report.AnalysisProfile && tb.Title == "exclusive time by region" && tb.Rows[0].Name != "compute" {
				t.Errorf("exclusive rows %+v: compute first", tb.Rows)
			}
		}
	}
	// Useful time: process 0 computes 100 + 10 outside MPI (of 120), then
	// 200 + 10 (of 220).
	ul := row(t, r, report.AnalysisPOP, "times", "useful_max_ns")
	if ul.A != 110 || ul.B != 210 {
		t.Errorf("useful max %+v", ul)
	}
	// The late sender waits c/2 ns: 50, then 100.
	check(report.AnalysisWaitStates, "wait by pattern", "late_sender_ns", 50, 100)

	// Counters need counter records: listed as missing. Occupancy reads
	// states derived from the regions: compared, not missing.
	miss := map[string]Missing{}
	for _, m := range r.Missing {
		miss[m.Analysis] = m
	}
	if m, ok := miss[report.AnalysisCounters]; !ok || m.In != "" || m.ReasonA == "" || m.ReasonA != a.Skipped[report.AnalysisCounters] {
		t.Errorf("counters missing %+v (skipped %q)", m, a.Skipped[report.AnalysisCounters])
	}
	if m, ok := miss[report.AnalysisOccupancy]; ok {
		t.Errorf("occupancy missing %+v: its states come from the regions", m)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	// No figure is 0 on side A only here, so nothing is null.
	if strings.Contains(string(data), "null") {
		t.Errorf("null in %s", data)
	}
}

// TestSelf compares a trace with itself, and two runs of one trace: a
// run with itself differs nowhere.
func TestSelf(t *testing.T) {
	a := build(t, "runs.pst", 100, 300)
	r, err := Bundles(a, a, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sections) < 5 {
		t.Fatalf("%d sections", len(r.Sections))
	}
	for _, s := range r.Sections {
		for _, tb := range s.Tables {
			for _, rw := range tb.Rows {
				if rw.Diff != 0 || rw.DiffPct == nil || *rw.DiffPct != 0 || rw.Only != "" {
					t.Errorf("%s / %s: %+v", s.Analysis, tb.Title, rw)
				}
			}
		}
	}
	r, err = Bundles(a, a, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rw := row(t, r, report.AnalysisProfile, "exclusive time by region", "compute"); rw.A != 150 || rw.B != 450 || *rw.DiffPct != 200 {
		t.Errorf("run 0 against run 1: %+v", rw)
	}
	if _, err := Bundles(a, a, 0, 2); err == nil || !strings.Contains(err.Error(), "no run 2") {
		t.Errorf("run 2: %v", err)
	}
	if _, err := Bundles(nil, a, 0, 0); err == nil {
		t.Error("nil bundle: no error")
	}
}

// TestOnlyOneSide: a region on one side only is marked, and the row's
// percentage is null (infinite) when A is 0.
func TestOnlyOneSide(t *testing.T) {
	ta := figTable{title: "x", regions: true, figs: []fig{ns("kept", 5), ns("gone", 7)}}
	tb := figTable{title: "x", regions: true, figs: []fig{ns("kept", 5), ns("new", 3)}}
	got := joinTable(ta, tb)
	if len(got.Rows) != 3 || got.Rows[0].Name != "gone" || got.Rows[0].Only != SideA || got.Rows[1].Name != "new" || got.Rows[1].Only != SideB || got.Rows[1].DiffPct != nil {
		t.Errorf("%+v", got.Rows)
	}
	if *got.Rows[0].DiffPct != -100 {
		t.Errorf("gone: %v%%", *got.Rows[0].DiffPct)
	}
}

// counterBundle builds the bundle of a trace of one process that samples
// "cycles" at 0 and 100 ns with the values vs.
func counterBundle(t *testing.T, name string, vs ...float64) *report.Bundle {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: 1}},
		Counters: []trace.CounterDef{{ID: 0, Name: "cycles"}}}
	var recs []trace.Record
	for i, v := range vs {
		recs = append(recs, trace.Counter(0, 0, int64(100*i), 0, v))
	}
	storetest.Create(t, path, h, recs)
	b, err := report.Build(context.Background(), path, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCompareCounters compares a counter whose mean rises from 15 to 25
// with the same number of samples.
func TestCompareCounters(t *testing.T) {
	res, err := Bundles(counterBundle(t, "a.pst", 10, 20), counterBundle(t, "b.pst", 10, 40), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sec *Section
	for i := range res.Sections {
		if res.Sections[i].Analysis == report.AnalysisCounters {
			sec = &res.Sections[i]
		}
	}
	if sec == nil || len(sec.Tables) != 2 || len(sec.Tables[0].Rows) != 1 || len(sec.Tables[1].Rows) != 1 {
		t.Fatalf("counters section %+v (missing %+v)", sec, res.Missing)
	}
	m, n := sec.Tables[0].Rows[0], sec.Tables[1].Rows[0]
	if m.Name != "cycles" || m.Unit != UnitValue || m.A != 15 || m.B != 25 || m.Diff != 10 || n.A != 2 || n.B != 2 || n.Diff != 0 {
		t.Errorf("mean %+v, samples %+v", m, n)
	}
}

// TestPOPScalability: B does the same work in more time. Useful time is
// 110 + 60 = 170 ns in A (outside MPI_Send [100, 110] and MPI_Recv
// [50, 110]) and 210 + 110 = 320 ns in B: computation scalability
// 170/320, the same in weak scaling (both runs have 2 processes), and
// global efficiency is B's parallel efficiency times it.
func TestPOPScalability(t *testing.T) {
	a, b := build(t, "before.pst", 100), build(t, "after.pst", 200)
	r, err := Bundles(a, b, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	const title = "scalability (B against A, the reference)"
	pe := row(t, r, report.AnalysisPOP, "efficiencies", "parallel_efficiency")
	for name, want := range map[string][2]float64{
		"computation_scalability_strong": {1, 170.0 / 320},
		"computation_scalability_weak":   {1, 170.0 / 320},
		"global_efficiency_strong":       {pe.A, pe.B * 170 / 320},
		"global_efficiency_weak":         {pe.A, pe.B * 170 / 320},
	} {
		rw := row(t, r, report.AnalysisPOP, title, name)
		if math.Abs(rw.A-want[0]) > 1e-12 || math.Abs(rw.B-want[1]) > 1e-12 || rw.Unit != UnitRatio {
			t.Errorf("%s: %+v, want a %v b %v", name, rw, want[0], want[1])
		}
	}
	if pe.B <= 0 || pe.B >= 1 {
		t.Errorf("parallel efficiency of B %v", pe.B)
	}
	// Against itself, every scalability is 1.
	self, err := Bundles(a, a, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rw := row(t, self, report.AnalysisPOP, title, "computation_scalability_strong"); rw.B != 1 {
		t.Errorf("a run against itself: %+v", rw)
	}
}

// TestWeakScalability: A runs 4 processes with 100 ns of useful time each,
// B 8 processes with 120 ns each. Strong scaling: 400/960; weak scaling,
// B's total scaled by 4/8: 400/480.
func TestWeakScalability(t *testing.T) {
	side := func(procs int, useful, pe float64) side {
		b := &report.Bundle{POP: &engine.Envelope{Result: &pop.Result{Runs: []pop.Run{{Run: 0, Procs: procs, UsefulMeanNS: useful, ParallelEfficiency: pe}}}}}
		return side{b: b, run: 0}
	}
	tabs := scalability(side(4, 100, 0.9), side(8, 120, 0.8))
	if len(tabs) != 1 || len(tabs[0].Rows) != 4 {
		t.Fatalf("%+v", tabs)
	}
	want := map[string]float64{
		"computation_scalability_strong": 400.0 / 960, "global_efficiency_strong": 0.8 * 400 / 960,
		"computation_scalability_weak": 400.0 / 480, "global_efficiency_weak": 0.8 * 400 / 480,
	}
	for _, rw := range tabs[0].Rows {
		if math.Abs(rw.B-want[rw.Name]) > 1e-12 {
			t.Errorf("%s: b %v, want %v", rw.Name, rw.B, want[rw.Name])
		}
	}
	if tabs := scalability(side(4, 0, 0.9), side(8, 120, 0.8)); tabs != nil {
		t.Errorf("no useful time on A: %+v", tabs)
	}
}
