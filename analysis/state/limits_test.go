package state

import (
	"context"
	"strings"
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestTooManyProcesses checks that a header declaring more processes than
// the reconstruction can hold is refused with the memory it would need,
// before anything of that size is allocated.
func TestTooManyProcesses(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 1 << 30}}}
	recs := []trace.Record{trace.State(0, 5, 10, 1)}
	err := Reconstruct(context.Background(), h, trace.NewSliceReader(recs), Options{}, func(*Row) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "run 0 has 1073741824 processes: its states would need 65536 MiB") {
		t.Fatalf("err = %v, want a refusal naming the memory", err)
	}
}
