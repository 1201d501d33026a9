package probe

import (
	"testing"

	"github.com/parscope/parscope/analysis/phase"
)

// TestRepresentativeLeavesRoomForWarmUp: of a phase's intervals the one
// closest to the centre is measured, but only among those that start at
// least the warm-up into the run; SimPoint's choice is kept when none does.
func TestRepresentativeLeavesRoomForWarmUp(t *testing.T) {
	res := &phase.Result{
		Labels:    []int{0, 0, 1, 0, 0, 1},
		Distances: []float64{0, 0, 0.5, 0.25, 0, 0.1},
	}
	ph0 := phase.Phase{ID: 0, Representative: 0}
	ph1 := phase.Phase{ID: 1, Representative: 5}
	for _, c := range []struct {
		name         string
		ph           phase.Phase
		interval, wu int64
		want         int
	}{
		{"no warm-up: SimPoint's earliest tie", ph0, 100, 0, 0},
		{"warm-up inside interval 0: the next tie", ph0, 100, 25, 1},
		{"warm-up of exactly one interval", ph0, 100, 100, 1},
		{"warm-up of two intervals: the closer interval 4 beats interval 3", ph0, 100, 200, 4},
		{"warm-up of 4.5 intervals: no interval of phase 0 left", ph0, 100, 450, 0},
		{"phase 1: the closest interval already has room", ph1, 100, 250, 5},
		{"phase 1: warm-up beyond every interval", ph1, 100, 600, 5},
	} {
		if got := representative(res, c.ph, c.interval, c.wu); got != c.want {
			t.Errorf("%s: interval %d, want %d", c.name, got, c.want)
		}
	}
	// A representative of -1 (a cluster without intervals after k-means
	// stopped early) falls back to the phase's first interval.
	if got := representative(res, phase.Phase{ID: 1, Representative: -1}, 100, 1000); got != 2 {
		t.Errorf("representative -1, no room: interval %d, want 2 (the phase's first)", got)
	}
}
