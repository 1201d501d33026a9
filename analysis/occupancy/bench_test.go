package occupancy

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/parscope/parscope/internal/cputime"
	"github.com/parscope/parscope/trace"
)

// benchTrace is a trace of p processes moving among m modes, one state
// record per time step (every record makes a new microstate).
func benchTrace(p, m, n int) []trace.Record {
	rng := rand.New(rand.NewPCG(3, 3))
	recs := make([]trace.Record, 0, n)
	for i := range p {
		recs = append(recs, trace.State(0, int32(i), 0, int32(rng.IntN(m))))
	}
	for t := int64(1); len(recs) < n; t++ {
		recs = append(recs, trace.State(0, int32(rng.IntN(p)), t, int32(rng.IntN(m))))
	}
	return recs
}

func BenchmarkAccumulator(b *testing.B) {
	for _, bc := range []struct {
		name    string
		p, m    int
		strings bool // string keys forced where the counts would pack
	}{
		{"p16-m4", 16, 4, false},
		{"p1024-m4", 1024, 4, false},
		{"p64-m13-two-words", 64, 13, false},
		{"p64-m13-strings", 64, 13, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			recs := benchTrace(bc.p, bc.m, 1<<20)
			modes := modesOf(bc.m, false)
			b.ResetTimer()
			cpu0 := cputime.Used()
			for range b.N {
				acc, err := NewAccumulator(modes, bc.p, 0, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if bc.strings {
					acc.packed, acc.fast, acc.tab = false, false, newTable(false, acc.m, acc.lay, acc.opts.Budget)
				}
				for i := range recs {
					if err := acc.Add(&recs[i]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := acc.Result(0); err != nil {
					b.Fatal(err)
				}
			}
			reportRates(b, len(recs), cputime.Used()-cpu0)
		})
	}
}

// BenchmarkCompute measures the whole streaming path (reader batches,
// per-run accumulator) on an in-memory trace.
func BenchmarkCompute(b *testing.B) {
	recs := benchTrace(16, 4, 1<<20)
	h := &trace.Header{Runs: []trace.RunInfo{{Procs: 16}}}
	modes := modesOf(4, false)
	b.ResetTimer()
	cpu0 := cputime.Used()
	for range b.N {
		if _, err := Compute(b.Context(), h, trace.NewSliceReader(recs), modes, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	reportRates(b, len(recs), cputime.Used()-cpu0)
}

// reportRates reports records per wall second and per CPU second (the
// benchmarks run on one goroutine; run them with -cpu 1 so that the
// garbage collector's time is the benchmark's too).
func reportRates(b *testing.B, n int, cpu time.Duration) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "records/cpu-s")
	}
}
