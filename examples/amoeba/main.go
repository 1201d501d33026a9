// Command amoeba is the parallel amoeba (downhill simplex) code of Gomez,
// Cai & Schubert 2017 (section 5.1, Table 1): N+1 processes, one per vertex of the simplex,
// minimise an N-dimensional hyperboloid f(x) = sqrt(1 + |x - m|^2) for 20
// iterations, recording the basic blocks of Table 1 (1..13):
//
//	go run ./examples/amoeba -o amoeba.pst [-seed N] [-mode mpi|sos|none|guided] [-dim 16] [-load 1000] [-guide FILE] [-clock wall|sim]
//
// With -clock sim the run is recorded on the simulated clock of
// instrument.SimClock (one core per process): each FUN call charges
// load*dim*9 flops at -gflops (default 1 Gflop/s, so 144 µs for the
// defaults) to the process's virtual time instead of computing the load,
// every message carries its sender's virtual time, and the trace is the
// same on every run of a seed (docs/entropy.md).
//
// Each iteration every process moves its own vertex (reflection through
// the opposite face, then an expansion (blocks 5, 6) or, when the
// reflection does not improve, a shrink toward the best vertex (blocks 7,
// 8)), and the processes agree on the best candidate simplex:
//
//   - mpi: a blocking allreduce (every process sends its best value to
//     process 0, which returns the winner to all) and a broadcast of the
//     winner's simplex (blocks 10, 11);
//   - sos: asynchronous sends of every candidate to every process; a
//     process blocks only where it first uses the others' data: at the top
//     of the next iteration (block 2), or at block 13 after the last one;
//   - none: no communication, each process keeps its own simplex;
//   - guided: no communication, the winning simplex of each iteration is
//     read from the file an mpi run wrote with -guide, so the run follows
//     the mpi run's computational path.
//
// Each evaluation of f costs load*dim*9 floating-point operations (the
// paper's FUN). The block sequences depend only on the seed (the start
// point), the mode and the dimension.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/parscope/parscope/examples/internal/workload"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// Blocks of Table 1.
var blocks = []trace.StateDef{
	{ID: 1, Name: "init", Description: "copy initial arrays simplex (coordinate array for vertices) fval (value of function at vertices)"},
	{ID: 2, Name: "loop start", Description: "start of while loop; loop over fval array to determine maximum and minimum node value; initialize test points array for computing new node"},
	{ID: 3, Name: "project", Description: "calculate projection from ME through opposite base; finds test point, evaluates FUN"},
	{ID: 4, Name: "choice", Description: "just before choice point"},
	{ID: 5, Name: "extend", Description: "if result(3) was good - extends projection, evaluates FUN"},
	{ID: 6, Name: "choose", Description: "chooses between two projections"},
	{ID: 7, Name: "shrink", Description: "shrink simplex - evaluates FUN dim+1 times at each vertex"},
	{ID: 8, Name: "shrink end", Description: "end of shrink simplex"},
	{ID: 9, Name: "best worst", Description: "loops over fval to find new best, worst points"},
	{ID: 10, Name: "reduce", Description: "checks for convergence; global reduction op - find best value and node that has it; prints current state of computation"},
	{ID: 11, Name: "broadcast", Description: "broadcast simplex array from node with best value"},
	{ID: 12, Name: "recalc", Description: "recalculate fval array by evaluating FUN dim+1 times (all vertices); end of loop"},
	{ID: 13, Name: "done", Description: "converged, print results outside loop"},
}

// Config is one run's parameters.
type Config struct {
	Mode       string // mpi, sos, none or guided
	Dim        int
	Iterations int
	Load       int
	Seed       uint64
	// Guide holds the winning simplex of each iteration: filled by an mpi
	// run, read by a guided one.
	Guide [][]float64
	// FunNs is the modelled time of one FUN call in ns, charged to the
	// process's virtual time (instrument.Process.Work) when the recorder
	// runs on a simulated clock; Sim then skips the real load (the FUN
	// value does not depend on it), so the run's time is the model's.
	FunNs int64
	Sim   bool
}

// Result is what a run computed.
type Result struct {
	Best  []float64   // best value each process ends with
	Guide [][]float64 // mpi: the winning simplex of each iteration
}

type candidate struct {
	score   float64
	rank    int
	simplex []float64 // (dim+1) x dim, row-major; nil when not sent
	stamp   int64     // the sender's virtual time at the send (simulated clock)
}

// problem is the function and its known minimum.
type problem struct {
	min  []float64
	load int
}

func (pb *problem) f(x []float64) float64 {
	s := 1.0
	for i, v := range x {
		d := v - pb.min[i]
		s += d * d
	}
	if pb.load > 0 && workload.Spin(pb.load*len(x), s) == -1 {
		// Never true; the comparison keeps the load from being optimised away.
		return math.NaN()
	}
	return math.Sqrt(s)
}

// Run runs the N+1 processes, recording on rec (nil: not recorded).
func Run(rec *instrument.Recorder, cfg Config) (*Result, error) {
	n := cfg.Dim
	if n < 1 {
		return nil, errors.New("dimension must be at least 1")
	}
	if cfg.Mode == "guided" && len(cfg.Guide) < cfg.Iterations {
		return nil, fmt.Errorf("guided mode needs %d iterations of guide data, have %d (write them with an mpi run and -guide)", cfg.Iterations, len(cfg.Guide))
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xa3eba))
	pb := &problem{min: make([]float64, n), load: cfg.Load}
	if cfg.Sim {
		pb.load = 0
	}
	start := make([]float64, (n+1)*n)
	for i := range pb.min {
		pb.min[i] = rng.Float64()*2 - 1
	}
	for j := 0; j <= n; j++ {
		for i := 0; i < n; i++ {
			start[j*n+i] = pb.min[i] + 3 + rng.Float64()
			if j == i+1 {
				start[j*n+i] += 2
			}
		}
	}
	procs := n + 1
	ch := make([][]chan candidate, procs)
	for i := range ch {
		ch[i] = make([]chan candidate, procs)
		for j := range ch[i] {
			ch[i][j] = make(chan candidate, 2)
		}
	}
	res := &Result{Best: make([]float64, procs)}
	if cfg.Mode == "mpi" {
		res.Guide = make([][]float64, cfg.Iterations)
	}
	var wg sync.WaitGroup
	for me := 0; me < procs; me++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vertex(rec.Process(me), me, cfg, pb, start, ch, res)
		}()
	}
	wg.Wait()
	return res, nil
}

func vertex(p *instrument.Process, me int, cfg Config, pb *problem, start []float64, ch [][]chan candidate, res *Result) {
	n := cfg.Dim
	procs := n + 1
	simplexBytes := int64(len(start) * 8)
	f := func(x []float64) float64 {
		p.Work(cfg.FunNs)
		return pb.f(x)
	}
	p.Block(1)
	s := append([]float64(nil), start...)
	fval := make([]float64, procs)
	for j := range fval {
		fval[j] = f(s[j*n : (j+1)*n])
	}
	c := make([]float64, n)
	xr := make([]float64, n)
	xe := make([]float64, n)
	// In sos mode the candidates of iteration it-1 are received where they
	// are first used: at the top of iteration it (block 2), or at block 13
	// after the last iteration.
	pending := -1
	adopt := func() {
		if pending < 0 {
			return
		}
		tag := int32(pending)
		pending = -1
		// The lowest score wins, the lowest rank among equals.
		bestScore, best := math.Inf(1), []float64(nil)
		myScore := fval[0]
		for _, v := range fval {
			myScore = min(myScore, v)
		}
		for src := 0; src < procs; src++ {
			sc, sim := myScore, []float64(nil)
			if src != me {
				m := <-ch[src][me]
				p.RecvStamped(src, simplexBytes+16, tag, m.stamp)
				sc, sim = m.score, m.simplex
			}
			if sc < bestScore {
				bestScore, best = sc, sim
			}
		}
		if best != nil {
			copy(s, best)
		}
		for j := range fval {
			fval[j] = f(s[j*n : (j+1)*n])
		}
	}
	for it := 0; it < cfg.Iterations; it++ {
		p.Block(2)
		adopt()
		lo := 0
		for j := range fval {
			if fval[j] < fval[lo] {
				lo = j
			}
		}
		for i := range c {
			c[i] = 0
			for j := 0; j < procs; j++ {
				if j != me {
					c[i] += s[j*n+i]
				}
			}
			c[i] /= float64(n)
		}
		p.Block(3)
		mine := s[me*n : (me+1)*n]
		for i := range xr {
			xr[i] = c[i] + (c[i] - mine[i])
		}
		fr := f(xr)
		p.Block(4)
		if fr < fval[me] {
			p.Block(5)
			for i := range xe {
				xe[i] = c[i] + 2*(c[i]-mine[i])
			}
			fe := f(xe)
			p.Block(6)
			if fe < fr {
				copy(mine, xe)
				fval[me] = fe
			} else {
				copy(mine, xr)
				fval[me] = fr
			}
		} else {
			p.Block(7)
			base := s[lo*n : (lo+1)*n]
			for j := 0; j < procs; j++ {
				if j == lo {
					continue
				}
				v := s[j*n : (j+1)*n]
				for i := range v {
					v[i] = base[i] + 0.5*(v[i]-base[i])
				}
				fval[j] = f(v)
			}
			fval[lo] = f(base)
			p.Block(8)
		}
		p.Block(9)
		score := fval[0]
		for _, v := range fval {
			score = min(score, v)
		}
		p.Block(10)
		tag := int32(it)
		switch cfg.Mode {
		case "mpi":
			// Allreduce of (best value, rank) through process 0.
			best := me
			if me == 0 {
				bestScore := score
				for src := 1; src < procs; src++ {
					m := <-ch[src][0]
					p.RecvStamped(src, 16, tag, m.stamp)
					if m.score < bestScore {
						bestScore, best = m.score, m.rank
					}
				}
				for dst := 1; dst < procs; dst++ {
					st := p.SendStamped(dst, 8, tag)
					ch[0][dst] <- candidate{rank: best, stamp: st}
				}
			} else {
				st := p.SendStamped(0, 16, tag)
				ch[me][0] <- candidate{score: score, rank: me, stamp: st}
				m := <-ch[0][me]
				p.RecvStamped(0, 8, tag, m.stamp)
				best = m.rank
			}
			p.Block(11)
			if me == best {
				for dst := 0; dst < procs; dst++ {
					if dst != me {
						st := p.SendStamped(dst, simplexBytes, tag)
						ch[me][dst] <- candidate{simplex: append([]float64(nil), s...), stamp: st}
					}
				}
			} else {
				m := <-ch[best][me]
				p.RecvStamped(best, simplexBytes, tag, m.stamp)
				copy(s, m.simplex)
			}
			if me == 0 {
				res.Guide[it] = append([]float64(nil), s...)
			}
		case "sos":
			for dst := 0; dst < procs; dst++ {
				if dst != me {
					st := p.SendStamped(dst, simplexBytes+16, tag)
					ch[me][dst] <- candidate{score: score, rank: me, simplex: append([]float64(nil), s...), stamp: st}
				}
			}
			p.Block(11)
			pending = it
		case "guided":
			p.Block(11)
			copy(s, cfg.Guide[it])
		default: // none
			p.Block(11)
		}
		p.Block(12)
		if pending < 0 {
			for j := range fval {
				fval[j] = f(s[j*n : (j+1)*n])
			}
		}
	}
	p.Block(13)
	adopt()
	best := fval[0]
	for _, v := range fval {
		best = min(best, v)
	}
	res.Best[me] = best
	p.Done()
}

// funNs is the modelled time of a FUN call, load*dim*9 flops at gflops
// Gflop/s, in whole ns (rounded up).
func funNs(load, dim int, gflops float64) int64 {
	return int64(math.Ceil(float64(load) * float64(dim) * 9 / gflops))
}

// writeGuide writes one line per iteration: the winning simplex, exactly.
func writeGuide(path string, guide [][]float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, s := range guide {
		for i, v := range s {
			if i > 0 {
				w.WriteByte(' ')
			}
			w.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readGuide reads what writeGuide wrote, checking each line's length.
func readGuide(path string, dim int) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]float64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != (dim+1)*dim {
			return nil, fmt.Errorf("%s:%d: expected %d numbers (a simplex of dimension %d), got %d", path, line, (dim+1)*dim, dim, len(fields))
		}
		s := make([]float64, len(fields))
		for i, fl := range fields {
			if s[i], err = strconv.ParseFloat(fl, 64); err != nil {
				return nil, fmt.Errorf("%s:%d: number %d: %w", path, line, i+1, err)
			}
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func main() {
	c := workload.NewProgram("amoeba")
	mode := c.Flags.String("mode", "mpi", "mpi, sos, none or guided")
	dim := c.Flags.Int("dim", 16, "dimension N of the problem (N+1 processes)")
	iters := c.Flags.Int("iterations", 20, "iterations")
	load := c.Flags.Int("load", 1000, "load factor: each FUN call costs load*dim*9 flops")
	guide := c.Flags.String("guide", "", "mpi: write each iteration's winning simplex here; guided: read them from here")
	gflops := c.Flags.Float64("gflops", 1, "simulated clock: modelled speed of a process in Gflop/s (a FUN call takes load*dim*9 flops)")
	c.RegisterClock(c.Flags)
	var cfg Config
	c.Main(func() (instrument.Options, error) {
		switch *mode {
		case "mpi", "sos", "none", "guided":
		default:
			return instrument.Options{}, fmt.Errorf("-mode %q: want mpi, sos, none or guided", *mode)
		}
		cfg = Config{Mode: *mode, Dim: *dim, Iterations: *iters, Load: *load, Seed: c.Seed, Sim: c.Sim()}
		if c.Sim() {
			if !(*gflops > 0) {
				return instrument.Options{}, fmt.Errorf("-gflops %g: want a positive speed", *gflops)
			}
			cfg.FunNs = funNs(*load, *dim, *gflops)
		}
		if *mode == "guided" {
			if *guide == "" {
				return instrument.Options{}, errors.New("-mode guided needs -guide FILE written by an mpi run")
			}
			g, err := readGuide(*guide, *dim)
			if err != nil {
				return instrument.Options{}, err
			}
			cfg.Guide = g
		}
		extra := map[string]string{"mode": *mode, "dim": strconv.Itoa(*dim), "load": strconv.Itoa(*load)}
		if c.Sim() {
			extra["fun_ns"] = strconv.FormatInt(cfg.FunNs, 10)
		}
		return instrument.Options{Program: "amoeba " + *mode, States: blocks, Extra: extra}, nil
	}, func(rec *instrument.Recorder) error {
		res, err := Run(rec, cfg)
		if err != nil {
			return err
		}
		if *mode == "mpi" && *guide != "" {
			return writeGuide(*guide, res.Guide)
		}
		return nil
	})
}
