package entropy_test

import (
	"testing"
	"time"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
)

// TestEntropyInParts checks that the entropy of a trace computed run by
// run on accumulators that travel (engine.Portable) and merged in run
// order is Run's, byte for byte: the measures of every run, over all runs,
// the series and the subset ranking of run 0; with recorded states and
// states derived from regions.
func TestEntropyInParts(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		s := enginetest.MixedStore(t, 4, 6, 80, recorded)
		parts := enginetest.ByRun(s)
		enginetest.SameAsRun(t, s, engine.Request{Analysis: entropy.Name}, parts, false)
		p := entropy.DefaultParams()
		p.Window, p.Subsets, p.Cyclic, p.TimeWeighted = 3*time.Microsecond, 3, true, true
		enginetest.SameAsRun(t, s, engine.Request{Analysis: entropy.Name, Options: p}, parts, false)
		q := entropy.DefaultParams()
		q.Window, q.Subsets, q.Procs = 5*time.Microsecond, 2, []int32{5, 0, 3}
		enginetest.SameAsRun(t, s, engine.Request{Analysis: entropy.Name, Options: q, Runs: []int32{1, 2}}, parts, false)
		enginetest.SameAsRun(t, s, engine.Request{Analysis: entropy.Name, Options: q, ExcludeProcs: []int32{1}}, parts, false)
	}
}
