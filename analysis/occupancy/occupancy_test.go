package occupancy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/trace"
)

// lyonT1 is table T1 of NISTIR 4418: the processes (a=0 .. d=3) in A1,
// A2, A3 and the duration of each microstate row.
var lyonT1 = []struct {
	a1, a2, a3 string
	dur        int64
}{
	{"abcd", "", "", 3},
	{"acd", "b", "", 1},
	{"abd", "c", "", 2},
	{"acd", "", "b", 1},
	{"abcd", "", "", 1},
	{"ab", "cd", "", 5},
	{"cd", "ab", "", 5},
	{"ac", "bd", "", 5},
	{"", "abcd", "", 1},
	{"abcd", "", "", 2},
	{"a", "bcd", "", 2},
	{"", "abc", "d", 1},
}

func lyonHeader() *trace.Header {
	return &trace.Header{
		States: []trace.StateDef{{ID: 1, Name: "A1"}, {ID: 2, Name: "A2"}, {ID: 3, Name: "A3"}},
		Runs:   []trace.RunInfo{{ID: 0, Procs: 4}},
	}
}

// lyonRecords turns T1 into state records: at the start of each row every
// process whose mode changes enters its new state. It returns the end time.
func lyonRecords() ([]trace.Record, int64) {
	var recs []trace.Record
	cur := []int32{0, 0, 0, 0}
	t := int64(0)
	for _, row := range lyonT1 {
		for k, set := range []string{row.a1, row.a2, row.a3} {
			for _, c := range set {
				p := int32(c - 'a')
				if cur[p] != int32(k+1) {
					cur[p] = int32(k + 1)
					recs = append(recs, trace.State(0, p, t, int32(k+1)))
				}
			}
		}
		t += row.dur
	}
	return recs, t
}

func lyonResult(t *testing.T, opts Options) *Result {
	t.Helper()
	recs, end := lyonRecords()
	return single(t, StateModes(lyonHeader()), 4, recs, end, opts, false)
}

func counts(c ...int32) []int32 { return c }

func TestLyonTables(t *testing.T) {
	var micro []string
	res := lyonResult(t, Options{Trace: true, Micro: func(_, dur int64, modes []int32) {
		sets := make([]string, 3)
		for p, k := range modes {
			sets[k] += string(rune('a' + p))
		}
		micro = append(micro, strings.Join(sets, "|")+"|"+string(rune('0'+dur)))
	}})
	// T1: the microstate rows come back as given.
	var want []string
	for _, r := range lyonT1 {
		want = append(want, r.a1+"|"+r.a2+"|"+r.a3+"|"+string(rune('0'+r.dur)))
	}
	if !slices.Equal(micro, want) {
		t.Errorf("T1 = %v, want %v", micro, want)
	}
	// T2: adjacent identical macrostates merged, with their T1 indices.
	wantT2 := []Row{
		{T: 0, Dur: 3, Micro: 0, N: 1, Counts: counts(4, 0, 0)},
		{T: 3, Dur: 3, Micro: 1, N: 2, Counts: counts(3, 1, 0)},
		{T: 6, Dur: 1, Micro: 3, N: 1, Counts: counts(3, 0, 1)},
		{T: 7, Dur: 1, Micro: 4, N: 1, Counts: counts(4, 0, 0)},
		{T: 8, Dur: 15, Micro: 5, N: 3, Counts: counts(2, 2, 0)},
		{T: 23, Dur: 1, Micro: 8, N: 1, Counts: counts(0, 4, 0)},
		{T: 24, Dur: 2, Micro: 9, N: 1, Counts: counts(4, 0, 0)},
		{T: 26, Dur: 2, Micro: 10, N: 1, Counts: counts(1, 3, 0)},
		{T: 28, Dur: 1, Micro: 11, N: 1, Counts: counts(0, 3, 1)},
	}
	if !reflect.DeepEqual(res.Trace, wantT2) {
		t.Errorf("T2 = %v\nwant %v", res.Trace, wantT2)
	}
	if res.Rows != 9 || res.Microstates != 12 || res.Records != 29 {
		t.Errorf("rows %d, microstates %d, records %d; want 9, 12, 29", res.Rows, res.Microstates, res.Records)
	}
	// T3: time dropped, occupancy per macrostate in order of first appearance.
	wantT3 := []Macro{
		{counts(4, 0, 0), 6}, {counts(3, 1, 0), 3}, {counts(3, 0, 1), 1}, {counts(2, 2, 0), 15},
		{counts(0, 4, 0), 1}, {counts(1, 3, 0), 2}, {counts(0, 3, 1), 1},
	}
	if !reflect.DeepEqual(res.Table, wantT3) {
		t.Errorf("T3 = %v\nwant %v", res.Table, wantT3)
	}
	if got := res.Possible().Int64(); got != 15 {
		t.Errorf("possible macrostates = %d, want 15", got)
	}
	// T4: projections on A1 (the paper's), A2 and A3.
	for _, tc := range []struct {
		keep []int
		want []Macro
	}{
		{[]int{0}, []Macro{{counts(4), 6}, {counts(3), 4}, {counts(2), 15}, {counts(1), 2}, {counts(0), 2}}},
		{[]int{1}, []Macro{{counts(4), 1}, {counts(3), 3}, {counts(2), 15}, {counts(1), 3}, {counts(0), 7}}},
		{[]int{2}, []Macro{{counts(1), 2}, {counts(0), 27}}},
		{[]int{0, 2}, []Macro{{counts(4, 0), 6}, {counts(3, 1), 1}, {counts(3, 0), 3}, {counts(2, 0), 15}, {counts(1, 0), 2}, {counts(0, 1), 1}, {counts(0, 0), 1}}},
	} {
		got, err := res.Project(tc.keep)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("T4 on %v = %v, want %v", tc.keep, got, tc.want)
		}
	}
	if _, err := res.Project([]int{3}); err == nil {
		t.Error("projection on mode 3 of 3: no error")
	}
	// T5 from the global table and from the local counters.
	if got := res.Mean(); !slices.Equal(got, []float64{17, 11.5, 0.5}) {
		t.Errorf("T5 = %v, want [17 11.5 0.5]", got)
	}
	if got := res.LocalMean(); !slices.Equal(got, []float64{17, 11.5, 0.5}) {
		t.Errorf("T5 from local counters = %v, want [17 11.5 0.5]", got)
	}
	wantLocal := [][]int64{{22, 7, 0}, {13, 15, 1}, {18, 11, 0}, {15, 13, 1}}
	if !reflect.DeepEqual(res.Local, wantLocal) {
		t.Errorf("local counters = %v, want %v", res.Local, wantLocal)
	}
}

func TestWork(t *testing.T) {
	res := lyonResult(t, Options{})
	rates := Rates{"4,0,0": 4e9, "3,1,0": 3e9, "3,0,1": 3e9, "2,2,0": 2e9, "0,4,0": 0, "1,3,0": 1e9, "0,3,1": 0}
	w, err := res.Work(rates)
	if err != nil {
		t.Fatal(err)
	}
	// 4·6 + 3·3 + 3·1 + 2·15 + 0 + 1·2 + 0 = 68: the A1 processor-time.
	if w != 68 {
		t.Errorf("work = %v, want 68", w)
	}
	delete(rates, "2,2,0")
	if _, err := res.Work(rates); err == nil || !strings.Contains(err.Error(), "(2,2,0)") {
		t.Errorf("missing rate: err = %v, want one naming (2,2,0)", err)
	}
}

// randomTrace makes a seeded trace of p processes in m states; processes
// begin at random times when late is set. With ends, state m (absent in
// modesOf(m, true)) is one more: processes end, and may begin again.
func randomTrace(seed uint64, p, m, n int, late, ends bool) []trace.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	var recs []trace.Record
	t := int64(0)
	started := make([]bool, p)
	if !late {
		for i := range p {
			recs = append(recs, trace.State(0, int32(i), 0, int32(rng.IntN(m))))
			started[i] = true
		}
	}
	for range n {
		if rng.IntN(3) > 0 {
			t += int64(rng.IntN(5))
		}
		i := rng.IntN(p)
		if late && !started[i] && rng.IntN(4) > 0 {
			continue
		}
		started[i] = true
		st := int32(rng.IntN(m))
		if ends && rng.IntN(8) == 0 {
			st = int32(m)
		}
		recs = append(recs, trace.State(0, int32(i), t, st))
		if rng.IntN(10) == 0 {
			recs = append(recs, trace.Event(0, int32(i), t, 0, 1))
		}
	}
	return recs
}

// modesOf makes the modes A, B, ... of states 0..m-1; with absent, state m
// ("X") is marked Absent too.
func modesOf(m int, absent bool) *Modes {
	h := &trace.Header{}
	for k := range m {
		h.States = append(h.States, trace.StateDef{ID: int32(k), Name: string(rune('A' + k))})
	}
	if absent {
		h.States = append(h.States, trace.StateDef{ID: int32(m), Name: "X", Absent: true})
	}
	return StateModes(h)
}

func single(t *testing.T, modes *Modes, p int, recs []trace.Record, end int64, opts Options, unpacked bool) *Result {
	t.Helper()
	acc, err := NewAccumulator(modes, p, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	if unpacked {
		acc.packed, acc.fast, acc.tab = false, false, newTable(false, acc.m, acc.lay, acc.opts.Budget)
	}
	for i := range recs {
		if err := acc.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	res, err := acc.Result(end)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sharded computes the shards (split before the given record indices) in
// parallel and merges them.
func sharded(t *testing.T, modes *Modes, p int, recs []trace.Record, cuts []int, end int64, opts Options) *Result {
	t.Helper()
	bounds := append(append([]int{0}, cuts...), len(recs))
	accs := make([]*Accumulator, len(bounds)-1)
	errs := make([]error, len(accs))
	var wg sync.WaitGroup
	for s := range accs {
		wg.Go(func() {
			t0 := int64(0)
			if s > 0 {
				t0 = recs[bounds[s]].T
			}
			acc, err := NewAccumulator(modes, p, t0, opts)
			if err != nil {
				errs[s] = err
				return
			}
			for i := bounds[s]; i < bounds[s+1]; i++ {
				if err := acc.Add(&recs[i]); err != nil {
					errs[s] = err
					return
				}
			}
			accs[s] = acc
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range accs[1:] {
		if err := accs[0].Merge(b); err != nil {
			t.Fatal(err)
		}
	}
	res, err := accs[0].Result(end)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMergeEqualsSinglePass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p, m, n int
		late    bool
		ends    bool
		start   string
		shards  int
		trace   bool
		collide bool
	}{
		{"lyon-sized", 4, 3, 200, false, false, "", 5, true, false},
		{"many shards", 16, 4, 3000, false, false, "", 40, true, false},
		{"no trace", 16, 4, 3000, false, false, "", 40, false, false},
		{"late starts", 12, 3, 2000, true, false, "B", 25, true, false},
		{"late starts, no trace", 12, 3, 2000, true, false, "A", 25, false, false},
		{"one process", 1, 2, 300, false, false, "", 7, true, false},
		{"shard per record", 5, 3, 100, true, false, "C", 1000, true, false},
		{"late starts absent", 12, 3, 2000, true, false, "", 25, true, false},
		{"late starts absent, no trace", 12, 3, 2000, true, false, "", 25, false, false},
		{"ends", 12, 3, 2000, true, true, "", 25, true, false},
		{"ends, no trace", 12, 3, 2000, true, true, "", 25, false, false},
		{"ends with a start mode", 12, 3, 2000, true, true, "B", 25, true, false},
		{"ends, shard per record", 5, 3, 100, true, true, "", 1000, true, false},
		{"two-word keys", 64, 13, 4000, false, false, "", 40, true, false},
		{"two-word keys, late starts absent, no trace", 40, 12, 3000, true, true, "", 25, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(5) {
				recs := randomTrace(seed, tc.p, tc.m, tc.n, tc.late, tc.ends)
				end := recs[len(recs)-1].T + 3
				modes := modesOf(tc.m, tc.ends)
				opts := Options{Trace: tc.trace, Start: tc.start}
				want := single(t, modes, tc.p, recs, end, opts, false)
				rng := rand.New(rand.NewPCG(seed, 2))
				var cuts []int
				for i := 1; i < len(recs); i++ {
					if rng.IntN(len(recs)) < tc.shards {
						cuts = append(cuts, i)
					}
				}
				got := sharded(t, modes, tc.p, recs, cuts, end, opts)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, %d shards: merged result differs from the single pass\n got %+v\nwant %+v", seed, len(cuts)+1, got, want)
				}
				if un := single(t, modes, tc.p, recs, end, opts, true); !reflect.DeepEqual(un, want) {
					t.Fatalf("seed %d: string-keyed result differs from the packed one", seed)
				}
				g, l := want.Mean(), want.LocalMean()
				for j := range g {
					if d := g[j] - l[j]; d > 1e-9*float64(end) || d < -1e-9*float64(end) {
						t.Fatalf("seed %d: mean occupancy of mode %d: global %v, local %v", seed, j, g[j], l[j])
					}
				}
				var sum int64
				for _, e := range want.Table {
					sum += e.Occupancy
				}
				if sum != end {
					t.Fatalf("seed %d: occupancies sum to %d, want the elapsed time %d", seed, sum, end)
				}
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	modes := modesOf(2, false)
	for _, tc := range []struct {
		name  string
		recs  []trace.Record
		start string
		want  string
	}{
		{"unmapped state", []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 1, 0, 7)}, "", "state 7 at 0 ns, which is mapped to no mode"},
		{"overlap", []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 1, 5, 0), trace.State(0, 0, 3, 1)}, "", "overlap"},
		{"process outside the run", []trace.Record{trace.State(0, 2, 0, 0)}, "", "process 2 at 0 ns, but the run has 2 processes"},
		{"unknown start mode", nil, "Z", `start mode "Z" is not one of the modes A, B`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acc, err := NewAccumulator(modes, 2, 0, Options{Start: tc.start})
			if err == nil {
				for i := range tc.recs {
					if err = acc.Add(&tc.recs[i]); err != nil {
						break
					}
				}
			}
			if err == nil {
				_, err = acc.Result(10)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseModes(t *testing.T) {
	h := &trace.Header{States: []trace.StateDef{{ID: 0, Name: "compute"}, {ID: 1, Name: "send"}, {ID: 2, Name: "recv"}, {ID: 5, Name: "irq"}}}
	for _, tc := range []struct {
		name, text string
		names      []string
		of         map[int32]int
		err        string
	}{
		{"ids and names", "# iPSC\n0 U\nsend S\n2 R\nirq I\n", []string{"U", "S", "R", "I"}, map[int32]int{0: 0, 1: 1, 2: 2, 5: 3}, ""},
		{"grouped", "compute busy\n*\tcomm\n", []string{"busy", "comm"}, map[int32]int{0: 0, 1: 1, 2: 1, 5: 1}, ""},
		{"misses states", "0 U\n1 S\n", nil, nil, "modes.txt: the mapping misses 2 state(s): 2 (recv), 5 (irq)"},
		{"bad line", "0 U\n1\n", nil, nil, "modes.txt:2: expected \"STATE MODE\""},
		{"unknown name", "0 U\nfoo S\n", nil, nil, "modes.txt:2: state \"foo\" is neither"},
		{"twice", "0 U\n0 S\n", nil, nil, "modes.txt:2: state 0 is mapped twice (to U and S)"},
		{"empty", "# nothing\n", nil, nil, "modes.txt: the mapping has no modes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseModes(strings.NewReader(tc.text), "modes.txt", h)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Names, tc.names) {
				t.Errorf("names = %v, want %v", m.Names, tc.names)
			}
			for id, want := range tc.of {
				if got, ok := m.Mode(id); !ok || got != want {
					t.Errorf("mode of %d = %d, %v; want %d", id, got, ok, want)
				}
			}
		})
	}
}

func TestCompute(t *testing.T) {
	recs, _ := lyonRecords()
	// A second run: two processes, one mode each, and a non-state record
	// that ends the run at 10.
	recs = append(recs, trace.State(1, 0, 0, 1), trace.State(1, 1, 0, 2), trace.Event(1, 0, 10, 0, 0))
	h := lyonHeader()
	h.Runs = append(h.Runs, trace.RunInfo{ID: 1, Procs: 2})
	res, err := Compute(context.Background(), h, trace.NewSliceReader(recs), StateModes(h), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	// Run 0 ends at its last record (28): the last row has no duration.
	if got := res[0].Mean(); !slices.Equal(got, []float64{17, 10.75, 0.25}) || res[0].End != 28 {
		t.Errorf("run 0: T5 = %v, end %d; want [17 10.75 0.25], 28", got, res[0].End)
	}
	if got := res[1].Mean(); !slices.Equal(got, []float64{5, 5, 0}) {
		t.Errorf("run 1: T5 = %v, want [5 5 0]", got)
	}
}

func TestMergeErrors(t *testing.T) {
	modes := modesOf(2, false)
	mk := func(p int, t0 int64, opts Options, recs ...trace.Record) *Accumulator {
		a, err := NewAccumulator(modes, p, t0, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := a.Add(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	for _, tc := range []struct {
		name string
		a, b *Accumulator
		want string
	}{
		{"overlapping shards", mk(1, 0, Options{}, trace.State(0, 0, 0, 0), trace.State(0, 0, 9, 1)), mk(1, 5, Options{}), "the shard beginning at 5 ns overlaps the previous shard, which ends at 9 ns"},
		{"different runs", mk(1, 0, Options{}), mk(2, 0, Options{}), "different runs or modes (1 and 2 processes"},
		{"trace kept by one", mk(1, 0, Options{Trace: true}), mk(1, 0, Options{}), "keeps the macrostate trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.a.Merge(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// A process that begins late and one that ends: worked by hand. Modes A
// and B, state 2 marked Absent; two processes over [0, 10):
//
//	[0,4)  P0 A, P1 absent  -> (1,0)
//	[4,6)  P0 A, P1 B       -> (1,1)
//	[6,8)  P0 B, P1 B       -> (0,2)
//	[8,10) P0 B, P1 absent  -> (0,1)
//
// The table sums to the elapsed 10 ns; mean occupancies A = (4+2)/2 = 3,
// B = (2+2·2+2)/2 = 4, and the 6 ns P1 did not exist in no mode.
func TestLateStartAndEnd(t *testing.T) {
	modes := modesOf(2, true)
	recs := []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 1, 4, 1), trace.State(0, 0, 6, 1), trace.State(0, 1, 8, 2)}
	wantTable := []Macro{{counts(1, 0), 4}, {counts(1, 1), 2}, {counts(0, 2), 2}, {counts(0, 1), 2}}
	check := func(name string, res *Result) {
		t.Helper()
		if !reflect.DeepEqual(res.Table, wantTable) {
			t.Errorf("%s: table %v, want %v", name, res.Table, wantTable)
		}
		if g, l := res.Mean(), res.LocalMean(); !slices.Equal(g, []float64{3, 4}) || !slices.Equal(l, []float64{3, 4}) {
			t.Errorf("%s: mean %v, local %v, want [3 4]", name, g, l)
		}
		if !reflect.DeepEqual(res.Local, [][]int64{{6, 4}, {0, 4}}) || res.AbsentNS != 6 {
			t.Errorf("%s: local %v, absent %d ns; want [[6 4] [0 4]], 6", name, res.Local, res.AbsentNS)
		}
		if res.Possible().Int64() != 6 {
			t.Errorf("%s: %v possible macrostates, want C(2+2, 2) = 6", name, res.Possible())
		}
	}
	check("one pass", single(t, modes, 2, recs, 10, Options{Trace: true}, false))
	check("string keys", single(t, modes, 2, recs, 10, Options{}, true))
	for _, cut := range []int{1, 2, 3} {
		check(fmt.Sprintf("shards cut at record %d", cut), sharded(t, modes, 2, recs, []int{cut}, 10, Options{Trace: true}))
	}
	// A start mode puts P1 in A until 4: (2,0) for 4 ns, nothing absent
	// but P1's end.
	res := single(t, modes, 2, recs, 10, Options{Start: "A"}, false)
	if want := []Macro{{counts(2, 0), 4}, {counts(1, 1), 2}, {counts(0, 2), 2}, {counts(0, 1), 2}}; !reflect.DeepEqual(res.Table, want) || res.AbsentNS != 2 {
		t.Errorf("start A: table %v, absent %d; want %v, 2", res.Table, res.AbsentNS, want)
	}
	// Every process present throughout: Lyon's count C(p+m-1, p).
	full := single(t, modes, 2, []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 1, 0, 1)}, 10, Options{}, false)
	if full.AbsentNS != 0 || full.Possible().Int64() != 3 {
		t.Errorf("present throughout: absent %d, possible %v; want 0, C(3,2) = 3", full.AbsentNS, full.Possible())
	}
}

// A state marked Absent is no mode: not listed by StateModes, not covered
// by "*", and an error when a mapping names it.
func TestAbsentStateIsNoMode(t *testing.T) {
	h := &trace.Header{States: []trace.StateDef{{ID: 0, Name: "run"}, {ID: 1, Name: "wait"}, {ID: 4, Name: "not-exist", Absent: true}}}
	if m := StateModes(h); !slices.Equal(m.Names, []string{"run", "wait"}) || !m.Absent(4) || m.Absent(1) {
		t.Errorf("state modes %v", m.Names)
	}
	m, err := ParseModes(strings.NewReader("run busy\n* idle\n"), "m", h)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Mode(4); ok {
		t.Error(`"*" maps the absent state to a mode`)
	}
	if k, ok := m.Mode(1); !ok || m.Names[k] != "idle" {
		t.Errorf("wait -> %d %v", k, ok)
	}
	if _, err := ParseModes(strings.NewReader("run busy\nwait busy\nnot-exist gone\n"), "m", h); err == nil || !strings.Contains(err.Error(), "m:3: state not-exist says the process does not exist") {
		t.Errorf("mapping the absent state: %v", err)
	}
}
