package occupancy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
)

// TestOccupancyInParts checks that the occupancy of a trace computed run
// by run on accumulators that travel (engine.Portable) and merged is
// Run's, byte for byte, with recorded states and states derived from
// regions, with a projection, rates, counters and the series.
func TestOccupancyInParts(t *testing.T) {
	rates := filepath.Join(t.TempDir(), "rates")
	if err := os.WriteFile(rates, []byte("* 2.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, recorded := range []bool{true, false} {
		s := enginetest.MixedStore(t, 3, 5, 60, recorded)
		parts := enginetest.ByRun(s)
		enginetest.SameAsRun(t, s, engine.Request{Analysis: occupancy.Name}, parts, false)
		p := occupancy.DefaultParams()
		p.Top, p.Windows, p.Counters, p.Project, p.Rates = 3, 17, true, []string{"A1"}, rates
		enginetest.SameAsRun(t, s, engine.Request{Analysis: occupancy.Name, Options: p, Runs: []int32{2, 1}, ExcludeProcs: []int32{4}}, parts, false)
	}
}
