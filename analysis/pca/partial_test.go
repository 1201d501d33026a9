package pca

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/trace"
)

// TestPartial checks that an accumulator sent as a JSON Partial and merged
// gives the result of merging the accumulator itself, bit for bit, and
// that a malformed partial is refused.
func TestPartial(t *testing.T) {
	h, recs := randomTrace(5, 1000, 7)
	split := func() (*Accumulator, *Accumulator) {
		a, b := mustAccumulator(t, 5, true), mustAccumulator(t, 5, true)
		i := 0
		err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
			i++
			if i < 600 {
				return a.Add(r)
			}
			return b.Add(r)
		})
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	a, b := split()
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	want, err := a.Result(0)
	if err != nil {
		t.Fatal(err)
	}
	a, b = split()
	var got *Result
	{
		data, err := json.Marshal(b.Partial())
		if err != nil {
			t.Fatal(err)
		}
		var p Partial
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		bb, err := FromPartial(p)
		if err != nil {
			t.Fatal(err)
		}
		aa, err := FromPartial(a.Partial())
		if err != nil {
			t.Fatal(err)
		}
		if err := aa.Merge(bb); err != nil {
			t.Fatal(err)
		}
		if got, err = aa.Result(0); err != nil {
			t.Fatal(err)
		}
	}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if string(wj) != string(gj) {
		t.Fatalf("through partials:\n%s\nwant\n%s", gj, wj)
	}
	if _, err := FromPartial(Partial{Procs: 3, X: make([]float64, 3), Sum: make([]float64, 3), Cross: make([]float64, 8)}); err == nil {
		t.Fatal("a partial with 8 cross sums for 3 processes was accepted")
	}
}
