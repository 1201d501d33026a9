package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// record runs cfg with occupancy counters and loads the trace.
func record(t *testing.T, cfg Config) (*tracecheck.Trace, []int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), cfg.Bench+".pst")
	rec, err := instrument.Start(instrument.Options{Path: path, States: states, Occupancy: true})
	if err != nil {
		t.Fatal(err)
	}
	work, err := Run(rec, cfg)
	if err != nil {
		rec.Abort()
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return tracecheck.Load(t, path), work
}

// nodeCounts are what one node did, from its records.
type nodeCounts struct {
	sent, recvd, sentPackets, recvdPackets int
	occ                                    [4]float64 // occupancy counters per mode (ns)
	first, end                             int64
}

func counts(t *testing.T, tr *tracecheck.Trace) map[int32]*nodeCounts {
	t.Helper()
	counterName := map[int32]string{}
	for _, d := range tr.Header.Counters {
		counterName[d.ID] = d.Name
	}
	out := map[int32]*nodeCounts{}
	for p, rs := range tr.Procs {
		c := &nodeCounts{first: -1}
		out[p] = c
		for _, r := range rs {
			switch r.Kind {
			case trace.KindState:
				if c.first < 0 {
					c.first = r.T
				}
			case trace.KindSend:
				c.sent++
				c.sentPackets += int(r.Value / packetBytes)
			case trace.KindRecv:
				c.recvd++
				c.recvdPackets += int(r.Value / packetBytes)
			case trace.KindCounter:
				name, ok := strings.CutPrefix(counterName[r.ID], "occupancy ")
				if !ok {
					continue
				}
				k := slices.IndexFunc(states, func(d trace.StateDef) bool { return d.Name == name })
				if k < 0 {
					t.Fatalf("counter %q of no mode", name)
				}
				c.occ[k] += r.Float()
				c.end = max(c.end, r.T)
			}
		}
	}
	return out
}

// checkCosts checks what the occupancy counters must hold whatever the
// machine's load: every node's modes sum to its lifetime, and each mode
// holds at least the costs the node spent in it (a sleep never ends early).
func checkCosts(t *testing.T, cfg Config, c map[int32]*nodeCounts, work []int) {
	t.Helper()
	for p, nc := range c {
		var sum float64
		for _, v := range nc.occ {
			sum += v
		}
		if life := float64(nc.end - nc.first); sum < life-1000 || sum > life+1000 {
			t.Errorf("node %d: modes sum to %.0f ns, its life is %.0f ns", p, sum, life)
		}
		wantU := time.Duration(work[p]) * cfg.Unit
		wantS := time.Duration(nc.sent)*cfg.Overhead + time.Duration(nc.sentPackets)*cfg.Send
		wantI := time.Duration(nc.recvd)*cfg.Overhead + time.Duration(nc.recvdPackets)*cfg.Service
		for k, want := range map[int]time.Duration{stateU: wantU, stateS: wantS, stateI: wantI} {
			if nc.occ[k] < float64(want) {
				t.Errorf("node %d: %s = %.0f ns, less than the %v it spent", p, states[k].Name, nc.occ[k], want)
			}
		}
	}
}

func small(bench string) Config {
	c := DefaultConfig()
	c.Bench, c.Seed = bench, 7
	c.Unit, c.Send, c.Service, c.Overhead = time.Microsecond, 2*time.Microsecond, time.Microsecond, 5*time.Microsecond
	return c
}

func TestRing(t *testing.T) {
	cfg := small("ring")
	cfg.N, cfg.P, cfg.G, cfg.Steps = 5, 3, 4, 3
	tr, work := record(t, cfg)
	c := counts(t, tr)
	if len(c) != 5 {
		t.Fatalf("%d nodes", len(c))
	}
	for p, nc := range c {
		// n−1 shifts per step, p packets each, then n·p·g units.
		if nc.sent != 12 || nc.recvd != 12 || nc.sentPackets != 36 || work[p] != 3*5*3*4 {
			t.Errorf("node %d: sent %d (%d packets), received %d, work %d; want 12, 36, 12, 180", p, nc.sent, nc.sentPackets, nc.recvd, work[p])
		}
	}
	if n := tr.CheckMessages(t); n != 60 {
		t.Errorf("%d messages matched, want 60", n)
	}
	checkCosts(t, cfg, c, work)
}

func TestMesh(t *testing.T) {
	if r, c := Grid(12); r != 3 || c != 4 {
		t.Errorf("Grid(12) = %d×%d, want 3×4", r, c)
	}
	if r, c := Grid(7); r != 1 || c != 7 {
		t.Errorf("Grid(7) = %d×%d, want 1×7", r, c)
	}
	// 3×4: node 5 (row 1, column 1) has 4 neighbours, node 0 two.
	if nb := neighbours(5, 12); !slices.Equal(nb, []int{1, 9, 4, 6}) {
		t.Errorf("neighbours of 5: %v", nb)
	}
	cfg := small("mesh")
	cfg.N, cfg.P, cfg.G, cfg.Steps = 12, 2, 5, 4
	tr, work := record(t, cfg)
	c := counts(t, tr)
	edges := 0
	for p, nc := range c {
		deg := len(neighbours(int(p), 12))
		edges += deg
		if nc.sent != 4*deg || nc.recvd != 4*deg || nc.sentPackets != 8*deg || work[p] != 4*2*5 {
			t.Errorf("node %d: sent %d, received %d, work %d; want %d, %d, 40", p, nc.sent, nc.recvd, work[p], 4*deg, 4*deg)
		}
	}
	// 3×4 grid: 17 edges, each used both ways every step.
	if edges != 34 {
		t.Errorf("%d directed edges, want 34", edges)
	}
	if n := tr.CheckMessages(t); n != 4*34 {
		t.Errorf("%d messages matched, want %d", n, 4*34)
	}
	checkCosts(t, cfg, c, work)
}

func TestRandom(t *testing.T) {
	cfg := small("random")
	cfg.N, cfg.P, cfg.G, cfg.E, cfg.Tasks, cfg.Chunk = 6, 1, 200, 2000, 30, 20
	tr, work := record(t, cfg)
	c := counts(t, tr)
	// The tasks' sizes are seeded: their sum is the work done, whoever
	// did it.
	total := 0
	for _, w := range work {
		total += w
	}
	cfg2 := cfg
	_, work2 := record(t, cfg2)
	total2 := 0
	for _, w := range work2 {
		total2 += w
	}
	if total != total2 || total < 30*100 || total > 30*301 {
		t.Errorf("work %d and %d: want equal, between 3000 and 9030", total, total2)
	}
	sent, recvd := 0, 0
	for _, nc := range c {
		sent += nc.sent
		recvd += nc.recvd
	}
	// e = 2000 per 100,000 units, chunks of 20: a task leaves after a
	// chunk with probability 0.4, so migrations are many.
	if sent != recvd || sent < 10 {
		t.Errorf("%d migrations sent, %d received; want equal and at least 10", sent, recvd)
	}
	if n := tr.CheckMessages(t); n != sent {
		t.Errorf("%d messages matched, want %d", n, sent)
	}
	checkCosts(t, cfg, c, work)
	// No exits: no messages at all.
	cfg.E = 0
	tr, _ = record(t, cfg)
	for p, nc := range counts(t, tr) {
		if nc.sent != 0 || nc.recvd != 0 {
			t.Errorf("e = 0: node %d sent %d, received %d", p, nc.sent, nc.recvd)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.Bench = "tree" },
		func(c *Config) { c.N = 1 },
		func(c *Config) { c.P = 0 },
		func(c *Config) { c.E = 1e6 },
		func(c *Config) { c.Unit = -1 },
	} {
		c := small("ring")
		mod(&c)
		if _, err := Run(nil, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	// Unrecorded runs work (nil recorder).
	c := small("mesh")
	c.N, c.Steps = 4, 1
	if w, err := Run(nil, c); err != nil || len(w) != 4 || w[0] != c.P*c.G {
		t.Errorf("unrecorded mesh: %v, %v", w, err)
	}
}
