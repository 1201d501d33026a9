package engine

import (
	"errors"
	"slices"
	"testing"
)

// TestPerRun checks that a run's value is made once, on first use, that
// runs come in order, and that merging moves other's runs and merges the
// common ones.
func TestPerRun(t *testing.T) {
	made := 0
	mk := func() *PerRun[*[]int32] {
		return &PerRun[*[]int32]{New: func(run int32) (*[]int32, error) {
			if run < 0 {
				return nil, errors.New("negative run")
			}
			made++
			return &[]int32{run}, nil
		}}
	}
	a := mk()
	for _, run := range []int32{2, 0, 2, 2, 0} {
		v, err := a.Of(run)
		if err != nil || (*v)[0] != run {
			t.Fatalf("run %d: %v %v", run, v, err)
		}
		*v = append(*v, run)
	}
	if _, err := a.Of(-1); err == nil {
		t.Error("a failing New succeeded")
	}
	if made != 2 || !slices.Equal(a.Runs(), []int32{0, 2}) {
		t.Fatalf("made %d, runs %v", made, a.Runs())
	}
	b := mk()
	b.Of(1)
	b.Of(2)
	err := a.Merge(b, func(run int32, into, from *[]int32) error {
		*into = append(*into, *from...)
		return nil
	})
	v, _ := a.Get(2)
	if err != nil || !slices.Equal(a.Runs(), []int32{0, 1, 2}) || !slices.Equal(*v, []int32{2, 2, 2, 2, 2}) {
		t.Errorf("merged: %v, runs %v, run 2 %v", err, a.Runs(), *v)
	}
	// The value cached for the last run is not used after a merge.
	w, _ := a.Of(2)
	if w != v {
		t.Error("run 2's value changed")
	}
}

// TestPerRunValuesAndWhole checks Values' run order, that Each visits
// every run, and that MergeWhole refuses a run both sides hold.
func TestPerRunValuesAndWhole(t *testing.T) {
	mk := func(runs ...int32) *PerRun[int32] {
		p := &PerRun[int32]{New: func(run int32) (int32, error) { return 10 * run, nil }}
		for _, r := range runs {
			p.Of(r)
		}
		return p
	}
	a := mk(3, 1)
	if v := a.Values(); !slices.Equal(v, []int32{10, 30}) {
		t.Errorf("Values = %v, want [10 30]", v)
	}
	sum := int32(0)
	a.Each(func(v int32) { sum += v })
	if sum != 40 {
		t.Errorf("Each visited %d, want 40", sum)
	}
	if err := a.MergeWhole(mk(2), "x"); err != nil || !slices.Equal(a.Values(), []int32{10, 20, 30}) {
		t.Errorf("MergeWhole of another run: %v, values %v", err, a.Values())
	}
	if err := a.MergeWhole(mk(1), "x"); err == nil || err.Error() != "x: run 1 is in both accumulators merged: a run must be computed in one (shard by run)" {
		t.Errorf("MergeWhole of a run both hold: %v", err)
	}
}

// TestFinishRuns checks that FinishRuns finishes every run in order, makes
// an empty list of no runs, and that MergeWhole refuses either side after.
func TestFinishRuns(t *testing.T) {
	mk := func(runs ...int32) *PerRun[int32] {
		p := &PerRun[int32]{New: func(run int32) (int32, error) { return 10 * run, nil }}
		for _, r := range runs {
			p.Of(r)
		}
		return p
	}
	if out := FinishRuns(mk(), func(v int32) int32 { return v }); out == nil || len(out) != 0 {
		t.Errorf("no runs: %#v, want an empty list", out)
	}
	a := mk(2, 0, 1)
	if out := FinishRuns(a, func(v int32) int32 { return v + 1 }); !slices.Equal(out, []int32{1, 11, 21}) {
		t.Errorf("FinishRuns = %v, want [1 11 21]", out)
	}
	const after = "x: Merge after Result"
	if err := a.MergeWhole(mk(5), "x"); err == nil || err.Error() != after {
		t.Errorf("MergeWhole into a finished PerRun: %v, want %q", err, after)
	}
	b := mk(7)
	FinishRuns(b, func(v int32) int32 { return v })
	if err := mk(6).MergeWhole(b, "x"); err == nil || err.Error() != after {
		t.Errorf("MergeWhole of a finished PerRun: %v, want %q", err, after)
	}
}
