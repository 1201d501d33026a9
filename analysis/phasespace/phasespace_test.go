package phasespace

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLockstepIsVertical(t *testing.T) {
	for _, p := range []int{2, 3, 9, 17, 32} {
		pr := NewProjector(p, Diagonal)
		x := make([]int32, p)
		for i := range x {
			x[i] = 7
		}
		pt := pr.Project(x)
		if Horizontal(pt) > 1e-9 {
			t.Fatalf("P=%d: lockstep state off the axis by %g", p, Horizontal(pt))
		}
		// The diagonal keeps its true length e√P.
		if want := 7 * math.Sqrt(float64(p)); math.Abs(pt[2]-want) > 1e-9 {
			t.Fatalf("P=%d: height %g, want %g", p, pt[2], want)
		}
	}
}

func TestAxes(t *testing.T) {
	pr := NewProjector(3, Paper)
	for i := 0; i < 3; i++ {
		u := pr.Axis(i)
		if math.Abs(math.Hypot(math.Hypot(u[0], u[1]), u[2])-1) > 1e-12 {
			t.Fatalf("axis %d is not a unit vector: %v", i, u)
		}
		if el := math.Asin(u[2]); math.Abs(el-math.Pi/3) > 1e-12 {
			t.Fatalf("axis %d rises at %g, want π/3", i, el)
		}
		if az := math.Atan2(u[1], u[0]); math.Abs(math.Remainder(az-2*math.Pi*float64(i)/3, 2*math.Pi)) > 1e-12 {
			t.Fatalf("axis %d points at %g", i, az)
		}
	}
	// Process 0's axis is at angle 0.
	if u := NewProjector(9, Diagonal).Axis(0); u[1] != 0 || u[0] <= 0 {
		t.Fatalf("axis 0 = %v", u)
	}
	if _, err := ParseElevation("sideways"); err == nil {
		t.Fatal("unknown elevation accepted")
	}
}

func TestMoveMatchesProject(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	pr := NewProjector(11, Diagonal)
	x := make([]int32, 11)
	pt := pr.Project(x)
	for k := 0; k < 1000; k++ {
		i := rng.IntN(11)
		to := int32(rng.IntN(13))
		pt = pr.Move(pt, i, x[i], to)
		x[i] = to
	}
	want := pr.Project(x)
	for c := 0; c < 3; c++ {
		if math.Abs(pt[c]-want[c]) > 1e-9 {
			t.Fatalf("incremental %v, direct %v", pt, want)
		}
	}
}
