package pca

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/trace"
)

// factorTrace is a trace of p processes whose blocks follow three hidden
// signals with amplitudes of different scales plus noise, so that the top
// three components stand apart from the rest.
func factorTrace(p, n int, seed uint64) (*trace.Header, []trace.Record) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: int32(p)}, {ID: 1, Procs: int32(p)}}}
	rng := rand.New(rand.NewPCG(seed, 7))
	amp := make([][3]float64, p)
	for i := range amp {
		amp[i] = [3]float64{40 * rng.Float64(), 15 * (rng.Float64() - 0.5), 5 * (rng.Float64() - 0.5)}
	}
	var recs []trace.Record
	for run := int32(0); run < 2; run++ {
		for i := 0; i < n; i++ {
			q := rng.IntN(p)
			x := float64(i) / float64(n)
			v := amp[q][0]*math.Sin(2*math.Pi*x) + amp[q][1]*math.Cos(6*math.Pi*x) + amp[q][2]*math.Sin(11*math.Pi*x) + rng.NormFloat64()
			recs = append(recs, trace.State(run, int32(q), int64(i+1)*10, int32(math.Round(v+100))))
		}
	}
	return h, recs
}

// TestRandomizedMatchesExact compares the randomized method with the exact
// one on 96 processes, both weightings: the top three variances agree to
// 1e-6 relative, the loadings to 1e-4 (as |cos| of the angle between the
// two unit vectors), the mean and total variance to 1e-9.
func TestRandomizedMatchesExact(t *testing.T) {
	const p, k = 96, 3
	h, recs := factorTrace(p, 20000, 3)
	for _, timeW := range []bool{false, true} {
		exact := mustAccumulator(t, p, timeW)
		pass := func(fn func(*state.Row) error) error {
			return state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, fn)
		}
		if err := pass(exact.Add); err != nil {
			t.Fatal(err)
		}
		want, err := exact.Result(k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Randomized(context.Background(), p, k, timeW, 1, pass)
		if err != nil {
			t.Fatal(err)
		}
		if got.Procs != p || got.Rows != want.Rows || got.Weight != want.Weight || len(got.Components) != k {
			t.Fatalf("timeW=%v: got %d procs, %d rows, weight %g, %d components; want %d, %d, %g, %d",
				timeW, got.Procs, got.Rows, got.Weight, len(got.Components), p, want.Rows, want.Weight, k)
		}
		if d := math.Abs(got.TotalVariance-want.TotalVariance) / want.TotalVariance; d > 1e-9 {
			t.Errorf("timeW=%v: total variance %g, exact %g", timeW, got.TotalVariance, want.TotalVariance)
		}
		for i := range want.Mean {
			if math.Abs(got.Mean[i]-want.Mean[i]) > 1e-9*math.Abs(want.Mean[i]) {
				t.Fatalf("timeW=%v: mean[%d] = %g, exact %g", timeW, i, got.Mean[i], want.Mean[i])
			}
		}
		for c := range want.Components {
			g, w := got.Components[c], want.Components[c]
			if d := math.Abs(g.Variance-w.Variance) / w.Variance; d > 1e-6 {
				t.Errorf("timeW=%v: PC%d variance %.10g, exact %.10g (relative error %.2g)", timeW, c+1, g.Variance, w.Variance, d)
			}
			if math.Abs(g.Explained-w.Explained) > 1e-6 {
				t.Errorf("timeW=%v: PC%d explains %g, exact %g", timeW, c+1, g.Explained, w.Explained)
			}
			dot := 0.0
			for i := range g.Loadings {
				dot += g.Loadings[i] * w.Loadings[i]
			}
			if 1-math.Abs(dot) > 1e-4 {
				t.Errorf("timeW=%v: PC%d loadings at |cos| %.8f from the exact ones", timeW, c+1, math.Abs(dot))
			}
			if dot < 0 {
				t.Errorf("timeW=%v: PC%d has the opposite sign of the exact one", timeW, c+1)
			}
		}
		if want.Components[0].Explained < 0.5 {
			t.Fatalf("the test trace is too flat: PC1 explains only %g", want.Components[0].Explained)
		}
	}
}

// TestRandomizedDeterministic checks that the same seed gives the same result.
func TestRandomizedDeterministic(t *testing.T) {
	h, recs := factorTrace(20, 2000, 5)
	pass := func(fn func(*state.Row) error) error {
		return state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, fn)
	}
	a, err := Randomized(context.Background(), 20, 2, false, 9, pass)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Randomized(context.Background(), 20, 2, false, 9, pass)
	if err != nil {
		t.Fatal(err)
	}
	for c := range a.Components {
		for i, v := range a.Components[c].Loadings {
			if b.Components[c].Loadings[i] != v {
				t.Fatalf("PC%d loading %d: %v, then %v", c+1, i, v, b.Components[c].Loadings[i])
			}
		}
	}
}

// TestMemoryEstimates checks the estimates behind the method choice and the
// refusal of the exact method for 1,000,000 processes, without allocating.
func TestMemoryEstimates(t *testing.T) {
	if got, want := ExactBytes(1000), 32e6; got != want {
		t.Errorf("ExactBytes(1000) = %g, want %g", got, want)
	}
	if !Exact(ExactMaxProcs) || Exact(ExactMaxProcs+1) {
		t.Errorf("Exact(%d) = %v, Exact(%d) = %v; want true, false", ExactMaxProcs, Exact(ExactMaxProcs), ExactMaxProcs+1, Exact(ExactMaxProcs+1))
	}
	_, err := NewAccumulator(1_000_000, false)
	if err == nil || !strings.Contains(err.Error(), "1000000 processes needs a 29.1 TiB covariance matrix") {
		t.Errorf("NewAccumulator(1000000) = %v, want the memory it needs", err)
	}
	if _, err := FromPartial(Partial{Procs: 1 << 30}); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Errorf("FromPartial of 2^30 processes = %v, want a refusal naming the memory", err)
	}
	// 1,000,000 processes and 3 components: 13 directions, about 320 MB.
	if got := RandomizedBytes(1_000_000, 3); got != 8*1e6*(3*13+4) {
		t.Errorf("RandomizedBytes(1e6, 3) = %g", got)
	}
}
