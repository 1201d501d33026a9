// Package formattest holds the helpers the importers' and exporters' tests
// share: writing an input file (plain or gzipped), importing into memory or
// into a .pst store, writers that keep records unchecked (for fuzz
// targets) or only count them (for benchmarks), checking that an error
// names its input, counting records by kind, reading a CSV table, and
// comparing an output with a golden file. The real sample traces the tests
// import are found with internal/realdata.
package formattest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// Import runs imp on paths into a fresh trace.Memory and returns it with
// the importer's error, for tests that check the error.
func Import(t testing.TB, imp format.Importer, paths []string, opts format.Options) (*trace.Memory, error) {
	t.Helper()
	m := &trace.Memory{}
	err := imp.Import(context.Background(), paths, opts, m)
	return m, err
}

// MustImport runs imp on paths into a fresh trace.Memory and fails the
// test when the import fails or the header it made is not valid.
func MustImport(t testing.TB, imp format.Importer, opts format.Options, paths ...string) *trace.Memory {
	t.Helper()
	m, err := Import(t, imp, paths, opts)
	if err != nil {
		t.Fatalf("importing %v: %v", paths, err)
	}
	if err := m.H.Validate(); err != nil {
		t.Fatalf("importing %v: invalid header: %v", paths, err)
	}
	return m
}

// WriteFile writes content to the file name in dir, or in a fresh
// temporary folder when dir is "", and returns its path.
func WriteFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ErrorNames fails the test unless err is a *format.Error that names the
// file at path, as an importer's errors about an input must.
func ErrorNames(t testing.TB, err error, path string) {
	t.Helper()
	var fe *format.Error
	if !errors.As(err, &fe) || fe.File != path {
		t.Fatalf("error %v is not a *format.Error naming %s", err, path)
	}
}

// ReadCSV parses the CSV file at path (an exporter's table) with
// encoding/csv.
func ReadCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// Gzip returns data gzipped, for tests of an importer's gzip input.
func Gzip(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Collect is a trace.Writer that keeps the header and the records as an
// importer gives them, without checking them as trace.Memory does, so that
// a fuzz target checks the importer's promises itself (Check).
type Collect struct {
	H       trace.Header
	Records []trace.Record
}

// Header implements trace.Writer.
func (c *Collect) Header() *trace.Header { return &c.H }

// Add implements trace.Writer: it keeps r.
func (c *Collect) Add(r trace.Record) error {
	c.Records = append(c.Records, r)
	return nil
}

// Count is a trace.Writer that only counts the records it is given, for
// the importers' benchmarks.
type Count struct {
	H trace.Header
	N int64
}

// Header implements trace.Writer.
func (c *Count) Header() *trace.Header { return &c.H }

// Add implements trace.Writer: it counts r.
func (c *Count) Add(trace.Record) error {
	c.N++
	return nil
}

// Check fails the test unless c holds what an import that succeeded
// promises: some records, a valid header, and each process's records in
// time order (trace.OrderCheck).
func (c *Collect) Check(t testing.TB) {
	t.Helper()
	if len(c.Records) == 0 {
		t.Fatalf("no error and no records")
	}
	if err := c.H.Validate(); err != nil {
		t.Fatalf("%v", err)
	}
	var check trace.OrderCheck
	for _, r := range c.Records {
		if err := check.Check(&r); err != nil {
			t.Fatalf("record %v: %v", r, err)
		}
	}
}

// CountKinds returns how many records of each kind recs holds.
func CountKinds(recs []trace.Record) map[trace.Kind]int {
	n := map[trace.Kind]int{}
	for _, r := range recs {
		n[r.Kind]++
	}
	return n
}

// ImportStore runs imp on paths into a new .pst store in a temporary
// folder, then opens the store for reading; it is closed when the test
// ends. prepare, when not nil, sets the header before the import (for an
// importer that leaves, say, the clock resolution to its caller).
func ImportStore(t testing.TB, imp format.Importer, paths []string, opts format.Options, prepare func(*trace.Header)) *store.Store {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "import.pst")
	w, err := store.Create(dst, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(w.Header())
	}
	if err := imp.Import(context.Background(), paths, opts, w); err != nil {
		w.Abort()
		t.Fatalf("importing %v into %s: %v", paths, dst, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("closing %s: %v", dst, err)
	}
	s, err := store.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Golden compares got with the golden file at path. With update it first
// rewrites the file with got (creating its folder), for go test -update.
// A missing golden file or a difference fails the test; the message names
// the file, the first line that differs, and shows got in full.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	line, g, w := firstDiff(got, want)
	t.Errorf("%s differs from the output at line %d:\n got  %q\n want %q\n(go test -update rewrites it; check the diff first)\n--- got\n%s", path, line, g, w, got)
}

// firstDiff returns the 1-based number of the first line where a and b
// differ, and that line of each ("" past the end).
func firstDiff(a, b []byte) (int, string, string) {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; ; i++ {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) || i >= len(la) || i >= len(lb) {
			return i + 1, string(x), string(y)
		}
	}
}
