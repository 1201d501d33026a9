package mentropy_test

import (
	"testing"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
)

// TestMEntropyInParts checks that the series of a trace computed process
// by process (both passes on each) on accumulators that travel
// (engine.Portable) and merged are Run's, byte for byte, for the streams
// of events, of states (recorded, and derived from regions) and of
// regions.
func TestMEntropyInParts(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		s := enginetest.MixedStore(t, 2, 5, 60, recorded)
		parts := enginetest.ByProcess(s)
		enginetest.SameAsRun(t, s, engine.Request{Analysis: mentropy.Name}, parts, false)
		p := mentropy.DefaultParams()
		p.Of, p.MaxPoints, p.PhaseThreshold, p.Learned = "states", 9, 0.2, true
		enginetest.SameAsRun(t, s, engine.Request{Analysis: mentropy.Name, Options: p, ExcludeProcs: []int32{2}}, parts, false)
		q := mentropy.DefaultParams()
		q.Of, q.Procs, q.PhaseThreshold = "regions", []int32{0, 3, 4}, 0.1
		enginetest.SameAsRun(t, s, engine.Request{Analysis: mentropy.Name, Options: q, Runs: []int32{1}}, parts, false)
	}
}
