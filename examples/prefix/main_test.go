package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/instrument"
)

func run(t testing.TB, cfg Config) (*tracecheck.Trace, [][]float64, [][]float64) {
	t.Helper()
	var in, out [][]float64
	tr := tracecheck.Record(t, blocks, func(rec *instrument.Recorder) (err error) {
		in, out, err = Run(rec, cfg)
		return err
	})
	return tr, in, out
}

// expectedBlocks is the block sequence of process me in a set of size n
// (global offset off), following Table 2.
func expectedBlocks(me, off, n int) []int32 {
	if n == 1 {
		return []int32{0, 6, 7}
	}
	mid := n / 2
	seq := []int32{0, 1}
	if me-off < mid {
		seq = append(seq, 2)
		seq = append(seq, expectedBlocks(me, off, mid)...)
	} else {
		seq = append(seq, 3)
		seq = append(seq, expectedBlocks(me, off+mid, n-mid)...)
	}
	return append(seq, 4, 5, 7)
}

func TestPrefix(t *testing.T) {
	for _, procs := range []int{16, 5, 1} {
		t.Run(fmt.Sprint(procs), func(t *testing.T) {
			cfg := Config{Procs: procs, Runs: 5, Seed: 9}
			tr, in, out := run(t, cfg)
			for r := range in {
				sum := 0.0
				for i, v := range in[r] {
					sum += v
					if out[r][i] != sum {
						t.Fatalf("run %d process %d: prefix %g, want %g", r, i, out[r][i], sum)
					}
				}
			}
			bl := tr.Blocks()
			for me := 0; me < procs; me++ {
				var want []int32
				for r := 0; r < cfg.Runs; r++ {
					want = append(want, expectedBlocks(me, 0, procs)...)
				}
				if !slices.Equal(bl[int32(me)], want) {
					t.Fatalf("process %d blocks\n got %v\nwant %v", me, bl[int32(me)], want)
				}
			}
			// Messages: at each split, the top of the lower half sends to
			// every process of the upper half.
			var msgs func(n int) int
			msgs = func(n int) int {
				if n == 1 {
					return 0
				}
				return (n - n/2) + msgs(n/2) + msgs(n-n/2)
			}
			if n := tr.CheckMessages(t); n != cfg.Runs*msgs(procs) {
				t.Errorf("%d messages matched, want %d", n, cfg.Runs*msgs(procs))
			}
			_, in2, _ := run(t, cfg)
			if fmt.Sprint(in2) != fmt.Sprint(in) {
				t.Error("same seed, different inputs")
			}
		})
	}
}

// BenchmarkSlowdown times the workload recorded and not recorded.
func BenchmarkSlowdown(b *testing.B) {
	cfg := Config{Procs: 16, Runs: 5, Delay: 20000, Seed: 1}
	tracecheck.Slowdown(b, blocks, func(rec *instrument.Recorder) error {
		_, _, err := Run(rec, cfg)
		return err
	})
}
