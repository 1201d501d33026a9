package pca

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/trace"
)

func randomTrace(p, n int, seed uint64) (*trace.Header, []trace.Record) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: int32(p)}, {ID: 1, Procs: int32(p)}}}
	rng := rand.New(rand.NewPCG(seed, 1))
	var recs []trace.Record
	for run := int32(0); run < 2; run++ {
		for i := 0; i < n; i++ {
			// Columns drift at different speeds so components differ.
			q := rng.IntN(p)
			recs = append(recs, trace.State(run, int32(q), int64(i+1)*int64(1+rng.IntN(5)), int32(rng.IntN(3+q))))
		}
	}
	// Times within a run must not go back: make them increasing per run.
	for i := range recs {
		recs[i].T = int64(i%n+1) * 10
	}
	return h, recs
}

// rows collects the explicit state matrix and weights.
func rows(t *testing.T, h *trace.Header, recs []trace.Record, timeW bool) (*mat.Dense, []float64, *Accumulator) {
	t.Helper()
	p := int(h.Runs[0].Procs)
	acc := mustAccumulator(t, p, timeW)
	var data, w []float64
	err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
		for _, v := range r.X {
			data = append(data, float64(v))
		}
		wt := 1.0
		if timeW {
			wt = float64(r.Dur)
		}
		w = append(w, wt)
		return acc.Add(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	return mat.NewDense(len(w), p, data), w, acc
}

func TestAgainstDirectCovariance(t *testing.T) {
	for _, timeW := range []bool{false, true} {
		h, recs := randomTrace(7, 3000, 9)
		m, w, acc := rows(t, h, recs, timeW)
		res, err := acc.Result(0)
		if err != nil {
			t.Fatal(err)
		}
		// gonum: weighted covariance with unbiased=false-equivalent scaling.
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, m, w)
		// stat uses the (Σw − 1) divisor; rescale to the population form.
		sw := 0.0
		for _, x := range w {
			sw += x
		}
		cov.ScaleSym((sw-1)/sw, &cov)
		var eig mat.EigenSym
		eig.Factorize(&cov, true)
		vals := eig.Values(nil)
		total := 0.0
		for _, v := range vals {
			total += v
		}
		if math.Abs(total-res.TotalVariance) > 1e-9*total {
			t.Fatalf("timeW=%v: total variance %v, want %v", timeW, res.TotalVariance, total)
		}
		for c := range res.Components {
			want := vals[len(vals)-1-c]
			if math.Abs(res.Components[c].Variance-want) > 1e-8*total {
				t.Fatalf("timeW=%v: component %d variance %v, want %v", timeW, c, res.Components[c].Variance, want)
			}
		}
		sumExp := 0.0
		for _, c := range res.Components {
			sumExp += c.Explained
		}
		if math.Abs(sumExp-1) > 1e-9 {
			t.Fatalf("explained fractions sum to %v", sumExp)
		}
		// Scores equal the direct projection of each centred row.
		sc := NewScorer(res)
		i := 0
		state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
			got := sc.Scores(r)
			for c, comp := range res.Components[:2] {
				want := 0.0
				for j := range comp.Loadings {
					want += (m.At(i, j) - res.Mean[j]) * comp.Loadings[j]
				}
				if math.Abs(got[c]-want) > 1e-9*(1+math.Abs(want)) {
					t.Fatalf("row %d component %d: score %v, want %v", i, c, got[c], want)
				}
			}
			i++
			return nil
		})
	}
}

func TestLockstep(t *testing.T) {
	const p = 6
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: p}}}
	var recs []trace.Record
	for s := 1; s <= 40; s++ {
		for q := int32(0); q < p; q++ {
			recs = append(recs, trace.State(0, q, int64(s)*100, int32(s%9)))
		}
	}
	_, _, acc := rows(t, h, recs, false)
	res, err := acc.Result(3)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Components[0].Explained-1) > 1e-12 || res.Components[1].Variance > 1e-9 {
		t.Fatalf("lockstep: %+v", res.Components)
	}
	// PC1 weighs every process equally: the vertical line of the phase space.
	for _, l := range res.Components[0].Loadings {
		if math.Abs(l-1/math.Sqrt(p)) > 1e-9 {
			t.Fatalf("lockstep loadings %v", res.Components[0].Loadings)
		}
	}
}

func TestMerge(t *testing.T) {
	h, recs := randomTrace(5, 1000, 3)
	_, _, whole := rows(t, h, recs, true)
	a, b := mustAccumulator(t, 5, true), mustAccumulator(t, 5, true)
	i := 0
	state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
		i++
		if i < 700 {
			return a.Add(r)
		}
		return b.Add(r)
	})
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	x, _ := whole.Result(2)
	y, _ := a.Result(2)
	if math.Abs(x.TotalVariance-y.TotalVariance) > 1e-9*x.TotalVariance || math.Abs(x.Components[0].Variance-y.Components[0].Variance) > 1e-9*x.TotalVariance {
		t.Fatalf("merged %v / %v, whole %v / %v", y.TotalVariance, y.Components[0].Variance, x.TotalVariance, x.Components[0].Variance)
	}
}

func TestEmpty(t *testing.T) {
	if _, err := mustAccumulator(t, 3, false).Result(1); err == nil {
		t.Fatal("PCA of no states succeeded")
	}
}

// BenchmarkPCA1024 measures the streaming covariance and the top-3 PCA of a
// 1,000,000-state × 1024-process matrix (the target is under 30 s).
func BenchmarkPCA1024(b *testing.B) {
	const p = 1024
	h, recs := walkTrace(p, 1_000_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		acc := mustAccumulator(b, p, false)
		if err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, acc.Add); err != nil {
			b.Fatal(err)
		}
		res, err := acc.Result(3)
		if err != nil || len(res.Components) != 3 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/pca")
}

// mustAccumulator returns an accumulator of p processes or stops the test.
func mustAccumulator(t testing.TB, p int, timeW bool) *Accumulator {
	t.Helper()
	a, err := NewAccumulator(p, timeW)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
