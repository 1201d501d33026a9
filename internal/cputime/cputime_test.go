package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestUsedGrows spins until Used has grown by 10 ms, failing if that takes
// more than 10 s of wall time (on unix; elsewhere Used is 0).
func TestUsedGrows(t *testing.T) {
	before := Used()
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		if before != 0 {
			t.Fatalf("Used = %v where the system has no rusage", before)
		}
		return
	}
	if before <= 0 {
		t.Fatalf("Used = %v before spinning", before)
	}
	x := 0.0
	for start := time.Now(); Used()-before < 10*time.Millisecond; {
		for i := 0; i < 1e5; i++ {
			x += 1e-9
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("Used went from %v to %v over 10 s of spinning (x=%g)", before, Used(), x)
		}
	}
}
