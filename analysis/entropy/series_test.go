package entropy

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/trace"
)

func TestWindows(t *testing.T) {
	// Two processes: both in block 1 over [0,10), then process 1 in block 2
	// over [10,30). Windows of 20 ns: the first holds 30 process-ns in
	// block 1 and 10 in block 2; the second 10 and 10.
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}}}
	recs := []trace.Record{trace.State(0, 1, 10, 2), trace.State(0, 0, 30, 1)}
	w, err := NewWindows(20)
	if err != nil {
		t.Fatal(err)
	}
	if err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{Start: 1, StartSet: true}, w.Add); err != nil {
		t.Fatal(err)
	}
	pts := w.Result()
	h1 := -(0.75*math.Log2(0.75) + 0.25*math.Log2(0.25))
	if len(pts) != 2 || math.Abs(pts[0].Entropy-h1) > 1e-12 || math.Abs(pts[1].Entropy-1) > 1e-12 || pts[1].Covered != 10 || pts[1].Start != 20 {
		t.Fatalf("series %+v, want entropies %.4f and 1", pts, h1)
	}
	if _, err := NewWindows(0); err == nil {
		t.Fatal("a zero window was accepted")
	}
}

// A ring of 9 processes, every one in block 0 at time 0, where process 5
// can never reach blocks 7 and 8: the subsets that contain it visit fewer
// classes, and the search ranks one of them first.
func TestSubsetsFindRestrictedProcess(t *testing.T) {
	const p = 9
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: p}}}
	for b := int32(0); b <= 8; b++ {
		h.States = append(h.States, trace.StateDef{ID: b})
	}
	rng := rand.New(rand.NewPCG(11, 12))
	var recs []trace.Record
	for q := range int32(p) {
		recs = append(recs, trace.State(0, q, 0, 0))
	}
	for i := 0; i < 20000; i++ {
		q := int32(rng.IntN(p))
		b := int32(rng.IntN(9))
		if q == 5 && b >= 7 {
			b = int32(rng.IntN(7))
		}
		recs = append(recs, trace.State(0, q, int64(i+1), b))
	}
	open := func() trace.Reader { return trace.NewSliceReader(recs) }
	res, err := Subsets(context.Background(), h, open, 3, true, Options{Blocks: 9}, MeasureCombDistinct)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 9 {
		t.Fatalf("%d windows, want 9 (cyclic)", len(res))
	}
	if !slices.Contains(res[0].Procs, 5) || res[0].Score >= 0 {
		t.Fatalf("most anomalous window %v (score %.2f) does not hold process 5 with a lower entropy", res[0].Procs, res[0].Score)
	}
	// Without wrap-around there are p-k+1 windows.
	res, err = Subsets(context.Background(), h, open, 3, false, Options{Blocks: 9}, MeasureCombDistinct)
	if err != nil || len(res) != 7 {
		t.Fatalf("non-cyclic: %d windows, %v", len(res), err)
	}
	if _, err := Subsets(context.Background(), h, open, 10, false, Options{}, MeasureComb); err == nil {
		t.Fatal("a subset larger than the run was accepted")
	}
	if _, err := Subsets(context.Background(), h, open, 3, false, Options{}, "nope"); err == nil {
		t.Fatal("an unknown measure was accepted")
	}
}

func benchTrace(p, n int) (*trace.Header, []trace.Record) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: int32(p)}}}
	rng := rand.New(rand.NewPCG(1, 1))
	recs := make([]trace.Record, n)
	// Processes step through blocks 1..13 in order, like the amoeba loop.
	cur := make([]int32, p)
	for i := range recs {
		q := rng.IntN(p)
		cur[q] = cur[q]%13 + 1
		recs[i] = trace.State(0, int32(q), int64(i/3)*1000, cur[q])
	}
	return h, recs
}

// BenchmarkReconstructHistogram measures state reconstruction plus the
// histogram entropy series, the 20 M records/s per core target.
func BenchmarkReconstructHistogram(b *testing.B) {
	h, recs := benchTrace(64, 4_000_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, _ := NewWindows(1_000_000)
		sum := 0.0
		err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
			sum += r.HistogramEntropy()
			return w.Add(r)
		})
		if err != nil {
			b.Fatal(err)
		}
		if len(w.Result()) == 0 || sum == 0 {
			b.Fatal("no windows")
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAllMeasures adds every measure of the accumulator (the class
// table makes it slower when most states are distinct, as here).
func BenchmarkAllMeasures(b *testing.B) {
	h, recs := benchTrace(64, 4_000_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		acc := NewAccumulator(Options{Blocks: 13})
		if err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, acc.Add); err != nil {
			b.Fatal(err)
		}
		if result(b, acc).Rows == 0 {
			b.Fatal("no rows")
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// TestRankerOnePass checks the one-pass ranking against its definition:
// each window's partial state rebuilt alone from the records of run 0, on
// two runs whose records repeat blocks (re-entries that begin rows
// without changing the state), some at equal times, with a process whose
// first record comes late and another that has none in run 0.
func TestRankerOnePass(t *testing.T) {
	const p = 7
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: p}, {ID: 1, Procs: p}}}
	for b := int32(1); b <= 4; b++ {
		h.States = append(h.States, trace.StateDef{ID: b})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []trace.Record
	for run := int32(0); run < 2; run++ {
		for i := 0; i < 3000; i++ {
			q := int32(rng.IntN(p - 1))
			if q == 2 && i < 1500 {
				continue
			}
			recs = append(recs, trace.State(run, q, int64(i/2+1), int32(rng.IntN(4)+1)))
		}
	}
	for _, cyclic := range []bool{false, true} {
		for _, so := range []state.Options{{}, {PerRecord: true, Start: 2, StartSet: true}} {
			rk, err := NewRanker(h, 3, cyclic, Options{Blocks: 4, TimeWeighted: so.PerRecord}, MeasureEmpirical, so)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(recs); i += 100 {
				if err := rk.Add(recs[i:min(i+100, len(recs))]); err != nil {
					t.Fatal(err)
				}
			}
			got, err := rk.Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range got {
				acc := NewAccumulator(Options{Blocks: 4, TimeWeighted: so.PerRecord})
				o := so
				o.Procs = g.Procs
				r := trace.Filter(trace.NewSliceReader(recs), func(r *trace.Record) bool { return r.Run == 0 })
				if err := state.Reconstruct(context.Background(), h, r, o, acc.Add); err != nil {
					t.Fatal(err)
				}
				if want := result(t, acc); g.Result != want || want.Rows == 0 {
					t.Errorf("cyclic %v, %+v: window %v:\n got %+v\nwant %+v", cyclic, so, g.Procs, g.Result, want)
				}
			}
		}
	}
}
