package main

import (
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/probe"
)

// TestRoundTrip cuts in the setup, the relaxation and the spectrum.
func TestRoundTrip(t *testing.T) {
	newTask := func() probe.Task { return &Task{N: 20, Iters: 3, Sweeps: 2, Table: 8192, Seed: 6} }
	// 8 setup steps, then per iteration 2×3 relaxation and 5 spectrum steps.
	for _, cut := range []int64{0, 5, 8, 10, 12, 15, 20, 30} {
		if _, err := probe.RoundTrip(newTask, cut); err != nil {
			t.Errorf("cut %d: %v", cut, err)
		}
	}
}

type counter map[int32]int

func (c counter) Block(id int32) { c[id]++ }

// TestBlocksScale: the relaxation's blocks grow as n², the setup's stay
// fixed, the spectrum's grow as n — the reason the weights change with n.
func TestBlocksScale(t *testing.T) {
	count := func(n int) counter {
		c := counter{}
		p := &Task{N: n, Iters: 2, Sweeps: 3, Table: 2048, Seed: 1}
		if err := p.Init(c); err != nil {
			t.Fatal(err)
		}
		for !p.Step() {
		}
		return c
	}
	small, large := count(10), count(40)
	if small[blockTable] != 2048 || large[blockTable] != 2048 {
		t.Errorf("setup blocks %d and %d, want %d for any n", small[blockTable], large[blockTable], 2048)
	}
	if small[blockRow] != 2*3*8 || large[blockRow] != 2*3*38 || small[blockPoint] != 2*40 || large[blockPoint] != 2*160 {
		t.Errorf("blocks n=10 %v, n=40 %v", small, large)
	}
}

// TestRestoreInPlace: Restore decodes into the task's own arrays, without
// allocating new ones, and continues from the saved state.
func TestRestoreInPlace(t *testing.T) {
	tracecheck.RestoreInPlace(t, func() probe.Task { return &Task{N: 20, Iters: 3, Sweeps: 2, Table: 8192, Seed: 6} }, 3)
}
