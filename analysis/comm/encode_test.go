package comm

import (
	"encoding/json"
	"testing"
)

// TestEncodeMerge checks that per-process accumulators sent through
// MarshalBinary/UnmarshalAccumulator merge to exactly the result of
// merging the accumulators themselves (with open regions, unmatched sides
// and working sets in flight), and that corrupt data is refused.
func TestEncodeMerge(t *testing.T) {
	m := handMade(t)
	opts := Options{WorkingSets: true}
	want := mergePerProcess(t, m, opts, nil)
	got := mergePerProcess(t, m, opts, func(a *Accumulator) *Accumulator {
		data, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if a, err = UnmarshalAccumulator(data, &m.H); err != nil {
			t.Fatal(err)
		}
		return a
	})
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if string(wj) != string(gj) {
		t.Fatalf("through encoding:\n%s\nwant\n%s", gj, wj)
	}
	a, _ := New(&m.H, opts)
	a.Add(&m.Records[0])
	data, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UnmarshalAccumulator(data[:len(data)-3], &m.H); err == nil {
		t.Fatal("a truncated accumulator was decoded")
	}
}
