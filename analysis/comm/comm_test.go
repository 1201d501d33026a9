package comm

import (
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/parscope/parscope/format"
	_ "github.com/parscope/parscope/format/annotated"
	"github.com/parscope/parscope/trace"
)

// handMade is a 3-process trace with known matrices:
//
//	region 0 LOOP_A (loop), region 1 IF_B (if, statically inside LOOP_A)
//	p0: A{ send 0→1 100B; B{ send 0→2 10B } B{ send 0→2 10B } allreduce 8B } send 0→1 1B
//	p1: A{ recv; B{ send 1→0 50B (never received) } allreduce 8B } recv
//	p2: A{ recv; recv; allreduce 8B } send 2→0 7B (never received); recv from 1 (never sent)
func handMade(t testing.TB) *trace.Memory {
	m := &trace.Memory{}
	m.H.Runs = []trace.RunInfo{{ID: 0, Procs: 3}}
	m.H.Regions = []trace.RegionDef{
		{ID: 0, Kind: trace.RegionLoop, Label: "LOOP_A", Parent: -1},
		{ID: 1, Kind: trace.RegionIf, Label: "IF_B", Parent: 0},
	}
	ar := func(p int32) trace.Record { return trace.Coll(0, p, 9, 9, trace.OpAllreduce, -1, 8, 0) }
	recs := []trace.Record{
		trace.Enter(0, 0, 1, 0),
		trace.Send(0, 0, 2, 2, 1, 100, 1, 0),
		trace.Enter(0, 0, 3, 1),
		trace.Send(0, 0, 4, 4, 2, 10, 2, 0),
		trace.Exit(0, 0, 5, 1),
		trace.Enter(0, 0, 6, 1),
		trace.Send(0, 0, 7, 7, 2, 10, 2, 0),
		trace.Exit(0, 0, 8, 1),
		ar(0),
		trace.Exit(0, 0, 10, 0),
		trace.Send(0, 0, 11, 11, 1, 1, 3, 0),

		trace.Enter(0, 1, 1, 0),
		trace.Recv(0, 1, 3, 3, 0, 100, 1, 0),
		trace.Enter(0, 1, 4, 1),
		trace.Send(0, 1, 5, 5, 0, 50, 4, 0),
		trace.Exit(0, 1, 6, 1),
		ar(1),
		trace.Exit(0, 1, 10, 0),
		trace.Recv(0, 1, 12, 12, 0, 1, 3, 0),

		trace.Enter(0, 2, 1, 0),
		trace.Recv(0, 2, 5, 5, 0, 10, 2, 0),
		trace.Recv(0, 2, 8, 8, 0, 10, 2, 0),
		ar(2),
		trace.Exit(0, 2, 10, 0),
		trace.Send(0, 2, 11, 11, 0, 7, 9, 0),
		trace.Recv(0, 2, 12, 12, 1, 5, 8, 0),
	}
	for _, r := range recs {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	m.Sort()
	return m
}

// cells lists the non-zero cells of a matrix as "src>dst:bytes/count".
func cells(m *Matrix) map[string]string {
	out := map[string]string{}
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			if b, c := m.At(i, j); c > 0 {
				out[strconv.Itoa(i)+">"+strconv.Itoa(j)] = strconv.FormatInt(b, 10) + "/" + strconv.FormatInt(c, 10)
			}
		}
	}
	return out
}

func analyze(t testing.TB, m *trace.Memory, opts Options) *Result {
	t.Helper()
	res, err := Analyze(context.Background(), &m.H, m.Reader(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestHandMadeMatrices(t *testing.T) {
	m := handMade(t)
	type want struct {
		node      string
		aggregate bool
		cells     map[string]string
	}
	for _, tc := range []struct {
		alg   trace.Decomposition
		wants []want
	}{
		{trace.Linear, []want{
			{"program", false, map[string]string{"0>1": "1/1", "2>0": "7/1"}},
			{"LOOP_A", false, map[string]string{"0>1": "108/2", "0>2": "8/1", "1>0": "8/1", "2>0": "8/1"}},
			{"IF_B", false, map[string]string{"0>2": "20/2", "1>0": "50/1"}},
			{"IF_B", true, map[string]string{"0>2": "20/2", "1>0": "50/1"}},
			{"LOOP_A", true, map[string]string{"0>1": "108/2", "0>2": "28/3", "1>0": "58/2", "2>0": "8/1"}},
			{"program", true, map[string]string{"0>1": "109/3", "0>2": "28/3", "1>0": "58/2", "2>0": "15/2"}},
		}},
		{trace.BinomialTree, []want{ // a 3-member binomial tree is the linear pattern
			{"LOOP_A", false, map[string]string{"0>1": "108/2", "0>2": "8/1", "1>0": "8/1", "2>0": "8/1"}},
		}},
		{trace.Ring, []want{ // in: 2→0, 1→2; out: 0→1, 1→2
			{"LOOP_A", false, map[string]string{"0>1": "108/2", "1>2": "16/2", "2>0": "8/1"}},
		}},
	} {
		res := analyze(t, m, Options{Selection: Selection{Decompose: tc.alg}, WorkingSets: true})
		for _, w := range tc.wants {
			ids := res.Find(w.node)
			if len(ids) != 1 {
				t.Fatalf("%s: Find(%q) = %v", tc.alg, w.node, ids)
			}
			got := cells(res.Nodes[ids[0]].Matrix(w.aggregate))
			if !maps.Equal(got, w.cells) {
				t.Errorf("%s %s aggregate=%v: cells %v, want %v", tc.alg, w.node, w.aggregate, got, w.cells)
			}
		}
	}
	res := analyze(t, m, Options{WorkingSets: true})
	// The tree: program > LOOP_A > IF_B.
	if len(res.Nodes) != 3 || res.Path(1) != "LOOP_A" || res.Path(2) != "LOOP_A/IF_B" ||
		res.Nodes[2].Entries != 3 || res.Nodes[1].Entries != 3 || !slices.Equal(res.Nodes[0].Children, []int{1}) {
		t.Fatalf("tree %+v", res.Nodes)
	}
	b := res.Nodes[2]
	if b.Own.Degree != 2 || !slices.Equal(b.Own.Degrees, []int{2, 1, 1}) || b.Own.Bytes != 70 || b.Own.Messages != 3 || b.Own.Pairs != 2 {
		t.Errorf("IF_B own stats %+v", b.Own)
	}
	if od := b.own.OutDegrees(); !slices.Equal(od, []int{1, 1, 0}) {
		t.Errorf("IF_B out-degrees %v", od)
	}
	if v := b.own.Values(false); v[0][2] != 20 || v[1][0] != 50 || v[2][0] != 0 {
		t.Errorf("IF_B values %v", v)
	}
	if v := b.own.Values(true); v[0][2] != 2 || v[1][0] != 1 {
		t.Errorf("IF_B count values %v", v)
	}
	if a := res.Nodes[0].Aggregate; a.Degree != 2 || a.Bytes != 210 || a.Messages != 10 {
		t.Errorf("program stats %+v", a)
	}
	// Working sets of IF_B: entry 0 {0>2, 1>0}, entry 1 {0>2}.
	ws := b.WorkingSets
	if ws.Windows != 2 || ws.Distinct != 2 || ws.Changes != 1 || ws.MinPairs != 1 || ws.MaxPairs != 2 || ws.MeanPairs != 1.5 ||
		!slices.Equal(ws.Sets[0].Pairs, [][2]int32{{0, 2}, {1, 0}}) || !slices.Equal(ws.Sets[1].Pairs, [][2]int32{{0, 2}}) {
		t.Errorf("IF_B working sets %+v", ws)
	}
	if ws := res.Nodes[1].WorkingSets; ws.Windows != 1 || !slices.Equal(ws.Sets[0].Pairs, [][2]int32{{0, 1}, {0, 2}, {1, 0}, {2, 0}}) {
		t.Errorf("LOOP_A working sets %+v", ws)
	}
	// Unmatched sides are reported, and their sends still counted.
	p := res.Problems
	if res.Matched != 4 || p.UnmatchedSends != 2 || p.UnmatchedRecvs != 1 || len(p.Unmatched) != 3 {
		t.Errorf("matched %d, problems %+v", res.Matched, p)
	}
	rk := res.Rank(true)
	if !slices.Equal(rk.ByVolume, []int{1, 2}) || !slices.Equal(rk.ByDegree, []int{1, 2}) {
		t.Errorf("ranking %+v", rk)
	}
	// Selections.
	for _, tc := range []struct {
		ids       []int
		aggregate bool
		bytes     int64
	}{
		{[]int{2}, false, 70}, {[]int{1, 2}, false, 202}, {[]int{1, 2}, true, 202}, {[]int{1}, true, 202},
		{[]int{0}, false, 8}, {[]int{0, 2}, false, 78}, {[]int{0, 1}, true, 210},
	} {
		sm, err := res.Select(tc.ids, tc.aggregate)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := sm.Totals(); b != tc.bytes {
			t.Errorf("Select(%v, %v) = %d bytes, want %d", tc.ids, tc.aggregate, b, tc.bytes)
		}
	}
	if _, err := res.Select([]int{7}, false); err == nil {
		t.Error("Select of a missing node: no error")
	}
	// Without collectives, without matching.
	res = analyze(t, m, Options{Selection: Selection{NoCollectives: true}, NoMatch: true})
	if got := cells(res.Nodes[1].own); !maps.Equal(got, map[string]string{"0>1": "100/1"}) || res.Problems.UnmatchedSends != 0 || res.Decomposition != "" {
		t.Errorf("no collectives: %v %+v", got, res.Problems)
	}
}

// mergePerProcess builds one accumulator per process of m (2, 0, then 1),
// passes each through pass unless it is nil, merges them in that order and
// returns the result.
func mergePerProcess(t *testing.T, m *trace.Memory, opts Options, pass func(*Accumulator) *Accumulator) *Result {
	t.Helper()
	var total *Accumulator
	for _, p := range []int32{2, 0, 1} {
		a, err := New(&m.H, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.Records {
			if m.Records[i].Proc == p {
				if err := a.Add(&m.Records[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if pass != nil {
			a = pass(a)
		}
		if total == nil {
			total = a
		} else if err := total.Merge(a); err != nil {
			t.Fatal(err)
		}
	}
	return total.Result()
}

// TestMerge checks that one accumulator per process, merged, gives the
// same result as one accumulator over everything.
func TestMerge(t *testing.T) {
	m := handMade(t)
	opts := Options{WorkingSets: true}
	want := analyze(t, m, opts)
	got := mergePerProcess(t, m, opts, nil)
	// Node ids may differ; compare by path.
	byPath := func(r *Result) map[string]string {
		out := map[string]string{}
		for i, n := range r.Nodes {
			path := r.Path(i)
			n.ID, n.Parent, n.Children = 0, 0, nil
			b, _ := json.Marshal(n)
			out[path] = string(b) + "|" + mapString(cells(n.agg))
		}
		return out
	}
	if !maps.Equal(byPath(got), byPath(want)) || got.Matched != want.Matched ||
		got.Problems.UnmatchedSends != want.Problems.UnmatchedSends || got.Problems.UnmatchedRecvs != want.Problems.UnmatchedRecvs {
		t.Errorf("merged\n%v\nwant\n%v", byPath(got), byPath(want))
	}
	a, _ := New(&m.H, opts)
	a.Add(&m.Records[0])
	b, _ := New(&m.H, opts)
	b.Add(&m.Records[0])
	if err := a.Merge(b); err == nil {
		t.Error("merging two accumulators of the same process: no error")
	}
}

func mapString(m map[string]string) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// TestBadInput checks that bad records are counted, not dropped silently,
// and never panic.
func TestBadInput(t *testing.T) {
	m := &trace.Memory{}
	m.H.Runs = []trace.RunInfo{{ID: 0, Procs: 2}, {ID: 1, Procs: 2}}
	m.H.Regions = []trace.RegionDef{{ID: 0, Label: "L", Parent: -1}, {ID: 1, Label: "I", Parent: 0}}
	m.H.Comms = []trace.CommDef{{ID: 3, Members: []int32{1}}}
	for _, r := range []trace.Record{
		trace.Enter(0, 0, 1, 1),                                  // IF entered first: nests under its static parent L
		trace.Send(0, 0, 2, 2, 5, 1, 0, 0),                       // peer outside the run
		trace.Exit(0, 0, 3, 0),                                   // exit of a region that is not open
		trace.Coll(0, 0, 4, 4, trace.OpBcast, 1, 4, 3),           // process 0 is not in comm 3
		trace.Coll(0, 1, 4, 4, trace.OpBcast, 0, 4, 3),           // root 0 is not in comm 3
		trace.Coll(0, 1, 5, 5, trace.CollectiveOp(99), -1, 4, 0), // unknown op
		trace.Enter(0, 1, 6, 0),
		trace.Enter(0, 1, 7, 1),
		trace.Exit(0, 1, 8, 0), // closes I too
		trace.Enter(0, 1, 9, 0),
		trace.Send(1, 0, 2, 2, 1, 1, 0, 0), // another run: ignored
	} {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	m.Sort()
	res := analyze(t, m, Options{})
	p := res.Problems
	if p.BadPeer != 1 || p.OutsideComm != 2 || p.Undecomposed != 1 || p.UnbalancedExits != 2 || p.Unclosed != 2 || p.UnmatchedSends != 1 {
		t.Errorf("problems %+v", p)
	}
	if len(res.Nodes) != 3 || res.Path(2) != "L/I" || res.Nodes[0].Aggregate.Messages != 0 {
		t.Errorf("tree %+v", res.Nodes)
	}
	a, _ := New(&m.H, Options{})
	bad := trace.Send(0, 7, 1, 1, 0, 1, 0, 0)
	if err := a.Add(&bad); err == nil {
		t.Error("process outside the run: no error")
	}
	if _, err := New(&m.H, Options{Selection: Selection{Run: 4}}); err == nil {
		t.Error("missing run: no error")
	}
	big := trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: MaxProcs + 1}}}
	if _, err := New(&big, Options{}); err == nil {
		t.Error("too many processes: no error")
	}
}

// TestRingExample analyses the bundled annotated ring: every rank sends to
// rank+1 mod 4 inside IF_101 inside LOOP_100, and an allreduce runs every
// 8th step in LOOP_100. The sends are read from the text independently.
func TestRingExample(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/examples/ring/ring.*.trace")
	if len(files) != 4 {
		t.Fatalf("ring example: %d files", len(files))
	}
	imp, err := format.Lookup("annotated")
	if err != nil {
		t.Fatal(err)
	}
	var m trace.Memory
	if err := imp.Import(context.Background(), files, format.Options{}, &m); err != nil {
		t.Fatal(err)
	}
	m.Sort()
	// Expected bytes per rank from the text: count × 8 of every mpi_send_.
	sendRe := regexp.MustCompile(`mpi_send_\(count=(\d+) datatype=27 dst=(\d+)`)
	var want [4]int64
	var wantN [4]int64
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rank, _ := strconv.Atoi(regexp.MustCompile(`# rank (\d+)`).FindStringSubmatch(string(text))[1])
		for _, mm := range sendRe.FindAllStringSubmatch(string(text), -1) {
			c, _ := strconv.ParseInt(mm[1], 10, 64)
			if d, _ := strconv.Atoi(mm[2]); d != (rank+1)%4 {
				t.Fatalf("rank %d sends to %d", rank, d)
			}
			want[rank] += 8 * c
			wantN[rank]++
		}
	}
	// The annotated trace names its communicator by Fortran handle only,
	// so its members are unknown: the allreduces are reported, not
	// decomposed over a guessed membership.
	if len(m.H.Comms) != 1 || !m.H.Comms[0].Unknown {
		t.Fatalf("comms %+v, want one of unknown members", m.H.Comms)
	}
	unk := analyze(t, &m, Options{})
	if unk.Problems.UnknownComm != 32 || len(cells(unk.Nodes[unk.Find("LOOP_100")[0]].own)) != 0 {
		t.Errorf("unknown communicator: problems %+v, LOOP_100 own %v; want 32 allreduces left out", unk.Problems, cells(unk.Nodes[unk.Find("LOOP_100")[0]].own))
	}
	// All 4 ranks ask their rank in handle 91 and run every allreduce on
	// it: it is this run's world. Declaring its members, as a user who
	// knows the program would, the allreduces decompose over the 4 ranks.
	m.H.Comms = []trace.CommDef{{ID: m.H.Comms[0].ID, Name: "MPI_COMM_WORLD", Members: []int32{0, 1, 2, 3}}}
	res := analyze(t, &m, Options{WorkingSets: true})
	loop, ifs := res.Find("LOOP_100"), res.Find("LOOP_100/IF_101")
	if len(res.Nodes) != 3 || len(loop) != 1 || len(ifs) != 1 {
		t.Fatalf("tree %+v", res.Nodes)
	}
	in := res.Nodes[ifs[0]]
	for r := 0; r < 4; r++ {
		for d := 0; d < 4; d++ {
			b, c := in.own.At(r, d)
			if d == (r+1)%4 {
				if b != want[r] || c != wantN[r] || c != 64 {
					t.Errorf("IF_101 %d>%d = %d/%d, want %d/%d", r, d, b, c, want[r], wantN[r])
				}
			} else if c != 0 {
				t.Errorf("IF_101 %d>%d = %d/%d, want none", r, d, b, c)
			}
		}
	}
	// LOOP_100 alone: 8 linear allreduces of 8 bytes (in to 0, out from 0).
	lp := res.Nodes[loop[0]]
	wantLoop := map[string]string{"1>0": "64/8", "2>0": "64/8", "3>0": "64/8", "0>1": "64/8", "0>2": "64/8", "0>3": "64/8"}
	if got := cells(lp.own); !maps.Equal(got, wantLoop) {
		t.Errorf("LOOP_100 own %v", got)
	}
	if in.Own.Degree != 2 || lp.Aggregate.Degree != 3 || !slices.Equal(lp.Aggregate.Degrees, []int{3, 2, 3, 2}) {
		t.Errorf("degrees: IF %+v LOOP %+v", in.Own, lp.Aggregate)
	}
	ws := in.WorkingSets
	ring := [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 0}}
	if ws.Windows != 64 || ws.Distinct != 1 || ws.Changes != 0 || !slices.Equal(ws.Sets[0].Pairs, ring) {
		t.Errorf("IF_101 working sets %+v", ws)
	}
	if res.Matched != 256 || res.Problems.UnmatchedSends != 0 || res.Problems.UnmatchedRecvs != 0 || res.Problems.Unclosed != 0 {
		t.Errorf("matched %d problems %+v", res.Matched, res.Problems)
	}
	// The whole result, per decomposition, against a golden file.
	for _, alg := range []trace.Decomposition{trace.Linear, trace.BinomialTree, trace.Ring} {
		res := analyze(t, &m, Options{Selection: Selection{Decompose: alg}, WorkingSets: true})
		own := map[string]map[string]string{}
		for i := range res.Nodes {
			own[res.Nodes[i].Name] = cells(res.Nodes[i].own)
		}
		got, err := json.MarshalIndent(struct {
			*Result
			Own map[string]map[string]string `json:"own_matrices"`
		}{res, own}, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "ring-"+alg.String()+".golden.json")
		if *update {
			if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != string(got)+"\n" {
			t.Errorf("%s: result differs from %s (run with -update to rewrite)\n%s", alg, golden, got)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files")
