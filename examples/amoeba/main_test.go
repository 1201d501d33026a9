package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/instrument"
)

func run(t testing.TB, cfg Config) (*tracecheck.Trace, *Result) {
	t.Helper()
	return tracecheck.RecordRun(t, instrument.Options{States: blocks}, Run, cfg)
}

// checkBlocks checks a process's block sequence against Table 1's shape:
// 1, then per iteration 2 3 4 (5 6 | 7 8) 9 10 11 12, then 13.
func checkBlocks(seq []int32, iters int) error {
	if len(seq) < 2 || seq[0] != 1 || seq[len(seq)-1] != 13 {
		return fmt.Errorf("does not start with 1 and end with 13: %v", seq)
	}
	rest := seq[1 : len(seq)-1]
	for it := 0; it < iters; it++ {
		if len(rest) < 9 {
			return fmt.Errorf("iteration %d cut short: %v", it, rest)
		}
		got := rest[:9]
		a := []int32{2, 3, 4, 5, 6, 9, 10, 11, 12}
		b := []int32{2, 3, 4, 7, 8, 9, 10, 11, 12}
		if !slices.Equal(got, a) && !slices.Equal(got, b) {
			return fmt.Errorf("iteration %d: blocks %v", it, got)
		}
		rest = rest[9:]
	}
	if len(rest) != 0 {
		return fmt.Errorf("%d blocks after the last iteration", len(rest))
	}
	return nil
}

func TestAmoeba(t *testing.T) {
	const dim, iters = 4, 20
	var mpiGuide [][]float64
	var mpiBlocks map[int32][]int32
	for _, tc := range []struct {
		mode     string
		messages int
	}{
		{"mpi", iters * 3 * dim}, // allreduce through 0 (2 dim) and a broadcast (dim)
		{"sos", iters * (dim + 1) * dim},
		{"none", 0},
		{"guided", 0},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			cfg := Config{Mode: tc.mode, Dim: dim, Iterations: iters, Seed: 3, Guide: mpiGuide}
			tr, res := run(t, cfg)
			bl := tr.Blocks()
			if len(bl) != dim+1 {
				t.Fatalf("%d processes, want %d", len(bl), dim+1)
			}
			for p, seq := range bl {
				if err := checkBlocks(seq, iters); err != nil {
					t.Fatalf("process %d: %v", p, err)
				}
			}
			if n := tr.CheckMessages(t); n != tc.messages {
				t.Errorf("%d messages matched, want %d", n, tc.messages)
			}
			for p, b := range res.Best {
				// Without communication a vertex alone does not converge.
				if tc.mode != "none" && (b >= 1.5 || b < 1) {
					t.Errorf("process %d ends at %g, want near the minimum 1", p, b)
				}
			}
			_, again := run(t, cfg)
			if fmt.Sprint(again.Best) != fmt.Sprint(res.Best) {
				t.Errorf("same seed, different results")
			}
			tr2, _ := run(t, cfg)
			if fmt.Sprint(tr2.Blocks()) != fmt.Sprint(bl) {
				t.Errorf("same seed, different block sequences")
			}
			switch tc.mode {
			case "mpi":
				mpiGuide, mpiBlocks = res.Guide, bl
			case "guided":
				// The guided run follows the mpi run's computational path.
				if fmt.Sprint(bl) != fmt.Sprint(mpiBlocks) {
					t.Errorf("guided blocks differ from the mpi run's")
				}
			}
		})
	}
}

func TestGuideFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "guide.txt")
	g := [][]float64{{0.1, 1.0 / 3, -2, 4, 5, 6}, {1e-300, 2, 3, 4, 5, 6}}
	if err := writeGuide(path, g); err != nil {
		t.Fatal(err)
	}
	back, err := readGuide(path, 2)
	if err != nil || fmt.Sprint(back) != fmt.Sprint(g) {
		t.Fatalf("round trip: %v, %v", back, err)
	}
	if _, err := readGuide(path, 3); err == nil || !strings.Contains(err.Error(), "guide.txt:1: expected 12 numbers") {
		t.Errorf("wrong dimension: %v", err)
	}
}

// BenchmarkSlowdown times the mpi workload recorded and not recorded.
func BenchmarkSlowdown(b *testing.B) {
	cfg := Config{Mode: "mpi", Dim: 16, Iterations: 20, Load: 1000, Seed: 1}
	tracecheck.Slowdown(b, blocks, func(rec *instrument.Recorder) error {
		_, err := Run(rec, cfg)
		return err
	})
}
