package occupancy

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

// sanitizeName turns any string into a name CheckSweep accepts: trimmed,
// without line breaks, not empty.
func sanitizeName(s, empty string) string {
	s = strings.TrimSpace(strings.NewReplacer("\r", "", "\n", "").Replace(s))
	if s == "" {
		return empty
	}
	return s
}

// sanitizeParam also keeps the characters of the estimator terms out and
// keeps the name from reading as a mode or the elapsed time.
func sanitizeParam(s, empty string) string {
	s = sanitizeName(strings.NewReplacer("*", "", "/", "", "(", "", ")", "", " ", "").Replace(s), empty)
	if s == ElapsedColumn || strings.HasPrefix(s, ModeColumn) {
		s = "x" + s
	}
	return s
}

func finiteOr0(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}

// checkRoundTrip writes s and reads it back, and fails unless the result
// is s, value for value (bit for bit).
func checkRoundTrip(t *testing.T, s *Sweep) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSweep(&buf, s); err != nil {
		t.Fatalf("WriteSweep(%+v): %v", s, err)
	}
	back, err := ReadSweep(bytes.NewReader(buf.Bytes()), "sweep.csv")
	if err != nil {
		t.Fatalf("the written sweep does not read back: %v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back.Params, s.Params) || !reflect.DeepEqual(back.Modes, s.Modes) || back.HasElapsed != s.HasElapsed || len(back.Trials) != len(s.Trials) {
		t.Fatalf("round trip changed the table:\n%+v\n%+v\n%s", s, back, buf.String())
	}
	for i, tr := range s.Trials {
		b := back.Trials[i]
		vals := append(append(append([]float64{}, tr.Values...), tr.Means...), tr.Elapsed)
		got := append(append(append([]float64{}, b.Values...), b.Means...), b.Elapsed)
		for j := range vals {
			if math.Float64bits(vals[j]) != math.Float64bits(got[j]) {
				t.Fatalf("trial %d value %d: wrote %v, read %v\n%s", i, j, vals[j], got[j], buf.String())
			}
		}
	}
}

// TestSweepRoundTripQuoting covers the names fuzzing found or that a
// comma split breaks: a mode named "0,#000", a parameter "#000" that would
// start the header (and read as a comment), quotes, non-ASCII names, and
// values at the edges of float64.
func TestSweepRoundTripQuoting(t *testing.T) {
	for _, s := range []*Sweep{
		{Params: []string{"#000"}, Modes: []string{"0,#000"}, Trials: []Trial{{Values: []float64{1}, Means: []float64{2}}}},
		{Params: []string{`a"b`, "n"}, Modes: []string{`"`, "U, I", "µ"}, HasElapsed: true,
			Trials: []Trial{{Values: []float64{math.SmallestNonzeroFloat64, math.Copysign(0, -1)}, Means: []float64{math.MaxFloat64, 1e-300, 0.1}, Elapsed: 3}}},
		{Modes: []string{"mode:x"}, Trials: []Trial{{Means: []float64{1}}}},
	} {
		checkRoundTrip(t, s)
	}
}

// TestCheckSweep checks that what no file can hold is refused, not written.
func TestCheckSweep(t *testing.T) {
	for _, tc := range []struct {
		s    Sweep
		want string
	}{
		{Sweep{Params: []string{"n"}}, "at least one mode"},
		{Sweep{Modes: []string{" U"}}, "surrounding white space"},
		{Sweep{Params: []string{"elapsed"}, Modes: []string{"U"}}, "would read back as"},
		{Sweep{Params: []string{"n*g"}, Modes: []string{"U"}}, "expected no '*'"},
		{Sweep{Modes: []string{"U", "U"}}, `column "mode:U" named twice`},
		{Sweep{Modes: []string{"a\nb"}}, "line breaks"},
		{Sweep{Modes: []string{"U"}, Trials: []Trial{{Means: []float64{math.NaN()}}}}, "expected finite numbers"},
		{Sweep{Modes: []string{"U"}, Trials: []Trial{{}}}, "trial 1 has 0 values and 0 means, want 0 and 1"},
	} {
		var buf bytes.Buffer
		err := WriteSweep(&buf, &tc.s)
		if err == nil || !strings.Contains(err.Error(), tc.want) || buf.Len() != 0 {
			t.Errorf("WriteSweep(%+v) = %v, wrote %d bytes; want an error containing %q and nothing written", tc.s, err, buf.Len(), tc.want)
		}
	}
}

// FuzzSweepRoundTrip builds a sweep from arbitrary names and values (made
// acceptable by the documented rules) and checks that WriteSweep accepts it
// and ReadSweep reads back exactly the same table.
func FuzzSweepRoundTrip(f *testing.F) {
	f.Add("#000", "n", "0,#000", "U", 1.0, 2.0, 3.0, true)
	f.Add(`a"b`, "g", "\"", "I, U", math.Copysign(0, -1), math.MaxFloat64, 1e-310, false)
	f.Add("", "", "", "", 0.0, 0.0, 0.0, false)
	f.Fuzz(func(t *testing.T, p1, p2, m1, m2 string, v1, v2, v3 float64, elapsed bool) {
		p1, p2 = sanitizeParam(p1, "p"), sanitizeParam(p2, "q")
		if p2 == p1 {
			p2 += "2"
		}
		m1, m2 = sanitizeName(m1, "m"), sanitizeName(m2, "n")
		if m2 == m1 {
			m2 += "2"
		}
		s := &Sweep{Params: []string{p1, p2}, Modes: []string{m1, m2}, HasElapsed: elapsed, Trials: []Trial{
			{Values: []float64{finiteOr0(v1), finiteOr0(v2)}, Means: []float64{finiteOr0(v3), finiteOr0(v1)}},
			{Values: []float64{finiteOr0(v3), finiteOr0(v1)}, Means: []float64{finiteOr0(v2), finiteOr0(v3)}},
		}}
		if elapsed {
			s.Trials[0].Elapsed = finiteOr0(v2)
		}
		checkRoundTrip(t, s)
	})
}
