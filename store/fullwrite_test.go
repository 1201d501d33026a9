package store

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parscope/parscope/trace"
)

// fullDisk writes nothing and fails as a write to a full disk does.
type fullDisk struct{ f *os.File }

func (d fullDisk) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: d.f.Name(), Err: syscall.ENOSPC}
}

// TestFullDiskNamesTheDestination checks that a table that cannot be
// written (a full disk) gives an error naming the table's file in the
// destination, never the temporary directory it was written in, that the
// cause is still there for errors.Is, and that nothing is left behind.
func TestFullDiskNamesTheDestination(t *testing.T) {
	defer func(old func(*os.File) io.Writer) { tableWriter = old }(tableWriter)
	tableWriter = func(f *os.File) io.Writer { return fullDisk{f} }
	dir := t.TempDir()
	dst := filepath.Join(dir, "x.pst")
	w, err := Create(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Header().EnsureRun(0, 1)
	for _, r := range []trace.Record{trace.State(0, 0, 0, 1), trace.State(0, 0, 10, 2)} {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	err = w.Close()
	want := "write " + filepath.Join(dst, tStates.file()) + ": no space left on device"
	if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), ".parscope-tmp-") || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close: %v\nwant an error ending in %q, with ENOSPC", err, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
