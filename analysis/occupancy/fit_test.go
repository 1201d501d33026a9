package occupancy

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// ringModel is Lyon's B3Ring column of the tableau (modes I, S, R, U over
// n, p, g), with R = 0.0367(p+4)n + 0.296 written as monomials.
var ringModel = map[string]map[string]float64{
	"I": {"p*n": 0.00760, "1": 0.0660},
	"S": {"p": 0.0114, "1": 0.067},
	"R": {"p*n": 0.0367, "n": 4 * 0.0367, "1": 0.296},
	"U": {"p*n*g": 0.0299, "1": -0.380},
}

// randomModel is Lyon's B1Random column (n, p, g, e with p fixed at 1):
// R = 22.6 (g−100)/(ne) + 2.86 and S = 0.0013 (n+e)/n − 0.0188.
var randomModel = map[string]map[string]float64{
	"I": {"e/n": 0.00227, "1": 0.040},
	"S": {"e/n": 0.0013, "1": 0.0013 - 0.0188},
	"R": {"g/(n*e)": 22.6, "1/(n*e)": -2260, "1": 2.86},
	"U": {"g/n": 0.522, "1": 0.905},
}

// makeSweep evaluates model over the grid, with multiplicative noise of
// relative size noise (seeded).
func makeSweep(t testing.TB, axes []Axis, modes []string, model map[string]map[string]float64, noise float64) *Sweep {
	t.Helper()
	s := &Sweep{Modes: modes, HasElapsed: true}
	for _, a := range axes {
		s.Params = append(s.Params, a.Name)
	}
	rng := rand.New(rand.NewPCG(3, 0))
	for _, v := range Grid(axes) {
		tr := Trial{Values: v}
		for _, m := range modes {
			var y float64
			for expr, c := range model[m] {
				term, err := ParseTerm(expr, s.Params)
				if err != nil {
					t.Fatal(err)
				}
				y += c * term.Eval(v)
			}
			y *= 1 + noise*rng.NormFloat64()
			tr.Means = append(tr.Means, y)
			tr.Elapsed += y
		}
		s.Trials = append(s.Trials, tr)
	}
	return s
}

func axes(t testing.TB, specs ...string) []Axis {
	var out []Axis
	for _, s := range specs {
		a, err := ParseAxis(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// checkModel checks that eq has exactly the model's terms, with
// coefficients within rel.
func checkModel(t *testing.T, params []string, eq Equation, want map[string]float64, rel float64) {
	t.Helper()
	if len(eq.Terms) != len(want) {
		t.Errorf("%s = %s: want the %d terms %v", eq.Mode, eq.Format(), len(want), want)
		return
	}
	for _, term := range eq.Terms {
		var w float64
		ok := false
		for expr, c := range want {
			if tm, err := ParseTerm(expr, params); err == nil && slices.Equal(tm, term.Term) {
				w, ok = c, true
			}
		}
		if !ok {
			t.Errorf("%s = %s: term %s is not in %v", eq.Mode, eq.Format(), term.Expr, want)
			continue
		}
		if math.Abs(term.Coef-w) > rel*math.Abs(w) {
			t.Errorf("%s: coefficient of %s = %.6g, want %.6g (±%g%%)", eq.Mode, term.Expr, term.Coef, w, 100*rel)
		}
	}
}

func TestFitRecoversRing(t *testing.T) {
	s := makeSweep(t, axes(t, "n=4:16:4", "p=1,4,8,12,16", "g=20:100:20"), []string{"I", "S", "R", "U"}, ringModel, 0)
	if len(s.Trials) != 100 {
		t.Fatalf("%d trials", len(s.Trials))
	}
	f, err := FitSweep(s, FitOptions{MaxOrder: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, eq := range f.Equations {
		checkModel(t, f.Params, eq, ringModel[eq.Mode], 1e-6)
		if eq.R2 < 1-1e-9 || eq.RMS > 1e-9 {
			t.Errorf("%s: R² %g, RMS %g on exact data", eq.Mode, eq.R2, eq.RMS)
		}
	}
	if f.Acc95 > 1e-9 || f.CVAcc95 > 1e-9 || f.MaxErr > 1e-9 {
		t.Errorf("accuracy %g / %g / %g on exact data", f.Acc95, f.CVAcc95, f.MaxErr)
	}
	if f.Measurements != 400 || f.Compression != 100 || f.TermCompression != 400.0/9 {
		t.Errorf("measurements %d, compression %g, per term %g; want 400, 100, 44.4", f.Measurements, f.Compression, f.TermCompression)
	}
}

func TestFitRecoversRandomWithNoise(t *testing.T) {
	// Lyon's Random grid: n 4..16, g 200..1000, e 75..225, p fixed at 1.
	s := makeSweep(t, axes(t, "n=4:16:4", "p=1", "g=200:1000:200", "e=75:225:75"), []string{"I", "S", "R", "U"}, randomModel, 0)
	f, err := FitSweep(s, FitOptions{MaxOrder: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Constant, []string{"p = 1"}) {
		t.Errorf("constant parameters %v, want [p = 1]", f.Constant)
	}
	for _, eq := range f.Equations {
		checkModel(t, f.Params, eq, randomModel[eq.Mode], 1e-6)
	}
	// 1 % noise: the same terms, coefficients within a few %, and the
	// estimator within a few % of the elapsed time.
	s = makeSweep(t, axes(t, "n=4:16:4", "p=1", "g=200:1000:200", "e=75:225:75"), []string{"I", "S", "R", "U"}, randomModel, 0.01)
	f, err = FitSweep(s, FitOptions{MaxOrder: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, eq := range f.Equations {
		if eq.Mode == "U" && (len(eq.Terms) == 0 || eq.Terms[0].Expr != "g/n" || math.Abs(eq.Terms[0].Coef-0.522) > 0.01) {
			t.Errorf("U = %s: want 0.522 g/n first", eq.Format())
		}
		t.Logf("%s = %s (R² %.4f, ±%.2f%%)", eq.Mode, eq.Format(), eq.R2, 100*eq.Acc95)
	}
	if f.Acc95 > 0.04 || f.CVAcc95 > 0.045 {
		t.Errorf("±%.2f%% (cross-validated ±%.2f%%) of elapsed time with 1%% noise; want ≤ 4%%", 100*f.Acc95, 100*f.CVAcc95)
	}
}

func TestFitFixedTermsAndCollinear(t *testing.T) {
	s := makeSweep(t, axes(t, "n=4:16:4", "p=1", "g=200:1000:200", "e=75:225:75"), []string{"I", "S", "R", "U"}, randomModel, 0)
	terms := func(exprs ...string) []Term {
		var out []Term
		for _, e := range exprs {
			tm, err := ParseTerm(e, s.Params)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tm)
		}
		return out
	}
	f, err := FitSweep(s, FitOptions{Terms: map[string][]Term{
		"I": terms("e/n", "1"),
		"U": terms("g/n", "p*g/n", "1"), // p = 1: p*g/n is g/n again
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkModel(t, f.Params, f.Equations[0], randomModel["I"], 1e-9)
	checkModel(t, f.Params, f.Equations[3], randomModel["U"], 1e-9)
	if got := f.Equations[3].Collinear; !slices.Equal(got, []string{"p*g/n"}) {
		t.Errorf("collinear terms of U: %v, want [p*g/n]", got)
	}
	// Too few trials for the terms asked.
	small := &Sweep{Params: s.Params, Modes: s.Modes, Trials: s.Trials[:3]}
	if _, err := FitSweep(small, FitOptions{}); !errors.Is(err, ErrTooFewTrials) {
		t.Errorf("3 trials, up to 4 terms: err %v, want ErrTooFewTrials", err)
	}
	if _, err := FitSweep(small, FitOptions{MaxTerms: 2, Terms: map[string][]Term{"I": terms("e/n", "g", "n", "1")}}); !errors.Is(err, ErrTooFewTrials) || !strings.Contains(err.Error(), "mode I: 3 trials for 4 terms") {
		t.Errorf("3 trials, 4 fixed terms: err %v", err)
	}
	// An undefined term and a mode that does not exist.
	zero := makeSweep(t, axes(t, "n=0:16:4", "g=1,2"), []string{"U"}, map[string]map[string]float64{"U": {"g": 1}}, 0)
	f, err = FitSweep(zero, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.Undefined, "1/n") || !slices.Contains(f.Undefined, "g/n") {
		t.Errorf("undefined terms %v: want 1/n and g/n (n = 0 in some trials)", f.Undefined)
	}
	if _, err := FitSweep(zero, FitOptions{Terms: map[string][]Term{"X": nil}}); err == nil || !strings.Contains(err.Error(), `"X", which is not a mode`) {
		t.Errorf("terms of an unknown mode: %v", err)
	}
	if _, err := FitSweep(zero, FitOptions{Terms: map[string][]Term{"U": {{-1, 0}}}}); err == nil || !strings.Contains(err.Error(), "1/n is undefined") {
		t.Errorf("a fixed undefined term: %v", err)
	}
	if _, err := FitSweep(zero, FitOptions{MaxOrder: 4}); err == nil {
		t.Error("terms of 4 parameters accepted")
	}
}

func TestFitDuplicateCandidates(t *testing.T) {
	// q = 2n in every trial: q and n are the same column up to a factor.
	s := &Sweep{Params: []string{"n", "q"}, Modes: []string{"U"}}
	for n := 1.0; n <= 10; n++ {
		s.Trials = append(s.Trials, Trial{Values: []float64{n, 2 * n}, Means: []float64{3*n + 1}})
	}
	f, err := FitSweep(s, FitOptions{MaxOrder: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Duplicate, []string{"q = n", "1/q = 1/n"}) {
		t.Errorf("duplicates %v", f.Duplicate)
	}
	checkModel(t, f.Params, f.Equations[0], map[string]float64{"n": 3, "1": 1}, 1e-9)
}

func TestPredictAndCheck(t *testing.T) {
	s := makeSweep(t, axes(t, "n=4:16:4", "p=1,4,8,12,16", "g=20:100:20"), []string{"I", "S", "R", "U"}, ringModel, 0)
	f, err := FitSweep(s, FitOptions{MaxOrder: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Lyon's "what if grain g changes": at n=16, p=16, halving g from 100
	// to 50 halves 0.0299·p·n·g.
	p100, err := f.Predict([]float64{16, 16, 100})
	if err != nil {
		t.Fatal(err)
	}
	p50, _ := f.Predict([]float64{16, 16, 50})
	if d := p100.Means[3] - p50.Means[3]; math.Abs(d-0.0299*16*16*50) > 1e-6 {
		t.Errorf("U(g=100) − U(g=50) = %g, want %g", d, 0.0299*16*16*50)
	}
	wantT := 0.0076*256 + 0.066 + 0.0114*16 + 0.067 + 0.0367*20*16 + 0.296 + 0.0299*256*100 - 0.38
	if math.Abs(p100.Total-wantT) > 1e-6 {
		t.Errorf("T(16,16,100) = %g, want %g", p100.Total, wantT)
	}
	// Check on settings outside the grid, parameters in another order.
	other := makeSweep(t, axes(t, "g=30,70", "n=6,10", "p=2,6"), []string{"I", "S", "R", "U"}, ringModel, 0)
	errs, err := f.Check(other)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 8 || Quantile95(errs) > 1e-9 {
		t.Errorf("prediction errors %v", errs)
	}
	if _, err := f.Predict([]float64{0, 1, 1}); err == nil {
		t.Log("no term divides by n: predicting at n = 0 is defined")
	}
	if _, err := f.Predict([]float64{1, 2}); err == nil {
		t.Error("2 values for 3 parameters accepted")
	}
	bad := &Sweep{Params: []string{"n", "g"}, Modes: s.Modes, Trials: other.Trials}
	if _, err := f.Check(bad); err == nil || !strings.Contains(err.Error(), "parameter(s) p") {
		t.Errorf("a sweep without p: %v", err)
	}
	// The fit file round trip.
	f.Name = "ring"
	var buf bytes.Buffer
	if err := WriteFits(&buf, []*Fit{f}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFits(&buf, "ring.json")
	if err != nil {
		t.Fatal(err)
	}
	q, err := back[0].Predict([]float64{16, 16, 100})
	if err != nil || q.Total != p100.Total {
		t.Errorf("after the round trip T = %g (%v), want %g", q.Total, err, p100.Total)
	}
	for _, in := range []string{`{"fits":[]}`, `{"fits":[{"params":["n"],"modes":["U"],"equations":[{"mode":"U","terms":[{"term":"m","coef":1}]}]}]}`, `{"fits"`, `{"fits":[{"modes":["U"],"equations":[]}]}`} {
		if _, err := ReadFits(strings.NewReader(in), "bad.json"); err == nil || !strings.HasPrefix(err.Error(), "bad.json") {
			t.Errorf("ReadFits(%s): %v", in, err)
		}
	}
}

func TestTermsFormatParse(t *testing.T) {
	params := []string{"n", "p", "g", "e"}
	cands := Candidates(4, 3, nil)
	// 1 + 4·2 + 6·4 + 4·8
	if len(cands) != 65 {
		t.Errorf("%d candidates of up to 3 of 4 parameters, want 65", len(cands))
	}
	seen := map[string]bool{}
	for _, c := range cands {
		s := c.Format(params)
		if seen[s] {
			t.Errorf("candidate %s twice", s)
		}
		seen[s] = true
		back, err := ParseTerm(s, params)
		if err != nil || !slices.Equal(back, c) {
			t.Errorf("ParseTerm(%q) = %v, %v; want %v", s, back, err, c)
		}
	}
	for _, s := range []string{"g/(n*e)", "n*p*g", "1/n", "1"} {
		if !seen[s] {
			t.Errorf("candidate %s missing", s)
		}
	}
	if got := len(Candidates(4, 2, []bool{false, true, false, false})); got != 1+3*2+3*4 {
		t.Errorf("%d candidates without p, want 19", got)
	}
	for in, want := range map[string]string{"x": "not a parameter", "g*g": "twice", "*g": "beginning", "g/": "end", "(g)": "only after", "g/(n": "without", "g/(n)*e": "after the parenthesised", "": "empty", "g(": "unexpected"} {
		if _, err := ParseTerm(in, params); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTerm(%q): %v, want %q", in, err, want)
		}
	}
}

func TestSweepFile(t *testing.T) {
	s := makeSweep(t, axes(t, "n=4,8", "g=20:60:20"), []string{"I", "U"}, map[string]map[string]float64{"I": {"1": 0.5}, "U": {"g/n": 1}}, 0.01)
	var buf bytes.Buffer
	if err := WriteSweep(&buf, s); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "n,g,mode:I,mode:U,elapsed\n4,20,") {
		t.Errorf("sweep file begins %q", buf.String()[:40])
	}
	back, err := ReadSweep(strings.NewReader("# a comment\n\n"+buf.String()), "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Params, s.Params) || !slices.Equal(back.Modes, s.Modes) || !back.HasElapsed || len(back.Trials) != 6 {
		t.Fatalf("read back %+v", back)
	}
	for i := range s.Trials {
		if !slices.Equal(back.Trials[i].Values, s.Trials[i].Values) || !slices.Equal(back.Trials[i].Means, s.Trials[i].Means) || back.Trials[i].Elapsed != s.Trials[i].Elapsed {
			t.Errorf("trial %d: %+v, want %+v", i, back.Trials[i], s.Trials[i])
		}
	}
	for in, want := range map[string]string{
		"":                  "s.csv: expected a header line",
		"n,g\n":             `s.csv:1: expected a header with at least one "mode:NAME" column`,
		"n,mode:U\n1\n":     "s.csv:2: 1 values, expected 2",
		"n,mode:U\n1,x\n":   `s.csv:2: column 2 (mode:U): expected a finite number, got "x"`,
		"n,mode:U\n1,NaN\n": "finite number",
		"n,n,mode:U\n":      `column "n" named twice`,
		"n,,mode:U\n":       "an empty column name",
		"mode:\n":           "names no mode",
		"n*g,mode:U\n":      "parameter name",
	} {
		_, err := ReadSweep(strings.NewReader(in), "s.csv")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadSweep(%q): %v, want %q", in, err, want)
		}
	}
}

func TestAxisAndGrid(t *testing.T) {
	a, err := ParseAxis("g=20:100:20,200")
	if err != nil || a.Name != "g" || !slices.Equal(a.Values, []float64{20, 40, 60, 80, 100, 200}) {
		t.Errorf("ParseAxis: %+v, %v", a, err)
	}
	if a, err := ParseAxis("x=0.1:0.3:0.1"); err != nil || len(a.Values) != 3 {
		t.Errorf("ParseAxis of a fractional range: %+v, %v", a, err)
	}
	for _, in := range []string{"g", "=1", "g=", "g=a", "g=5:1:1", "g=1:5:0", "g=1:2", "g=1:2:3:4", "g*n=1", "g=Inf"} {
		if _, err := ParseAxis(in); err == nil {
			t.Errorf("ParseAxis(%q) accepted", in)
		}
	}
	g := Grid(axes(t, "n=1,2", "p=3,4,5"))
	want := [][]float64{{1, 3}, {1, 4}, {1, 5}, {2, 3}, {2, 4}, {2, 5}}
	if len(g) != len(want) {
		t.Fatalf("grid %v", g)
	}
	for i := range want {
		if !slices.Equal(g[i], want[i]) {
			t.Errorf("grid point %d = %v, want %v", i, g[i], want[i])
		}
	}
}

func TestRates(t *testing.T) {
	rates, k, err := ParseRates(strings.NewReader("# r(A1,A2,A3)\n4,0,0 4\n2,2,0 2.5\n* 1\n"), "r.txt")
	if err != nil || k != 3 {
		t.Fatalf("ParseRates: %v, k %d", err, k)
	}
	res := lyonResult(t, Options{})
	// Σ occupancy × rate with occupancies in ns: T3 has (4,0,0) 6 ns,
	// (2,2,0) 15 ns, the other 8 ns at rate 1.
	w, err := res.Work(rates)
	if err != nil || math.Abs(w-(6*4+15*2.5+8)/1e9) > 1e-18 {
		t.Errorf("work %g, %v; want %g", w, err, (6*4+15*2.5+8)/1e9)
	}
	delete(rates, DefaultRate)
	if _, err := res.Work(rates); err == nil || !strings.Contains(err.Error(), "(3,1,0)") {
		t.Errorf("missing rates: %v", err)
	}
	// A projection on A1 with rates r_1.
	r1, k, err := ParseRates(strings.NewReader("4 1\n3 1\n2 1\n1 1\n0 0\n"), "r1.txt")
	if err != nil || k != 1 {
		t.Fatal(err, k)
	}
	proj, _ := res.Project([]int{0})
	if w, err := WorkOf(proj, r1); err != nil || math.Abs(w-27e-9) > 1e-18 {
		t.Errorf("work on the A1 projection %g, %v; want 27e-9", w, err)
	}
	for in, want := range map[string]string{
		"":               "at least one",
		"4,0 1 2\n":      "r.txt:1: expected",
		"4,0 x\n":        "finite number",
		"4,-1 1\n":       "not a non-negative integer",
		"4,0 1\n4 1\n":   "r.txt:2: macrostate \"4\" has 1 counts",
		"4,0 1\n4,0 2\n": "rate already",
		"* 1\n* 2\n":     "rate already",
	} {
		if _, _, err := ParseRates(strings.NewReader(in), "r.txt"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRates(%q): %v, want %q", in, err, want)
		}
	}
}

func TestParseTermsAndPoint(t *testing.T) {
	params := []string{"n", "g"}
	got, err := ParseTerms([]string{"U=g/n+1", "S=n*g"}, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got["U"]) != 2 || got["U"][0].Format(params) != "g/n" || got["U"][1].Format(params) != "1" || got["S"][0].Format(params) != "n*g" {
		t.Errorf("ParseTerms: %v", got)
	}
	if got, err := ParseTerms(nil, params); got != nil || err != nil {
		t.Errorf("no specs: %v, %v; want nil, nil", got, err)
	}
	for spec, want := range map[string]string{
		"U":       `"U": expected MODE=TERM+TERM+...`,
		"=g":      `"=g": expected MODE=`,
		"U=":      `"U=": expected MODE=`,
		"U=n*x":   `U: term "n*x": "x" is not a parameter`,
		"U=g/n+":  `U: term "": empty`,
		"U=1,S=n": "U: term",
	} {
		if _, err := ParseTerms([]string{spec}, params); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTerms(%q): %v, want %q", spec, err, want)
		}
	}
	if _, err := ParseTerms([]string{"U=n", "U=g"}, params); err == nil || err.Error() != "mode U given twice" {
		t.Errorf("a mode twice: %v", err)
	}

	// A setting in any order, in the parameters' order.
	v, err := ParsePoint("g=40, n=8", params)
	if err != nil || !slices.Equal(v, []float64{8, 40}) {
		t.Errorf("ParsePoint: %v, %v; want [8 40]", v, err)
	}
	for spec, want := range map[string]string{
		"n=8":         "no value for g",
		"n=8,g=1,p=2": `"p" is not a parameter of the fit (n, g)`,
		"n=8,g":       `"g": expected NAME=VALUE`,
		"n=8,g=x":     `g="x": expected a finite number`,
		"n=8,g=Inf":   "finite number",
		"n=8,g=1,n=2": "n given twice",
	} {
		if _, err := ParsePoint(spec, params); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePoint(%q): %v, want %q", spec, err, want)
		}
	}
}

// TestCompareAndTableau checks the numbers parscope predict --check and
// parscope fit print: each trial's predicted and measured T, the errors'
// summary, and the tableau's rows, cells and totals.
func TestCompareAndTableau(t *testing.T) {
	model := map[string]map[string]float64{"A": {"g/n": 1e-4, "1": 2e-5}, "B": {"n*g": 3e-6, "1": 7e-6}}
	s := makeSweep(t, axes(t, "n=1,2,4,5", "g=10:30:10"), []string{"A", "B"}, model, 0)
	f, err := FitSweep(s, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Measured 10% above the fit's estimate in the first trial, 20% below
	// in the second; parameters in another order than the fit's.
	check := &Sweep{Params: []string{"g", "n"}, Modes: []string{"A", "B"}, HasElapsed: true}
	for _, p := range [][2]float64{{10, 2}, {20, 4}} {
		pr, err := f.Predict([]float64{p[1], p[0]})
		if err != nil {
			t.Fatal(err)
		}
		check.Trials = append(check.Trials, Trial{Values: p[:], Means: pr.Means, Elapsed: pr.Total})
	}
	check.Trials[0].Elapsed *= 1 / 1.1
	check.Trials[1].Elapsed *= 1 / 0.8
	c, err := f.Compare(check)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Trials) != 2 || !slices.Equal(c.Trials[0].Values, []float64{2, 10}) || !slices.Equal(c.Trials[1].Values, []float64{4, 20}) {
		t.Fatalf("compared %+v", c.Trials)
	}
	for i, want := range []float64{0.1, -0.2} {
		tr := c.Trials[i]
		if math.Abs(tr.Error()-want) > 1e-12 || tr.Measured != check.Trials[i].Elapsed {
			t.Errorf("trial %d: predicted %g, measured %g, error %g; want measured %g, error %g", i, tr.Predicted, tr.Measured, tr.Error(), check.Trials[i].Elapsed, want)
		}
		if math.Abs(c.Errors[i]-math.Abs(want)) > 1e-12 {
			t.Errorf("trial %d: |error| %g, want %g", i, c.Errors[i], math.Abs(want))
		}
	}
	if math.Abs(c.Acc95-0.2) > 1e-12 || math.Abs(c.MaxErr-0.2) > 1e-12 {
		t.Errorf("acc95 %g, largest %g; want 0.2, 0.2", c.Acc95, c.MaxErr)
	}
	// A table of no trials has nothing to compare (it was a panic).
	if _, err := f.Compare(&Sweep{Params: []string{"n", "g"}, Modes: []string{"A", "B"}, HasElapsed: true}); err == nil || !strings.Contains(err.Error(), "no trials") {
		t.Errorf("comparing with no trials: %v", err)
	}

	// Two workloads, the second with a mode the first lacks.
	g, err := FitSweep(makeSweep(t, axes(t, "n=1,2,4,5", "g=10:30:10"), []string{"B", "C"}, map[string]map[string]float64{"B": {"g": 1e-5}, "C": {"1": 1e-3}}, 0), FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tab := NewTableau([]*Fit{f, g})
	if !slices.Equal(tab.Modes, []string{"A", "B", "C"}) {
		t.Errorf("rows %v, want A B C", tab.Modes)
	}
	if e := tab.Equation(0, "B"); e == nil || e.Mode != "B" || e.Format() != f.Equations[1].Format() {
		t.Errorf("cell (0, B) = %+v, want the first fit's B", e)
	}
	if e := tab.Equation(1, "B"); e == nil || e.Format() != g.Equations[0].Format() {
		t.Errorf("cell (1, B) = %+v, want the second fit's B", e)
	}
	if tab.Equation(0, "C") != nil || tab.Equation(1, "A") != nil {
		t.Error("a cell of a mode the fit lacks is not nil")
	}
	if tab.Measurements != 48 || tab.Equations != 4 || tab.Compression != 12 {
		t.Errorf("totals %d measurements, %d equations, %g:1; want 48, 4, 12:1", tab.Measurements, tab.Equations, tab.Compression)
	}
}
