// Command nbody is a probe workload with two phases of different kinds
// (Strube 2011, §6): a direct-summation gravitational n-body simulation whose
// time steps compute the forces in parallel (GOMAXPROCS goroutines), and
// whose periodic analysis — the potential energy and a histogram of the
// pair distances — runs serially:
//
//	go run ./examples/nbody [-n 256] [-steps 1500] [-every 4] [-chunk 16] [-bins 64] [-seed 1]
//
// A step is one time step (forces, then a leapfrog update), or one chunk of
// -chunk bodies of the analysis, which runs after every -every time steps.
// Blocks: 1 per body's force row, 2 per body moved, 3 per body's analysis
// row, 4 per analysis chunk. It links the probe driver; alone it runs to the
// end and prints the final energy.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/parscope/parscope/examples/internal/workload"
	"github.com/parscope/parscope/probe"
)

// Info identifies the worker to the probe.
var Info = probe.Info{Name: "nbody", Version: "2"}

// Blocks of the task.
const (
	blockForce = 1 + iota
	blockMove
	blockPair
	blockChunk
)

const (
	dt   = 1e-3
	soft = 1e-2
)

// state is what a snapshot holds.
type state struct {
	Step     int // time steps done
	Analysis int // next body of the running analysis, -1 when none runs
	X, V     []float64
	Epot     float64
	Hist     []int64
}

// Task is the simulation as a probe.Task.
type Task struct {
	N, Steps, Every, Chunk int
	Bins                   int // of the pair-distance histogram
	Seed                   uint64
	s                      state
	acc                    []float64
	blk                    probe.Blocks
}

// Init implements probe.Task.
func (t *Task) Init(b probe.Blocks) error {
	if t.N < 2 || t.Steps < 1 || t.Every < 1 || t.Chunk < 1 || t.Bins < 1 {
		return fmt.Errorf("nbody: n %d, steps %d, every %d, chunk %d, bins %d: want n ≥ 2 and positive values", t.N, t.Steps, t.Every, t.Chunk, t.Bins)
	}
	t.blk = b
	rng := rand.New(rand.NewPCG(t.Seed, 0x6e626f64))
	t.s = state{Analysis: -1, X: make([]float64, 3*t.N), V: make([]float64, 3*t.N), Hist: make([]int64, t.Bins)}
	for i := range t.s.X {
		t.s.X[i] = rng.Float64()*2 - 1
		t.s.V[i] = (rng.Float64()*2 - 1) * 0.1
	}
	t.acc = make([]float64, 3*t.N)
	return nil
}

// Step implements probe.Task.
func (t *Task) Step() bool {
	s := &t.s
	if s.Analysis >= 0 {
		t.analyse()
		return s.Analysis < 0 && s.Step == t.Steps
	}
	t.forces()
	for i := range t.N {
		t.blk.Block(blockMove)
		for d := range 3 {
			s.V[3*i+d] += dt * t.acc[3*i+d]
			s.X[3*i+d] += dt * s.V[3*i+d]
		}
	}
	s.Step++
	if s.Step%t.Every == 0 || s.Step == t.Steps {
		s.Analysis, s.Epot = 0, 0
		clear(s.Hist)
		return false
	}
	return s.Step == t.Steps
}

// forces computes every body's acceleration, rows split over goroutines.
func (t *Task) forces() {
	n, x := t.N, t.s.X
	w := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	for g := range w {
		wg.Go(func() {
			for i := g; i < n; i += w {
				var ax, ay, az float64
				xi, yi, zi := x[3*i], x[3*i+1], x[3*i+2]
				for j := range n {
					dx, dy, dz := x[3*j]-xi, x[3*j+1]-yi, x[3*j+2]-zi
					r2 := dx*dx + dy*dy + dz*dz + soft
					inv := 1 / (r2 * math.Sqrt(r2))
					ax += dx * inv
					ay += dy * inv
					az += dz * inv
				}
				t.acc[3*i], t.acc[3*i+1], t.acc[3*i+2] = ax/float64(n), ay/float64(n), az/float64(n)
			}
		})
	}
	wg.Wait()
	for range n {
		t.blk.Block(blockForce)
	}
}

// analyse does one chunk of the serial analysis.
func (t *Task) analyse() {
	s, n, bins := &t.s, t.N, t.Bins
	t.blk.Block(blockChunk)
	hi := min(s.Analysis+t.Chunk, n)
	for i := s.Analysis; i < hi; i++ {
		t.blk.Block(blockPair)
		for j := i + 1; j < n; j++ {
			dx, dy, dz := s.X[3*j]-s.X[3*i], s.X[3*j+1]-s.X[3*i+1], s.X[3*j+2]-s.X[3*i+2]
			r := math.Sqrt(dx*dx + dy*dy + dz*dz + soft)
			s.Epot -= 1 / (r * float64(n))
			b := int(float64(bins) * math.Log1p(r) / math.Log1p(4))
			s.Hist[min(max(b, 0), bins-1)]++
		}
	}
	s.Analysis = hi
	if hi == n {
		s.Analysis = -1
	}
}

// Snapshot implements probe.Task.
func (t *Task) Snapshot() ([]byte, error) {
	return probe.EncodeState(&t.s)
}

// Restore implements probe.Task (workload.RestoreState: in place, without
// allocating an array).
func (t *Task) Restore(b []byte) error {
	return workload.RestoreState("nbody", b, &t.s, func(s *state) bool {
		return len(s.X) == 3*t.N && len(s.V) == 3*t.N && len(s.Hist) == t.Bins && s.Step >= 0 && s.Step <= t.Steps && s.Analysis < t.N
	})
}

// Energy returns the kinetic energy plus the last potential energy.
func (t *Task) Energy() float64 {
	k := 0.0
	for _, v := range t.s.V {
		k += v * v / 2
	}
	return k/float64(t.N) + t.s.Epot
}

func main() {
	t := &Task{}
	flag.IntVar(&t.N, "n", 256, "bodies")
	flag.IntVar(&t.Steps, "steps", 1500, "time steps")
	flag.IntVar(&t.Every, "every", 4, "time steps between analyses")
	flag.IntVar(&t.Chunk, "chunk", 16, "bodies per analysis step")
	flag.IntVar(&t.Bins, "bins", 64, "bins of the analysis's histogram of pair distances (64 fit any cache; 65536, 512 KiB, make the analysis memory-bound on small caches)")
	flag.Uint64Var(&t.Seed, "seed", 1, "seed of the initial conditions")
	workload.ProbeMain(Info, t, func() string { return fmt.Sprintf("energy %.12g", t.Energy()) })
}
