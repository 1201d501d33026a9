package ocs

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/trace"
)

// conns is a shorthand for connections (src, dst, bytes) with one message each.
func conns(v ...[3]int64) []Connection {
	var out []Connection
	for _, c := range v {
		out = append(out, Connection{Src: int32(c[0]), Dst: int32(c[1]), Bytes: c[2], Messages: 1})
	}
	return out
}

func pairs(cs []Connection) [][2]int32 {
	var out [][2]int32
	for _, c := range cs {
		out = append(out, [2]int32{c.Src, c.Dst})
	}
	return out
}

func TestRank(t *testing.T) {
	cs := conns([3]int64{1, 2, 10}, [3]int64{0, 2, 90}, [3]int64{2, 1, 80}, [3]int64{0, 1, 100}, [3]int64{2, 0, 80})
	for _, tc := range []struct {
		s    Strategy
		want [][2]int32
	}{
		{Best, [][2]int32{{0, 1}, {0, 2}, {2, 0}, {2, 1}, {1, 2}}}, // ties (80) by (src, dst)
		{Worst, [][2]int32{{1, 2}, {2, 1}, {2, 0}, {0, 2}, {0, 1}}},
		{Indexed, [][2]int32{{2, 0}, {0, 1}, {2, 1}, {0, 2}, {1, 2}}},
	} {
		got, err := Rank(cs, tc.s)
		if err != nil || !slices.Equal(pairs(got), tc.want) {
			t.Errorf("%v: %v %v, want %v", tc.s, pairs(got), err, tc.want)
		}
	}
	if _, err := Rank(cs, Runtime); err == nil {
		t.Error("Rank(runtime) succeeded")
	}
	if pairs(cs)[0] != [2]int32{1, 2} {
		t.Error("Rank changed its input")
	}
}

func TestStrategyNames(t *testing.T) {
	for _, s := range Strategies {
		got, err := ParseStrategy(" " + s.String() + " ")
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%v) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseStrategy("random"); err == nil {
		t.Error("ParseStrategy(random) succeeded")
	}
	if !Best.Static() || !Worst.Static() || !Indexed.Static() || Runtime.Static() {
		t.Error("Static")
	}
}

// TestAssignByHand: the conflicts are resolved in ranking order, plane by
// plane.
//
//	best    0→1 (100), 0→2 (90), 2→1 (80), 1→2 (10)
//	        plane 0: 0→1; 0→2 conflicts (0 sends on 0→1); 2→1 conflicts
//	        (1 receives on 0→1); 1→2. plane 1: 0→2, 2→1. 2 planes.
//	worst   1→2, 2→1, 0→2, 0→1
//	        plane 0: 1→2, 2→1; 0→2 conflicts (2 receives), 0→1 conflicts
//	        (1 receives). plane 1: 0→2; 0→1 conflicts (0 sends). plane 2: 0→1.
//	indexed 0→1, 2→1, 0→2, 1→2 (by destination, then source)
//	        plane 0: 0→1, 1→2. plane 1: 2→1, 0→2.
func TestAssignByHand(t *testing.T) {
	cs := conns([3]int64{0, 1, 100}, [3]int64{0, 2, 90}, [3]int64{2, 1, 80}, [3]int64{1, 2, 10})
	for _, tc := range []struct {
		s     Strategy
		want  [][][2]int32
		plane map[[2]int32]int // with one plane
	}{
		{Best, [][][2]int32{{{0, 1}, {1, 2}}, {{0, 2}, {2, 1}}}, map[[2]int32]int{{0, 1}: 0, {1, 2}: 0, {0, 2}: -1, {2, 1}: -1}},
		{Worst, [][][2]int32{{{1, 2}, {2, 1}}, {{0, 2}}, {{0, 1}}}, map[[2]int32]int{{0, 1}: -1, {1, 2}: 0, {0, 2}: -1, {2, 1}: 0}},
		{Indexed, [][][2]int32{{{0, 1}, {1, 2}}, {{2, 1}, {0, 2}}}, map[[2]int32]int{{0, 1}: 0, {1, 2}: 0, {0, 2}: -1, {2, 1}: -1}},
	} {
		ranked, _ := Rank(cs, tc.s)
		a, err := Assign(3, ranked, 11)
		if err != nil {
			t.Fatal(err)
		}
		var got [][][2]int32
		for _, pl := range a.Circuits() {
			got = append(got, pairs(pl))
		}
		if a.Used != len(tc.want) || !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("%v: used %d, planes %v, want %v", tc.s, a.Used, got, tc.want)
		}
		one, _ := Assign(3, ranked, 1)
		for p, k := range tc.plane {
			if g := one.PlaneOf(p[0], p[1]); g != k {
				t.Errorf("%v, 1 plane: %v on plane %d, want %d", tc.s, p, g, k)
			}
		}
	}
	if _, err := Assign(3, conns([3]int64{1, 1, 5}), 1); err == nil {
		t.Error("a self connection was assigned")
	}
	if _, err := Assign(3, conns([3]int64{0, 3, 5}), 1); err == nil {
		t.Error("a connection outside the nodes was assigned")
	}
}

// TestPlanesNeeded: a ring is one permutation (1 plane); all-to-all among n
// nodes needs at least n−1 planes (every node sends to n−1 others). The
// greedy plane filling reaches n−1 when n is a power of two (it finds the
// permutations i → i xor k; by hand for n = 4: {01,10,23,32},
// {02,13,20,31}, {03,12,21,30}) and otherwise needs 2^⌈log2 n⌉ − 1 (by hand
// for n = 3: {01,10}, {02,20}, {12,21}: 0→2 conflicts with 0→1 on the
// first plane, 1→2 with 1→0, 2→0 with 1→0 and 2→1 with 0→1).
func TestPlanesNeeded(t *testing.T) {
	for _, n := range []int{2, 5, 16} {
		var ring []Connection
		for i := range n {
			ring = append(ring, Connection{Src: int32(i), Dst: int32((i + 1) % n), Bytes: int64(i + 1), Messages: 1})
		}
		for _, s := range []Strategy{Best, Worst, Indexed} {
			r, _ := Rank(ring, s)
			if k, err := PlanesNeeded(n, r); err != nil || k != 1 {
				t.Errorf("ring of %d, %v: %d planes, %v", n, s, k, err)
			}
		}
	}
	for _, n := range []int{2, 3, 4, 5, 6, 7, 8, 12, 16} {
		want := 1
		for want < n {
			want *= 2
		}
		want--
		var all []Connection
		for i := range n {
			for j := range n {
				if i != j {
					all = append(all, Connection{Src: int32(i), Dst: int32(j), Bytes: 1, Messages: 1})
				}
			}
		}
		for _, s := range []Strategy{Best, Indexed} {
			r, _ := Rank(all, s)
			k, _ := PlanesNeeded(n, r)
			if k != want {
				t.Errorf("all-to-all among %d, %v: %d planes", n, s, k)
			}
			a, _ := Assign(n, r, k)
			for _, pl := range a.Circuits() {
				out, in := map[int32]bool{}, map[int32]bool{}
				for _, c := range pl {
					if out[c.Src] || in[c.Dst] {
						t.Fatalf("all-to-all among %d: plane %v is not a permutation", n, pairs(pl))
					}
					out[c.Src], in[c.Dst] = true, true
				}
			}
		}
	}
	r, _ := Rank(conns([3]int64{0, 1, 1}, [3]int64{1, 0, 1}, [3]int64{0, 2, 1}, [3]int64{2, 0, 1}, [3]int64{1, 2, 1}, [3]int64{2, 1, 1},
		[3]int64{0, 3, 1}, [3]int64{3, 0, 1}, [3]int64{1, 3, 1}, [3]int64{3, 1, 1}, [3]int64{2, 3, 1}, [3]int64{3, 2, 1}), Best)
	a, _ := Assign(4, r, 3)
	var got [][][2]int32
	for _, pl := range a.Circuits() {
		got = append(got, pairs(pl))
	}
	want := [][][2]int32{{{0, 1}, {1, 0}, {2, 3}, {3, 2}}, {{0, 2}, {1, 3}, {2, 0}, {3, 1}}, {{0, 3}, {1, 2}, {2, 1}, {3, 0}}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("all-to-all among 4: %v", got)
	}
}

// testParams: 10 bytes/ns optical (1000 B in 100 ns), 1 byte/ns electronic
// (1000 B in 1000 ns) with 50 ns latency, 500 ns switching.
var testParams = Params{OpticalBW: 10e9, SwitchLatency: 500e-9, ElecBW: 1e9, ElecLatency: 50e-9, Threshold: 1000}

// build makes a workload of a trace given as records of n processes.
func build(t testing.TB, n int, recs ...trace.Record) *Workload {
	t.Helper()
	m := &trace.Memory{}
	m.H.Runs = []trace.RunInfo{{ID: 0, Procs: int32(n)}}
	m.Records = recs
	m.Sort()
	w, err := Load(context.Background(), &m.H, m.Reader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func simulate(t *testing.T, w *Workload, s Strategy, planes int, p Params) *Result {
	t.Helper()
	r, err := w.Simulate(s, planes, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// near compares seconds with nanoseconds computed by hand.
func near(sec, ns float64) bool { return math.Abs(sec*1e9-ns) < 1e-6 }

// TestOneMessage: process 0 computes 100 ns and sends 1000 B to process 1
// (blocking); process 1 waits in a blocking receive posted at 0 and
// computes 100 ns after it (its original receive ended at 1500, its last
// record is at 1600).
//
//	electronic: leaves 100+1000 = 1100, arrives 1150; 1 ends 1150+100 = 1250;
//	            delay 1050.
//	1 plane (best, worst, indexed: the only connection): leaves 100+100 =
//	            200 = arrival; 1 ends 300; delay 100.
//	runtime, threshold 1000: set up 100..600, leaves 700; 1 ends 800,
//	            delay 600. threshold 1001: electronic. Switching 2000 ns:
//	            the circuit would deliver at 2200, the electronic network
//	            at 1150: electronic (the circuit is still set up).
func TestOneMessage(t *testing.T) {
	w := build(t, 2,
		trace.Send(0, 0, 100, 100, 1, 1000, 0, 0),
		trace.Recv(0, 1, 0, 1500, 0, 1000, 0, 0),
		trace.Event(0, 1, 1600, 0, 0))
	for _, tc := range []struct {
		s           Strategy
		planes      int
		threshold   int64
		time, delay float64
		frac        float64
		circuits    int64
	}{
		{Best, 0, 1000, 1250, 1050, 0, 0},
		{Best, 1, 1000, 300, 100, 1, 1},
		{Worst, 1, 1000, 300, 100, 1, 1},
		{Indexed, 11, 1000, 300, 100, 1, 1},
		{Runtime, 1, 1000, 800, 600, 1, 1},
		{Runtime, 1, 1001, 1250, 1050, 0, 0},
		{Runtime, 0, 0, 1250, 1050, 0, 0},
		{Runtime, 1, -2000, 1250, 1050, 0, 1},
	} {
		p := testParams
		p.Threshold = tc.threshold
		if tc.threshold < 0 {
			p.Threshold, p.SwitchLatency = 1000, -float64(tc.threshold)*1e-9
		}
		r := simulate(t, w, tc.s, tc.planes, p)
		if !near(r.Time, tc.time) || !near(r.Delay, tc.delay) || r.CircuitFraction != tc.frac || r.Circuits != tc.circuits || r.Messages != 1 || r.Bytes != 1000 {
			t.Errorf("%v, %d planes, threshold %d: %+v, want time %g ns, delay %g ns", tc.s, tc.planes, tc.threshold, r, tc.time, tc.delay)
		}
	}
}

// TestRuntimeLFU: four nodes, two planes, everything to node 1.
//
//	0→1 at 0: plane 0 is free: circuit A ready 500, leaves 600.
//	0→1 at 600 (0's second blocking send): on A, leaves 700.
//	2→1 at 1000: plane 0 conflicts (1 receives on A), plane 1 is free:
//	    circuit B ready 1500, leaves 1600.
//	3→1 at 3000: both planes conflict; A carried 2 messages, B 1: B is
//	    replaced, ready max(3000, 1600)+500 = 3500, leaves 3600.
//	0→1 at 700+5000 = 5700 (0 computed 5000 ns): on A, leaves 5800.
//
// Node 1 receives in that order: the run ends at 5800; delays 600, 100,
// 600, 600, 100: mean 400. Had A been replaced, the last message would set
// up a circuit again and end at 6300.
func TestRuntimeLFU(t *testing.T) {
	w := build(t, 4,
		trace.Send(0, 0, 0, 0, 1, 1000, 0, 0), trace.Send(0, 0, 0, 0, 1, 1000, 0, 0), trace.Send(0, 0, 5000, 5000, 1, 1000, 0, 0),
		trace.Send(0, 2, 1000, 1000, 1, 1000, 0, 0),
		trace.Send(0, 3, 3000, 3000, 1, 1000, 0, 0),
		trace.Recv(0, 1, 0, 0, 0, 1000, 0, 0), trace.Recv(0, 1, 0, 0, 0, 1000, 0, 0), trace.Recv(0, 1, 0, 0, 2, 1000, 0, 0),
		trace.Recv(0, 1, 0, 0, 3, 1000, 0, 0), trace.Recv(0, 1, 0, 0, 0, 1000, 0, 0))
	r := simulate(t, w, Runtime, 2, testParams)
	if !near(r.Time, 5800) || !near(r.Delay, 400) || r.Circuits != 3 || r.Evictions != 1 || r.CircuitFraction != 1 || r.PlanesUsed != 2 || r.Messages != 5 {
		t.Errorf("runtime, 2 planes: %+v", r)
	}
	// One plane: 2→1 at 1000 replaces A (ready max(1000,700)+500, leaves
	// 1600); 3→1 at 3000 replaces it (leaves 3600); 0→1 at 5700 replaces
	// that (leaves 6300).
	r = simulate(t, w, Runtime, 1, testParams)
	if !near(r.Time, 6300) || r.Circuits != 4 || r.Evictions != 3 {
		t.Errorf("runtime, 1 plane: %+v", r)
	}
}

// TestNonBlocking: process 0 posts a non-blocking send of 1000 B at 0,
// computes (an event at 300), and completes it at 2000 in the trace; its
// last record is at 2500. Process 1 computes until 100 (an event), then
// completes a non-blocking receive at 1800 and ends at 1900.
//
// Electronic: the message leaves at 1000 and arrives at 1050. Process 0
// computes to 300, waits until 1000 and computes the 500 ns after its
// completion: 1500. Process 1 computes to 100, waits until 1050, computes
// 100: 1150. The run ends at 1500.
func TestNonBlocking(t *testing.T) {
	isend := trace.Send(0, 0, 0, 2000, 1, 1000, 0, 0)
	isend.Seq = 1
	irecv := trace.Recv(0, 1, 0, 1800, 0, 1000, 0, 0)
	irecv.Seq = 1
	w := build(t, 2, isend, trace.Event(0, 0, 300, 0, 0), trace.Event(0, 0, 2500, 0, 0),
		irecv, trace.Event(0, 1, 100, 0, 0), trace.Event(0, 1, 1900, 0, 0))
	r := simulate(t, w, Best, 0, testParams)
	if !near(r.Time, 1500) || !near(r.Delay, 1050) {
		t.Errorf("electronic: %+v", r)
	}
	// On a circuit the message arrives at 100: process 0 ends 300+500,
	// process 1 at 100+100.
	if r := simulate(t, w, Best, 1, testParams); !near(r.Time, 800) || !near(r.Delay, 100) {
		t.Errorf("1 plane: %+v", r)
	}
}

// TestCollective: a broadcast of 1000 B from process 0 to 1 and 2 (linear):
// electronic, both leave 0's output port one after the other: 0→1 leaves at
// 1000 (arrives 1050), 0→2 at 2000 (arrives 2050). Process 0 returns when
// both have left (2000). The run ends at 2050; mean delay 1550.
func TestCollective(t *testing.T) {
	var recs []trace.Record
	for p := int32(0); p < 3; p++ {
		recs = append(recs, trace.Coll(0, p, 0, 0, trace.OpBcast, 0, 1000, 0))
	}
	w := build(t, 3, recs...)
	if w.Messages() != 2 {
		t.Fatalf("%d messages", w.Messages())
	}
	if r := simulate(t, w, Best, 0, testParams); !near(r.Time, 2050) || !near(r.Delay, 1550) {
		t.Errorf("electronic: %+v", r)
	}
	// One plane holds both circuits? No: 0 has one outgoing circuit per
	// plane. Best (ties by destination): 0→1 on plane 0, leaves at 100;
	// 0→2 electronic, leaves 1000, arrives 1050.
	if r := simulate(t, w, Best, 1, testParams); !near(r.Time, 1050) || !near(r.Delay, 575) || r.CircuitMessages != 1 {
		t.Errorf("1 plane: %+v", r)
	}
	if r := simulate(t, w, Best, 2, testParams); !near(r.Time, 100) || r.CircuitMessages != 2 {
		t.Errorf("2 planes: %+v", r)
	}
}

// TestBadInput: unmatched sends still load the network, unmatched receives
// do not wait, peers outside the run are counted, and a cycle of waits the
// trace's matching makes impossible is broken rather than hanging.
func TestBadInput(t *testing.T) {
	w := build(t, 2,
		trace.Send(0, 0, 0, 0, 1, 1000, 7, 0), // no receive
		trace.Recv(0, 1, 0, 0, 0, 10, 9, 0),   // no send
		trace.Send(0, 1, 10, 10, 5, 10, 0, 0), // peer outside
		trace.Recv(0, 1, 20, 20, 9, 10, 0, 0), // peer outside
	)
	p := w.Problems
	if p.UnmatchedSends != 1 || p.UnmatchedRecvs != 1 || p.BadPeer != 2 {
		t.Errorf("problems %+v", p)
	}
	if r := simulate(t, w, Best, 0, testParams); r.Messages != 1 || !near(r.Time, 1000) || r.BrokenWaits != 0 {
		t.Errorf("%+v", r)
	}
	// Each process receives before it sends: inconsistent.
	w = build(t, 2,
		trace.Recv(0, 0, 0, 10, 1, 1000, 0, 0), trace.Send(0, 0, 20, 20, 1, 1000, 0, 0),
		trace.Recv(0, 1, 0, 10, 0, 1000, 0, 0), trace.Send(0, 1, 20, 20, 0, 1000, 0, 0))
	if r := simulate(t, w, Best, 0, testParams); r.BrokenWaits != 1 || r.Messages != 2 {
		t.Errorf("cycle: %+v", r)
	}
	if _, err := w.Simulate(Best, -1, testParams); err == nil {
		t.Error("-1 planes accepted")
	}
	bad := testParams
	bad.ElecBW = 0
	if _, err := w.Simulate(Best, 1, bad); err == nil {
		t.Error("electronic bandwidth 0 accepted")
	}
	m := &trace.Memory{}
	m.H.Runs = []trace.RunInfo{{ID: 0, Procs: 2}}
	m.Records = []trace.Record{trace.Send(0, 4, 0, 0, 1, 1, 0, 0)}
	if _, err := Load(context.Background(), &m.H, m.Reader(), Options{}); err == nil {
		t.Error("a process outside the run was accepted")
	}
}

// halo3D is an MG-like trace: procs on a px×py×pz periodic grid exchange,
// for iters iterations and levels grid levels, faces with their
// neighbours along x, y and z in both directions (give3 +1, give3 −1, then
// the two receives, axis after axis, as comm3), at distance 2^level; faces
// shrink by 4 per level and differ per axis (x faces the largest). Compute
// between levels is 20 µs.
func halo3D(px, py, pz, iters, levels int) *trace.Memory {
	n := px * py * pz
	m := &trace.Memory{}
	m.H.Runs = []trace.RunInfo{{ID: 0, Procs: int32(n)}}
	m.H.Regions = []trace.RegionDef{{ID: 0, Kind: trace.RegionLoop, Label: "mg3P", Parent: -1}, {ID: 1, Kind: trace.RegionLoop, Label: "comm3", Parent: 0}}
	dims := [3]int{px, py, pz}
	face := [3]int64{64 << 10, 32 << 10, 16 << 10}
	for p := 0; p < n; p++ {
		c := [3]int{p % px, p / px % py, p / (px * py)}
		rank := func(axis, d int) int32 {
			q := c
			q[axis] = ((q[axis]+d)%dims[axis] + dims[axis]) % dims[axis]
			return int32(q[0] + q[1]*px + q[2]*px*py)
		}
		t := int64(0)
		for it := 0; it < iters; it++ {
			m.Records = append(m.Records, trace.Enter(0, int32(p), t, 0))
			for l := 0; l < levels; l++ {
				t += 20000
				m.Records = append(m.Records, trace.Enter(0, int32(p), t, 1))
				d := 1 << l
				for axis := 0; axis < 3; axis++ {
					if d >= dims[axis] {
						continue
					}
					b := face[axis] >> (2 * l)
					for _, dir := range []int{+1, -1} {
						t += 100
						m.Records = append(m.Records, trace.Send(0, int32(p), t, t, rank(axis, dir*d), b, int32(axis*2+(dir+1)/2), 0))
					}
					for _, dir := range []int{-1, +1} {
						t += 100
						m.Records = append(m.Records, trace.Recv(0, int32(p), t, t, rank(axis, dir*d), b, int32(axis*2+(1-dir)/2), 0))
					}
				}
				t += 100
				m.Records = append(m.Records, trace.Exit(0, int32(p), t, 1))
			}
			t += 100
			m.Records = append(m.Records, trace.Exit(0, int32(p), t, 0))
		}
	}
	m.Sort()
	return m
}

func loadHalo(t testing.TB, px, py, pz, iters, levels int) *Workload {
	t.Helper()
	m := halo3D(px, py, pz, iters, levels)
	w, err := Load(context.Background(), &m.H, m.Reader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := w.Problems; p != (Problems{}) {
		t.Fatalf("halo trace problems: %+v", p)
	}
	return w
}

// TestHalo3D: on the MG-like 4×4×4 trace (degree 9: 6 neighbours at
// distance 1, 3 at distance 2), the static strategies need 9 planes to put
// every connection on a circuit; more planes never make best slower; and
// best ≤ indexed ≤ worst at every number of planes, strictly somewhere.
func TestHalo3D(t *testing.T) {
	w := loadHalo(t, 4, 4, 4, 3, 2)
	root := w.Comm.Nodes[0].Aggregate
	if root.Degree != 9 || w.Procs != 64 {
		t.Fatalf("degree %d, %d procs", root.Degree, w.Procs)
	}
	cs := Connections(w.Comm.Nodes[0].AggregateMatrix())
	if len(cs) != 64*9 {
		t.Fatalf("%d connections", len(cs))
	}
	for _, s := range []Strategy{Best, Worst, Indexed} {
		r, _ := Rank(cs, s)
		k, _ := PlanesNeeded(64, r)
		if k < 9 || (s == Best && k != 9) {
			t.Errorf("%v needs %d planes", s, k)
		}
	}
	p := DefaultParams()
	c, err := w.Sweep(context.Background(), []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Strategies, p)
	if err != nil {
		t.Fatal(err)
	}
	best, worst, indexed, runtime := c.Results[0], c.Results[1], c.Results[2], c.Results[3]
	strict := false
	for j, k := range c.Planes {
		b, wo, ix := best[j], worst[j], indexed[j]
		t.Logf("%2d planes: best %.3f ms %.1f µs %.2f | worst %.3f ms %.1f µs %.2f | indexed %.3f ms %.1f µs %.2f | runtime %.3f ms %.1f µs %.2f",
			k, b.Time*1e3, b.Delay*1e6, b.CircuitFraction, wo.Time*1e3, wo.Delay*1e6, wo.CircuitFraction,
			ix.Time*1e3, ix.Delay*1e6, ix.CircuitFraction, runtime[j].Time*1e3, runtime[j].Delay*1e6, runtime[j].CircuitFraction)
		if b.Time > ix.Time || ix.Time > wo.Time || b.Delay > ix.Delay || ix.Delay > wo.Delay {
			t.Errorf("%d planes: best %g/%g, indexed %g/%g, worst %g/%g", k, b.Time, b.Delay, ix.Time, ix.Delay, wo.Time, wo.Delay)
		}
		if b.CircuitFraction < ix.CircuitFraction || ix.CircuitFraction < wo.CircuitFraction {
			t.Errorf("%d planes: circuit fractions %g %g %g", k, b.CircuitFraction, ix.CircuitFraction, wo.CircuitFraction)
		}
		strict = strict || (b.Time < ix.Time && ix.Time < wo.Time)
		if j > 0 && (b.Time > best[j-1].Time || b.Delay > best[j-1].Delay) {
			t.Errorf("best got slower from %d to %d planes: %g → %g s", c.Planes[j-1], k, best[j-1].Time, b.Time)
		}
		if b.Time >= c.Electronic.Time {
			t.Errorf("best with %d planes (%g s) is not faster than electronic only (%g s)", k, b.Time, c.Electronic.Time)
		}
	}
	if !strict {
		t.Error("best < indexed < worst at no number of planes")
	}
	// With 9 planes or more every connection has a circuit: the static
	// strategies coincide and all bytes go optical.
	for j := 8; j < 11; j++ {
		if best[j].CircuitFraction != 1 || worst[j].CircuitFraction != 1 || best[j].Time != worst[j].Time {
			t.Errorf("%d planes: %+v %+v", c.Planes[j], best[j], worst[j])
		}
	}
}

// TestStructureRanking: ranking from the matrix of one structure (the
// paper's point: plan the circuits from a loop's matrix) runs through
// SimulateRanked and gives what Simulate gives for the same ranking.
func TestStructureRanking(t *testing.T) {
	w := loadHalo(t, 2, 2, 2, 2, 1)
	ids := w.Comm.Find("comm3")
	m, err := w.Comm.Select(ids, true)
	if err != nil || len(ids) != 1 {
		t.Fatal(ids, err)
	}
	r, _ := Rank(Connections(m), Best)
	a, err := w.SimulateRanked(Best, r, 2, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	b := simulate(t, w, Best, 2, DefaultParams())
	if *a != *b {
		t.Errorf("ranked from comm3: %+v, from the program: %+v", a, b)
	}
	var _ = comm.RootName
}
