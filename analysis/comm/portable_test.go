package comm_test

import (
	"testing"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
)

// TestCommInParts checks that the communication of a trace computed
// process by process on accumulators that travel (engine.Portable) and
// merged is Run's, byte for byte (nodes in canonical order).
func TestCommInParts(t *testing.T) {
	s := enginetest.MixedStore(t, 2, 6, 60, true)
	parts := enginetest.ByProcess(s)
	enginetest.SameAsRun(t, s, engine.Request{Analysis: comm.Name}, parts, false)
	p := &comm.Params{Decompose: "binomial", UnknownCommAsWorld: true, MaxSide: 2}
	enginetest.SameAsRun(t, s, engine.Request{Analysis: comm.Name, Options: p, ExcludeProcs: []int32{3}}, parts, false)
	enginetest.SameAsRun(t, s, engine.Request{Analysis: comm.Name, Options: p, Runs: []int32{1}}, enginetest.ByRun(s), false)
}
