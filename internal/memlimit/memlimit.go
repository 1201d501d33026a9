// Package memlimit runs a test's body in a child process under a hard
// memory limit and reports the child's peak memory, so that a test can show
// that an analysis of a long trace stays within a fixed bound (and fails,
// rather than exhausting the machine, when it does not).
//
// The child is the test binary itself, re-executed for the one test. It
// lowers its data-segment limit (RLIMIT_DATA, which counts the memory the
// Go runtime maps for its heap, not the address space it only reserves, as
// RLIMIT_AS would) and sets the GC's soft limit (debug.SetMemoryLimit) to
// three quarters of it. What the runtime maps runs well above what it
// touches (heap given back to the system stays mapped): a body whose peak
// resident set is 170 MiB can map 270 MiB, so a limit leaves room for
// about twice the resident peak. An allocation past the hard limit kills the child
// with "out of memory"; the parent then fails the test with the child's
// output. The parent also fails the test when the child's peak resident set
// (getrusage's ru_maxrss) reaches the limit.
package memlimit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
)

// envChild names the test a child process runs under the limit, and envLimit
// the limit in bytes.
const (
	envChild = "PARSCOPE_MEMLIMIT_TEST"
	envLimit = "PARSCOPE_MEMLIMIT_BYTES"
)

// Child reports whether this process is a child that Run started to run a
// test under a limit: a TestMain that prepares what the package's other
// tests need (building a binary, say) can skip it there, where it would
// only cost time, and count in the child's peak memory.
func Child() bool { return os.Getenv(envChild) != "" }

// Run runs body under a memory limit of limit bytes in a child process and
// returns the child's peak resident set size in bytes. It must be called
// from a top-level test (not a subtest), once per test. In the child, Run
// sets the limits, calls body with the child's t and returns 0; body's
// failures fail the child, and so the parent's test. With the race
// detector (Race) body runs in this process without a limit and Run
// returns 0: callers shrink their input then.
func Run(t *testing.T, limit int64, body func(t *testing.T)) int64 {
	t.Helper()
	if Race {
		t.Logf("memlimit: race detector on: %s runs without a memory limit", t.Name())
		body(t)
		return 0
	}
	if os.Getenv(envChild) == t.Name() {
		n, err := strconv.ParseInt(os.Getenv(envLimit), 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("memlimit: bad %s=%q in the child", envLimit, os.Getenv(envLimit))
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: uint64(n), Max: uint64(n)}); err != nil {
			t.Fatalf("memlimit: setting RLIMIT_DATA to %d bytes: %v", n, err)
		}
		debug.SetMemoryLimit(n / 4 * 3)
		body(t)
		return 0
	}
	rss, out, err := runChild(t.Name(), limit)
	if err != nil {
		t.Fatalf("memlimit: %v\n%s", err, tail(out, 4000))
	}
	t.Logf("%s: peak resident %d MiB (limit %d MiB)", t.Name(), rss>>20, limit>>20)
	return rss
}

// runChild runs the test named name of this test binary as a child under
// limit, and returns its peak resident set size (bytes) and its output.
// The error says why the child failed or ended over the limit.
func runChild(name string, limit int64) (int64, []byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, nil, fmt.Errorf("the test binary: %w", err)
	}
	cmd := exec.Command(exe, "-test.run=^"+regexp.QuoteMeta(name)+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envChild+"="+name, envLimit+"="+strconv.FormatInt(limit, 10))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	var rss int64
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss * 1024 // kilobytes on Linux
		}
	}
	switch {
	case runErr != nil:
		return rss, out.Bytes(), fmt.Errorf("%s under %d MiB: %w (peak resident %d MiB)", name, limit>>20, runErr, rss>>20)
	case !bytes.Contains(out.Bytes(), []byte("--- PASS: "+name)):
		return rss, out.Bytes(), fmt.Errorf("the child did not run %s", name)
	case rss >= limit:
		return rss, out.Bytes(), fmt.Errorf("%s peaked at %d MiB resident, over the limit of %d MiB", name, rss>>20, limit>>20)
	}
	return rss, out.Bytes(), nil
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return "..." + string(b[len(b)-n:])
}
