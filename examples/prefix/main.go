// Command prefix is the recursive parallel prefix sum of Gomez, Cai & Schubert 2017 (section 5.3,
// Table 2) over 16 processes, five prefix computations in sequence,
// recording the blocks of Table 2 (0..7):
//
//	go run ./examples/prefix -o prefix.pst [-seed N] [-procs 16] [-runs 5] [-delay 20000]
//
// pref(y, set) halves the process set: each half computes its prefix sums
// recursively, then the top process of the lower half sends its prefix
// (the lower half's total) to every process of the upper half, which adds
// it. The processes are goroutines and the messages go over channels. The
// values summed come from the seed; the block sequences do not depend on
// it, nor on timing.
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

// Blocks of Table 2.
var blocks = []trace.StateDef{
	{ID: 0, Name: "init", Description: "init local variables; find midpoint of current process subset"},
	{ID: 1, Name: "split", Description: "recursive case: create new communicator depending on upper/lower half of subset; find size and id in new communicator"},
	{ID: 2, Name: "recurse lower", Description: "ME in bottom half: call pref with lower half communicator"},
	{ID: 3, Name: "recurse upper", Description: "ME in top half: call pref with upper half communicator"},
	{ID: 4, Name: "return", Description: "return from recursive call: free subset communicator; ME resets to value in caller"},
	{ID: 5, Name: "broadcast", Description: "broadcast top prefix from top process in lower set; if ME in top half, add broadcast value"},
	{ID: 6, Name: "base", Description: "base case: run delay routine"},
	{ID: 7, Name: "return value", Description: "return to caller with prefix value"},
}

// Config is one run's parameters.
type Config struct {
	Procs int
	Runs  int
	Delay int // Spin rounds in the base case
	Seed  uint64
}

// Run computes cfg.Runs prefix sums, recording on rec (nil: not
// recorded), and returns the inputs and outputs of each: values[run][proc].
func Run(rec *instrument.Recorder, cfg Config) (in, out [][]float64, err error) {
	if cfg.Procs < 1 {
		return nil, nil, errors.New("need at least one process")
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9ef1c))
	in = make([][]float64, cfg.Runs)
	out = make([][]float64, cfg.Runs)
	for r := range in {
		in[r] = make([]float64, cfg.Procs)
		out[r] = make([]float64, cfg.Procs)
		for i := range in[r] {
			in[r][i] = float64(rng.IntN(1000))
		}
	}
	ch := make([][]chan float64, cfg.Procs)
	for i := range ch {
		ch[i] = make([]chan float64, cfg.Procs)
		for j := range ch[i] {
			ch[i][j] = make(chan float64, 1)
		}
	}
	all := make([]int, cfg.Procs)
	for i := range all {
		all[i] = i
	}
	var wg sync.WaitGroup
	for me := 0; me < cfg.Procs; me++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := &prefixer{p: rec.Process(me), me: me, ch: ch, delay: cfg.Delay}
			for r := 0; r < cfg.Runs; r++ {
				pr.run = r
				out[r][me] = pr.pref(in[r][me], all, 0)
			}
			pr.p.Done()
		}()
	}
	wg.Wait()
	return in, out, nil
}

type prefixer struct {
	p     *instrument.Process
	me    int
	run   int
	ch    [][]chan float64
	delay int
}

// pref returns the prefix sum of y over set (global ranks, in order),
// which contains the calling process.
func (pr *prefixer) pref(y float64, set []int, depth int) float64 {
	p := pr.p
	p.Block(0)
	mid := len(set) / 2
	idx := 0
	for set[idx] != pr.me {
		idx++
	}
	if len(set) == 1 {
		p.Block(6)
		if workload.Spin(pr.delay, y) == -1 {
			y = -y // never: keeps the delay from being optimised away
		}
		p.Block(7)
		return y
	}
	p.Block(1)
	lower, upper := set[:mid], set[mid:]
	var v float64
	if idx < mid {
		p.Block(2)
		v = pr.pref(y, lower, depth+1)
	} else {
		p.Block(3)
		v = pr.pref(y, upper, depth+1)
	}
	p.Block(4)
	p.Block(5)
	tag := int32(pr.run*100 + depth)
	top := lower[len(lower)-1]
	if pr.me == top {
		for _, dst := range upper {
			p.Send(dst, 8, tag)
			pr.ch[top][dst] <- v
		}
	} else if idx >= mid {
		v += <-pr.ch[top][pr.me]
		p.Recv(top, 8, tag)
	}
	p.Block(7)
	return v
}

func main() {
	c := workload.NewProgram("prefix")
	procs := c.Flags.Int("procs", 16, "number of processes")
	runs := c.Flags.Int("runs", 5, "prefix computations in sequence")
	delay := c.Flags.Int("delay", 20000, "base-case delay (rounds of 9 flops)")
	var cfg Config
	c.Main(func() (instrument.Options, error) {
		cfg = Config{Procs: *procs, Runs: *runs, Delay: *delay, Seed: c.Seed}
		return instrument.Options{Program: "prefix", States: blocks,
			Extra: map[string]string{"procs": strconv.Itoa(*procs), "runs": strconv.Itoa(*runs)}}, nil
	}, func(rec *instrument.Recorder) error {
		_, out, err := Run(rec, cfg)
		if err == nil && len(out) > 0 {
			fmt.Printf("prefix sums of the last run: %v\n", out[len(out)-1])
		}
		return err
	})
}
