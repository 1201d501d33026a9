//go:build unix

package pipelines

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteOutput: a local result is written as every parscope output is:
// mode 0644 whatever the umask, nothing left beside it, and an error about
// a missing directory names the path given, never a temporary name.
func TestWriteOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.json")
	old := syscall.Umask(0o077)
	err := WriteOutput(context.Background(), out, []byte("{}\n"))
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%s: %v %v, want mode 0644", out, fi, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left %d entries beside the result, want none", len(ents)-1)
	}
	missing := filepath.Join(dir, "nodir", "x.json")
	err = WriteOutput(context.Background(), missing, []byte("{}\n"))
	if err == nil || !strings.Contains(err.Error(), missing+": no such file or directory") || strings.Contains(err.Error(), ".tmp") || strings.Contains(err.Error(), "parscope-tmp") {
		t.Errorf("writing into a missing directory: %v", err)
	}
}
