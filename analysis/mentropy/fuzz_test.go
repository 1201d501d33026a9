package mentropy

import (
	"math"
	"testing"

	"github.com/parscope/parscope/trace"
)

// FuzzParse checks that the CLI's table parsers never panic and that what
// they accept gives a meter that never returns a NaN.
func FuzzParse(f *testing.F) {
	f.Add("A=0.2,B=0.4,C=0.4", "0.5,0.7,0.8,0.9,0.99")
	f.Add("A=1", "0.1,0.3,0.6,0.9")
	f.Add("=,", "x")
	f.Fuzz(func(t *testing.T, probs, table string) {
		tab, err := ParseProbs(probs)
		if err != nil {
			return
		}
		a := &trace.Dict{}
		for n := range tab {
			a.ID(n)
		}
		p, _, err := GivenFor(a, tab, true)
		if err != nil {
			return
		}
		alpha, err := ParseTable(table)
		if err != nil || len(alpha) < 2 {
			return
		}
		c := Config{Window: len(alpha) - 1, K: 100, Alpha: alpha, Beta: alpha}
		m, err := NewMeter(c, p)
		if err != nil {
			return
		}
		for i := range 3 * len(a.Names()) {
			s, err := m.Next(int32(i / 3))
			if err != nil || math.IsNaN(s.H) || math.IsInf(s.H, 0) || s.H < 0 {
				t.Fatalf("event %d: %+v %v", i, s, err)
			}
		}
	})
}
