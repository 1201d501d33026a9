package pca_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phasespace"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// wideTrace is a trace whose run 1 has procs processes (run 0 has 4) and
// one state record.
func wideTrace(procs int32) *engine.Trace {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 4}, {ID: 1, Procs: procs}}}
	return &engine.Trace{Name: "wide.pst", Header: h, Stats: &store.Stats{Records: map[string]int64{"state": 1}}}
}

// TestStateLimits checks the limits the state analyses declare: a run of
// more processes than a state's reconstruction holds is refused, before
// anything is read, unless the state is partial (--procs) or the run is
// not selected; all the components of PCA are refused above what the
// exact method handles, the top few are not.
func TestStateLimits(t *testing.T) {
	huge := wideTrace(state.MaxProcs + 1)
	for _, name := range []string{state.Name, entropy.Name, pca.Name, phasespace.Name} {
		a, ok := engine.Lookup(name)
		if !ok {
			t.Fatalf("no analysis %s", name)
		}
		err := a.WithinLimits(huge, engine.Request{Analysis: name}, nil)
		var lim *engine.LimitError
		if !errors.As(err, &lim) || lim.Analysis != name || !strings.HasPrefix(lim.Reason(), "run 1 has 67108865 processes: its states would need 4096 MiB") {
			t.Errorf("%s: %v, want a refusal of run 1", name, err)
		}
		if err := a.WithinLimits(huge, engine.Request{Analysis: name, Runs: []int32{0}}, nil); err != nil {
			t.Errorf("%s of run 0 alone: %v", name, err)
		}
		// A partial state over a few processes is within the limit.
		opts := a.Options()
		switch o := opts.(type) {
		case *state.StatesParams:
			o.Procs = []int32{0, 1}
		case *entropy.Params:
			o.Procs = []int32{0, 1}
		case *pca.Params:
			o.Procs = []int32{0, 1}
		case *phasespace.Params:
			o.Procs = []int32{0, 1}
		}
		if err := a.WithinLimits(huge, engine.Request{Analysis: name}, opts); err != nil {
			t.Errorf("%s of processes 0 and 1: %v", name, err)
		}
	}
	a, _ := engine.Lookup(pca.Name)
	wide := wideTrace(pca.ExactMaxProcs + 1)
	all := pca.DefaultParams()
	all.Components = 0
	err := a.WithinLimits(wide, engine.Request{Analysis: pca.Name}, all)
	var lim *engine.LimitError
	if !errors.As(err, &lim) || !strings.HasPrefix(lim.Reason(), "run 1: all 4097 components of 4097 processes would need") {
		t.Errorf("all the components of %d processes: %v", pca.ExactMaxProcs+1, err)
	}
	if err := a.WithinLimits(wide, engine.Request{Analysis: pca.Name}, nil); err != nil {
		t.Errorf("the top components of %d processes: %v", pca.ExactMaxProcs+1, err)
	}
	if err := a.WithinLimits(wideTrace(pca.ExactMaxProcs), engine.Request{Analysis: pca.Name}, all); err != nil {
		t.Errorf("all the components of %d processes: %v", pca.ExactMaxProcs, err)
	}
}
