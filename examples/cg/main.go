// Command cg is the Go version of examples/mpi/cg.c, a CG-like
// communication pattern (NAS CG's, Jones et al. 2007, section 6): goroutines are the
// ranks, channels the links, and the instrumentation library records every
// message and region.
//
//	go run ./examples/cg -o cg.pst [-procs 16] [-n 64] [-iter 10]
//
// The ranks form a grid of nprows x npcols (npcols the smallest divisor of
// the rank count not below its square root: 2x4 for 8, 4x4 for 16, 3x9 for
// 27), each holding a dense block of the matrix and a segment of the
// vectors. An iteration ("loop cg") multiplies the block by the segment of
// p and sums the partial products across the row ("loop reduce":
// recursive doubling with the partner whose column differs in bit i when
// npcols is a power of two, else npcols-1 steps around the row), swaps the
// result with the transpose partner ("block transpose"), and computes two
// dot products ("block dot", summed in shared memory: the C version's
// MPI_Allreduce is a collective, and the library records point-to-point
// messages only).
package main

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/parscope/parscope/examples/internal/links"
	"github.com/parscope/parscope/examples/internal/workload"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// Region ids.
const (
	regCG int32 = iota
	regReduce
	regTranspose
	regDot
)

// Regions names the regions, with the labels of examples/mpi/cg.c.
var Regions = []trace.RegionDef{
	{ID: regCG, Kind: trace.RegionLoop, Label: "loop cg", Parent: -1},
	{ID: regReduce, Kind: trace.RegionLoop, Label: "loop reduce", Parent: -1},
	{ID: regTranspose, Kind: trace.RegionUser, Label: "block transpose", Parent: -1},
	{ID: regDot, Kind: trace.RegionUser, Label: "block dot", Parent: -1},
}

// Config is one run's parameters.
type Config struct {
	Procs int
	Seg   int // vector segment (and block) size per rank
	Iter  int
}

// Layout returns the rank grid of procs ranks: rows x cols.
func Layout(procs int) (rows, cols int) {
	cols = 1
	for cols*cols < procs || procs%cols != 0 {
		cols++
	}
	return procs / cols, cols
}

// Transpose returns the rank r sends its row sum to, and Source the rank
// it receives one from.
func Transpose(r, rows, cols int) int { return (r%cols)*rows + r/cols }

// Source is the inverse of Transpose.
func Source(r, rows, cols int) int { return (r%rows)*cols + r/rows }

func pow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// Run runs the ranks, recording on rec (nil: not recorded), and returns
// the last rho.
func Run(rec *instrument.Recorder, cfg Config) (float64, error) {
	if cfg.Procs < 1 || cfg.Seg < 1 || cfg.Iter < 1 {
		return 0, errors.New("want procs, n and iter >= 1")
	}
	rows, cols := Layout(cfg.Procs)
	net := links.New(rec, cfg.Procs, 4)
	sum := links.NewBarrier(cfg.Procs)
	seg := cfg.Seg
	var rho float64
	var wg sync.WaitGroup
	for me := range cfg.Procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := net.Proc(me)
			row, col := me/cols, me%cols
			a := make([]float64, seg*seg)
			pv, q, w, tmp := make([]float64, seg), make([]float64, seg), make([]float64, seg), make([]float64, seg)
			for i := range seg {
				for j := range seg {
					a[i*seg+j] = float64((i*31+j*17+me*7)%11) / 110
					if i == j {
						a[i*seg+j] += 4
					}
				}
				pv[i] = 1
			}
			dot := func(x, y []float64) float64 {
				s := 0.0
				for i := range x {
					s += x[i] * y[i]
				}
				return sum.Sum(s)
			}
			var r float64
			p.Enter(regCG)
			for it := range cfg.Iter {
				for i := range seg {
					s := 0.0
					for j := range seg {
						s += a[i*seg+j] * pv[j]
					}
					w[i] = s
				}
				p.Enter(regReduce)
				if pow2(cols) {
					for step := 1; step < cols; step <<= 1 {
						partner := row*cols + (col ^ step)
						net.Send(me, partner, 1, w)
						net.Recv(me, partner, 1, tmp)
						for i := range w {
							w[i] += tmp[i]
						}
					}
				} else {
					acc := append([]float64(nil), w...)
					right, left := row*cols+(col+1)%cols, row*cols+(col+cols-1)%cols
					for step := 1; step < cols; step++ {
						net.Send(me, right, 2, acc)
						net.Recv(me, left, 2, acc)
						for i := range w {
							w[i] += acc[i]
						}
					}
				}
				p.Exit(regReduce)
				p.Enter(regTranspose)
				net.Send(me, Transpose(me, rows, cols), 3, w)
				net.Recv(me, Source(me, rows, cols), 3, q)
				p.Exit(regTranspose)
				p.Enter(regDot)
				pq := dot(pv, q)
				r = dot(pv, pv)
				p.Exit(regDot)
				alpha := 0.0
				if pq != 0 {
					alpha = r / pq
				}
				for i := range pv {
					pv[i] -= alpha * q[i] / float64(1+it)
				}
			}
			p.Exit(regCG)
			p.Done()
			if me == 0 {
				rho = r
			}
		}()
	}
	wg.Wait()
	return rho, nil
}

func main() {
	c := workload.NewProgram("cg")
	procs := c.Flags.Int("procs", 16, "ranks (goroutines)")
	n := c.Flags.Int("n", 64, "vector segment per rank")
	iter := c.Flags.Int("iter", 10, "iterations")
	var cfg Config
	c.Main(func() (instrument.Options, error) {
		cfg = Config{Procs: *procs, Seg: *n, Iter: *iter}
		return instrument.Options{Program: "cg", Regions: Regions,
			Extra: map[string]string{"procs": strconv.Itoa(*procs), "n": strconv.Itoa(*n)}}, nil
	}, func(rec *instrument.Recorder) error {
		rho, err := Run(rec, cfg)
		if err == nil {
			r, cl := Layout(cfg.Procs)
			fmt.Printf("cg: %d ranks as %dx%d, rho %.6e\n", cfg.Procs, r, cl, rho)
		}
		return err
	})
}
