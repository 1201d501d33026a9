package phase

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	eng "github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

var accIntervals = flag.Int("acc-intervals", 100_000, "intervals of BenchmarkAccumulator's stream")

// BenchmarkAccumulator feeds the phases accumulator one synthetic stream
// of -acc-intervals intervals × 30 non-zeros over 10,000 blocks (12
// phases in runs of 50 intervals; an interval executes 25 blocks of
// its phase and 5 others of the phase's at random) in
// batches of engine.BatchSize BBV records, then takes its result, in
// Default mode with --maxk 30. It reports the peak heap in use (sampled
// every 10 ms), the heap in use after the records were added (after a
// GC: what the accumulator holds) and the bytes allocated, in MiB.
func BenchmarkAccumulator(b *testing.B) {
	n := *accIntervals
	b.Run(fmt.Sprintf("intervals=%d", n), func(b *testing.B) {
		p := DefaultParams()
		p.MaxK = 30
		for b.Loop() {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := samplePeak(10*time.Millisecond, func(m *runtime.MemStats) uint64 { return m.HeapInuse })
			a, err := New(&eng.Trace{Name: "synthetic"}, p)
			if err != nil {
				b.Fatal(err)
			}
			if err := feedSynthetic(a, n); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			var held runtime.MemStats
			runtime.ReadMemStats(&held)
			res, err := a.Result()
			peak := stop()
			if err != nil {
				b.Fatal(err)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(max(peak, held.HeapInuse)-before.HeapInuse)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(held.HeapInuse-before.HeapInuse)/(1<<20), "held-MiB")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "alloc-MiB")
			if k := res.(*Phases).Streams[0].Result.K; k < 2 {
				b.Fatalf("k = %d for 12 phases", k)
			}
		}
	})
}

// feedSynthetic adds n synthetic intervals to a, one batch at a time.
func feedSynthetic(a *Accumulator, n int) error {
	const blocks, nnz, phases, runLen = 10_000, 30, 12, 50
	rng := rand.New(rand.NewPCG(1, 2))
	// Each phase executes blocks of its own range, with its own counts.
	base := make([][]int64, phases)
	for p := range base {
		base[p] = make([]int64, nnz)
		for j := range base[p] {
			base[p][j] = 100 + rng.Int64N(10_000)
		}
	}
	batch := make([]trace.Record, 0, eng.BatchSize)
	seen := make([]int, blocks+1)
	for i := 0; i < n; i++ {
		p := (i / runLen) % phases
		lo := p * (blocks / phases)
		for j := 0; j < nnz; {
			// The phase's first 25 blocks, then 5 of its others at random.
			id := int32(lo + 1 + j)
			if j >= 25 {
				id = int32(lo + 26 + rng.IntN(blocks/phases-25))
			}
			if seen[id] == i+1 {
				continue
			}
			seen[id] = i + 1
			c := base[p][j] * (90 + rng.Int64N(21)) / 100
			batch = append(batch, trace.BBV(0, 0, int32(i), 0, id, c))
			j++
			if len(batch) == cap(batch) {
				if err := a.Add(batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
	}
	return a.Add(batch)
}
