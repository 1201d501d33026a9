// Command lyon runs the three communication benchmarks of Lyon's NISTIR
// 4418 (Lyon 1990), whose communication dependency is weak, moderate and
// strong:
//
//	go run ./examples/lyon -bench random -n 8 -g 400 -e 150 -o random.pst
//	go run ./examples/lyon -bench mesh -n 12 -p 4 -g 60 -o mesh.pst
//	go run ./examples/lyon -bench ring -n 8 -p 4 -g 60 -o ring.pst
//
// Each of the n nodes is a goroutine with an inbox (a channel), and it is
// always in one of the four iPSC node modes, recorded as states with the
// instrument library's occupancy counters (Options.Occupancy): computing
// (U), sending (S), waiting for a message (R), and servicing an arrived
// message's packets (I, the iPSC's communication interrupt service, here
// taken when the node next looks at its inbox).
//
//   - Random (B1): tasks of random size (grain g work units on average) are
//     placed at random nodes and proceed independently; while a task runs,
//     after each chunk of work it leaves the node with probability e per
//     100,000 work units (the exit rate e): its remainder is sent as a
//     one-packet message to another random node. The run ends when every
//     task has finished.
//   - Mesh (B2): the nodes form a grid (rows × columns, as square as n
//     allows); every step a node sends p packets to each of its 2 to 4
//     neighbours, receives theirs and computes p·g units.
//   - Ring (B3): every step a node needs every other node's block of p
//     packets: the blocks go round the ring in n−1 shifts, then the node
//     computes n·p·g units.
//
// The costs of a work unit, a packet sent and a packet serviced are
// durations (-unit, -send, -service, plus a fixed -overhead per message).
// With -cost sleep (the default) a node sleeps for them (nanosleep where
// available: the Go timers of a VM may be as coarse as 1 ms), so every node
// behaves as if it had a processor of its own (the iPSC's 16 nodes on a
// machine with fewer cores); with -cost spin it burns the CPU for them.
// A late wake-up is paid back by the node's next cost in the same mode
// (see node.cost), so a mode's total is the emulated cost even on a loaded
// machine, and no time moves between modes.
//
// The states are named I, S, R and U, so they are the modes: `parscope
// occupancy --counters --start U t.pst` gives the tables and the mean node
// occupancies (--start U counts the program's set-up, before a node's first
// state, as U; without it a node does not exist, in no mode, until then),
// and `parscope sweep` runs the benchmark over a
// grid of parameters (docs/occupancy.md).
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parscope/parscope/examples/internal/workload"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// The four iPSC node modes, as state ids.
const (
	stateI = iota // communication interrupt service
	stateS        // sending
	stateR        // receiving: waiting for a message
	stateU        // user computation
)

var states = []trace.StateDef{
	{ID: stateI, Name: "I", Description: "communication interrupt service: unpacking arrived packets"},
	{ID: stateS, Name: "S", Description: "sending a message"},
	{ID: stateR, Name: "R", Description: "receiving: waiting for a message"},
	{ID: stateU, Name: "U", Description: "user computation"},
}

// packetBytes is the size of one packet (recorded as message sizes).
const packetBytes = 1024

// Config is one run's parameters.
type Config struct {
	Bench string // random, mesh or ring
	// N is the number of nodes, P the packets per message, G the grain
	// (work units per packet, or per task on average for Random) and E the
	// exit rate (Random: migrations per 100,000 work units).
	N, P, G int
	E       float64
	// Steps is the number of steps (Mesh, Ring); Tasks the number of tasks
	// (Random) and Chunk the work units between exit decisions.
	Steps, Tasks, Chunk int
	// Unit is the cost of a work unit; Send and Service of a packet sent or
	// serviced; Overhead of a message, on either side.
	Unit, Send, Service, Overhead time.Duration
	// Spin burns the CPU for costs instead of sleeping.
	Spin bool
	Seed uint64
}

// DefaultConfig returns the defaults of the command's flags.
func DefaultConfig() Config {
	return Config{Bench: "ring", N: 8, P: 4, G: 50, E: 150, Steps: 5, Tasks: 64, Chunk: 50,
		Unit: 10 * time.Microsecond, Send: 50 * time.Microsecond, Service: 25 * time.Microsecond,
		Overhead: 250 * time.Microsecond}
}

func (c Config) check() error {
	switch {
	case c.Bench != "random" && c.Bench != "mesh" && c.Bench != "ring":
		return fmt.Errorf("-bench %q: expected random, mesh or ring", c.Bench)
	case c.N < 2:
		return fmt.Errorf("-n %d: expected at least 2 nodes", c.N)
	case c.P < 1 || c.G < 0 || c.Steps < 1 || c.Tasks < 1 || c.Chunk < 1:
		return errors.New("expected -p, -steps, -tasks and -chunk ≥ 1 and -g ≥ 0")
	case c.E < 0 || c.E*float64(c.Chunk) > 1e5:
		return fmt.Errorf("-e %g: expected 0 ≤ e ≤ 100000/chunk (%d)", c.E, c.Chunk)
	case c.Unit < 0 || c.Send < 0 || c.Service < 0 || c.Overhead < 0:
		return errors.New("expected non-negative costs")
	}
	return nil
}

type message struct {
	src, packets int
	work         int // Random: the task's remaining work units
}

// node is one node's recording handle, inbox and the time it owes.
type node struct {
	id    int
	p     *instrument.Process
	cfg   *Config
	inbox []chan message
	mode  int32
	debt  [4]time.Duration // per mode: time overslept, owed back
	x     float64          // keeps spin loops alive
}

// cost spends d in the node's current mode: the node sleeps (or spins)
// for d less what it overslept in this mode before. A timer's late wake-up
// (tens of µs, milliseconds on a loaded machine) is thus paid back by the
// next cost of the same mode: each mode's total stays the emulated one, up
// to the last wake-up, and no time moves from one mode to another.
func (nd *node) cost(d time.Duration) {
	want := d - nd.debt[nd.mode]
	if want <= 0 {
		nd.debt[nd.mode] = -want
		return
	}
	start := time.Now()
	if nd.cfg.Spin {
		for end := start.Add(want); time.Now().Before(end); {
			nd.x = workload.Spin(100, nd.x)
		}
	} else {
		sleep(want)
	}
	nd.debt[nd.mode] = max(0, time.Since(start)-want)
}

// enter records the node's entry into mode m.
func (nd *node) enter(m int32) {
	nd.mode = m
	nd.p.Block(m)
}

// compute spends units of work in mode U.
func (nd *node) compute(units int) {
	nd.enter(stateU)
	nd.cost(time.Duration(units) * nd.cfg.Unit)
}

// send sends a message of packets to dst in mode S.
func (nd *node) send(dst int, m message) {
	nd.enter(stateS)
	nd.cost(nd.cfg.Overhead + time.Duration(m.packets)*nd.cfg.Send)
	m.src = nd.id
	nd.p.Send(dst, int64(m.packets*packetBytes), 0)
	nd.inbox[dst] <- m
}

// service takes an arrived message in mode I.
func (nd *node) service(m message) {
	nd.p.Recv(m.src, int64(m.packets*packetBytes), 0)
	nd.enter(stateI)
	nd.cost(nd.cfg.Overhead + time.Duration(m.packets)*nd.cfg.Service)
}

// recv waits for the next message in mode R (the time owed restarts when
// it arrives), then services it.
func (nd *node) recv() message {
	nd.enter(stateR)
	m := <-nd.inbox[nd.id]
	nd.service(m)
	return m
}

// Run runs the benchmark, recording on rec (nil: not recorded), and
// returns the work units each node computed.
func Run(rec *instrument.Recorder, cfg Config) ([]int, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	inbox := make([]chan message, cfg.N)
	for i := range inbox {
		inbox[i] = make(chan message, cfg.N*cfg.Tasks+4*cfg.N)
	}
	work := make([]int, cfg.N)
	nodes := make([]*node, cfg.N)
	for i := range nodes {
		nodes[i] = &node{id: i, p: rec.Process(i), cfg: &cfg, inbox: inbox}
	}
	// Every node starts computing now (the handles are set up above, so the
	// nodes' first states are microseconds apart).
	for _, nd := range nodes {
		nd.enter(stateU)
	}
	var body func(nd *node) int
	switch cfg.Bench {
	case "ring":
		body = ring
	case "mesh":
		body = mesh
	default:
		body = random(nodes)
	}
	var wg sync.WaitGroup
	for _, nd := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work[nd.id] = body(nd)
			nd.p.Done()
		}()
	}
	wg.Wait()
	return work, nil
}

// ring: n−1 shifts of p-packet blocks round the ring, then n·p·g units.
func ring(nd *node) int {
	n, done := nd.cfg.N, 0
	for range nd.cfg.Steps {
		for range n - 1 {
			nd.send((nd.id+1)%n, message{packets: nd.cfg.P})
			nd.recv()
		}
		u := n * nd.cfg.P * nd.cfg.G
		nd.compute(u)
		done += u
	}
	return done
}

// Grid returns the rows and columns of the mesh of n nodes: the
// factorisation of n closest to a square.
func Grid(n int) (rows, cols int) {
	rows = 1
	for r := 1; r*r <= n; r++ {
		if n%r == 0 {
			rows = r
		}
	}
	return rows, n / rows
}

// neighbours returns the mesh neighbours of node id (no wrap-around).
func neighbours(id, n int) []int {
	rows, cols := Grid(n)
	r, c := id/cols, id%cols
	var out []int
	if r > 0 {
		out = append(out, id-cols)
	}
	if r < rows-1 {
		out = append(out, id+cols)
	}
	if c > 0 {
		out = append(out, id-1)
	}
	if c < cols-1 {
		out = append(out, id+1)
	}
	return out
}

// mesh: p packets to and from each neighbour, then p·g units, per step.
func mesh(nd *node) int {
	nb := neighbours(nd.id, nd.cfg.N)
	done := 0
	for range nd.cfg.Steps {
		for _, j := range nb {
			nd.send(j, message{packets: nd.cfg.P})
		}
		for range nb {
			nd.recv()
		}
		u := nd.cfg.P * nd.cfg.G
		nd.compute(u)
		done += u
	}
	return done
}

// random returns the Random body: seeded task sizes and placement, the
// exit decisions from each node's own seeded generator.
func random(nodes []*node) func(*node) int {
	cfg := nodes[0].cfg
	// Placement and sizes, drawn in a fixed order.
	queues := make([][]int, cfg.N)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x1990))
	for range cfg.Tasks {
		size := max(1, cfg.G/2+rng.IntN(cfg.G+1))
		at := rng.IntN(cfg.N)
		queues[at] = append(queues[at], size)
	}
	var finished atomic.Int64
	done := make(chan struct{})
	exit := cfg.E * float64(cfg.Chunk) / 1e5
	return func(nd *node) int {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(nd.id)+1))
		queue := queues[nd.id]
		computed := 0
		drain := func() {
			for {
				select {
				case m := <-nd.inbox[nd.id]:
					nd.service(m)
					queue = append(queue, m.work)
				default:
					return
				}
			}
		}
		for {
			if len(queue) == 0 {
				nd.enter(stateR)
				select {
				case m := <-nd.inbox[nd.id]:
					nd.service(m)
					queue = append(queue, m.work)
				case <-done:
					return computed
				}
				continue
			}
			left := queue[0]
			queue = queue[1:]
			for left > 0 {
				u := min(left, cfg.Chunk)
				nd.compute(u)
				computed += u
				left -= u
				drain()
				if left > 0 && rng.Float64() < exit {
					dst := rng.IntN(cfg.N - 1)
					if dst >= nd.id {
						dst++
					}
					nd.send(dst, message{packets: cfg.P, work: left})
					left = 0
					continue
				}
				if left == 0 && finished.Add(1) == int64(cfg.Tasks) {
					close(done)
				}
			}
		}
	}
}

func main() {
	c := workload.NewProgram("lyon")
	d := DefaultConfig()
	bench := c.Flags.String("bench", d.Bench, "the benchmark: random, mesh or ring")
	n := c.Flags.Int("n", d.N, "nodes")
	p := c.Flags.Int("p", d.P, "packets per message (Random: 1 unless given)")
	g := c.Flags.Int("g", d.G, "grain: work units per packet (Random: per task, on average)")
	e := c.Flags.Float64("e", d.E, "exit rate (Random): migrations per 100,000 work units")
	steps := c.Flags.Int("steps", d.Steps, "steps (Mesh, Ring)")
	tasks := c.Flags.Int("tasks", d.Tasks, "tasks (Random)")
	chunk := c.Flags.Int("chunk", d.Chunk, "work units between exit decisions (Random)")
	unit := c.Flags.Duration("unit", d.Unit, "cost of a work unit")
	send := c.Flags.Duration("send", d.Send, "cost of sending a packet")
	service := c.Flags.Duration("service", d.Service, "cost of servicing an arrived packet")
	overhead := c.Flags.Duration("overhead", d.Overhead, "cost of a message, on either side")
	costs := c.Flags.String("cost", "sleep", "how costs are spent: sleep (a processor per node) or spin (burn the CPU)")
	var cfg Config
	c.Main(func() (instrument.Options, error) {
		cfg = Config{Bench: *bench, N: *n, P: *p, G: *g, E: *e, Steps: *steps, Tasks: *tasks, Chunk: *chunk,
			Unit: *unit, Send: *send, Service: *service, Overhead: *overhead, Spin: *costs == "spin", Seed: c.Seed}
		if *costs != "sleep" && *costs != "spin" {
			return instrument.Options{}, fmt.Errorf("-cost %q: expected sleep or spin", *costs)
		}
		if cfg.Bench == "random" {
			cfg.P = 1 // one-packet messages, as the paper's Random
			c.Flags.Visit(func(f *flag.Flag) {
				if f.Name == "p" {
					cfg.P = *p
				}
			})
		}
		if err := cfg.check(); err != nil {
			return instrument.Options{}, err
		}
		extra := map[string]string{"bench": cfg.Bench, "n": strconv.Itoa(cfg.N), "p": strconv.Itoa(cfg.P),
			"g": strconv.Itoa(cfg.G), "e": strconv.FormatFloat(cfg.E, 'g', -1, 64), "cost": *costs}
		return instrument.Options{Program: "lyon-" + cfg.Bench, States: states, Occupancy: true, Extra: extra}, nil
	}, func(rec *instrument.Recorder) error {
		work, err := Run(rec, cfg)
		if err == nil {
			total := 0
			for _, w := range work {
				total += w
			}
			fmt.Printf("%s: %d nodes computed %d work units\n", cfg.Bench, cfg.N, total)
		}
		return err
	})
}
