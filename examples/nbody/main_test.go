package main

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/probe"
)

// TestRoundTrip cuts in a time step run and inside an analysis.
func TestRoundTrip(t *testing.T) {
	newTask := func() probe.Task { return &Task{N: 20, Steps: 9, Every: 3, Chunk: 6, Bins: 64, Seed: 2} }
	// Steps: 3 time steps, 4 analysis chunks, 3 time steps, ...
	for _, cut := range []int64{0, 2, 4, 5, 12, 20} {
		if _, err := probe.RoundTrip(newTask, cut); err != nil {
			t.Errorf("cut %d: %v", cut, err)
		}
	}
}

type noBlocks struct{}

func (noBlocks) Block(int32) {}

// TestAnalysis checks the chunked potential energy and the histogram of
// pair distances against a direct computation, with the default bins and
// with the 65,536 bins that make the analysis memory-bound on small caches.
func TestAnalysis(t *testing.T) {
	for _, bins := range []int{64, 65536} {
		nb := &Task{N: 11, Steps: 2, Every: 2, Chunk: 3, Bins: bins, Seed: 5}
		if err := nb.Init(noBlocks{}); err != nil {
			t.Fatal(err)
		}
		for !nb.Step() {
		}
		x, n, e := nb.s.X, nb.N, 0.0
		want := make([]int64, bins)
		for i := range n {
			for j := i + 1; j < n; j++ {
				dx, dy, dz := x[3*j]-x[3*i], x[3*j+1]-x[3*i+1], x[3*j+2]-x[3*i+2]
				r := math.Sqrt(dx*dx + dy*dy + dz*dz + soft)
				e -= 1 / (r * float64(n))
				want[min(max(int(float64(bins)*math.Log1p(r)/math.Log1p(4)), 0), bins-1)]++
			}
		}
		if d := e - nb.s.Epot; d > 1e-12 || d < -1e-12 {
			t.Fatalf("bins %d: Epot %g, want %g", bins, nb.s.Epot, e)
		}
		if !slices.Equal(nb.s.Hist, want) {
			t.Fatalf("bins %d: the histogram differs from the direct count", bins)
		}
	}
	if err := (&Task{N: 11, Steps: 2, Every: 2, Chunk: 3, Seed: 5}).Init(noBlocks{}); err == nil || !strings.Contains(err.Error(), "bins 0") {
		t.Fatalf("Init with no bins: %v, want an error naming bins 0", err)
	}
}

// TestRestoreOtherBins: a snapshot of a run with other bins is refused.
func TestRestoreOtherBins(t *testing.T) {
	a := &Task{N: 20, Steps: 9, Every: 3, Chunk: 6, Bins: 64, Seed: 2}
	b := &Task{N: 20, Steps: 9, Every: 3, Chunk: 6, Bins: 128, Seed: 2}
	for _, k := range []*Task{a, b} {
		if err := k.Init(noBlocks{}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(snap); err == nil {
		t.Fatal("a snapshot with 64 bins restored into a task with 128")
	}
	if err := a.Restore(snap); err != nil {
		t.Fatalf("the task's own snapshot: %v", err)
	}
}

// TestRestoreInPlace: Restore decodes into the task's own arrays, without
// allocating new ones, and continues from the saved state.
func TestRestoreInPlace(t *testing.T) {
	tracecheck.RestoreInPlace(t, func() probe.Task { return &Task{N: 20, Steps: 9, Every: 3, Chunk: 6, Bins: 64, Seed: 2} }, 3)
}
