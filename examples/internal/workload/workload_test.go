package workload

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/probe"
)

// countdown is a probe task of n steps that fails Init when failInit is set.
type countdown struct {
	n, steps int
	failInit bool
}

func (c *countdown) Init(probe.Blocks) error {
	if c.failInit {
		return errors.New("bad size")
	}
	return nil
}
func (c *countdown) Step() bool                 { c.steps++; return c.steps == c.n }
func (c *countdown) Snapshot() ([]byte, error)  { return []byte{byte(c.steps)}, nil }
func (c *countdown) Restore(state []byte) error { c.steps = int(state[0]); return nil }

func TestProbeMainAlone(t *testing.T) {
	t.Setenv(probe.EnvDir, "") // run alone, not under parscope probe
	info := probe.Info{Name: "countdown", Version: "1"}
	c := &countdown{n: 7}
	var stdout, stderr bytes.Buffer
	code := probeMain(&stdout, &stderr, info, c, func() string { return fmt.Sprintf("steps %d", c.steps) })
	if code != 0 || stdout.String() != "steps 7\n" || stderr.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, \"steps 7\\n\", nothing", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	code = probeMain(&stdout, &stderr, info, &countdown{n: 3, failInit: true}, func() string { return "unused" })
	if code != 1 || stdout.Len() != 0 || stderr.String() != "countdown: bad size\n" {
		t.Fatalf("failing Init: exit %d, stdout %q, stderr %q; want 1, nothing, \"countdown: bad size\\n\"", code, stdout.String(), stderr.String())
	}
}

// TestGoTrace runs goroutines under -go-trace and checks that the file
// holds a Go runtime trace (its header names the Go version), and that
// without the flag nothing is started.
func TestGoTrace(t *testing.T) {
	c := Common{GoTrace: filepath.Join(t.TempDir(), "run.trace")}
	stop, err := c.startGoTrace()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	for i := range 8 {
		go func() { done <- i }()
	}
	for range 8 {
		<-done
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(c.GoTrace)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) || len(b) < 100 {
		t.Fatalf("-go-trace wrote %d bytes starting %q, want a Go runtime trace", len(b), b[:min(len(b), 16)])
	}
	var none Common
	stop, err = none.startGoTrace()
	if err != nil || stop() != nil {
		t.Fatalf("without -go-trace: %v", err)
	}
	bad := Common{GoTrace: filepath.Join(t.TempDir(), "missing", "run.trace")}
	if _, err := bad.startGoTrace(); err == nil || !strings.Contains(err.Error(), "-go-trace") {
		t.Fatalf("a trace file that cannot be created: %v, want an error naming -go-trace", err)
	}
}
