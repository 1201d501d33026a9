// Package storetest writes small .pst stores from records for the tests
// of the packages that read them (the engine, the analyses, the commands),
// as format/formattest does for the importers. It is meant for tests only.
package storetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// Create writes a store at path holding recs, added in order, under the
// header h (an empty one when nil), and fails the test when the store
// refuses the header or a record.
func Create(tb testing.TB, path string, h *trace.Header, recs []trace.Record) {
	tb.Helper()
	w, err := store.Create(path, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Abort()
	if h != nil {
		*w.Header() = *h
	}
	for _, r := range recs {
		if err := w.Add(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// CreateFrom writes a store at path holding the records of r, read in
// order without holding them (a trace too long for memory), under the
// header h, and fails the test as Create does.
func CreateFrom(tb testing.TB, path string, h *trace.Header, r trace.Reader) {
	tb.Helper()
	w, err := store.Create(path, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Abort()
	if h != nil {
		*w.Header() = *h
	}
	if err := trace.Each(r, func(rec *trace.Record) error { return w.Add(*rec) }); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// Open opens the store at path for reading; it is closed when the test
// ends.
func Open(tb testing.TB, path string) *store.Store {
	tb.Helper()
	s, err := store.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Read reads the whole .pst at path: its header, its timed records in the
// store's time-merged order (which keeps each process's stream order) and
// its basic block vectors; it fails tb on any error.
func Read(tb testing.TB, path string) (h *trace.Header, timed, bbv []trace.Record) {
	tb.Helper()
	s, err := store.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	if timed, err = trace.ReadAll(s.Records(store.ReadOptions{})); err != nil {
		tb.Fatal(err)
	}
	if bbv, err = trace.ReadAll(s.BBV(store.ReadOptions{})); err != nil {
		tb.Fatal(err)
	}
	return s.Header(), timed, bbv
}

// New writes recs under the header h (Create) to the store name (say
// "p.pst", the trace's name in the engine's messages) in a temporary
// folder and opens it (Open).
func New(tb testing.TB, name string, h *trace.Header, recs []trace.Record) *store.Store {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	Create(tb, path, h, recs)
	return Open(tb, path)
}

// Copy copies the .pst directory from to the directory to (created if
// needed), file by file, so that a test can damage the copy; it fails tb
// on any error.
func Copy(tb testing.TB, from, to string) {
	tb.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		tb.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
