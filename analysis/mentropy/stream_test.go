package mentropy

import (
	"context"
	"slices"
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestEachStepEqualsFromTrace checks that the streamed steps are those of
// FromTrace, process by process, for events (a dropped event left out)
// and for states with a given probability table.
func TestEachStepEqualsFromTrace(t *testing.T) {
	m := twoProcTrace()
	// A second process of events, interleaved with the first's.
	for i, e := range []int32{11, 12, 12, 13, 11, 12} {
		_ = m.Add(trace.Event(0, 2, int64(i*15), e, 0))
	}
	m.Sort()
	for _, c := range []struct {
		of Of
		ps ProbSpec
	}{{OfEvents, ProbSpec{}}, {OfStates, ProbSpec{Mode: Given, Table: map[string]float64{"A": 0.5, "B": 0.5}}}} {
		want, err := FromTrace(context.Background(), &m.H, m.Reader(), c.of, table4, c.ps)
		if err != nil {
			t.Fatal(err)
		}
		got := map[*Stream][]Step{}
		times := map[*Stream][]int64{}
		streams, err := EachStep(context.Background(), &m.H, func() trace.Reader { return m.Reader() }, c.of, table4, c.ps,
			func(s *Stream, i int, tm int64, st Step) error {
				if i != len(got[s]) {
					t.Fatalf("step %d of run %d process %d comes after %d", i, s.Run, s.Proc, len(got[s]))
				}
				got[s] = append(got[s], st)
				times[s] = append(times[s], tm)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if len(streams) != len(want) || len(want) == 0 {
			t.Fatalf("%s: %d streams, want %d", c.of, len(streams), len(want))
		}
		for k, s := range streams {
			w := want[k]
			if s.Run != w.Run || s.Proc != w.Proc || s.Events != len(w.Steps) || !slices.Equal(s.Alphabet.Names(), w.Alphabet.Names()) ||
				!slices.Equal(got[s], w.Steps) || !slices.Equal(times[s], w.T) {
				t.Errorf("%s: stream %d (run %d process %d, %d events) differs from FromTrace's (process %d, %d events)", c.of, k, s.Run, s.Proc, s.Events, w.Proc, len(w.Steps))
			}
		}
	}
}
