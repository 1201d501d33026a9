package probe

import (
	"testing"
	"time"
)

// TestBudgetSpent: the driver counts the probe's spending from the origin
// parscope gave, the worker's start included, and reserves as much again
// for its exit; without an origin, or when the wall clock stepped back
// past the worker's start, it counts what parscope spent plus its own
// time.
func TestBudgetSpent(t *testing.T) {
	spawn := time.Unix(1_800_000_000, 0)
	start := spawn.Add(3 * time.Millisecond)
	now := start.Add(40 * time.Millisecond)
	cfg := childConfig{SpentNS: int64(20 * time.Millisecond)}
	cfg.OriginUnixNS = spawn.UnixNano() - cfg.SpentNS
	if spent, tail := cfg.spent(start, now); spent != 63*time.Millisecond || tail != 3*time.Millisecond {
		t.Fatalf("with an origin: spent %v, tail %v; want 63ms and 3ms", spent, tail)
	}
	stepped := cfg
	stepped.OriginUnixNS += int64(time.Second)
	if spent, tail := stepped.spent(start, now); spent != 60*time.Millisecond || tail != 0 {
		t.Fatalf("clock stepped: spent %v, tail %v; want 60ms and 0", spent, tail)
	}
	cfg.OriginUnixNS = 0
	if spent, tail := cfg.spent(start, now); spent != 60*time.Millisecond || tail != 0 {
		t.Fatalf("no origin: spent %v, tail %v; want 60ms and 0", spent, tail)
	}
}

// TestBudgetFits: rounds are planned to 90% of the budget.
func TestBudgetFits(t *testing.T) {
	cfg := childConfig{Budget: 0.01}
	for _, tc := range []struct {
		total time.Duration
		want  bool
	}{{89 * time.Millisecond, true}, {91 * time.Millisecond, false}, {100 * time.Millisecond, false}} {
		if got := cfg.fits(tc.total, 10); got != tc.want {
			t.Errorf("%v of a 10 s run with a 1%% budget: fits %v, want %v", tc.total, got, tc.want)
		}
	}
}
