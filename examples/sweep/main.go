// Command sweep is a wavefront probe workload in the manner of Sweep3D
// (Strube 2011, §4.2.3, §6): a discrete-ordinates transport sweep on an n×n
// grid. Each iteration sweeps the grid from its four corners; a cell's
// angular flux depends on its upstream neighbours, so a sweep proceeds by
// anti-diagonals, whose cells are independent and are computed in parallel
// (GOMAXPROCS goroutines) when the diagonal is long enough. After the four
// sweeps a serial source update recomputes the scattering source from the
// scalar flux and measures the change:
//
//	go run ./examples/sweep [-n 192] [-iters 400] [-seed 1]
//
// A step is one anti-diagonal of one sweep, or 16 rows of the source
// update. Blocks: 1–4 per 32 cells of a diagonal of sweep direction 1–4,
// 5 per row of the source update. It links the probe driver; alone it runs
// to the end and prints the last flux change.
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
var Info = probe.Info{Name: "sweep", Version: "2"}

// blockUpdate is the source update's block; sweeps use 1–4.
const blockUpdate = 5

const (
	chunk    = 32 // cells per block
	parallel = 64 // shortest diagonal computed in parallel
	rowsStep = 16 // source-update rows per step
	sigmaT   = 1.0
	sigmaS   = 0.5
)

// state is what a snapshot holds; the fixed source is rebuilt from the seed.
type state struct {
	Iter, Dir, Diag int // Dir 4 is the source update; Diag its row then
	Psi             []float64
	Phi, Src        []float64
	Change          float64
}

// Task is the transport sweep as a probe.Task.
type Task struct {
	N, Iters int
	Seed     uint64
	q        []float64
	s        state
	blk      probe.Blocks
}

// Init implements probe.Task.
func (t *Task) Init(b probe.Blocks) error {
	if t.N < 2 || t.Iters < 1 {
		return fmt.Errorf("sweep: n %d, iters %d: want n ≥ 2 and a positive number of iterations", t.N, t.Iters)
	}
	t.blk = b
	n := t.N
	rng := rand.New(rand.NewPCG(t.Seed, 0x73776570))
	t.q = make([]float64, n*n)
	for i := range t.q {
		t.q[i] = rng.Float64()
	}
	t.s = state{Psi: make([]float64, n*n), Phi: make([]float64, n*n), Src: append([]float64(nil), t.q...)}
	return nil
}

// Step implements probe.Task.
func (t *Task) Step() bool {
	s, n := &t.s, t.N
	if s.Dir == 4 {
		t.update()
		return s.Iter == t.Iters
	}
	if s.Diag == 0 {
		clear(s.Psi)
	}
	t.diagonal(s.Dir, s.Diag)
	s.Diag++
	if s.Diag == 2*n-1 {
		s.Diag = 0
		s.Dir++
	}
	return false
}

// diagonal sweeps anti-diagonal d of direction dir: cells (i, j) with
// i + j = d in the direction's own coordinates.
func (t *Task) diagonal(dir, d int) {
	n, s := t.N, &t.s
	lo, hi := max(0, d-n+1), min(d, n-1) // rows of the diagonal
	mu, eta := 0.3+0.1*float64(dir), 0.7-0.1*float64(dir)
	cell := func(i int) {
		j := d - i
		r, c := i, j
		if dir&1 != 0 {
			r = n - 1 - i
		}
		if dir&2 != 0 {
			c = n - 1 - j
		}
		up, left := 0.0, 0.0
		if i > 0 {
			pr := r - 1
			if dir&1 != 0 {
				pr = r + 1
			}
			up = s.Psi[pr*n+c]
		}
		if j > 0 {
			pc := c - 1
			if dir&2 != 0 {
				pc = c + 1
			}
			left = s.Psi[r*n+pc]
		}
		psi := (s.Src[r*n+c] + 2*mu*up + 2*eta*left) / (sigmaT + 2*mu + 2*eta)
		s.Psi[r*n+c] = psi
		s.Phi[r*n+c] += 0.25 * psi
	}
	cells := hi - lo + 1
	if w := min(runtime.GOMAXPROCS(0), cells/chunk); cells >= parallel && w > 1 {
		var wg sync.WaitGroup
		per := (cells + w - 1) / w
		for g := range w {
			wg.Go(func() {
				for i := lo + g*per; i < min(lo+(g+1)*per, hi+1); i++ {
					cell(i)
				}
			})
		}
		wg.Wait()
	} else {
		for i := lo; i <= hi; i++ {
			cell(i)
		}
	}
	for range (cells + chunk - 1) / chunk {
		t.blk.Block(int32(dir + 1))
	}
}

// update recomputes rowsStep rows of the source from the scalar flux.
func (t *Task) update() {
	n, s := t.N, &t.s
	hi := min(s.Diag+rowsStep, n)
	for r := s.Diag; r < hi; r++ {
		t.blk.Block(blockUpdate)
		for c := range n {
			k := r*n + c
			src := t.q[k] + sigmaS*s.Phi[k]
			s.Change = max(s.Change, math.Abs(src-s.Src[k])/(1+math.Abs(src)))
			s.Src[k] = src
			s.Phi[k] = 0
		}
	}
	s.Diag = hi
	if hi == n {
		s.Iter++
		s.Dir, s.Diag = 0, 0
		if s.Iter < t.Iters {
			s.Change = 0
		}
	}
}

// Snapshot implements probe.Task.
func (t *Task) Snapshot() ([]byte, error) {
	return probe.EncodeState(&t.s)
}

// Restore implements probe.Task (workload.RestoreState: in place, without
// allocating an array).
func (t *Task) Restore(b []byte) error {
	return workload.RestoreState("sweep", b, &t.s, func(s *state) bool {
		n := t.N
		return len(s.Psi) == n*n && len(s.Phi) == n*n && len(s.Src) == n*n && s.Dir >= 0 && s.Dir <= 4 && s.Diag >= 0 && s.Diag < 2*n-1 && s.Iter >= 0 && s.Iter < t.Iters
	})
}

func main() {
	t := &Task{}
	flag.IntVar(&t.N, "n", 192, "grid size")
	flag.IntVar(&t.Iters, "iters", 400, "source iterations")
	flag.Uint64Var(&t.Seed, "seed", 1, "seed of the fixed source")
	workload.ProbeMain(Info, t, func() string { return fmt.Sprintf("change %.12g", t.s.Change) })
}
