package main

import (
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/probe"
)

// TestRoundTrip cuts inside each sweep direction and the source update.
func TestRoundTrip(t *testing.T) {
	newTask := func() probe.Task { return &Task{N: 9, Iters: 3, Seed: 4} }
	// 4 directions of 17 diagonals, then 1 update step: 69 steps an iteration.
	for _, cut := range []int64{0, 5, 20, 40, 60, 68, 69, 100} {
		if _, err := probe.RoundTrip(newTask, cut); err != nil {
			t.Errorf("cut %d: %v", cut, err)
		}
	}
}

type noBlocks struct{}

func (noBlocks) Block(int32) {}

// TestSweepOrder checks one sweep against the cell recurrence computed row
// by row, which is a valid order for direction 0.
func TestSweepOrder(t *testing.T) {
	s := &Task{N: 70, Iters: 1, Seed: 8} // diagonals of 70 cells run in parallel
	if err := s.Init(noBlocks{}); err != nil {
		t.Fatal(err)
	}
	for range 2*s.N - 1 {
		s.Step()
	}
	n := s.N
	psi := make([]float64, n*n)
	mu, eta := 0.3, 0.7
	for r := range n {
		for c := range n {
			up, left := 0.0, 0.0
			if r > 0 {
				up = psi[(r-1)*n+c]
			}
			if c > 0 {
				left = psi[r*n+c-1]
			}
			psi[r*n+c] = (s.q[r*n+c] + 2*mu*up + 2*eta*left) / (sigmaT + 2*mu + 2*eta)
			if psi[r*n+c] != s.s.Psi[r*n+c] {
				t.Fatalf("psi(%d, %d) = %g, want %g", r, c, s.s.Psi[r*n+c], psi[r*n+c])
			}
		}
	}
}

// TestRestoreInPlace: Restore decodes into the task's own arrays, without
// allocating new ones, and continues from the saved state.
func TestRestoreInPlace(t *testing.T) {
	tracecheck.RestoreInPlace(t, func() probe.Task { return &Task{N: 9, Iters: 3, Seed: 4} }, 3)
}
