package pca

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/internal/needtool"
	"github.com/parscope/parscope/trace"
)

// walkTrace is the benchmark's trace: n records, each moving one random
// process of p to its next block of 13.
func walkTrace(p, n int) (*trace.Header, []trace.Record) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: int32(p)}}}
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]trace.Record, n)
	cur := make([]int32, p)
	for i := range recs {
		q := rng.IntN(p)
		cur[q] = cur[q]%13 + 1
		recs[i] = trace.State(0, int32(q), int64(i+1), cur[q])
	}
	return h, recs
}

// sklearnResult is what scripts/sklearn-pca.py prints.
type sklearnResult struct {
	Seconds  float64   `json:"seconds"`
	Variance []float64 `json:"explained_variance"`
	Ratio    []float64 `json:"explained_variance_ratio"`
	Version  string    `json:"sklearn"`
}

// pcaBoth runs parscope's PCA on the trace and scikit-learn's on the same
// state matrix (written to a file of bytes), and returns both results and
// parscope's time.
func pcaBoth(tb testing.TB, h *trace.Header, recs []trace.Record, k int) (*Result, sklearnResult, time.Duration) {
	tb.Helper()
	// Debian's python3-sklearn installs for the system interpreter, which
	// may not be the python3 first on PATH (pyenv).
	py := needtool.Path(tb, "python3-sklearn", "/usr/bin/python3")
	if err := exec.Command(py, "-c", "import sklearn").Run(); err != nil {
		needtool.Missing(tb, "python3 cannot import sklearn (Debian package python3-sklearn): %v", err)
	}
	p := int(h.Runs[0].Procs)
	path := filepath.Join(tb.TempDir(), "states.i8")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := make([]byte, p)
	var n int64
	err = state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
		for i, v := range r.X {
			line[i] = byte(int8(v))
		}
		n++
		_, err := w.Write(line)
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}

	start := time.Now()
	acc := mustAccumulator(tb, p, false)
	if err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, acc.Add); err != nil {
		tb.Fatal(err)
	}
	res, err := acc.Result(k)
	if err != nil {
		tb.Fatal(err)
	}
	ours := time.Since(start)

	out, err := exec.Command(py, "../../scripts/sklearn-pca.py", path, strconv.FormatInt(n, 10), strconv.Itoa(p), strconv.Itoa(k)).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			tb.Fatalf("sklearn-pca.py: %v\n%s", err, ee.Stderr)
		}
		tb.Fatal(err)
	}
	var sk sklearnResult
	if err := json.Unmarshal(out, &sk); err != nil {
		tb.Fatalf("sklearn-pca.py printed %q: %v", out, err)
	}
	if len(sk.Variance) != k || len(res.Components) != k {
		tb.Fatalf("components: sklearn %d, parscope %d, want %d", len(sk.Variance), len(res.Components), k)
	}
	return res, sk, ours
}

// agreement is the largest relative difference of the explained variance
// and the explained-variance ratio between the two results.
func agreement(res *Result, sk sklearnResult) float64 {
	worst := 0.0
	for i, c := range res.Components {
		worst = max(worst, math.Abs(c.Variance-sk.Variance[i])/sk.Variance[i],
			math.Abs(c.Explained-sk.Ratio[i])/sk.Ratio[i])
	}
	return worst
}

// TestSklearnAgreement checks the top components against scikit-learn's
// PCA of the same matrix (200,000 states of 64 processes): the explained
// variance and its ratio agree to 1e-6 relative.
func TestSklearnAgreement(t *testing.T) {
	h, recs := walkTrace(64, 200_000)
	res, sk, _ := pcaBoth(t, h, recs, 3)
	if a := agreement(res, sk); a > 1e-6 {
		t.Fatalf("explained variance differs by %.3g relative (parscope %+v, sklearn %+v)", a, res.Components[0].Variance, sk)
	}
	t.Logf("scikit-learn %s agrees to %.2g", sk.Version, agreement(res, sk))
}

// BenchmarkPCAVsSklearn1024 runs the comparison: top-3 PCA of a
// 1,000,000 × 1024 state matrix by parscope (streaming covariance) and by
// scikit-learn (the matrix in memory, 8 GB of float64, ARPACK), in the
// same run. It reports both times, their ratio and the agreement of the
// explained variance. It needs about 17 GB of free memory for numpy.
func BenchmarkPCAVsSklearn1024(b *testing.B) {
	h, recs := walkTrace(1024, 1_000_000)
	for i := 0; i < b.N; i++ {
		res, sk, ours := pcaBoth(b, h, recs, 3)
		b.ReportMetric(ours.Seconds(), "parscope-s")
		b.ReportMetric(sk.Seconds, "sklearn-s")
		b.ReportMetric(sk.Seconds/ours.Seconds(), "speedup")
		b.ReportMetric(agreement(res, sk), "max-rel-diff")
	}
}
