package ocs

import (
	"strings"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// pingPong returns the records of run: process 0 sends 1 KiB to process 1
// and back, twice.
func pingPong(run int32) []trace.Record {
	var out []trace.Record
	for i := range int64(2) {
		t := i * 1000
		out = append(out, trace.Send(run, 0, t, t+10, 1, 1024, 0, 0), trace.Recv(run, 1, t+5, t+20, 0, 1024, 0, 0),
			trace.Send(run, 1, t+30, t+40, 0, 1024, 0, 0), trace.Recv(run, 0, t+35, t+50, 1, 1024, 0, 0))
	}
	return out
}

// TestAnalysisRunsAndMerge checks that every run is simulated, that
// accumulators of different runs merge into the one of both, and that a
// run in two accumulators is refused.
func TestAnalysisRunsAndMerge(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}, {ID: 1, Procs: 2}}}
	an, _ := engine.Lookup(Name)
	p := DefaultAnalysisParams()
	p.Planes, p.Ranking = []int32{1}, []string{"best"}
	mk := func(runs ...int32) engine.Accumulator {
		acc, err := an.New(&engine.Trace{Header: h}, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if err := acc.Add(pingPong(r)); err != nil {
				t.Fatal(err)
			}
		}
		return acc
	}
	result := func(acc engine.Accumulator) *Report {
		r, err := acc.Result()
		if err != nil {
			t.Fatal(err)
		}
		return r.(*Report)
	}
	both := result(mk(0, 1))
	if len(both.Runs) != 2 || both.Runs[1].Run != 1 || both.Runs[0].Messages != 4 || both.Runs[1].Curves.Results[0][0].CircuitMessages != 4 {
		t.Fatalf("two runs: %+v", both.Runs)
	}
	a, b := mk(0), mk(1)
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if m := result(a); len(m.Runs) != 2 || m.Runs[1].Curves.Results[0][0] != both.Runs[1].Curves.Results[0][0] {
		t.Errorf("merged runs: %+v", m.Runs)
	}
	if err := mk(0).Merge(mk(0)); err == nil || !strings.Contains(err.Error(), "run 0 is in both") {
		t.Errorf("one run in two accumulators: %v", err)
	}
}

// TestAnalysisParamsRefused checks the options' refusals.
func TestAnalysisParamsRefused(t *testing.T) {
	for _, tc := range []struct {
		set  func(*AnalysisParams)
		want string
	}{
		{func(p *AnalysisParams) { p.Planes = nil }, "planes: none given"},
		{func(p *AnalysisParams) { p.Planes = []int32{2000} }, "more than 1024"},
		{func(p *AnalysisParams) { p.Ranking = []string{"random"} }, "ranking"},
		{func(p *AnalysisParams) { p.Ranking = nil }, "no strategy"},
		{func(p *AnalysisParams) { p.OpticalGbps = 0 }, "optical bandwidth"},
		{func(p *AnalysisParams) { p.Decompose = "star" }, "decompose"},
	} {
		p := DefaultAnalysisParams()
		tc.set(p)
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", p, err, tc.want)
		}
	}
	if err := DefaultAnalysisParams().Check(); err != nil {
		t.Error(err)
	}
}
