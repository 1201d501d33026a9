package store

import (
	"math"
	"math/rand/v2"
	"testing"
)

// dividerUnits are clock resolutions of every shape: 1, powers of two, odd,
// even with an odd part, the µs most importers use, primes near 2^30 and
// 2^62, and the largest.
var dividerUnits = []int64{1, 2, 3, 7, 8, 10, 12, 1000, 1024, 1_000_000, 999_999_937,
	3 << 40, 4611686018427387847, math.MaxInt64}

// checkDivider compares the divider of unit with Go's / at v, when v is
// a multiple of unit (the only times the writer divides: it refuses the
// others first).
func checkDivider(t *testing.T, unit, v int64) {
	t.Helper()
	if v%unit != 0 {
		return
	}
	if got := newDivider(unit).div(v); got != v/unit {
		t.Fatalf("unit %d: div(%d) = %d, want %d", unit, v, got, v/unit)
	}
}

// TestDivider checks the writer's division of times by a clock unit
// (a shift and a multiplication by an inverse) against Go's, at multiples
// of each unit from zero to the extremes of int64, both signs.
func TestDivider(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	for _, unit := range dividerUnits {
		for _, k := range []int64{0, 1, 2, 3, 1000, 1 << 20, math.MaxInt64 / unit, math.MaxInt64/unit - 1} {
			for _, v := range []int64{k * unit, -k * unit} {
				for _, dv := range []int64{0, 1, -1, 2, -2} {
					if (dv > 0 && v > math.MaxInt64-dv) || (dv < 0 && v < math.MinInt64-dv) {
						continue
					}
					checkDivider(t, unit, v+dv)
				}
			}
		}
		for _, v := range []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1} {
			checkDivider(t, unit, v)
		}
		for range 20000 {
			k := rng.Int64N(math.MaxInt64/unit) + 1
			checkDivider(t, unit, k*unit)
			checkDivider(t, unit, -k*unit)
		}
	}
	if got := newDivider(1000).div(-3000); got != -3 {
		t.Fatalf("newDivider(1000).div(-3000) = %d, want -3", got)
	}
}

// FuzzDivider compares the divider with Go's / on any unit and multiple
// of it.
func FuzzDivider(f *testing.F) {
	for _, unit := range dividerUnits {
		f.Add(unit, unit*3)
		f.Add(unit, int64(math.MinInt64))
	}
	f.Fuzz(func(t *testing.T, unit, v int64) {
		if unit <= 0 {
			return // the writer's unit is at least 1
		}
		checkDivider(t, unit, v)
		checkDivider(t, unit, v/unit*unit)
	})
}
