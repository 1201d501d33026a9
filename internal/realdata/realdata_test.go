package realdata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Fatalf instead of stopping the
// test, to check what Path reports.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}

func TestRoot(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Dir(filepath.Dir(wd)); root != want {
		t.Fatalf("Root() = %s, want %s (two folders above internal/realdata)", root, want)
	}
}

func TestPathExisting(t *testing.T) {
	r := &recorder{TB: t}
	p := Path(r, "traces/dumpi/testtrace.meta")
	if r.fatal != "" {
		t.Fatalf("Path failed: %s", r.fatal)
	}
	if !strings.HasSuffix(filepath.ToSlash(p), "/testdata/real/traces/dumpi/testtrace.meta") {
		t.Fatalf("Path = %s", p)
	}
	if b := Read(r, "traces/dumpi/testtrace.meta"); !strings.Contains(string(b), "numprocs=4") || r.fatal != "" {
		t.Fatalf("Read = %q, fatal %q", b, r.fatal)
	}
}

// TestPathMissing: a missing file fails the test with a message naming its
// full path, and Path returns "".
func TestPathMissing(t *testing.T) {
	r := &recorder{TB: t}
	if p := Path(r, "traces/none/absent.prv"); p != "" {
		t.Errorf("Path = %q for a missing file, want \"\"", p)
	}
	want := filepath.Join("testdata", "real", "traces", "none", "absent.prv")
	if !strings.Contains(r.fatal, want) || !strings.Contains(r.fatal, "missing") {
		t.Fatalf("Fatalf message %q does not name %s", r.fatal, want)
	}
	r.fatal = ""
	if b := Read(r, "traces/none/absent.prv"); b != nil || !strings.Contains(r.fatal, want) {
		t.Fatalf("Read = %q, Fatalf %q", b, r.fatal)
	}
}
