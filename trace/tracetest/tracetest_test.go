package tracetest

import (
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestFrom checks that a stream beginning at step k is the tail of the
// stream beginning at 0.
func TestFrom(t *testing.T) {
	all, err := trace.ReadAll(&Stream{Procs: 4, Limit: 4000})
	if err != nil {
		t.Fatal(err)
	}
	// Steps 0..9 hold 4·4 records each, plus 2·4 at step 0: 168 records.
	tail, err := trace.ReadAll(&Stream{Procs: 4, Limit: 4000 - 168, From: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != 4000-168 {
		t.Fatalf("%d records from step 10, want %d", len(tail), 4000-168)
	}
	for i := range tail {
		if tail[i] != all[168+i] {
			t.Fatalf("record %d from step 10 is %v, want %v", i, tail[i], all[168+i])
		}
	}
	if tail[0].T != 10_000 {
		t.Fatalf("first record at %d ns, want 10000", tail[0].T)
	}
}
