// Command mg is the Go version of examples/mpi/mg.c, the MG-like multigrid
// halo exchange of Jones et al. 2007 (section 5, the comm3/give3 code of Figure 3):
// goroutines are the ranks, channels the links, and the instrumentation
// library records every message and region.
//
//	go run ./examples/mg -o mg.pst [-procs 16] [-n 16] [-levels 4] [-iter 4]
//
// The ranks form a periodic 3D grid (dimensions as MPI_Dims_create picks
// them: 2x2x2 for 8, 4x2x2 for 16, 3x3x3 for 27). A V-cycle iteration
// ("loop 36") restricts down the levels, smooths at the bottom,
// interpolates back up and computes a norm. At the fine levels, comm3
// exchanges the six faces of each rank's block with its face neighbours
// along the 3 axes in both directions ("loop 151"). The two coarsest levels
// live on the ranks with even coordinates: entering them, every other rank
// sends its block to the one with its coordinates rounded down to even
// ("block agglomerate"), which exchange among themselves on the grid of
// active ranks ("loop 159"); going up they send the blocks back ("block
// distribute"). The norm ("block norm") is summed in shared memory, without
// messages: the C version's MPI_Allreduce is a collective, and the library
// records point-to-point messages only.
package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/parscope/parscope/examples/internal/links"
	"github.com/parscope/parscope/examples/internal/workload"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// Region ids.
const (
	regInit int32 = iota
	regLoop36
	regDown
	regFine
	regAgglomerate
	regCoarse
	regBottom
	regUp
	regDistribute
	regNorm
)

// Regions names the regions, with the labels of examples/mpi/mg.c.
var Regions = []trace.RegionDef{
	{ID: regInit, Kind: trace.RegionUser, Label: "block init", Parent: -1},
	{ID: regLoop36, Kind: trace.RegionLoop, Label: "loop 36", Parent: -1},
	{ID: regDown, Kind: trace.RegionLoop, Label: "loop down", Parent: -1},
	{ID: regFine, Kind: trace.RegionLoop, Label: "loop 151", Parent: -1},
	{ID: regAgglomerate, Kind: trace.RegionUser, Label: "block agglomerate", Parent: -1},
	{ID: regCoarse, Kind: trace.RegionLoop, Label: "loop 159", Parent: -1},
	{ID: regBottom, Kind: trace.RegionUser, Label: "block bottom", Parent: -1},
	{ID: regUp, Kind: trace.RegionLoop, Label: "loop up", Parent: -1},
	{ID: regDistribute, Kind: trace.RegionUser, Label: "block distribute", Parent: -1},
	{ID: regNorm, Kind: trace.RegionUser, Label: "block norm", Parent: -1},
}

// Config is one run's parameters.
type Config struct {
	Procs  int
	N      int // points per axis of a rank's finest block
	Levels int
	Iter   int
}

// Dims returns the balanced 3D factorisation of n in decreasing order, as
// MPI_Dims_create does.
func Dims(n int) [3]int {
	var best [3]int
	bestSpread := math.MaxInt
	for a := 1; a <= n; a++ {
		if n%a != 0 {
			continue
		}
		for b := 1; b <= a; b++ {
			if (n/a)%b != 0 {
				continue
			}
			c := n / a / b
			if c > b {
				continue
			}
			if s := a - c; s < bestSpread {
				best, bestSpread = [3]int{a, b, c}, s
			}
		}
	}
	return best
}

// Grid is the periodic process grid, ranks numbered row-major.
type Grid [3]int

// Rank returns the rank at coordinates c.
func (g Grid) Rank(c [3]int) int { return (c[0]*g[1]+c[1])*g[2] + c[2] }

// Coords returns the coordinates of rank r.
func (g Grid) Coords(r int) [3]int { return [3]int{r / (g[1] * g[2]), r / g[2] % g[1], r % g[2]} }

// Active reports whether the rank at c holds the coarse levels.
func Active(c [3]int) bool { return c[0]%2 == 0 && c[1]%2 == 0 && c[2]%2 == 0 }

// Neighbour returns the neighbour along axis in direction dir, on the full
// grid or on the grid of active ranks.
func (g Grid) Neighbour(c [3]int, axis, dir int, coarse bool) int {
	n := c
	if !coarse {
		n[axis] = (c[axis] + dir + g[axis]) % g[axis]
	} else {
		q := (g[axis] + 1) / 2
		n[axis] = 2 * ((c[axis]/2 + dir + q) % q)
	}
	return g.Rank(n)
}

// Owner returns the active rank that holds c's coarse levels.
func (g Grid) Owner(c [3]int) int { return g.Rank([3]int{c[0] - c[0]%2, c[1] - c[1]%2, c[2] - c[2]%2}) }

// Members returns the other ranks an active rank holds the coarse levels of.
func (g Grid) Members(c [3]int) []int {
	var out []int
	for dx := range 2 {
		for dy := range 2 {
			for dz := range 2 {
				n := [3]int{c[0] + dx, c[1] + dy, c[2] + dz}
				if (dx|dy|dz) != 0 && n[0] < g[0] && n[1] < g[1] && n[2] < g[2] {
					out = append(out, g.Rank(n))
				}
			}
		}
	}
	return out
}

// block is one level of a rank's grid, (m+2)^3 points with ghost layers.
type block struct {
	m int
	v []float64
}

func (b *block) at(i, j, k int) *float64 { return &b.v[(i*(b.m+2)+j)*(b.m+2)+k] }

// face copies the plane p along axis into buf (in=false) or out of it.
func (b *block) face(axis, p int, buf []float64, in bool) int {
	n := 0
	for a := 1; a <= b.m; a++ {
		for c := 1; c <= b.m; c++ {
			var x *float64
			switch axis {
			case 0:
				x = b.at(p, a, c)
			case 1:
				x = b.at(a, p, c)
			default:
				x = b.at(a, c, p)
			}
			if in {
				*x = buf[n]
			} else {
				buf[n] = *x
			}
			n++
		}
	}
	return n
}

type rank struct {
	id     int
	c      [3]int
	g      Grid
	net    *links.Net
	p      *instrument.Process
	levels []*block
	sbuf   []float64
	rbuf   [2][]float64
}

// comm3 exchanges the ghost faces of level k along the 3 axes (give3 sends
// a face, take3 receives one).
func (r *rank) comm3(k int, coarse bool) {
	if coarse && !Active(r.c) {
		return
	}
	reg := regFine
	if coarse {
		reg = regCoarse
	}
	r.p.Enter(reg)
	b := r.levels[k]
	for axis := range 3 {
		lo, hi := r.g.Neighbour(r.c, axis, -1, coarse), r.g.Neighbour(r.c, axis, 1, coarse)
		if lo == r.id { // alone along this axis: periodic copy
			b.face(axis, b.m, r.sbuf, false)
			b.face(axis, 0, r.sbuf, true)
			b.face(axis, 1, r.sbuf, false)
			b.face(axis, b.m+1, r.sbuf, true)
			continue
		}
		tag := int32(100 + 10*axis)
		n := b.face(axis, b.m, r.sbuf, false)
		r.net.Send(r.id, hi, tag+1, r.sbuf[:n])
		n = b.face(axis, 1, r.sbuf, false)
		r.net.Send(r.id, lo, tag, r.sbuf[:n])
		r.net.Recv(r.id, lo, tag+1, r.rbuf[0])
		r.net.Recv(r.id, hi, tag, r.rbuf[1])
		b.face(axis, 0, r.rbuf[0], true)
		b.face(axis, b.m+1, r.rbuf[1], true)
	}
	r.p.Exit(reg)
}

// move sends level k of every inactive rank to its owner, or back (up).
func (r *rank) move(k int, up bool) {
	reg := regAgglomerate
	if up {
		reg = regDistribute
	}
	r.p.Enter(reg)
	b := r.levels[k]
	switch {
	case Active(r.c):
		for _, w := range r.g.Members(r.c) {
			if up {
				r.net.Send(r.id, w, 201, b.v)
			} else {
				r.net.Recv(r.id, w, 200, r.sbuf)
			}
		}
	case up:
		r.net.Recv(r.id, r.g.Owner(r.c), 201, b.v)
	default:
		r.net.Send(r.id, r.g.Owner(r.c), 200, b.v)
	}
	r.p.Exit(reg)
}

func (r *rank) smooth(k int) {
	b := r.levels[k]
	for i := 1; i <= b.m; i++ {
		for j := 1; j <= b.m; j++ {
			for l := 1; l <= b.m; l++ {
				*b.at(i, j, l) = 0.5**b.at(i, j, l) + (*b.at(i-1, j, l)+*b.at(i+1, j, l)+*b.at(i, j-1, l)+
					*b.at(i, j+1, l)+*b.at(i, j, l-1)+*b.at(i, j, l+1))/12
			}
		}
	}
}

func (r *rank) restrict(k int) {
	f, c := r.levels[k], r.levels[k+1]
	for i := 1; i <= c.m; i++ {
		for j := 1; j <= c.m; j++ {
			for l := 1; l <= c.m; l++ {
				s := 0.0
				for a := range 2 {
					for b := range 2 {
						for d := range 2 {
							s += *f.at(2*i-1+a, 2*j-1+b, 2*l-1+d)
						}
					}
				}
				*c.at(i, j, l) = s / 8
			}
		}
	}
}

func (r *rank) interp(k int) {
	f, c := r.levels[k], r.levels[k+1]
	for i := 1; i <= f.m; i++ {
		for j := 1; j <= f.m; j++ {
			for l := 1; l <= f.m; l++ {
				*f.at(i, j, l) += 0.5 * *c.at((i+1)/2, (j+1)/2, (l+1)/2)
			}
		}
	}
}

// Run runs the ranks, recording on rec (nil: not recorded), and returns
// the final norm.
func Run(rec *instrument.Recorder, cfg Config) (float64, error) {
	if cfg.Procs < 1 || cfg.Levels < 2 || cfg.N>>(cfg.Levels-1) < 1 || cfg.Iter < 1 {
		return 0, errors.New("want procs >= 1, levels >= 2, n >= 2^(levels-1), iter >= 1")
	}
	g := Grid(Dims(cfg.Procs))
	net := links.New(rec, cfg.Procs, 4)
	sum := links.NewBarrier(cfg.Procs)
	nfine := cfg.Levels - 2
	var norm float64
	var wg sync.WaitGroup
	for id := range cfg.Procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &rank{id: id, c: g.Coords(id), g: g, net: net, p: net.Proc(id)}
			n0 := cfg.N
			for k := range cfg.Levels {
				m := n0 >> k
				r.levels = append(r.levels, &block{m: m, v: make([]float64, (m+2)*(m+2)*(m+2))})
			}
			r.sbuf = make([]float64, (n0+2)*(n0+2)*(n0+2))
			r.rbuf = [2][]float64{make([]float64, (n0+2)*(n0+2)), make([]float64, (n0+2)*(n0+2))}
			b := r.levels[0]
			for i := 1; i <= b.m; i++ {
				for j := 1; j <= b.m; j++ {
					for l := 1; l <= b.m; l++ {
						*b.at(i, j, l) = float64((i*7+j*13+l*17+id*31)%97) / 97
					}
				}
			}
			r.p.Enter(regInit)
			r.comm3(0, false)
			r.p.Exit(regInit)
			r.p.Enter(regLoop36)
			for range cfg.Iter {
				r.p.Enter(regDown)
				for k := 0; k+1 < cfg.Levels; k++ {
					if k+1 > nfine && !Active(r.c) {
						break
					}
					r.restrict(k)
					if k+1 == nfine {
						r.move(k+1, false)
					}
					r.comm3(k+1, k+1 >= nfine)
				}
				r.p.Exit(regDown)
				r.p.Enter(regBottom)
				if Active(r.c) {
					r.smooth(cfg.Levels - 1)
					r.comm3(cfg.Levels-1, true)
				}
				r.p.Exit(regBottom)
				r.p.Enter(regUp)
				for k := cfg.Levels - 2; k >= 0; k-- {
					if k >= nfine && !Active(r.c) {
						continue
					}
					if k+1 == nfine {
						r.move(k+1, true)
					}
					r.interp(k)
					r.smooth(k)
					r.comm3(k, k >= nfine)
				}
				r.p.Exit(regUp)
				r.p.Enter(regNorm)
				s := 0.0
				for _, x := range r.levels[0].v {
					s += x * x
				}
				total := sum.Sum(s)
				r.p.Exit(regNorm)
				if id == 0 {
					norm = math.Sqrt(total)
				}
			}
			r.p.Exit(regLoop36)
			r.p.Done()
		}()
	}
	wg.Wait()
	return norm, nil
}

func main() {
	c := workload.NewProgram("mg")
	procs := c.Flags.Int("procs", 16, "ranks (goroutines)")
	n := c.Flags.Int("n", 16, "points per axis of a rank's finest block")
	levels := c.Flags.Int("levels", 4, "grid levels")
	iter := c.Flags.Int("iter", 4, "V-cycle iterations")
	var cfg Config
	c.Main(func() (instrument.Options, error) {
		cfg = Config{Procs: *procs, N: *n, Levels: *levels, Iter: *iter}
		return instrument.Options{Program: "mg", Regions: Regions,
			Extra: map[string]string{"procs": strconv.Itoa(*procs), "n": strconv.Itoa(*n)}}, nil
	}, func(rec *instrument.Recorder) error {
		norm, err := Run(rec, cfg)
		if err == nil {
			d := Dims(cfg.Procs)
			fmt.Printf("mg: %d ranks as %dx%dx%d, norm %.6e\n", cfg.Procs, d[0], d[1], d[2], norm)
		}
		return err
	})
}
