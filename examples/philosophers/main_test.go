package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/instrument"
)

func run(t *testing.T, cfg Config) (*tracecheck.Trace, [][]int32) {
	t.Helper()
	return tracecheck.RecordRun(t, instrument.Options{States: states()}, Run, cfg)
}

func TestPhilosophers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		livelock bool
	}{{"symmetric", false}, {"livelock", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Philosophers: 9, Iterations: 200, Livelock: tc.livelock, Blocked: 5, Seed: 42}
			tr, seqs := run(t, cfg)
			blocks := tr.Blocks()
			if len(blocks) != 9 {
				t.Fatalf("%d processes, want 9", len(blocks))
			}
			seen := map[int32]bool{}
			for p := int32(0); p < 9; p++ {
				if !slices.Equal(blocks[p], seqs[p]) {
					t.Fatalf("philosopher %d: trace and program disagree", p)
				}
				if len(blocks[p]) != cfg.Iterations {
					t.Fatalf("philosopher %d: %d blocks, want %d", p, len(blocks[p]), cfg.Iterations)
				}
				for _, s := range blocks[p] {
					if s < 0 || s > 8 {
						t.Fatalf("philosopher %d in state %d, outside 0..8", p, s)
					}
					if tc.livelock && p == 5 && s&1 == 1 || tc.livelock && p == 5 && s == 8 {
						t.Fatalf("blocked philosopher 5 in state %d (right fork or EAT)", s)
					}
					seen[s] = true
				}
			}
			if !seen[8] || !seen[7] || !seen[0] || !seen[4] {
				t.Errorf("states seen %v: want THINK, ASK, ASK with both forks and EAT", seen)
			}
			if n := tr.CheckMessages(t); n != 2*9*cfg.Iterations {
				t.Errorf("%d messages matched, want %d", n, 2*9*cfg.Iterations)
			}
			if ix := tr.Header; len(ix.States) != 9 || ix.States[8].Name != "EAT" || ix.States[7].Name != "ASK both forks" {
				t.Errorf("state dictionary %+v", ix.States)
			}
			// Determinism: the same seed gives the same sequences (times
			// differ), another seed different ones.
			_, again := run(t, cfg)
			if fmt.Sprint(again) != fmt.Sprint(seqs) {
				t.Error("same seed, different block sequences")
			}
			cfg.Seed++
			_, other := run(t, cfg)
			if fmt.Sprint(other) == fmt.Sprint(seqs) {
				t.Error("different seeds, same block sequences")
			}
		})
	}
}

func TestForkInvariant(t *testing.T) {
	// Two neighbours never hold the fork they share at the same time, and
	// an eating philosopher holds both: checked on every transfer outcome.
	for _, a := range allViews() {
		for _, b := range allViews() {
			if a.right && b.left {
				continue
			}
			for _, may := range []bool{true, false} {
				ah, bh := transfer(a, b, may)
				if ah && bh {
					t.Fatalf("transfer(%+v, %+v) gives the fork to both", a, b)
				}
				if (a.phase == eat && a.right && !ah) || (b.phase == eat && b.left && !bh) {
					t.Fatalf("transfer(%+v, %+v) takes a fork from an eater", a, b)
				}
				if !may && ah && !a.right {
					t.Fatalf("transfer(%+v, %+v) gives a blocked philosopher his right fork", a, b)
				}
			}
		}
	}
}

func allViews() []view {
	var out []view
	for ph := think; ph <= eat; ph++ {
		for f := 0; f < 4; f++ {
			out = append(out, view{phase: ph, left: f&2 != 0, right: f&1 != 0})
		}
	}
	return out
}

// BenchmarkSlowdown times the workload recorded and not recorded.
func BenchmarkSlowdown(b *testing.B) {
	cfg := Config{Philosophers: 9, Iterations: 1000, Blocked: 5, Seed: 1, Work: 200}
	tracecheck.Slowdown(b, states(), func(rec *instrument.Recorder) error {
		_, err := Run(rec, cfg)
		return err
	})
}
