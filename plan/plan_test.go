package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func wantNear(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

func nodes(times ...float64) []Node {
	var out []Node
	for i, tt := range times {
		out = append(out, Node{Name: fmt.Sprintf("n%d", i), TaskTime: tt})
	}
	return out
}

// twoClusters is the system of testdata/plan/two-clusters.yaml and of the
// emulated run (examples/multicluster).
func twoClusters() System {
	return System{
		Task: Task{Size: 8192, Result: 1024},
		Clusters: []Cluster{
			{Name: "local", Master: true, LAN: 1 << 20, Nodes: nodes(0.05, 0.1)},
			{Name: "remote", LAN: 1 << 20, InetIn: 80 * 1024, InetOut: 80 * 1024, Nodes: nodes(0.125, 0.25, 0.5)},
		},
	}
}

// TestTwoClustersByHand checks equations (4.8)–(4.9) on the two-cluster
// system against the hand computation below.
func TestTwoClustersByHand(t *testing.T) {
	// S_Task = 8 KiB = 8192 B, S_Result = 1 KiB = 1024 B,
	// S_Comm = 8192 + 1024 = 9216 B.
	//
	// local (master's cluster), LAN 1 MiB/s = 1048576 B/s:
	//   Perf_Avail = 1/0.05 = 20, 1/0.1 = 10 tasks/s
	//   CPerf_Avail (4.9) = 20 + 10 = 30
	//   LAN term = 1048576 / 9216 = 113.777... tasks/s
	//   Perf_Ste = min(30, 113.78) = 30 (compute), efficiency 30/30 = 1
	//
	// remote, LAN 1 MiB/s, internet in and out 80 KiB/s = 81920 B/s:
	//   Perf_Avail = 1/0.125 = 8, 1/0.25 = 4, 1/0.5 = 2; CPerf_Avail = 14
	//   LAN term      = 1048576/9216     = 113.78
	//   inet in term  = 1·81920/(1·8192) = 10
	//   inet out term = 1·81920/(1·1024) = 80
	//   Perf_Ste (4.8) = min(14, 113.78, 10, 80) = 10 (inet_in)
	//   efficiency = 10/14 = 0.714285714...
	//   contributions 8·10/14 = 5.7142857, 4·10/14 = 2.8571429, 2·10/14 = 1.4285714
	//
	// system, all nodes: Perf_Ste = 30 + 10 = 40, CPerf_Avail = 44,
	// efficiency 40/44 = 0.909090...
	ev, err := Evaluate(twoClusters(), nil)
	if err != nil {
		t.Fatal(err)
	}
	l, r := ev.Clusters[0], ev.Clusters[1]
	wantNear(t, "local CPerf_Avail", l.Bounds.Compute, 30)
	wantNear(t, "local LAN term", l.Bounds.LAN, 1048576.0/9216)
	if !math.IsInf(l.Bounds.InetIn, 1) || !math.IsInf(l.Bounds.InetOut, 1) {
		t.Errorf("the master's cluster has internet terms %v %v", l.Bounds.InetIn, l.Bounds.InetOut)
	}
	wantNear(t, "local Perf_Ste", l.PerfSte, 30)
	wantNear(t, "local efficiency", l.Efficiency, 1)
	if l.Limit != "compute" {
		t.Errorf("local limit %q", l.Limit)
	}
	wantNear(t, "remote CPerf_Avail", r.Bounds.Compute, 14)
	wantNear(t, "remote inet in term", r.Bounds.InetIn, 10)
	wantNear(t, "remote inet out term", r.Bounds.InetOut, 80)
	wantNear(t, "remote Perf_Ste", r.PerfSte, 10)
	wantNear(t, "remote efficiency", r.Efficiency, 10.0/14)
	if r.Limit != "inet_in" {
		t.Errorf("remote limit %q", r.Limit)
	}
	for i, want := range []float64{80.0 / 14, 40.0 / 14, 20.0 / 14} {
		wantNear(t, "remote contribution "+r.Nodes[i].Name, r.Nodes[i].Contribution, want)
	}
	wantNear(t, "system Perf_Ste", ev.PerfSte, 40)
	wantNear(t, "system CPerf_Avail", ev.CPerfAvail, 44)
	wantNear(t, "system efficiency", ev.Efficiency, 40.0/44)

	// Choose, threshold 0.9: local keeps both (efficiency 1).
	// remote: B = 10, a subset meets 0.9 when its sum ≤ 10/0.9 = 11.11:
	//   {8,4,2} = 14 ✗   {8,4} = 12 ✗   {8,2} = 10 ✓ Perf_Ste 10, eff 1
	//   {4,2} = 6 (Perf_Ste 6)   {8} = 8   ...
	// best: {8,2} (nodes 0 and 2): Perf_Ste 10, efficiency 1.
	// system chosen: 30 + 10 = 40 tasks/s from CPerf_Avail 40, efficiency 1.
	p, err := Choose(twoClusters(), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.Use); got != "[[true true] [true false true]]" {
		t.Errorf("chosen %s, want [[true true] [true false true]]", got)
	}
	wantNear(t, "chosen Perf_Ste", p.Chosen.PerfSte, 40)
	wantNear(t, "chosen CPerf_Avail", p.Chosen.CPerfAvail, 40)
	wantNear(t, "chosen efficiency", p.Chosen.Efficiency, 1)
	// CPerf_Avail 10 = inet in term 10: both limit.
	if l := p.Chosen.Clusters[1].Limit; l != "compute=inet_in" {
		t.Errorf("chosen remote limit %q, want compute=inet_in", l)
	}
	if !p.Exact || p.Chosen.Nodes != 4 || p.All.Nodes != 5 {
		t.Errorf("exact %v, %d chosen of %d", p.Exact, p.Chosen.Nodes, p.All.Nodes)
	}
}

// TestThresholdTradesPerformance: the threshold decides between more
// performance and less idle time.
func TestThresholdTradesPerformance(t *testing.T) {
	// One sub-cluster, S_Task 1000 B, S_Result 0, inet in 10000 B/s:
	// B = 10000/1000 = 10 tasks/s. Nodes 1/0.125 = 8 and 1/0.2 = 5 tasks/s.
	//   {8,5} = 13: Perf_Ste min(13,10) = 10, efficiency 10/13 = 0.769
	//   {8}   =  8: Perf_Ste 8, efficiency 1
	//   {5}   =  5: Perf_Ste 5, efficiency 1
	// threshold 0.9: limit 10/0.9 = 11.1 → {8}, Perf_Ste 8
	// threshold 0.7: limit 10/0.7 = 14.3 → {8,5}, Perf_Ste 10, eff 0.769
	// threshold 0:   every node.
	s := System{Task: Task{Size: 1000}, Clusters: []Cluster{{Name: "sub", InetIn: 10000, InetOut: 1, Nodes: nodes(0.125, 0.2)}}}
	for _, c := range []struct {
		threshold, ste, eff float64
		use                 string
	}{{0.9, 8, 1, "[[true false]]"}, {0.7, 10, 10.0 / 13, "[[true true]]"}, {0, 10, 10.0 / 13, "[[true true]]"}, {1, 8, 1, "[[true false]]"}} {
		p, err := Choose(s, c.threshold)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(p.Use) != c.use {
			t.Errorf("threshold %v: use %v, want %s", c.threshold, p.Use, c.use)
		}
		wantNear(t, fmt.Sprintf("threshold %v Perf_Ste", c.threshold), p.Chosen.PerfSte, c.ste)
		wantNear(t, fmt.Sprintf("threshold %v efficiency", c.threshold), p.Chosen.Efficiency, c.eff)
		// S_Result = 0: nothing crosses the outgoing link, which never limits.
		if !math.IsInf(p.All.Clusters[0].Bounds.InetOut, 1) {
			t.Errorf("inet out term %v with empty results", p.All.Clusters[0].Bounds.InetOut)
		}
	}
}

// TestSlashCluster: a sub-cluster behind a link too slow for any of its
// nodes is dropped whole.
func TestSlashCluster(t *testing.T) {
	// far: inet in 4 KiB/s = 4096 B/s, S_Task 8192 B → 0.5 tasks/s.
	// One node at 0.1 s = 10 tasks/s: efficiency 0.5/10 = 0.05.
	// threshold 0.5: limit 0.5/0.5 = 1 tasks/s < 10 → slashed.
	// threshold 0.04: limit 0.5/0.04 = 12.5 ≥ 10 → used, efficiency 0.05.
	s := twoClusters()
	s.Clusters = append(s.Clusters, Cluster{Name: "far", InetIn: 4096, InetOut: 4096, Nodes: nodes(0.1)})
	p, err := Choose(s, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	far := p.Chosen.Clusters[2]
	if far.Used != 0 || far.PerfSte != 0 || far.Efficiency != 0 || far.Nodes[0].Contribution != 0 {
		t.Errorf("far not slashed: %+v", far)
	}
	wantNear(t, "all: far Perf_Ste", p.All.Clusters[2].PerfSte, 0.5)
	wantNear(t, "all: far efficiency", p.All.Clusters[2].Efficiency, 0.05)
	// Chosen: local 30 + remote {8,2} 10 + far 0 = 40.
	wantNear(t, "chosen Perf_Ste", p.Chosen.PerfSte, 40)
	// All: 30 + 10 + 0.5 = 40.5 from 44 + 10 = 54.
	wantNear(t, "all Perf_Ste", p.All.PerfSte, 40.5)
	wantNear(t, "all efficiency", p.All.Efficiency, 40.5/54)

	p, err = Choose(s, 0.04)
	if err != nil {
		t.Fatal(err)
	}
	if p.Chosen.Clusters[2].Used != 1 {
		t.Errorf("threshold 0.04 slashed far")
	}
}

// TestBatchAndComm covers N, S_TaskInter, S_ResultInter and S_Comm.
func TestBatchAndComm(t *testing.T) {
	// N = 4, S_TaskInter = 30000 B (a compressed package of 4 tasks),
	// S_ResultInter default = 4·1024 = 4096 B.
	//   inet in  = 4·60000/30000 = 8 tasks/s
	//   inet out = 4·2048/4096   = 2 tasks/s  → the limit
	//   LAN: S_Comm = 20000 B, 1 MB/s = 1e6 B/s → 1e6/20000 = 50
	// nodes 4 × 1 s: CPerf_Avail 4. Perf_Ste = min(4, 50, 8, 2) = 2.
	s := System{
		Task:     Task{Size: 8192, Result: 1024, Comm: 20000, Batch: 4, InterTask: 30000},
		Clusters: []Cluster{{Name: "sub", LAN: 1e6, InetIn: 60000, InetOut: 2048, Nodes: nodes(1, 1, 1, 1)}},
	}
	ev, err := Evaluate(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := ev.Clusters[0].Bounds
	wantNear(t, "inet in", b.InetIn, 8)
	wantNear(t, "inet out", b.InetOut, 2)
	wantNear(t, "LAN", b.LAN, 50)
	wantNear(t, "Perf_Ste", ev.PerfSte, 2)
	if ev.Clusters[0].Limit != "inet_out" {
		t.Errorf("limit %q", ev.Clusters[0].Limit)
	}
	// A LAN-bound master cluster: S_Comm = 8192+1024 = 9216 B, LAN
	// 92160 B/s → 10 tasks/s; nodes 20 + 10 = 30 → Perf_Ste 10 (lan).
	// threshold 1: limit 10 → only... {20} = 20 > 10, {10} = 10 ✓ → the
	// 0.1 s node alone, Perf_Ste 10 at efficiency 1.
	m := System{Task: Task{Size: 8192, Result: 1024}, Clusters: []Cluster{{Name: "m", Master: true, LAN: 92160, Nodes: nodes(0.05, 0.1)}}}
	p, err := Choose(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.All.Clusters[0].Limit != "lan" || fmt.Sprint(p.Use) != "[[false true]]" {
		t.Errorf("limit %q, use %v", p.All.Clusters[0].Limit, p.Use)
	}
	wantNear(t, "chosen Perf_Ste", p.Chosen.PerfSte, 10)
}

// TestChooseBeatsGreedy: taking the fastest nodes first is not optimal.
func TestChooseBeatsGreedy(t *testing.T) {
	// B = 10 tasks/s, threshold 1 → CPerf_Avail ≤ 10. Nodes 6, 5, 5:
	// fastest first takes 6 and cannot add a 5 (11 > 10): Perf_Ste 6.
	// {5, 5} = 10 gives Perf_Ste 10.
	s := System{Task: Task{Size: 100}, Clusters: []Cluster{{Name: "c", InetIn: 1000, InetOut: 1000, Nodes: nodes(1.0/6, 0.2, 0.2)}}}
	p, err := Choose(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Use) != "[[false true true]]" {
		t.Errorf("use %v, want the two 5 tasks/s nodes", p.Use)
	}
	wantNear(t, "Perf_Ste", p.Chosen.PerfSte, 10)
}

// TestIdenticalNodes: 64 identical nodes are searched by count, and the
// fewest that reach the bound are taken.
func TestIdenticalNodes(t *testing.T) {
	// B = 10, nodes 64 × 1 task/s, threshold 0.9 → limit 11.1: 10 or 11
	// nodes give Perf_Ste 10; 10 is more efficient.
	s := System{Task: Task{Size: 100}, Clusters: []Cluster{{Name: "c", InetIn: 1000, InetOut: 1000, Nodes: nodes(make1(64)...)}}}
	p, err := Choose(s, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if p.Chosen.Nodes != 10 || !p.Exact {
		t.Errorf("%d nodes chosen (exact %v), want 10", p.Chosen.Nodes, p.Exact)
	}
	wantNear(t, "Perf_Ste", p.Chosen.PerfSte, 10)
}

func make1(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// TestChooseMatchesBruteForce compares Choose with every subset on random
// small clusters.
func TestChooseMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 10))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(9)
		times := make([]float64, n)
		for i := range times {
			times[i] = []float64{0.1, 0.2, 0.25, 0.5, 1, 1.0 / 3, 0.125}[rng.IntN(7)]
		}
		bound := 1 + rng.Float64()*20
		threshold := []float64{0, 0.5, 0.8, 0.9, 0.95, 1}[rng.IntN(6)]
		use, exact := chooseNodes(nodes(times...), bound, threshold)
		if !exact {
			t.Fatal("small search not exact")
		}
		sum := func(u func(int) bool) (float64, int) {
			var s float64
			c := 0
			for i := range times {
				if u(i) {
					s += 1 / times[i]
					c++
				}
			}
			return s, c
		}
		gs, gc := sum(func(i int) bool { return use[i] })
		got := choice{sum: gs, ste: math.Min(gs, bound), count: gc}
		if threshold > 0 && gs > bound/threshold*(1+1e-9) {
			t.Fatalf("trial %d: chosen CPerf %v exceeds %v/%v", trial, gs, bound, threshold)
		}
		for mask := 0; mask < 1<<n; mask++ {
			s, c := sum(func(i int) bool { return mask&(1<<i) != 0 })
			if threshold > 0 && s > bound/threshold && !closeTo(s, bound/threshold) {
				continue
			}
			if threshold == 0 {
				break // every node, checked below
			}
			if (choice{sum: s, ste: math.Min(s, bound), count: c}).better(got) {
				t.Fatalf("trial %d: times %v bound %v threshold %v: subset %b (sum %v) beats chosen %v (sum %v)", trial, times, bound, threshold, mask, s, use, gs)
			}
		}
		if threshold == 0 && gc != n {
			t.Fatalf("threshold 0 dropped nodes")
		}
	}
}

// TestOperScales: Oper multiplies every term of (4.8) alike; the CLI turns
// tasks/s into operations/s with it.
func TestOperScales(t *testing.T) {
	s := twoClusters()
	s.Task.Oper = 2e9
	p, err := Choose(s, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "Perf_Ste", p.Chosen.PerfSte, 40)
	wantNear(t, "oper", p.Oper, 2e9)
}

func TestValidate(t *testing.T) {
	bad := []func(*System){
		func(s *System) { s.Task.Size = 0 },
		func(s *System) { s.Task.Result = -1 },
		func(s *System) { s.Task.Comm = math.Inf(1) },
		func(s *System) { s.Clusters = nil },
		func(s *System) { s.Clusters[1].Master = true },
		func(s *System) { s.Clusters[0].InetIn = 5 },
		func(s *System) { s.Clusters[1].Nodes = nil },
		func(s *System) { s.Clusters[1].Nodes[0].TaskTime = 0 },
		func(s *System) { s.Clusters[1].Nodes[0].TaskTime = math.NaN() },
		func(s *System) { s.Clusters[1].LAN = -3 },
	}
	for i, f := range bad {
		s := twoClusters()
		f(&s)
		if _, err := Choose(s, 0.5); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	if _, err := Choose(twoClusters(), 1.5); err == nil {
		t.Error("threshold 1.5 accepted")
	}
	if _, err := Evaluate(twoClusters(), [][]bool{{true}}); err == nil {
		t.Error("short selection accepted")
	}
}

// TestJSONInfinity: a link that does not limit is null in JSON.
func TestJSONInfinity(t *testing.T) {
	p, err := Choose(twoClusters(), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"inet_in":null`) {
		t.Errorf("no null inet_in term for the master's cluster: %s", data)
	}
}

// BenchmarkChoose plans a sub-cluster of 1000 nodes of 20 speeds behind a
// saturated link (the search runs over counts per speed).
func BenchmarkChoose(b *testing.B) {
	var times []float64
	for i := 0; i < 1000; i++ {
		times = append(times, 0.1+0.05*float64(i%20))
	}
	s := System{Task: Task{Size: 1000, Result: 100}, Clusters: []Cluster{{Name: "c", InetIn: 1e6, InetOut: 1e6, Nodes: nodes(times...)}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Choose(s, 0.9); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead reads the grid example (31 nodes, a probe).
func BenchmarkRead(b *testing.B) {
	data, err := os.ReadFile("../testdata/plan/grid.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), "grid.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLargeClusterExact: 1000 nodes of 20 speeds (0.1 s to 1.05 s per
// task) behind a 1000 tasks/s link (1e6 B/s for 1000 B tasks): CPerf_Avail
// of all is Σ 50/(0.1+0.05k) ≈ 1766, so the link limits. The search must
// finish (Exact) and find a subset that fills the link exactly: Perf_Ste
// 1000 at efficiency 1.
func TestLargeClusterExact(t *testing.T) {
	var times []float64
	for i := 0; i < 1000; i++ {
		times = append(times, 0.1+0.05*float64(i%20))
	}
	s := System{Task: Task{Size: 1000, Result: 100}, Clusters: []Cluster{{Name: "c", InetIn: 1e6, InetOut: 1e6, Nodes: nodes(times...)}}}
	p, err := Choose(s, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Exact {
		t.Error("search not exhaustive")
	}
	wantNear(t, "Perf_Ste", p.Chosen.PerfSte, 1000)
	wantNear(t, "efficiency", p.Chosen.Efficiency, 1)
	if p.All.PerfSte != 1000 || p.All.CPerfAvail < 1700 {
		t.Errorf("all: %v of %v", p.All.PerfSte, p.All.CPerfAvail)
	}
}
