package ocs

import (
	"strings"
	"testing"
)

// TestSimulateMemoryBound checks that a simulation whose P×P table would
// not fit is refused with the memory it needs, before anything is
// allocated.
func TestSimulateMemoryBound(t *testing.T) {
	w := &Workload{Procs: 1_000_000}
	want := "ocs: simulating 1000000 processes on 2 planes needs 3725.3 GiB of tables (at most 1 GiB)"
	if _, err := w.Simulate(Best, 2, DefaultParams()); err == nil || err.Error() != want {
		t.Errorf("Simulate: %v\nwant %s", err, want)
	}
	if _, err := w.SimulateRanked(Best, nil, 2, DefaultParams()); err == nil || !strings.Contains(err.Error(), "3725.3 GiB") {
		t.Errorf("SimulateRanked: %v", err)
	}
}
