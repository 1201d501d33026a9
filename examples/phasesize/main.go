// Command phasesize is a probe workload whose phases change with the
// problem size (Strube 2011, §5.3, Figures 5.1 vs 5.2): a fixed-cost setup, then
// iterations of an O(n²) relaxation of an n×n grid and an O(n) boundary
// spectrum. With a small -n the setup and the boundary weigh most; with a
// large -n the relaxation dominates and the other phases shrink to little
// weight:
//
//	go run ./examples/phasesize [-n 512] [-iters 80] [-sweeps 20] [-table 65536] [-seed 1]
//
// An iteration is -sweeps relaxation sweeps, then the spectrum. A step is
// 64 entries of the setup table, 8 rows of a relaxation sweep, or 16
// boundary points of the spectrum. Blocks: 1 per table entry, 2
// per grid row, 3 per boundary point. Serial. It links the probe driver;
// alone it runs to the end and prints a checksum.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/parscope/parscope/examples/internal/workload"
	"github.com/parscope/parscope/probe"
)

// Info identifies the worker to the probe.
var Info = probe.Info{Name: "phasesize", Version: "3"}

// Blocks of the task.
const (
	blockTable = 1 + iota
	blockRow
	blockPoint
)

// tableStep is the number of setup table entries a step computes.
const tableStep = 64

// modes is the number of spectrum modes.
const modes = 256

// state is what a snapshot holds.
type state struct {
	Stage    int // 0 setup, 1 relaxation, 2 spectrum
	Pos      int // next entry, row or point of the stage
	Sweep    int // relaxation sweeps done in this iteration
	Iter     int
	Table    []float64
	Grid, Nx []float64
	Spec     []float64
}

// Task is the workload as a probe.Task.
type Task struct {
	// N is the grid size, Iters the iterations, Sweeps the relaxation
	// sweeps of an iteration, Table the setup table's entries (a multiple
	// of 64).
	N, Iters, Sweeps, Table int
	Seed                    uint64
	s                       state
	blk                     probe.Blocks
}

// Init implements probe.Task.
func (t *Task) Init(b probe.Blocks) error {
	if t.N < 3 || t.Iters < 1 || t.Sweeps < 1 || t.Table < tableStep || t.Table%tableStep != 0 {
		return fmt.Errorf("phasesize: n %d, iters %d, sweeps %d, table %d: want n ≥ 3, positive iterations and sweeps and a table of k·64 entries",
			t.N, t.Iters, t.Sweeps, t.Table)
	}
	t.blk = b
	n := t.N
	rng := rand.New(rand.NewPCG(t.Seed, 0x70687a73))
	t.s = state{Table: make([]float64, t.Table), Grid: make([]float64, n*n), Nx: make([]float64, n*n), Spec: make([]float64, modes)}
	for i := range t.s.Grid {
		t.s.Grid[i] = rng.Float64()
	}
	return nil
}

// Step implements probe.Task.
func (t *Task) Step() bool {
	s, n := &t.s, t.N
	switch s.Stage {
	case 0: // setup: a table of slowly converging series
		hi := min(s.Pos+tableStep, t.Table)
		for i := s.Pos; i < hi; i++ {
			t.blk.Block(blockTable)
			x, sum := float64(i)/float64(t.Table), 0.0
			for k := 1; k <= 48; k++ {
				sum += math.Sin(float64(k)*x) / float64(k*k)
			}
			s.Table[i] = sum
		}
		s.Pos = hi
		if hi == t.Table {
			s.Stage, s.Pos = 1, 1
		}
	case 1: // relaxation of rows 1..n-2
		hi := min(s.Pos+8, n-1)
		g, nx := s.Grid, s.Nx
		for r := s.Pos; r < hi; r++ {
			t.blk.Block(blockRow)
			for c := 1; c < n-1; c++ {
				k := r*n + c
				nx[k] = 0.25 * (g[k-1] + g[k+1] + g[k-n] + g[k+n])
			}
		}
		s.Pos = hi
		if hi == n-1 {
			for r := 1; r < n-1; r++ {
				copy(g[r*n+1:r*n+n-1], nx[r*n+1:r*n+n-1])
			}
			s.Pos = 1
			if s.Sweep++; s.Sweep == t.Sweeps {
				s.Stage, s.Pos, s.Sweep = 2, 0, 0
				clear(s.Spec)
			}
		}
	case 2: // spectrum of the boundary through the table
		hi := min(s.Pos+16, 4*n)
		for p := s.Pos; p < hi; p++ {
			t.blk.Block(blockPoint)
			v := t.boundary(p)
			for m := range modes {
				s.Spec[m] += v * s.Table[(p*(m+1)*131)%t.Table]
			}
		}
		s.Pos = hi
		if hi == 4*n {
			s.Iter++
			s.Stage, s.Pos = 1, 1
			return s.Iter == t.Iters
		}
	}
	return false
}

// boundary returns the p-th boundary value, walking the grid's edge.
func (t *Task) boundary(p int) float64 {
	n, i := t.N, p/4
	switch p % 4 {
	case 0:
		return t.s.Grid[i]
	case 1:
		return t.s.Grid[(n-1)*n+i]
	case 2:
		return t.s.Grid[i*n]
	}
	return t.s.Grid[i*n+n-1]
}

// Snapshot implements probe.Task.
func (t *Task) Snapshot() ([]byte, error) {
	return probe.EncodeState(&t.s)
}

// Restore implements probe.Task (workload.RestoreState: in place, without
// allocating an array).
func (t *Task) Restore(b []byte) error {
	return workload.RestoreState("phasesize", b, &t.s, func(s *state) bool {
		n := t.N
		return len(s.Table) == t.Table && len(s.Grid) == n*n && len(s.Nx) == n*n && len(s.Spec) == modes &&
			s.Stage >= 0 && s.Stage <= 2 && s.Pos >= 0 && s.Pos <= max(t.Table, 4*n) && s.Sweep >= 0 && s.Sweep < t.Sweeps && s.Iter >= 0 && s.Iter < t.Iters
	})
}

// Checksum sums the spectrum and the grid.
func (t *Task) Checksum() float64 {
	sum := 0.0
	for _, v := range t.s.Spec {
		sum += v
	}
	for _, v := range t.s.Grid {
		sum += v
	}
	return sum
}

func main() {
	t := &Task{}
	flag.IntVar(&t.N, "n", 512, "grid size")
	flag.IntVar(&t.Iters, "iters", 80, "iterations")
	flag.IntVar(&t.Sweeps, "sweeps", 20, "relaxation sweeps per iteration")
	flag.IntVar(&t.Table, "table", 1<<16, "entries of the setup table (a multiple of 64)")
	flag.Uint64Var(&t.Seed, "seed", 1, "seed of the grid")
	workload.ProbeMain(Info, t, func() string { return fmt.Sprintf("checksum %.12g", t.Checksum()) })
}
