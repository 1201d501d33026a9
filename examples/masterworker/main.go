// Command masterworker is the master/worker program of Özmen 2002 (Figure 3)
// and Strube 2011 (chapter 2): a master dispatches tasks to workers, every
// process including the master works on its share, each task a loop of
// do_calc, and the master collects the results:
//
//	go run ./examples/masterworker -o mw.pst [-seed N] [-workers 8] [-tasks 64] [-calc 100] [-work 2000]
//
// Tasks are dealt round-robin over the master (process 0) and the workers
// (1..W), so each process's sequence depends only on the seed, which sets
// the number of do_calc steps of every task (between calc/2 and calc).
// Each instrumentation point of Figure 3 is recorded both as a block and
// as a named event (program_st, send_i, recv1, do_calc, send_res,
// recv_res, program_sp), the event stream Özmen's (2002) modified entropy
// reads.
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

// Blocks, one per instrumentation point of Figure 3.
const (
	blockStart = iota
	blockSend
	blockRecv
	blockCalc
	blockSendRes
	blockRecvRes
	blockStop
)

// points names the instrumentation points: block id i is event points[i].
var points = []string{"program_st", "send_i", "recv1", "do_calc", "send_res", "recv_res", "program_sp"}

var blocks = func() []trace.StateDef {
	desc := []string{"program start", "master sends a task", "worker receives a task", "one step of do_calc",
		"worker sends a result", "master receives a result", "program end"}
	var out []trace.StateDef
	for i, n := range points {
		out = append(out, trace.StateDef{ID: int32(i), Name: n, Description: desc[i]})
	}
	return out
}()

// Config is one run's parameters.
type Config struct {
	Workers int
	Tasks   int
	Calc    int // maximum do_calc steps per task
	Work    int // Spin rounds per do_calc
	Seed    uint64
}

type task struct {
	id    int
	steps int
}

// Run runs the master and the workers, recording on rec (nil: not
// recorded), and returns the result of every task.
func Run(rec *instrument.Recorder, cfg Config) ([]float64, error) {
	if cfg.Workers < 1 || cfg.Tasks < 0 || cfg.Calc < 1 {
		return nil, errors.New("need at least one worker, a task count and at least one do_calc step")
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x3a57e))
	tasks := make([]task, cfg.Tasks)
	for i := range tasks {
		tasks[i] = task{id: i, steps: cfg.Calc/2 + rng.IntN(cfg.Calc-cfg.Calc/2) + 1}
	}
	procs := cfg.Workers + 1
	toWorker := make([]chan task, procs)
	results := make([]chan float64, procs)
	for w := 1; w < procs; w++ {
		toWorker[w], results[w] = make(chan task, cfg.Tasks), make(chan float64, cfg.Tasks)
	}
	out := make([]float64, cfg.Tasks)
	mark := workload.Marker(rec, points)
	calc := func(p *instrument.Process, t task) float64 {
		x := float64(t.id)
		for s := 0; s < t.steps; s++ {
			mark(p, blockCalc)
			x = workload.Spin(cfg.Work, x) // do_calc
		}
		return x
	}
	var wg sync.WaitGroup
	for w := 1; w < procs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := rec.Process(w)
			mark(p, blockStart)
			for {
				mark(p, blockRecv)
				t, ok := <-toWorker[w]
				if !ok {
					break
				}
				p.Recv(0, 16, int32(t.id))
				r := calc(p, t)
				mark(p, blockSendRes)
				p.Send(0, 8, int32(t.id))
				results[w] <- r
			}
			mark(p, blockStop)
			p.Done()
		}()
	}
	p := rec.Process(0)
	mark(p, blockStart)
	for _, t := range tasks {
		if w := t.id % procs; w != 0 {
			mark(p, blockSend)
			p.Send(w, 16, int32(t.id))
			toWorker[w] <- t
		}
	}
	for w := 1; w < procs; w++ {
		close(toWorker[w])
	}
	for _, t := range tasks {
		if t.id%procs == 0 {
			out[t.id] = calc(p, t)
		}
	}
	for _, t := range tasks {
		if w := t.id % procs; w != 0 {
			mark(p, blockRecvRes)
			out[t.id] = <-results[w]
			p.Recv(w, 8, int32(t.id))
		}
	}
	mark(p, blockStop)
	p.Done()
	wg.Wait()
	return out, nil
}

func main() {
	c := workload.NewProgram("masterworker")
	workers := c.Flags.Int("workers", 8, "number of workers (processes 1..W; the master is 0)")
	tasks := c.Flags.Int("tasks", 64, "number of tasks")
	calcSteps := c.Flags.Int("calc", 100, "maximum do_calc steps per task")
	work := c.Flags.Int("work", 2000, "compute per do_calc (rounds of 9 flops)")
	var cfg Config
	c.Main(func() (instrument.Options, error) {
		cfg = Config{Workers: *workers, Tasks: *tasks, Calc: *calcSteps, Work: *work, Seed: c.Seed}
		return instrument.Options{Program: "masterworker", States: blocks,
			Extra: map[string]string{"workers": strconv.Itoa(*workers), "tasks": strconv.Itoa(*tasks)}}, nil
	}, func(rec *instrument.Recorder) error {
		out, err := Run(rec, cfg)
		if err == nil {
			fmt.Printf("%d task results collected\n", len(out))
		}
		return err
	})
}
