package state

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// naiveRow is a state as a direct reading of the definition gives it.
type naiveRow struct {
	Run    int32
	T, Dur int64
	X      []int32
}

// naive rebuilds the states of recs (time-merged, run by run) the slow,
// obvious way: every process starts in start at 0, a row per distinct
// time of a state record of a selected process, each lasting until the
// next row of its run (the last 0).
func naive(recs []trace.Record, procs map[int32][]int32, start int32) []naiveRow {
	var out []naiveRow
	var x []int32
	cols := map[int32]int{}
	run := int32(-1)
	for _, r := range recs {
		if r.Kind != trace.KindState {
			continue
		}
		if r.Run != run {
			run = r.Run
			x = make([]int32, len(procs[run]))
			for i := range x {
				x[i] = start
			}
			clear(cols)
			for c, p := range procs[run] {
				cols[p] = c
			}
			out = append(out, naiveRow{Run: run, X: slices.Clone(x)})
		}
		c, ok := cols[r.Proc]
		if !ok {
			continue
		}
		last := &out[len(out)-1]
		if r.T != last.T {
			last.Dur = r.T - last.T
			out = append(out, naiveRow{Run: run, T: r.T, X: slices.Clone(x)})
			last = &out[len(out)-1]
		}
		x[c] = r.ID
		last.X = slices.Clone(x)
	}
	return out
}

// TestBuilderBatches feeds a Builder batches of every size from 1 record
// up, of two runs mixing every timed kind, and checks its rows against
// the naive reconstruction, for every process and for a partial state.
func TestBuilderBatches(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 5}, {ID: 1, Procs: 5}}}
	for id := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: id + 2})
	}
	var recs []trace.Record
	for run := range int32(2) {
		rs, err := trace.ReadAll(&tracetest.Stream{Procs: 5, Limit: 3000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			r.Run = run
			if r.Kind == trace.KindState {
				r.ID = 2 + r.ID%5
			}
			recs = append(recs, r)
		}
	}
	for _, sel := range [][]int32{nil, {3, 1}} {
		procs := map[int32][]int32{0: sel, 1: sel}
		if sel == nil {
			procs = map[int32][]int32{0: {0, 1, 2, 3, 4}, 1: {0, 1, 2, 3, 4}}
		}
		want := naive(recs, procs, 2)
		if len(want) < 100 {
			t.Fatalf("only %d rows: the stream has too few states", len(want))
		}
		for _, size := range []int{1, 7, 4096, len(recs)} {
			var got []naiveRow
			b, err := NewBuilder(h, Options{Procs: sel}, func(r *Row) error {
				got = append(got, naiveRow{Run: r.Run, T: r.T, Dur: r.Dur, X: slices.Clone(r.X)})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(recs); i += size {
				for j := i; j < min(i+size, len(recs)); j++ {
					if err := b.Add(&recs[j]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, func(a, b naiveRow) bool {
				return a.Run == b.Run && a.T == b.T && a.Dur == b.Dur && slices.Equal(a.X, b.X)
			}) {
				n := min(len(got), len(want))
				for i := range n {
					if got[i].T != want[i].T || got[i].Dur != want[i].Dur || !slices.Equal(got[i].X, want[i].X) {
						t.Fatalf("procs %v, batches of %d: row %d is %+v, want %+v", sel, size, i, got[i], want[i])
					}
				}
				t.Fatalf("procs %v, batches of %d: %d rows, want %d", sel, size, len(got), len(want))
			}
		}
	}
}

func TestSample(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		max  int
		want []int64
	}{
		{3, 5, []int64{0, 1, 2}},
		{3, 0, []int64{0, 1, 2}},
		{10, 4, []int64{0, 3, 6, 9}},
		{10, 1, []int64{0}},
		{0, 4, []int64{}},
	} {
		if got := Sample(tc.n, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("Sample(%d, %d) = %v, want %v", tc.n, tc.max, got, tc.want)
		}
	}
}

// TestTrackerAbsent moves processes between blocks and absence at random
// and checks the tracker's counts and class quantities against those of a
// tracker built afresh from the same state: the class is the multiset of
// the blocks of the processes present.
func TestTrackerAbsent(t *testing.T) {
	const p = 7
	blocks := NewBlockIndex(nil)
	tr := NewTracker(p, blocks, Absent)
	if tr.Present() != 0 || tr.LnMultiplicity() != 0 || tr.HistogramEntropy() != 0 {
		t.Fatalf("an empty state: %d present, ln W %v, h %v", tr.Present(), tr.LnMultiplicity(), tr.HistogramEntropy())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for step := range 3000 {
		v := int32(rng.IntN(4))
		if rng.IntN(4) == 0 {
			v = Absent
		}
		tr.Set(rng.IntN(p), v)
		fresh := NewTracker(p, blocks, Absent)
		present := 0
		counts := map[int32]int{}
		for c, x := range tr.X {
			fresh.Set(c, x)
			if x != Absent {
				present++
				counts[x]++
			}
		}
		// ln W = ln P! − Σ ln b_k!, P the processes present.
		lnW, _ := math.Lgamma(float64(present) + 1)
		h := 0.0
		for _, b := range counts {
			l, _ := math.Lgamma(float64(b) + 1)
			lnW -= l
			f := float64(b) / float64(present)
			h -= f * math.Log2(f)
		}
		for k, b := range tr.Counts {
			if b != counts[blocks.ID(k)] {
				t.Fatalf("step %d: %d processes in block %d, want %d (state %v)", step, b, blocks.ID(k), counts[blocks.ID(k)], tr.X)
			}
		}
		if tr.Present() != present || math.Abs(tr.LnMultiplicity()-lnW) > 1e-9 || math.Abs(tr.HistogramEntropy()-h) > 1e-9 ||
			tr.ClassHash() != fresh.ClassHash() || math.Abs(tr.LnProb(4)-(lnW-float64(present)*math.Log(4))) > 1e-9 {
			t.Fatalf("step %d, state %v: present %d ln W %v h %v, want %d %v %v (hash equal %v)", step, tr.X, tr.Present(), tr.LnMultiplicity(), tr.HistogramEntropy(), present, lnW, h, tr.ClassHash() == fresh.ClassHash())
		}
	}
}

// TestSeedAbsent seeds a window with a process that has not begun and one
// in a state marked Absent: both are absent in the window's first row.
func TestSeedAbsent(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 3}}, States: []trace.StateDef{{ID: 0}, {ID: 1}, {ID: 4, Absent: true}}}
	var rows [][]int32
	b, err := NewBuilder(h, Options{Seed: []int32{Absent, 1, 4}, From: 100, To: 200}, func(r *Row) error {
		rows = append(rows, slices.Clone(r.X))
		if r.Present() != 1 && len(rows) == 1 {
			t.Errorf("first row: %d present, want 1", r.Present())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.State(0, 0, 150, 0)
	if err := b.Add(&rec); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !slices.Equal(rows[0], []int32{Absent, 1, Absent}) || !slices.Equal(rows[1], []int32{0, 1, Absent}) {
		t.Fatalf("rows %v", rows)
	}
	// A start block marked Absent leaves processes absent.
	rows = nil
	b, err = NewBuilder(h, Options{Start: 4, StartSet: true}, func(r *Row) error {
		rows = append(rows, slices.Clone(r.X))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add(&rec); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !slices.Equal(rows[0], []int32{0, Absent, Absent}) {
		t.Fatalf("start in the absent state: rows %v", rows)
	}
}
