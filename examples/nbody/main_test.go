package main

import (
	"math"
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/probe"
)

// TestRoundTrip cuts in a time step run and inside an analysis.
func TestRoundTrip(t *testing.T) {
	newTask := func() probe.Task { return &Task{N: 20, Steps: 9, Every: 3, Chunk: 6, Seed: 2} }
	// Steps: 3 time steps, 4 analysis chunks, 3 time steps, ...
	for _, cut := range []int64{0, 2, 4, 5, 12, 20} {
		if _, err := probe.RoundTrip(newTask, cut); err != nil {
			t.Errorf("cut %d: %v", cut, err)
		}
	}
}

type noBlocks struct{}

func (noBlocks) Block(int32) {}

// TestAnalysis checks the chunked potential energy against a direct sum.
func TestAnalysis(t *testing.T) {
	nb := &Task{N: 11, Steps: 2, Every: 2, Chunk: 3, Seed: 5}
	if err := nb.Init(noBlocks{}); err != nil {
		t.Fatal(err)
	}
	for !nb.Step() {
	}
	x, n, e := nb.s.X, nb.N, 0.0
	var pairs int64
	for i := range n {
		for j := i + 1; j < n; j++ {
			dx, dy, dz := x[3*j]-x[3*i], x[3*j+1]-x[3*i+1], x[3*j+2]-x[3*i+2]
			e -= 1 / (math.Sqrt(dx*dx+dy*dy+dz*dz+soft) * float64(n))
			pairs++
		}
	}
	var h int64
	for _, c := range nb.s.Hist {
		h += c
	}
	if d := e - nb.s.Epot; d > 1e-12 || d < -1e-12 || h != pairs {
		t.Fatalf("Epot %g, histogram %d pairs; want %g and %d", nb.s.Epot, h, e, pairs)
	}
}

// TestRestoreInPlace: Restore decodes into the task's own arrays, without
// allocating new ones, and continues from the saved state.
func TestRestoreInPlace(t *testing.T) {
	tracecheck.RestoreInPlace(t, func() probe.Task { return &Task{N: 20, Steps: 9, Every: 3, Chunk: 6, Seed: 2} }, 3)
}
