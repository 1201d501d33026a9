// Package phasespace projects parallel states into 3D the way Gomez, Cai & Schubert (2017)
// (section 3.3) displays its phase space: the P-dimensional hypercube
// stands on its corner (0..0), with its main diagonal vertical. Process i
// gets a unit vector u_i whose horizontal direction is at angle 2πi/P and
// which rises at a common elevation; a state x is drawn at X3 = Σ_i u_i x_i.
// A lockstep execution (every x_i equal) lies on the vertical axis. A
// process that does not exist at a state's time (state.Absent) has x_i =
// −1, before every block, as in the pca package.
package phasespace

import (
	"fmt"
	"math"
)

// Elevation selects the angle at which every axis rises from the
// horizontal plane.
type Elevation int

const (
	// Diagonal puts each axis at the angle it makes with the main diagonal
	// of a real P-cube standing on a corner: sin(elevation) = 1/√P, so the
	// lockstep line has the true diagonal's length e√P.
	Diagonal Elevation = iota
	// Paper uses the π/3 elevation that section 3.3 gives for three processes, for any P.
	Paper
)

// ParseElevation maps "diagonal" or "paper" to an Elevation.
func ParseElevation(s string) (Elevation, error) {
	switch s {
	case "diagonal", "":
		return Diagonal, nil
	case "paper":
		return Paper, nil
	}
	return 0, fmt.Errorf("unknown elevation %q (want diagonal or paper)", s)
}

// Projector maps P-dimensional states to 3D points.
type Projector struct {
	u [][3]float64
}

// NewProjector returns the projection for p processes.
func NewProjector(p int, e Elevation) *Projector {
	el := math.Pi / 3
	if e == Diagonal && p > 0 {
		el = math.Asin(1 / math.Sqrt(float64(p)))
	}
	h, v := math.Cos(el), math.Sin(el)
	u := make([][3]float64, p)
	for i := range u {
		a := 2 * math.Pi * float64(i) / float64(p)
		u[i] = [3]float64{h * math.Cos(a), h * math.Sin(a), v}
	}
	return &Projector{u: u}
}

// Axis returns the unit vector of process i.
func (pr *Projector) Axis(i int) [3]float64 { return pr.u[i] }

// Project returns X3 = Σ u_i x_i.
func (pr *Projector) Project(x []int32) [3]float64 {
	var out [3]float64
	for i, v := range x {
		f := float64(v)
		out[0] += pr.u[i][0] * f
		out[1] += pr.u[i][1] * f
		out[2] += pr.u[i][2] * f
	}
	return out
}

// Move updates a projected point for process i going from block from to
// block to, in O(1).
func (pr *Projector) Move(pt [3]float64, i int, from, to int32) [3]float64 {
	d := float64(to - from)
	return [3]float64{pt[0] + pr.u[i][0]*d, pt[1] + pr.u[i][1]*d, pt[2] + pr.u[i][2]*d}
}

// Horizontal returns the distance of a point from the vertical (lockstep)
// axis.
func Horizontal(pt [3]float64) float64 { return math.Hypot(pt[0], pt[1]) }
