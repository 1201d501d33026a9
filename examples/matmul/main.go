// Command matmul is a one-phase probe workload (Strube 2011, §6): a repeated
// dense matrix product. Each repetition computes C = A×B, then A becomes C
// scaled to a largest entry of 1, so every repetition does the same work on
// new numbers:
//
//	go run ./examples/matmul [-n 160] [-reps 300] [-rows 8] [-seed 1]
//
// A step computes -rows rows of C, split over GOMAXPROCS goroutines (a
// parallel worker); the step that completes C also rescales A. Blocks: 1 per row of C,
// the only block. It links the probe driver (probe.Main), so parscope
// probe build/run can run it; alone it runs to the end and prints a
// checksum of A.
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
var Info = probe.Info{Name: "matmul", Version: "2"}

// blockRow is the task's only block: one row of C.
const blockRow = 1

// state is what a snapshot holds; B is rebuilt from the seed.
type state struct {
	Rep, Row int
	A, C     []float64
}

// Task is the matrix product as a probe.Task.
type Task struct {
	N, Reps, Rows int
	Seed          uint64
	b             []float64
	s             state
	blk           probe.Blocks
}

// Init implements probe.Task.
func (t *Task) Init(b probe.Blocks) error {
	if t.N < 1 || t.Reps < 1 || t.Rows < 1 {
		return fmt.Errorf("matmul: n %d, reps %d, rows %d: want positive values", t.N, t.Reps, t.Rows)
	}
	t.blk = b
	rng := rand.New(rand.NewPCG(t.Seed, 0x6d61746d))
	n := t.N
	t.s = state{A: make([]float64, n*n), C: make([]float64, n*n)}
	t.b = make([]float64, n*n)
	for i := range t.s.A {
		t.s.A[i] = rng.Float64()
	}
	for i := range t.b {
		t.b[i] = rng.Float64()*2 - 1
	}
	return nil
}

// Step implements probe.Task.
func (t *Task) Step() bool {
	n, s := t.N, &t.s
	hi := min(s.Row+t.Rows, n)
	parallelRows(s.Row, hi, func(i int) {
		a, c := s.A[i*n:(i+1)*n], s.C[i*n:(i+1)*n]
		clear(c)
		for k, aik := range a {
			bk := t.b[k*n : (k+1)*n]
			for j := range c {
				c[j] += aik * bk[j]
			}
		}
	})
	for range hi - s.Row {
		t.blk.Block(blockRow)
	}
	s.Row = hi
	if hi < n {
		return false
	}
	// The product is done: A becomes C scaled to a largest entry of 1.
	big := 0.0
	for _, v := range s.C {
		big = max(big, math.Abs(v))
	}
	for i, v := range s.C {
		s.A[i] = v / big
	}
	s.Row = 0
	s.Rep++
	return s.Rep == t.Reps
}

// parallelRows runs f(i) for i in [lo, hi) on up to GOMAXPROCS goroutines.
func parallelRows(lo, hi int, f func(i int)) {
	w := min(runtime.GOMAXPROCS(0), hi-lo)
	if w <= 1 {
		for i := lo; i < hi; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for g := range w {
		wg.Go(func() {
			for i := lo + g; i < hi; i += w {
				f(i)
			}
		})
	}
	wg.Wait()
}

// Snapshot implements probe.Task.
func (t *Task) Snapshot() ([]byte, error) {
	return probe.EncodeState(&t.s)
}

// Restore implements probe.Task (workload.RestoreState: in place, without
// allocating an array).
func (t *Task) Restore(b []byte) error {
	return workload.RestoreState("matmul", b, &t.s, func(s *state) bool {
		return len(s.A) == t.N*t.N && len(s.C) == t.N*t.N && s.Row >= 0 && s.Row < t.N && s.Rep >= 0 && s.Rep < t.Reps
	})
}

// Checksum sums A.
func (t *Task) Checksum() float64 {
	sum := 0.0
	for _, v := range t.s.A {
		sum += v
	}
	return sum
}

func main() {
	t := &Task{}
	flag.IntVar(&t.N, "n", 160, "matrix size")
	flag.IntVar(&t.Reps, "reps", 300, "repetitions of the product")
	flag.IntVar(&t.Rows, "rows", 8, "rows of C per step")
	flag.Uint64Var(&t.Seed, "seed", 1, "seed of the matrices")
	workload.ProbeMain(Info, t, func() string { return fmt.Sprintf("checksum %.12g", t.Checksum()) })
}
