// Command transpose is the parallel matrix transpose of Özmen 2002, section 5
// (the AIMS example): 16 processes, the matrix distributed by rows, then
// exchanged all-to-all so that it ends distributed by columns:
//
//	go run ./examples/transpose -o tr.pst [-seed N] [-n 240] [-work 2000]
//
// The master (process 0) holds an n×n matrix filled from the seed. It sends
// row i to worker 1 + i mod 15 (send_row / recv_row). Each worker processes
// its rows (one row_calc per row: the row is doubled), then sends every
// other worker v the block of its rows restricted to v's columns, column j
// belonging to worker 1 + j mod 15 (send_col, 14 per worker), and receives
// the 14 blocks for its own columns (recv_col). It then processes its
// columns (one col_calc per column: 1 is added) and sends each column back
// to the master (send_res / recv_res), which assembles the transpose, so
// the result is Bᵀ with B = 2A + 1.
//
// Every instrumentation point is recorded both as a block and as a named
// event of the same name, with a real Send/Recv per message. The event
// sequence of each process depends only on n (Sequence gives it); the seed
// sets the matrix.
package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/parscope/parscope/examples/internal/workload"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// Procs is the number of processes: the master and 15 workers, as in the
// paper's 16-host run.
const Procs = 16

// Blocks, one per instrumentation point.
const (
	blockStart = iota
	blockSendRow
	blockRecvRow
	blockRowCalc
	blockSendCol
	blockRecvCol
	blockColCalc
	blockSendRes
	blockRecvRes
	blockStop
)

// points names the instrumentation points: block id i is event points[i].
var points = []string{"program_st", "send_row", "recv_row", "row_calc", "send_col", "recv_col", "col_calc",
	"send_res", "recv_res", "program_sp"}

var blocks = func() []trace.StateDef {
	desc := []string{"program start", "master sends a row", "worker receives a row", "one row of work",
		"worker sends a block of its rows to a column owner", "worker receives a block of its columns",
		"one column of work", "worker sends a column back", "master receives a column", "program end"}
	out := make([]trace.StateDef, len(points))
	for i, n := range points {
		out[i] = trace.StateDef{ID: int32(i), Name: n, Description: desc[i]}
	}
	return out
}()

// Config is one run's parameters.
type Config struct {
	N    int // matrix size (n×n), at least Procs-1
	Work int // Spin rounds per element of a row_calc or col_calc
	Seed uint64
}

// owner returns the worker holding row (or column) i.
func owner(i int) int { return 1 + i%(Procs-1) }

// owned returns the rows (or columns) of n that worker w holds.
func owned(n, w int) []int {
	var out []int
	for i := w - 1; i < n; i += Procs - 1 {
		out = append(out, i)
	}
	return out
}

// Sequence returns the named events process p records in a run of size n,
// in order: the ground truth of the workload's phases.
func Sequence(n, p int) []string {
	rep := func(s []string, name string, k int) []string {
		for ; k > 0; k-- {
			s = append(s, name)
		}
		return s
	}
	s := []string{"program_st"}
	if p == 0 {
		s = rep(s, "send_row", n)
		s = rep(s, "recv_res", n)
	} else {
		k := len(owned(n, p))
		s = rep(s, "recv_row", k)
		s = rep(s, "row_calc", k)
		s = rep(s, "send_col", Procs-2)
		s = rep(s, "recv_col", Procs-2)
		s = rep(s, "col_calc", k)
		s = rep(s, "send_res", k)
	}
	return append(s, "program_sp")
}

// Matrix returns the n×n matrix of a seed.
func Matrix(n int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 0x7a3b05e))
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
		for j := range a[i] {
			a[i][j] = float64(rng.IntN(1000))
		}
	}
	return a
}

type row struct {
	i int
	v []float64
}

// block is the part of a worker's rows that falls in another worker's
// columns: v[r][c] is element (rows[r], cols[c]).
type block struct {
	rows []int
	v    [][]float64
}

// Run runs the master and the 15 workers, recording on rec (nil: not
// recorded), and returns the matrix the master assembled: the transpose of
// 2A + 1 for the seed's matrix A.
func Run(rec *instrument.Recorder, cfg Config) ([][]float64, error) {
	if cfg.N < Procs-1 {
		return nil, fmt.Errorf("matrix size %d: need at least %d (one row per worker)", cfg.N, Procs-1)
	}
	if cfg.Work < 0 {
		return nil, errors.New("negative work")
	}
	n := cfg.N
	a := Matrix(n, cfg.Seed)
	mark := workload.Marker(rec, points)
	var sink [Procs]float64
	work := func(w int, v []float64) {
		for _, x := range v {
			sink[w] += workload.Spin(cfg.Work, x)
		}
	}
	rows := make([]chan row, Procs)
	res := make([]chan row, Procs)
	// cols[v][u] carries worker u's block for worker v.
	cols := make([][]chan block, Procs)
	for w := 1; w < Procs; w++ {
		k := len(owned(n, w))
		rows[w], res[w] = make(chan row, k), make(chan row, k)
		cols[w] = make([]chan block, Procs)
		for u := 1; u < Procs; u++ {
			cols[w][u] = make(chan block, 1)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < Procs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := rec.Process(w)
			mark(p, blockStart)
			mine := owned(n, w)
			got := make([][]float64, len(mine))
			for r := range mine {
				mark(p, blockRecvRow)
				m := <-rows[w]
				p.Recv(0, int64(8*n), int32(m.i))
				got[r] = m.v
			}
			for r := range mine {
				mark(p, blockRowCalc)
				for j := range got[r] {
					got[r][j] *= 2
				}
				work(w, got[r])
			}
			// column c of mine, by the rows of every worker
			colv := make([][]float64, len(mine))
			for c := range colv {
				colv[c] = make([]float64, n)
			}
			put := func(b block) {
				for r, i := range b.rows {
					for c := range mine {
						colv[c][i] = b.v[r][c]
					}
				}
			}
			sub := func(cs []int) block {
				b := block{rows: mine, v: make([][]float64, len(mine))}
				for r := range mine {
					b.v[r] = make([]float64, len(cs))
					for c, j := range cs {
						b.v[r][c] = got[r][j]
					}
				}
				return b
			}
			put(sub(mine))
			for d := 1; d < Procs-1; d++ {
				v := 1 + (w-1+d)%(Procs-1)
				b := sub(owned(n, v))
				mark(p, blockSendCol)
				p.Send(v, int64(8*len(b.rows)*len(b.v[0])), int32(w))
				cols[v][w] <- b
			}
			for d := 1; d < Procs-1; d++ {
				u := 1 + (w-1+Procs-1-d)%(Procs-1)
				mark(p, blockRecvCol)
				b := <-cols[w][u]
				p.Recv(u, int64(8*len(b.rows)*len(mine)), int32(u))
				put(b)
			}
			for c := range mine {
				mark(p, blockColCalc)
				for i := range colv[c] {
					colv[c][i]++
				}
				work(w, colv[c])
			}
			for c, j := range mine {
				mark(p, blockSendRes)
				p.Send(0, int64(8*n), int32(j))
				res[w] <- row{i: j, v: colv[c]}
			}
			mark(p, blockStop)
			p.Done()
		}()
	}
	p := rec.Process(0)
	mark(p, blockStart)
	for i := range a {
		mark(p, blockSendRow)
		p.Send(owner(i), int64(8*n), int32(i))
		rows[owner(i)] <- row{i: i, v: append([]float64(nil), a[i]...)}
	}
	out := make([][]float64, n)
	for j := range out {
		mark(p, blockRecvRes)
		m := <-res[owner(j)]
		p.Recv(owner(j), int64(8*n), int32(m.i))
		out[m.i] = m.v
	}
	mark(p, blockStop)
	p.Done()
	wg.Wait()
	return out, nil
}

func main() {
	c := workload.NewProgram("transpose")
	n := c.Flags.Int("n", 240, "matrix size (n×n, at least 15)")
	work := c.Flags.Int("work", 200, "compute per matrix element of a row_calc or col_calc (rounds of 9 flops)")
	var cfg Config
	c.Main(func() (instrument.Options, error) {
		cfg = Config{N: *n, Work: *work, Seed: c.Seed}
		c.Procs = Procs
		if cfg.N < Procs-1 {
			return instrument.Options{}, fmt.Errorf("-n %d: need at least %d", cfg.N, Procs-1)
		}
		return instrument.Options{Program: "transpose", States: blocks,
			Extra: map[string]string{"n": strconv.Itoa(*n), "procs": strconv.Itoa(Procs)}}, nil
	}, func(rec *instrument.Recorder) error {
		out, err := Run(rec, cfg)
		if err == nil {
			fmt.Printf("%d×%d transpose assembled on process 0\n", len(out), len(out))
		}
		return err
	})
}
