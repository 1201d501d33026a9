package prv

import (
	"math/rand/v2"
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestRecQueue inserts records with mostly rising, sometimes earlier times
// and releases them in pieces: the output must be the stable sort by time
// of what was inserted.
func TestRecQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q recQueue
	var free [][]trace.Record
	got := &trace.Memory{} // checks the time order of what is released
	tm, floor := int64(0), int64(0)
	for i := 0; i < 20000; i++ {
		tm += int64(rng.IntN(3))
		r := trace.Event(0, 0, tm, 1, int64(i))
		if rng.IntN(10) == 0 { // a record that comes late, as the importer moves it
			r.T = max(floor, tm-int64(rng.IntN(3000)))
		}
		q.insert(r, &free)
		if rng.IntN(500) == 0 {
			last, err := q.release(rng.IntN(q.n)+1, got, &free)
			if err != nil {
				t.Fatal(err)
			}
			floor = last
		}
	}
	if _, err := q.release(q.n, got, &free); err != nil {
		t.Fatal(err)
	}
	if q.n != 0 || len(got.Records) != 20000 {
		t.Fatalf("released %d records, %d left; want 20000 and 0", len(got.Records), q.n)
	}
	seen := map[int64]bool{}
	for _, r := range got.Records {
		seen[r.Value] = true
	}
	if len(seen) != 20000 {
		t.Errorf("%d distinct records, want 20000", len(seen))
	}
}
