package entropy

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// The worked example of Gomez, Cai & Schubert 2017 and its table in
// docs/paper-oracles.md §3.1.
func TestStateProbabilityOracle(t *testing.T) {
	b := []int{3, 5, 2}
	if w := math.Exp(LnMultiplicity(b)); math.Abs(w-2520) > 1e-9 {
		t.Fatalf("multiplicity = %v, want 2520", w)
	}
	for _, tc := range []struct {
		n     int
		p     float64
		log2p float64
	}{
		{3, 4.2676421277e-02, -4.550417}, {4, 2.4032592773e-03, -8.700792},
		{5, 2.5804800000e-04, -11.920073}, {8, 2.3469328880e-06, -18.700792},
		{9, 7.2272894168e-07, -20.400042}, {10, 2.5200000000e-07, -21.920073},
		{12, 4.0699406888e-08, -24.550417}, {13, 1.8279613872e-08, -25.705189},
	} {
		lp := LnProb(b, tc.n)
		if p := math.Exp(lp); !near(p, tc.p, 1e-10) {
			t.Errorf("N=%d: p = %.10e, want %.10e", tc.n, p, tc.p)
		}
		if l2 := lp / math.Ln2; math.Abs(l2-tc.log2p) > 5e-7 {
			t.Errorf("N=%d: log2 p = %.6f, want %.6f", tc.n, l2, tc.log2p)
		}
	}
}

func TestClassEntropyOracle(t *testing.T) {
	for _, tc := range []struct {
		p, n int
		h    float64
	}{{3, 9, 7.253022}, {9, 9, 13.669088}, {10, 3, 5.001458}, {17, 13, 23.594323}, {32, 13, 29.798258}} {
		if h := ClassEntropy(tc.p, tc.n); math.Abs(h-tc.h) > 5e-7 {
			t.Errorf("H_class(%d,%d) = %.6f, want %.6f", tc.p, tc.n, h, tc.h)
		}
	}
	if ClassEntropy(5, 1) != 0 || ClassEntropy(0, 4) != 0 {
		t.Error("degenerate class entropies must be 0")
	}
}

// compositions calls fn with every vector of n non-negative counts summing to p.
func compositions(p, n int, fn func([]int)) {
	b := make([]int, n)
	var rec func(k, left int)
	rec = func(k, left int) {
		if k == n-1 {
			b[k] = left
			fn(b)
			return
		}
		for c := 0; c <= left; c++ {
			b[k] = c
			rec(k+1, left-c)
		}
	}
	rec(0, p)
}

// By enumeration: class probabilities sum to 1, the class entropy matches
// the closed form, and the ordered-point sums match the oracles.
func TestEnumeration(t *testing.T) {
	for _, tc := range []struct {
		p, n    int
		ordered float64 // Σ over ordered points of p log2 p
	}{{3, 9, -35.8868}, {10, 3, -10446.4052}, {9, 9, 0}} {
		sum, h, ord := 0.0, 0.0, 0.0
		compositions(tc.p, tc.n, func(b []int) {
			lp := LnProb(b, tc.n)
			p := math.Exp(lp)
			sum += p
			h -= p * lp / math.Ln2
			ord += math.Exp(LnMultiplicity(b)) * p * lp / math.Ln2
		})
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("(%d,%d): Σ p = %v", tc.p, tc.n, sum)
		}
		if math.Abs(h-ClassEntropy(tc.p, tc.n)) > 1e-9 {
			t.Errorf("(%d,%d): enumerated H = %v, closed form %v", tc.p, tc.n, h, ClassEntropy(tc.p, tc.n))
		}
		if tc.ordered != 0 && math.Abs(ord-tc.ordered) > 5e-5 {
			t.Errorf("(%d,%d): Σ ordered p log2 p = %.4f, want %.4f", tc.p, tc.n, ord, tc.ordered)
		}
	}
}

// The tracker's O(1) updates agree with direct computation.
func TestTrackerIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	blocks := state.NewBlockIndex(nil)
	tr := state.NewTracker(17, blocks, 1)
	for i := 0; i < 5000; i++ {
		tr.Set(rng.IntN(17), int32(rng.IntN(13)+1))
		if i%97 != 0 {
			continue
		}
		counts := map[int32]int{}
		for _, x := range tr.X {
			counts[x]++
		}
		var b []int
		hist := 0.0
		for _, c := range counts {
			b = append(b, c)
			f := float64(c) / 17
			hist -= f * math.Log2(f)
		}
		if got, want := tr.LnMultiplicity(), LnMultiplicity(b); math.Abs(got-want) > 1e-9 {
			t.Fatalf("step %d: ln W = %v, want %v", i, got, want)
		}
		if got := tr.HistogramEntropy(); math.Abs(got-hist) > 1e-9 {
			t.Fatalf("step %d: histogram entropy = %v, want %v", i, got, hist)
		}
	}
	// Permutations share a class hash; different classes do not.
	a, b := state.NewTracker(3, blocks, 1), state.NewTracker(3, blocks, 1)
	a.Set(0, 2)
	a.Set(1, 3)
	b.Set(2, 2)
	b.Set(0, 3)
	if a.ClassHash() != b.ClassHash() {
		t.Fatal("permuted states have different class hashes")
	}
	b.Set(1, 4)
	if a.ClassHash() == b.ClassHash() {
		t.Fatal("different classes share a hash")
	}
}

// rowsOf reconstructs the states of recs.
func rowsOf(t *testing.T, h *trace.Header, recs []trace.Record, opts state.Options) (out [][]int32, ts, durs []int64) {
	t.Helper()
	err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), opts, func(r *state.Row) error {
		out = append(out, append([]int32(nil), r.X...))
		ts = append(ts, r.T)
		durs = append(durs, r.Dur)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return
}

// Section 5.5 worked by hand.
func TestReconstruct(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 3}}, States: []trace.StateDef{{ID: 1}, {ID: 2}, {ID: 3}}}
	recs := []trace.Record{
		trace.State(0, 1, 0, 2), // same time as the initial row: written into it
		trace.State(0, 0, 10, 2),
		trace.State(0, 2, 10, 3),
		trace.State(0, 1, 25, 3),
		trace.State(0, 0, 40, 3),
	}
	// The paper's convention: every process in the start block (1) at
	// time 0.
	paper := state.Options{Start: 1, StartSet: true}
	rows, ts, durs := rowsOf(t, h, recs, paper)
	want := [][]int32{{1, 2, 1}, {2, 2, 3}, {2, 3, 3}, {3, 3, 3}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows %v, want %v", len(rows), rows, want)
	}
	for i := range want {
		for j := range want[i] {
			if rows[i][j] != want[i][j] {
				t.Fatalf("row %d = %v, want %v", i, rows[i], want[i])
			}
		}
	}
	if ts[1] != 10 || ts[3] != 40 || durs[0] != 10 || durs[1] != 15 || durs[3] != 0 {
		t.Fatalf("times %v durations %v", ts, durs)
	}
	// Without a start block, processes 0 and 2 do not exist before their
	// first records at 10: the same rows but the first.
	rows, ts, _ = rowsOf(t, h, recs, state.Options{})
	if len(rows) != 4 || !slices.Equal(rows[0], []int32{state.Absent, 2, state.Absent}) || ts[0] != 0 || !slices.Equal(rows[1], want[1]) || !slices.Equal(rows[3], want[3]) {
		t.Fatalf("rows without a start block %v at %v", rows, ts)
	}
	// A row per record: the initial state, then one per record.
	paper.PerRecord = true
	rows, _, _ = rowsOf(t, h, recs, paper)
	if len(rows) != 6 || rows[1][1] != 2 || rows[2][0] != 2 || rows[2][2] != 1 || rows[3][2] != 3 {
		t.Fatalf("per-record rows %v", rows)
	}
	// A partial state over processes 2 and 0.
	rows, _, _ = rowsOf(t, h, recs, state.Options{Procs: []int32{2, 0}, Start: 1, StartSet: true})
	if len(rows) != 3 || rows[1][0] != 3 || rows[1][1] != 2 || rows[2][1] != 3 {
		t.Fatalf("partial rows %v", rows)
	}
	// Without a start block, the partial state has no row before 10,
	// when both exist.
	rows, ts, _ = rowsOf(t, h, recs, state.Options{Procs: []int32{2, 0}})
	if len(rows) != 2 || ts[0] != 10 || !slices.Equal(rows[0], []int32{3, 2}) || rows[1][1] != 3 {
		t.Fatalf("partial rows without a start block %v at %v", rows, ts)
	}
	// Two runs restart from the start block.
	h2 := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}, {ID: 1, Procs: 2}}}
	recs2 := []trace.Record{trace.State(0, 0, 5, 7), trace.State(1, 1, 3, 9)}
	rows, _, _ = rowsOf(t, h2, recs2, state.Options{Start: 4, StartSet: true})
	if len(rows) != 4 || rows[2][0] != 4 || rows[3][1] != 9 || rows[3][0] != 4 {
		t.Fatalf("two runs %v", rows)
	}
}

func measure(t *testing.T, h *trace.Header, recs []trace.Record, opts Options) Result {
	t.Helper()
	acc := NewAccumulator(opts)
	err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, acc.Add)
	if err != nil {
		t.Fatal(err)
	}
	return result(t, acc)
}

// result returns acc's result, failing the test on an error.
func result(t testing.TB, acc *Accumulator) Result {
	t.Helper()
	r, err := acc.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A lockstep execution (everyone always in the same block) has zero
// histogram entropy and the lowest combinatorial entropy per state.
func TestLockstepIsMinimal(t *testing.T) {
	const p, n, steps = 8, 6, 60
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: p}}}
	for b := int32(1); b <= n; b++ {
		h.States = append(h.States, trace.StateDef{ID: b})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var lock, free []trace.Record
	for s := 0; s < steps; s++ {
		b := int32(s%n) + 1
		for q := int32(0); q < p; q++ {
			lock = append(lock, trace.State(0, q, int64(s+1)*100, b))
			free = append(free, trace.State(0, q, int64(s+1)*100+int64(q), int32(rng.IntN(n))+1))
		}
	}
	l := measure(t, h, lock, Options{Blocks: n})
	f := measure(t, h, free, Options{Blocks: n})
	if l.HistogramEntropyMean != 0 || l.DistinctClasses != n { // one class per block: everyone in it
		t.Fatalf("lockstep: histogram entropy %v, %d classes", l.HistogramEntropyMean, l.DistinctClasses)
	}
	if !(l.CombEntropy < f.CombEntropy && l.EmpiricalEntropy < f.EmpiricalEntropy && l.CombEntropyDistinct < f.CombEntropyDistinct) {
		t.Fatalf("lockstep %+v is not below free %+v", l, f)
	}
	// All in one given block is one ordered point: p = N^-P exactly.
	wantLog2p := -float64(p) * math.Log2(n)
	if math.Abs(l.SurprisalMean+wantLog2p) > 1e-9 {
		t.Fatalf("lockstep surprisal %v, want %v", l.SurprisalMean, -wantLog2p)
	}
	if math.IsNaN(f.CombEntropy) || math.IsNaN(f.EmpiricalEntropy) || f.ClassEntropyMax != ClassEntropy(p, n) {
		t.Fatalf("free run: %+v", f)
	}
}

// Merging accumulators of two halves equals one pass.
func TestMerge(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 5}}}
	rng := rand.New(rand.NewPCG(5, 6))
	var recs []trace.Record
	for i := 0; i < 400; i++ {
		recs = append(recs, trace.State(0, int32(rng.IntN(5)), int64(i), int32(rng.IntN(4))))
	}
	whole := NewAccumulator(Options{Blocks: 4, TimeWeighted: true})
	a, b := NewAccumulator(Options{Blocks: 4, TimeWeighted: true}), NewAccumulator(Options{Blocks: 4, TimeWeighted: true})
	i := 0
	state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
		whole.Add(r)
		i++
		if i%2 == 0 {
			return a.Add(r)
		}
		return b.Add(r)
	})
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	x, y := result(t, whole), result(t, a)
	if !near(x.CombEntropy, y.CombEntropy, 1e-12) || x.DistinctClasses != y.DistinctClasses || !near(x.EmpiricalEntropy, y.EmpiricalEntropy, 1e-12) || !near(x.HistogramEntropyMean, y.HistogramEntropyMean, 1e-12) {
		t.Fatalf("merged %+v\nwhole %+v", y, x)
	}
}

// Degenerate inputs give zeros, never NaN.
func TestDegenerate(t *testing.T) {
	one := measure(t, &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 1}}}, []trace.Record{trace.State(0, 0, 5, 2)}, Options{Blocks: 1})
	empty := result(t, NewAccumulator(Options{}))
	for _, r := range []Result{one, empty} {
		for _, v := range []float64{r.CombEntropy, r.CombEntropyDistinct, r.SurprisalTotal, r.SurprisalMean, r.HistogramEntropyMean, r.EmpiricalEntropy, r.ClassEntropyMax, r.DistinctFraction} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite measure in %+v", r)
			}
		}
	}
	if one.Rows != 1 || one.CombEntropy != 0 {
		t.Fatalf("single process, single block: %+v", one)
	}
}

// A process that begins late is in no block until it does: worked by
// hand, N = 3 blocks, three processes, P2's first record at 10 ns:
//
//	row  t   state      present  class          p
//	0    0   (1,1,-)    2        {1,1}   W=1    1/3² = 1/9
//	1    10  (1,1,2)    3        {1,1,2} W=3    3/3³ = 1/9
//	2    20  (3,1,2)    3        {1,2,3} W=6    6/3³ = 2/9
//
// comb_entropy = 2·(1/9)·log2 9 + (2/9)·log2(9/2) = 1.186633333974361,
// surprisal = 2·log2 9 + log2 4.5 = 8.509775004326936, histogram entropy
// (0 + H(2/3,1/3) + log2 3)/3 = 0.8344194449252152, empirical entropy
// log2 3 (three classes, one row each). Time-weighted (10, 10, 0 ns): comb
// 20·(1/9)·log2 9 = 7.0442777809829185, surprisal mean log2 9, histogram
// entropy H(2/3,1/3)/2 = 0.45914791702724483, empirical entropy 1 bit.
// (Putting P2 in the smallest block, 1, before its record, as the
// reconstruction did, makes row 0 {1,1,1} with p = 1/27.)
func TestLateStart(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 3}}, States: []trace.StateDef{{ID: 1}, {ID: 2}, {ID: 3}}}
	recs := []trace.Record{trace.State(0, 0, 0, 1), trace.State(0, 1, 0, 1), trace.State(0, 2, 10, 2), trace.State(0, 0, 20, 3)}
	rows, ts, _ := rowsOf(t, h, recs, state.Options{})
	if len(rows) != 3 || !slices.Equal(rows[0], []int32{1, 1, state.Absent}) || !slices.Equal(rows[1], []int32{1, 1, 2}) || ts[1] != 10 {
		t.Fatalf("rows %v at %v", rows, ts)
	}
	for _, tc := range []struct {
		tw                                        bool
		comb, surprisal, surprisalMean, hist, emp float64
	}{
		{false, 1.186633333974361, 8.509775004326936, 8.509775004326936 / 3, 0.8344194449252152, math.Log2(3)},
		{true, 7.0442777809829185, 63.39850002884624, math.Log2(9), 0.45914791702724483, 1},
	} {
		r := measure(t, h, recs, Options{Blocks: 3, TimeWeighted: tc.tw})
		if r.P != 3 || r.N != 3 || r.Rows != 3 || r.DistinctClasses != 3 {
			t.Errorf("time weighted %v: P %d N %d rows %d classes %d", tc.tw, r.P, r.N, r.Rows, r.DistinctClasses)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"comb_entropy", r.CombEntropy, tc.comb},
			{"comb_entropy_distinct", r.CombEntropyDistinct, 1.186633333974361},
			{"surprisal_total", r.SurprisalTotal, tc.surprisal},
			{"surprisal_mean", r.SurprisalMean, tc.surprisalMean},
			{"histogram_entropy_mean", r.HistogramEntropyMean, tc.hist},
			{"empirical_entropy", r.EmpiricalEntropy, tc.emp},
		} {
			if !near(c.got, c.want, 1e-12) {
				t.Errorf("time weighted %v: %s = %.15g, want %.15g", tc.tw, c.name, c.got, c.want)
			}
		}
	}
}

// A process that enters a state marked Absent leaves the state: its
// column is Absent and the class is that of the others; a later record
// brings it back.
func TestAbsentState(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}}, States: []trace.StateDef{{ID: 0}, {ID: 1}, {ID: 4, Absent: true}}}
	recs := []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 1, 0, 1), trace.State(0, 1, 5, 4), trace.State(0, 0, 7, 1), trace.State(0, 1, 9, 0)}
	var got [][]int32
	var present []int
	var lnW []float64
	err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
		got = append(got, slices.Clone(r.X))
		present = append(present, r.Present())
		lnW = append(lnW, r.LnMultiplicity())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{0, 1}, {0, state.Absent}, {1, state.Absent}, {1, 0}}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("rows %v, want %v", got, want)
		}
	}
	// ln W: 2!/(1!1!) = 2, then one process alone: 1.
	if !slices.Equal(present, []int{2, 1, 1, 2}) || !near(lnW[0], math.Ln2, 1e-15) || lnW[1] != 0 || lnW[2] != 0 || !near(lnW[3], math.Ln2, 1e-15) {
		t.Errorf("present %v, ln W %v", present, lnW)
	}
	// N leaves the absent state out: two blocks.
	var n int
	a, err := newAnalysis(&engine.Trace{Header: h}, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if n = a.opts.Blocks; n != 2 {
		t.Errorf("N = %d, want 2 (the absent state is no block)", n)
	}
}
