// Command philosophers is the dining philosophers of Gomez, Cai & Schubert 2017 (section 5.2),
// recording each philosopher's state as its block:
//
//	go run ./examples/philosophers -o phil.pst [-seed N] [-variant symmetric|livelock]
//
// Nine philosophers sit at a round table with one fork between neighbours;
// philosopher i's left fork is fork i, his right fork fork i+1, and each
// starts holding his left fork. Each iteration a philosopher is in THINK,
// ASK or EAT; THINK <-> ASK, ASK -> EAT (only with both forks) and
// EAT -> THINK are allowed, with probability 0.3 of changing state per
// iteration and at most 30, 10 and 10 turns in THINK, ASK and EAT. A
// philosopher in THINK holds on to nothing: a neighbour in ASK takes the
// fork they share. The state is the 4-bit code of Gomez, Cai & Schubert 2017, section 5.4:
// THINK=00, ASK=01, EAT=10 in the high bits, left fork 10 and right fork 01
// in the low bits, EAT ignoring the low bits, so states 0..8.
//
// The philosophers run as goroutines that exchange their state with both
// neighbours over channels every iteration (recorded as messages), and
// decide fork transfers from the exchanged states, so that the block
// sequences depend only on the seed. In the livelock variant philosopher 5
// may take a fork only when he holds none, and never his right fork, so he
// never holds two forks and never eats.
package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/parscope/parscope/examples/internal/workload"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// Phases of a philosopher (the high two bits of the state code).
const (
	think = 0
	ask   = 1
	eat   = 2
)

// Config is one run's parameters.
type Config struct {
	Philosophers int
	Iterations   int
	Livelock     bool
	Blocked      int // the philosopher who cannot eat in the livelock variant
	Seed         uint64
	Work         int // Spin rounds per iteration
}

// State names for the dictionary.
func states() []trace.StateDef {
	forks := []string{"no forks", "right fork", "left fork", "both forks"}
	var out []trace.StateDef
	for code := int32(0); code < 8; code++ {
		phase := [...]string{"THINK", "ASK"}[code>>2]
		out = append(out, trace.StateDef{ID: code, Name: fmt.Sprintf("%s %s", phase, forks[code&3]),
			Description: fmt.Sprintf("%s holding %s (code %04b)", phase, forks[code&3], code)})
	}
	return append(out, trace.StateDef{ID: 8, Name: "EAT", Description: "EAT with both forks (code 10xx)"})
}

// view is what a philosopher tells his neighbours each iteration.
type view struct {
	phase       int
	left, right bool // holds his left / right fork
}

func (v view) code() int32 {
	if v.phase == eat {
		return 8
	}
	c := int32(v.phase) << 2
	if v.left {
		c |= 2
	}
	if v.right {
		c |= 1
	}
	return c
}

// Run runs the philosophers, recording on rec (nil: not recorded), and
// returns each philosopher's sequence of states.
func Run(rec *instrument.Recorder, cfg Config) ([][]int32, error) {
	n := cfg.Philosophers
	if n < 3 {
		return nil, errors.New("need at least 3 philosophers")
	}
	// toLeft[i] carries philosopher i's view to i-1, toRight[i] to i+1.
	toLeft := make([]chan view, n)
	toRight := make([]chan view, n)
	for i := range toLeft {
		toLeft[i], toRight[i] = make(chan view, 1), make(chan view, 1)
	}
	seqs := make([][]int32, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seqs[i] = philosopher(rec.Process(i), i, cfg, toLeft, toRight)
		}()
	}
	wg.Wait()
	return seqs, nil
}

func philosopher(p *instrument.Process, me int, cfg Config, toLeft, toRight []chan view) []int32 {
	n := cfg.Philosophers
	l, r := (me+n-1)%n, (me+1)%n
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(me)))
	blocked := cfg.Livelock && me == cfg.Blocked
	leftBlocked := cfg.Livelock && l == cfg.Blocked
	v := view{phase: think, left: true}
	turns := 0
	seq := make([]int32, 0, cfg.Iterations)
	x := float64(me)
	const msgBytes = 16
	for it := 0; it < cfg.Iterations; it++ {
		code := v.code()
		p.Block(code)
		seq = append(seq, code)
		x = workload.Spin(cfg.Work, x)
		// Exchange views with both neighbours.
		p.Send(l, msgBytes, int32(it))
		toLeft[me] <- v
		p.Send(r, msgBytes, int32(it))
		toRight[me] <- v
		lv := <-toRight[l]
		p.Recv(l, msgBytes, int32(it))
		rv := <-toLeft[r]
		p.Recv(r, msgBytes, int32(it))
		// Fork transfers, decided identically on both sides of each fork
		// from the views just exchanged. My left fork is l's right fork, my
		// right fork r's left fork; the blocked philosopher never takes his
		// right fork, so he never holds two.
		_, v.left = transfer(lv, v, !leftBlocked)
		v.right, _ = transfer(v, rv, !blocked)
		// Phase change: probability 0.3, forced after the maximum turns.
		turns++
		change := rng.Float64() < 0.3
		switch v.phase {
		case think:
			if change || turns >= 30 {
				v.phase, turns = ask, 0
			}
		case ask:
			if change && v.left && v.right {
				v.phase, turns = eat, 0
			} else if change || turns >= 10 {
				v.phase, turns = think, 0
			}
		case eat:
			if change || turns >= 10 {
				v.phase, turns = think, 0
			}
		}
	}
	p.Done()
	return seq
}

// transfer decides who holds the fork between a (whose right fork it is)
// and b (whose left fork it is) after an iteration: a thinking holder
// loses it to an asking neighbour, and a free fork goes to an asking
// neighbour (b first). aMayTake is false when a may not take his right fork.
func transfer(a, b view, aMayTake bool) (aHolds, bHolds bool) {
	aHolds, bHolds = a.right, b.left
	switch {
	case aHolds && a.phase == think && b.phase == ask:
		return false, true
	case bHolds && b.phase == think && a.phase == ask && aMayTake:
		return true, false
	case !aHolds && !bHolds && b.phase == ask:
		return false, true
	case !aHolds && !bHolds && a.phase == ask && aMayTake:
		return true, false
	}
	return aHolds, bHolds
}

func main() {
	c := workload.NewProgram("philosophers")
	variant := c.Flags.String("variant", "symmetric", "symmetric, or livelock (philosopher 5 never holds two forks)")
	iters := c.Flags.Int("iterations", 1000, "iterations per philosopher")
	n := c.Flags.Int("n", 9, "number of philosophers")
	work := c.Flags.Int("work", 200, "compute per iteration (rounds of 9 flops)")
	var cfg Config
	c.Main(func() (instrument.Options, error) {
		if *variant != "symmetric" && *variant != "livelock" {
			return instrument.Options{}, fmt.Errorf("-variant %q: want symmetric or livelock", *variant)
		}
		cfg = Config{Philosophers: *n, Iterations: *iters, Livelock: *variant == "livelock", Blocked: 5, Seed: c.Seed, Work: *work}
		if cfg.Livelock && *n <= 5 {
			return instrument.Options{}, fmt.Errorf("livelock needs philosopher 5: -n must be at least 6")
		}
		return instrument.Options{Program: "philosophers " + *variant, States: states(),
			Extra: map[string]string{"variant": *variant}}, nil
	}, func(rec *instrument.Recorder) error {
		_, err := Run(rec, cfg)
		return err
	})
}
