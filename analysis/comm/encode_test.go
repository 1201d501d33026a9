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
	merge := func(encode bool) *Result {
		var total *Accumulator
		for _, p := range []int32{2, 0, 1} {
			a, err := New(&m.H, opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range m.Records {
				if m.Records[i].Proc == p {
					if err := a.Add(&m.Records[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if encode {
				data, err := a.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if a, err = UnmarshalAccumulator(data, &m.H); err != nil {
					t.Fatal(err)
				}
			}
			if total == nil {
				total = a
			} else if err := total.Merge(a); err != nil {
				t.Fatal(err)
			}
		}
		return total.Result()
	}
	want, got := merge(false), merge(true)
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
