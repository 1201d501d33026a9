package pop_test

import (
	"testing"

	"github.com/parscope/parscope/analysis/pop"
	"github.com/parscope/parscope/engine/enginetest"
)

// BenchmarkPop times the analysis of 2,000,000 records of a
// 64-process synthetic trace (states, regions, messages, events,
// counters), on one core with -cpu 1, with region R1 (where the messages
// are sent) taken as the runtime's; docs/performance.md has the figures.
func BenchmarkPop(b *testing.B) {
	t, recs := enginetest.Records(b, 64, 2_000_000, nil)
	p := pop.DefaultParams()
	p.RuntimeRegions = "^R1$"
	enginetest.Bench(b, pop.Name, p, t, recs)
}
