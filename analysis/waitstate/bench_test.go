package waitstate_test

import (
	"testing"

	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/engine/enginetest"
)

// BenchmarkWaitStates times the analysis of 2,000,000 records of a
// 64-process synthetic trace (states, regions, messages, events,
// counters), on one core with -cpu 1; docs/performance.md has the figures.
func BenchmarkWaitStates(b *testing.B) {
	t, recs := enginetest.Records(b, 64, 2_000_000, nil)
	enginetest.Bench(b, waitstate.Name, nil, t, recs)
}

// BenchmarkWaitStatesClockCorrection times the same with the clock
// correction: a first pass for the offsets, a second to measure.
func BenchmarkWaitStatesClockCorrection(b *testing.B) {
	t, recs := enginetest.Records(b, 64, 2_000_000, nil)
	p := waitstate.DefaultParams()
	p.ClockCorrection = true
	enginetest.Bench(b, waitstate.Name, p, t, recs)
}
