package main

import (
	"testing"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/probe"
)

// TestRoundTrip: snapshot → restore → the same continuation as the
// uninterrupted run, cut inside a repetition and at a repetition's end.
func TestRoundTrip(t *testing.T) {
	newTask := func() probe.Task { return &Task{N: 24, Reps: 6, Rows: 5, Seed: 3} }
	// 5 steps a repetition (rows 0-4, 5-9, ..., 20-23).
	for _, cut := range []int64{0, 7, 10, 29} {
		if _, err := probe.RoundTrip(newTask, cut); err != nil {
			t.Errorf("cut %d: %v", cut, err)
		}
	}
}

// TestProduct checks one repetition against a direct product.
func TestProduct(t *testing.T) {
	m := &Task{N: 7, Reps: 1, Rows: 3, Seed: 9}
	if err := m.Init(noBlocks{}); err != nil {
		t.Fatal(err)
	}
	a := append([]float64(nil), m.s.A...)
	for !m.Step() {
	}
	n := m.N
	c := make([]float64, n*n)
	big := 0.0
	for i := range n {
		for j := range n {
			for k := range n {
				c[i*n+j] += a[i*n+k] * m.b[k*n+j]
			}
			big = max(big, abs(c[i*n+j]))
		}
	}
	for i := range c {
		if d := abs(c[i]/big - m.s.A[i]); d > 1e-12 {
			t.Fatalf("A[%d] = %g, want %g", i, m.s.A[i], c[i]/big)
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }

type noBlocks struct{}

func (noBlocks) Block(int32) {}

func TestBadSnapshot(t *testing.T) {
	m := &Task{N: 4, Reps: 2, Rows: 2, Seed: 1}
	if err := m.Init(noBlocks{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Restore([]byte("not a snapshot")); err == nil {
		t.Fatal("Restore of garbage: no error")
	}
	other := &Task{N: 5, Reps: 2, Rows: 2, Seed: 1}
	if err := other.Init(noBlocks{}); err != nil {
		t.Fatal(err)
	}
	s, _ := other.Snapshot()
	if err := m.Restore(s); err == nil {
		t.Fatal("Restore of another size: no error")
	}
}

// TestRestoreInPlace: Restore decodes into the task's own arrays, without
// allocating new ones, and continues from the saved state.
func TestRestoreInPlace(t *testing.T) {
	tracecheck.RestoreInPlace(t, func() probe.Task { return &Task{N: 24, Reps: 6, Rows: 5, Seed: 3} }, 3)
}
