package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

func run(t testing.TB, cfg Config) (*tracecheck.Trace, [][]float64) {
	t.Helper()
	return tracecheck.RecordRun(t, instrument.Options{States: blocks}, Run, cfg)
}

func TestTranspose(t *testing.T) {
	for _, n := range []int{15, 32} {
		t.Run(fmt.Sprint("n=", n), func(t *testing.T) {
			cfg := Config{N: n, Work: 1, Seed: 3}
			tr, out := run(t, cfg)
			// The result is (2A+1)ᵀ.
			a := Matrix(n, cfg.Seed)
			for i := range n {
				for j := range n {
					if out[j][i] != 2*a[i][j]+1 {
						t.Fatalf("out[%d][%d] = %v, want %v", j, i, out[j][i], 2*a[i][j]+1)
					}
				}
			}
			if len(tr.Procs) != Procs {
				t.Fatalf("%d processes, want %d", len(tr.Procs), Procs)
			}
			ix := trace.NewIndex(tr.Header)
			for p := range int32(Procs) {
				var fromBlocks, fromEvents []string
				for _, r := range tr.Procs[p] {
					switch r.Kind {
					case trace.KindState:
						fromBlocks = append(fromBlocks, ix.StateName(r.ID))
					case trace.KindEvent:
						fromEvents = append(fromEvents, ix.EventName(r.ID))
					}
				}
				want := Sequence(n, int(p))
				if !slices.Equal(fromEvents, want) {
					t.Errorf("process %d: events %v, want %v", p, fromEvents, want)
				}
				if !slices.Equal(fromBlocks, want) {
					t.Errorf("process %d: blocks %v, want %v", p, fromBlocks, want)
				}
			}
			// n rows out, n columns back, 15·14 blocks exchanged.
			if got, want := tr.CheckMessages(t), 2*n+(Procs-1)*(Procs-2); got != want {
				t.Errorf("%d messages matched, want %d", got, want)
			}
		})
	}
}

// The ground truth, spelled out for n = 32: workers 1 and 2 hold 3 rows
// (and columns), the others 2.
func TestSequence(t *testing.T) {
	rep := func(name string, k int) []string { return slices.Repeat([]string{name}, k) }
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	for _, c := range []struct {
		p    int
		want []string
	}{
		{0, cat([]string{"program_st"}, rep("send_row", 32), rep("recv_res", 32), []string{"program_sp"})},
		{1, cat([]string{"program_st"}, rep("recv_row", 3), rep("row_calc", 3), rep("send_col", 14),
			rep("recv_col", 14), rep("col_calc", 3), rep("send_res", 3), []string{"program_sp"})},
		{15, cat([]string{"program_st"}, rep("recv_row", 2), rep("row_calc", 2), rep("send_col", 14),
			rep("recv_col", 14), rep("col_calc", 2), rep("send_res", 2), []string{"program_sp"})},
	} {
		if got := Sequence(32, c.p); !slices.Equal(got, c.want) {
			t.Errorf("process %d: %v, want %v", c.p, got, c.want)
		}
	}
}

func TestRunBadSize(t *testing.T) {
	if _, err := Run(nil, Config{N: 14}); err == nil {
		t.Error("n = 14 accepted")
	}
}

// Unrecorded runs give the same result, and a seed sets the matrix.
func TestSeed(t *testing.T) {
	x, _ := Run(nil, Config{N: 20, Seed: 1})
	y, _ := Run(nil, Config{N: 20, Seed: 1})
	z, _ := Run(nil, Config{N: 20, Seed: 2})
	if fmt.Sprint(x) != fmt.Sprint(y) || fmt.Sprint(x) == fmt.Sprint(z) {
		t.Error("the matrix does not follow the seed")
	}
}

// BenchmarkSlowdown times the workload recorded and not recorded.
func BenchmarkSlowdown(b *testing.B) {
	cfg := Config{N: 240, Work: 200, Seed: 1}
	tracecheck.Slowdown(b, blocks, func(rec *instrument.Recorder) error {
		_, err := Run(rec, cfg)
		return err
	})
}
