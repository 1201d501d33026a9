package pca_test

import (
	"testing"

	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
)

// TestPCAInParts checks that the PCA of a trace computed run by run on
// accumulators that travel (engine.Portable), merged between the pass of
// the moments and the pass of the scores, is Run's: the counts equal, the
// numbers within 1e-12 (the covariance sums are added run by run, then
// the runs together); with recorded states and states derived from
// regions.
func TestPCAInParts(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		s := enginetest.MixedStore(t, 3, 6, 80, recorded)
		parts := enginetest.ByRun(s)
		enginetest.SameAsRunWithin(t, s, engine.Request{Analysis: pca.Name}, parts, true, 1e-12)
		p := pca.DefaultParams()
		p.Components, p.TimeWeighted, p.MaxPoints = 0, true, 7
		enginetest.SameAsRunWithin(t, s, engine.Request{Analysis: pca.Name, Options: p, Runs: []int32{0, 2}}, parts, true, 1e-12)
		q := pca.DefaultParams()
		q.Procs, q.Start = []int32{5, 1, 2, 0}, "1"
		enginetest.SameAsRunWithin(t, s, engine.Request{Analysis: pca.Name, Options: q, States: engine.StatesMPI}, parts, true, 1e-12)
	}
	// The randomized method (more than ExactMaxProcs processes) makes its
	// passes whole, on one machine; its accumulator travels after them.
	big := enginetest.MixedStore(t, 1, pca.ExactMaxProcs+4, 4, true)
	enginetest.SameAsRun(t, big, engine.Request{Analysis: pca.Name}, []enginetest.Part{{}}, false)
	if env, err := enginetest.Parts(big, engine.Request{Analysis: pca.Name}, []enginetest.Part{{}}, false); err != nil || env.Result.(*pca.Report).Method != pca.MethodRandomized {
		t.Errorf("%d processes: %v, want the randomized method", pca.ExactMaxProcs+4, err)
	}
	// A trace none of whose runs has states: the same error.
	s := enginetest.MixedStore(t, 2, 3, 10, true)
	enginetest.SameAsRun(t, s, engine.Request{Analysis: pca.Name, Runs: []int32{}, States: engine.StatesRecorded}, enginetest.ByRun(s), true)
}
