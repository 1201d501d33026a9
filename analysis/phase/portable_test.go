package phase_test

import (
	"testing"

	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
)

// TestPhasesInParts checks that the phases of a trace's BBV streams
// projected process by process on accumulators that travel
// (engine.Portable), merged and clustered are Run's, byte for byte, in
// the default and the compat mode, projected or not.
func TestPhasesInParts(t *testing.T) {
	s := enginetest.MixedStore(t, 2, 4, 60, true)
	parts := enginetest.ByProcess(s)
	small := func() *phase.Params {
		p := phase.DefaultParams()
		p.MaxK, p.InitSeeds = 4, 2
		return p
	}
	enginetest.SameAsRun(t, s, engine.Request{Analysis: phase.Name, Options: small()}, parts, false)
	p := small()
	p.Compat, p.Dim, p.VLI, p.Procs = true, "noProject", true, []int32{1, 2}
	enginetest.SameAsRun(t, s, engine.Request{Analysis: phase.Name, Options: p, Runs: []int32{1}}, parts, false)
	q := small()
	q.K, q.Dim = "2,3", "5"
	enginetest.SameAsRun(t, s, engine.Request{Analysis: phase.Name, Options: q, ExcludeProcs: []int32{0}}, parts, false)
	// Every stream in one part, then the two runs apart.
	enginetest.SameAsRun(t, s, engine.Request{Analysis: phase.Name, Options: small()}, []enginetest.Part{{}}, false)
	enginetest.SameAsRun(t, s, engine.Request{Analysis: phase.Name, Options: small()}, enginetest.ByRun(s), false)
}
