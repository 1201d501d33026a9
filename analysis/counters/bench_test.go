package counters_test

import (
	"testing"

	"github.com/parscope/parscope/analysis/counters"
	"github.com/parscope/parscope/engine/enginetest"
)

// BenchmarkCounters times the analysis of 2,000,000 records of a
// 64-process synthetic trace (states, regions, messages, events,
// counters), on one core with -cpu 1; docs/performance.md has the figures.
func BenchmarkCounters(b *testing.B) {
	t, recs := enginetest.Records(b, 64, 2_000_000, nil)
	enginetest.Bench(b, counters.Name, nil, t, recs)
}
