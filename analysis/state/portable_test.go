package state_test

import (
	"testing"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
)

// TestStatesInParts checks that the states of a trace computed run by run
// on accumulators that travel (engine.Portable) and merged are Run's,
// with recorded states and states derived from regions.
func TestStatesInParts(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		s := enginetest.MixedStore(t, 3, 6, 80, recorded)
		p := state.DefaultStatesParams()
		p.TimelineSamples = 40
		enginetest.SameAsRun(t, s, engine.Request{Analysis: state.Name, Options: p}, enginetest.ByRun(s), false)
		q := state.DefaultStatesParams()
		q.Procs, q.Start = []int32{4, 1, 2}, "0"
		enginetest.SameAsRun(t, s, engine.Request{Analysis: state.Name, Options: q, Runs: []int32{2, 0}, States: engine.StatesMPI}, enginetest.ByRun(s), false)
	}
}
