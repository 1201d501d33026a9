package occupancy

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/cputime"
)

// FuzzReadSweep checks that any sweep file either reads into a table whose
// rows have a value per column and that writes back to the same table, or
// fails with an error naming the file.
func FuzzReadSweep(f *testing.F) {
	for _, s := range []string{"n,g,mode:U,elapsed\n4,20,0.5,0.6\n", "# c\nmode:I,mode:U\n1,2\n", "n\n", "n,mode:U\n1\n", "", "n,mode:U\n1,1e999\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSweep(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			var fe *format.Error
			if !errors.As(err, &fe) || fe.File != "fuzz.csv" {
				t.Fatalf("error without location: %v", err)
			}
			return
		}
		if len(s.Modes) == 0 {
			t.Fatal("no modes without an error")
		}
		for _, tr := range s.Trials {
			if len(tr.Values) != len(s.Params) || len(tr.Means) != len(s.Modes) {
				t.Fatalf("trial %+v for %d parameters, %d modes", tr, len(s.Params), len(s.Modes))
			}
		}
		var buf bytes.Buffer
		if err := WriteSweep(&buf, s); err != nil {
			t.Fatal(err)
		}
		back, err := ReadSweep(&buf, "back.csv")
		if err != nil {
			t.Fatalf("written sweep does not read back: %v\n%s", err, buf.String())
		}
		if !slices.Equal(back.Params, s.Params) || !slices.Equal(back.Modes, s.Modes) || len(back.Trials) != len(s.Trials) {
			t.Fatalf("round trip changed the table")
		}
	})
}

// FuzzParseTerm checks that a term either parses and formats back to a
// term that parses to the same exponents, or fails with an error.
func FuzzParseTerm(f *testing.F) {
	params := []string{"n", "p", "g", "e"}
	for _, s := range []string{"g/n", "p*n*g", "p/(n*g)", "1/n", "1", "g/(n", "**", "n*n", "x", "/(", ")"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseTerm(s, params)
		if err != nil {
			if !strings.Contains(err.Error(), "term ") {
				t.Fatalf("error not naming the term: %v", err)
			}
			return
		}
		back, err := ParseTerm(tm.Format(params), params)
		if err != nil || !slices.Equal(back, tm) {
			t.Fatalf("%q → %v → %q → %v, %v", s, tm, tm.Format(params), back, err)
		}
	})
}

// FuzzParseRates checks that a rate file either parses into finite rates
// of macrostates of one length, or fails with a located error.
func FuzzParseRates(f *testing.F) {
	for _, s := range []string{"4,0,0 4\n* 1\n", "1 2\n2,3 1\n", "x y z\n", "", "0 NaN\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, k, err := ParseRates(bytes.NewReader(data), "fuzz.rates")
		if err != nil {
			var fe *format.Error
			if !errors.As(err, &fe) || fe.File != "fuzz.rates" {
				t.Fatalf("error without location: %v", err)
			}
			return
		}
		for key, v := range r {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				t.Fatalf("rate %v of %s", v, key)
			}
			if key != DefaultRate && strings.Count(key, ",")+1 != k {
				t.Fatalf("macrostate %s of %d counts, k = %d", key, strings.Count(key, ",")+1, k)
			}
		}
	})
}

// FuzzReadFits checks that a fit file either reads into fits whose
// predictions can be made, or fails with an error naming the file.
func FuzzReadFits(f *testing.F) {
	f.Add([]byte(`{"fits":[{"name":"r","params":["n","g"],"modes":["U"],"trials":5,"equations":[{"mode":"U","terms":[{"term":"g/n","coef":0.5},{"term":"1","coef":1}]}]}]}`))
	f.Add([]byte(`{"fits":[]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fits, err := ReadFits(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		for _, fit := range fits {
			v := make([]float64, len(fit.Params))
			for i := range v {
				v[i] = 1
			}
			fit.Predict(v) // must not panic
		}
	})
}

// BenchmarkFit fits 200 trials × 4 modes over 4 parameters with terms of
// up to 3 parameters (65 candidates): the target is under 2 s.
func BenchmarkFit(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	s := &Sweep{Params: []string{"n", "p", "g", "e"}, Modes: []string{"I", "S", "R", "U"}, HasElapsed: true}
	for range 200 {
		n, p, g, e := float64(4+rng.IntN(13)), float64(1+rng.IntN(16)), float64(20+rng.IntN(981)), float64(75+rng.IntN(151))
		noise := func() float64 { return 1 + 0.05*rng.NormFloat64() }
		m := []float64{(0.0076*p*n + 0.066) * noise(), (0.0114*p + 0.067) * noise(), (22.6*(g-10)/(n*e) + 0.0367*(p+4)*n) * noise(), (0.0299*p*n*g/100 - 0.38 + 0.522*g/n) * noise()}
		s.Trials = append(s.Trials, Trial{Values: []float64{n, p, g, e}, Means: m, Elapsed: m[0] + m[1] + m[2] + m[3]})
	}
	b.ResetTimer()
	cpu0 := cputime.Used()
	var f *Fit
	for range b.N {
		var err error
		if f, err = FitSweep(s, FitOptions{MaxOrder: 3, MaxTerms: 6}); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := cputime.Used() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N)*1e3, "cpu-ms/fit")
	}
	b.ReportMetric(float64(b.Elapsed()/time.Millisecond)/float64(b.N), "ms/fit")
	b.ReportMetric(100*f.Acc95, "acc95-%")
}
