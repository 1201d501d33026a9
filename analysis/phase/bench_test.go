package phase

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/parscope/parscope/format/bbv"
)

// BenchmarkCompat times the whole compat pipeline (normalise, project,
// k search, post-processing) with SimPoint's default options on the two
// real data sets, parsing excluded. SimPoint 3.2 takes 0.03 s
// (bzip2_rt_100M) and 0.07 s (phases) on the reference machine.
func BenchmarkCompat(b *testing.B) {
	for _, name := range []string{"bzip2_rt_100M", "phases"} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(b *testing.B) {
				f := loadBB(b, name+".bb.gz")
				opts := DefaultOptions()
				opts.Workers = workers
				cpu := processCPU()
				for b.Loop() {
					if _, err := Run(context.Background(), f, opts); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// BenchmarkDefault times Default mode with the same search on the two
// real data sets, on all the cores (GOMAXPROCS workers).
func BenchmarkDefault(b *testing.B) {
	for _, name := range []string{"bzip2_rt_100M", "phases"} {
		b.Run(name, func(b *testing.B) {
			f := loadBB(b, name+".bb.gz")
			opts := DefaultOptions()
			opts.Mode = Default
			cpu := processCPU()
			for b.Loop() {
				if _, err := Run(context.Background(), f, opts); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports the process CPU time per iteration since start, a
// figure less disturbed than wall time when other jobs share the cores.
func reportCPU(b *testing.B, start time.Duration) {
	if cpu := processCPU() - start; cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkScale clusters a synthetic 100,000 intervals × 50,000 blocks
// file in Default mode with the default search: 12 program phases, each
// interval with 300 non-zeros drawn from its phase's 2,000 blocks. It
// reports the peak heap (MiB) during the run.
func BenchmarkScale(b *testing.B) {
	f := scaleFile(100_000, 50_000, 300, 12)
	for _, mode := range []Mode{Default, Compat} {
		b.Run(mode.String(), func(b *testing.B) {
			opts := DefaultOptions()
			opts.Mode = mode
			for b.Loop() {
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := samplePeak(20*time.Millisecond, func(m *runtime.MemStats) uint64 { return m.HeapAlloc }) // while Run works
				res, err := Run(context.Background(), f, opts)
				peak := stop()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(res.K), "k")
			}
		})
	}
}

// samplePeak reads the memory statistics every period, in a goroutine of
// its own, and keeps the largest value of of them until the function it
// returns is called; that function stops the sampling and returns the
// peak.
func samplePeak(period time.Duration, of func(*runtime.MemStats) uint64) func() uint64 {
	stop := make(chan uint64)
	go func() {
		peak := uint64(0)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				stop <- peak
				return
			case <-time.After(period):
				runtime.ReadMemStats(&m)
				peak = max(peak, of(&m))
			}
		}
	}()
	return func() uint64 {
		stop <- 0
		return <-stop
	}
}

// scaleFile builds n intervals over dim blocks in runs of 500 intervals
// per phase, cycling through the phases. Phase p owns blocks
// p·dim/phases+1 …; an interval executes nnz−50 of the phase's hot blocks
// with the phase's counts ±10%, plus 50 blocks drawn at random from the
// phase's first 2,000, as real programs do.
func scaleFile(n, dim, nnz, phases int) *bbv.File {
	rng := rand.New(rand.NewPCG(42, 7))
	hot := nnz - 50
	profile := make([][]float64, phases)
	for p := range profile {
		profile[p] = make([]float64, hot)
		for j := range profile[p] {
			profile[p][j] = float64(100 + rng.IntN(10000))
		}
	}
	f := &bbv.File{Name: "scale", Dim: int32(dim)}
	f.Vectors = make([]bbv.Vector, n)
	for i := range f.Vectors {
		p := (i / 500) % phases
		base := p * (dim / phases)
		v := bbv.Vector{Blocks: make([]int32, 0, nnz), Counts: make([]float64, 0, nnz)}
		for j := 0; j < hot; j++ {
			v.Blocks = append(v.Blocks, int32(base+1+j))
			v.Counts = append(v.Counts, float64(int(profile[p][j]*(0.9+0.2*rng.Float64()))))
		}
		seen := map[int32]bool{}
		for len(v.Blocks) < nnz {
			id := int32(base + 1 + hot + rng.IntN(2000-hot))
			if seen[id] {
				continue
			}
			seen[id] = true
			v.Blocks = append(v.Blocks, id)
			v.Counts = append(v.Counts, float64(1+rng.IntN(1000)))
		}
		f.Vectors[i] = v
	}
	return f
}
