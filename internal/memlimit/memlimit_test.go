package memlimit

import (
	"strings"
	"testing"
)

var sink [][]byte

// TestOverLimitFails checks that a body that holds more than the limit
// kills the child and fails: TestHolds96MiB under 64 MiB.
func TestOverLimitFails(t *testing.T) {
	rss, out, err := runChild("TestHolds96MiB", 64<<20)
	if err == nil {
		t.Fatalf("holding 96 MiB under a 64 MiB limit did not fail (peak %d MiB)\n%s", rss>>20, out)
	}
	if Race {
		// The child, built with the race detector, holds its 96 MiB
		// without a hard limit; its peak is still measured and refused.
		if !strings.Contains(err.Error(), "over the limit of 64 MiB") {
			t.Errorf("the child's peak was not refused: %v", err)
		}
		return
	}
	if !strings.Contains(string(out), "out of memory") && !strings.Contains(string(out), "cannot allocate memory") && !strings.Contains(string(out), "failed to allocate") {
		t.Errorf("the child did not run out of memory: %v\n%s", err, out)
	}
}

// TestUnderLimitPasses checks the other side: the same body under 256 MiB
// passes, with a peak resident size of at least the 96 MiB it held.
func TestUnderLimitPasses(t *testing.T) {
	if Race {
		// Run runs the body in this process: it holds the 96 MiB here.
		sink = nil
		Run(t, 256<<20, func(t *testing.T) { holds96MiB(t) })
		if len(sink) != 96 {
			t.Fatalf("the body held %d MiB, want 96", len(sink))
		}
		return
	}
	rss, out, err := runChild("TestHolds96MiB", 256<<20)
	if err != nil || rss < 96<<20 || rss >= 256<<20 {
		t.Fatalf("holding 96 MiB under 256 MiB: %v, peak %d MiB\n%s", err, rss>>20, out)
	}
}

// TestHolds96MiB is the body the tests above run in a child. Run directly
// it runs itself in a child under 256 MiB.
func TestHolds96MiB(t *testing.T) {
	Run(t, 256<<20, holds96MiB)
}

// holds96MiB holds 96 MiB in sink.
func holds96MiB(t *testing.T) {
	for range 96 {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = 1
		}
		sink = append(sink, b)
	}
	t.Logf("held %d MiB", len(sink))
}
