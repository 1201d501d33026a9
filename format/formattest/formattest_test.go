package formattest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/gomez"
	"github.com/parscope/parscope/trace"
)

// recorder is a testing.TB that records Errorf and Fatalf instead of
// failing, to check what the helpers report.
type recorder struct {
	testing.TB
	errors, fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, args...))
}
func (r *recorder) Fatalf(f string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(f, args...))
}

// threeProcs is a gomez trace of 3 processes: 3 + 2 + 1 state records.
const threeProcs = "0 1 0\n0 1 1\n0 1 2\n10 2 0\n20 2 1\n30 3 0\n"

func TestCountKinds(t *testing.T) {
	recs := []trace.Record{
		trace.State(0, 0, 0, 1), trace.State(0, 1, 0, 1), trace.Enter(0, 0, 1, 0),
		trace.Exit(0, 0, 2, 0), trace.State(0, 0, 3, 2),
	}
	got := CountKinds(recs)
	if len(got) != 3 || got[trace.KindState] != 3 || got[trace.KindEnter] != 1 || got[trace.KindExit] != 1 {
		t.Fatalf("CountKinds = %v, want 3 states, 1 enter, 1 exit", got)
	}
	if n := CountKinds(nil); len(n) != 0 {
		t.Fatalf("CountKinds(nil) = %v", n)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{dir, ""} {
		p := WriteFile(t, d, "a.srt", threeProcs)
		if d != "" && p != filepath.Join(dir, "a.srt") {
			t.Errorf("WriteFile in %s = %s", d, p)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != threeProcs {
			t.Errorf("%s holds %q, %v", p, b, err)
		}
	}
}

func TestGzip(t *testing.T) {
	z := Gzip(t, []byte(threeProcs))
	if len(z) < 2 || z[0] != 0x1f || z[1] != 0x8b {
		t.Fatalf("Gzip gave % x, not a gzip stream", z)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	if back, err := io.ReadAll(zr); err != nil || string(back) != threeProcs {
		t.Fatalf("gunzipped %q, %v", back, err)
	}
	// The gomez importer reads it like the plain file.
	m := MustImport(t, gomez.Importer{}, format.Options{}, WriteFile(t, "", "three.srt.gz", string(z)))
	if len(m.Records) != 6 {
		t.Fatalf("%d records from the gzipped file, want 6", len(m.Records))
	}
}

func TestImport(t *testing.T) {
	p := WriteFile(t, "", "three.srt", threeProcs)
	m := MustImport(t, gomez.Importer{}, format.Options{}, p)
	if m.H.Runs[0].Procs != 3 || len(m.Records) != 6 || CountKinds(m.Records)[trace.KindState] != 6 {
		t.Fatalf("%d procs, %d records", m.H.Runs[0].Procs, len(m.Records))
	}
	bad := WriteFile(t, "", "bad.srt", "0 1 0\nnot a line\n")
	if _, err := Import(t, gomez.Importer{}, []string{bad}, format.Options{}); err == nil || !strings.Contains(err.Error(), "bad.srt") {
		t.Fatalf("Import of a bad file: %v, want an error naming bad.srt", err)
	}
	r := &recorder{TB: t}
	MustImport(r, gomez.Importer{}, format.Options{}, bad)
	if len(r.fatals) == 0 || !strings.Contains(r.fatals[0], "bad.srt") {
		t.Fatalf("MustImport of a bad file reported %q", r.fatals)
	}
}

func TestImportStore(t *testing.T) {
	p := WriteFile(t, "", "three.srt", threeProcs)
	prepared := false
	s := ImportStore(t, gomez.Importer{}, []string{p}, format.Options{}, func(h *trace.Header) { prepared = h != nil })
	if !prepared {
		t.Error("prepare was not called with the header")
	}
	if got := s.Manifest().Stats.Records; len(got) != 1 || got["state"] != 6 {
		t.Fatalf("store records %v, want 6 states", got)
	}
	if h := s.Header(); h.Runs[0].Procs != 3 || h.Meta.Source != "gomez" {
		t.Fatalf("store header: %d procs, source %q", h.Runs[0].Procs, h.Meta.Source)
	}
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "x.golden")

	// Missing: a failure naming the file.
	r := &recorder{TB: t}
	Golden(r, path, []byte("a\nb\n"), false)
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "x.golden") || !strings.Contains(r.fatals[0], "-update") {
		t.Fatalf("missing golden: fatals %q", r.fatals)
	}

	// -update writes it (creating the folder); the comparison then passes.
	r = &recorder{TB: t}
	Golden(r, path, []byte("a\nb\n"), true)
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\n" || len(r.errors)+len(r.fatals) != 0 {
		t.Fatalf("update wrote %q (%v), reported %q %q", b, err, r.errors, r.fatals)
	}

	// A difference names the file and the first differing line.
	for _, tc := range []struct {
		got  string
		line string
	}{
		{"a\nc\n", "line 2"},
		{"a\nb\nextra\n", "line 3"},
		{"a\n", "line 2"},
	} {
		r = &recorder{TB: t}
		Golden(r, path, []byte(tc.got), false)
		if len(r.errors) != 1 || !strings.Contains(r.errors[0], path) || !strings.Contains(r.errors[0], tc.line) {
			t.Errorf("got %q: errors %q, want one naming %s and %s", tc.got, r.errors, path, tc.line)
		}
	}
	r = &recorder{TB: t}
	Golden(r, path, []byte("a\nb\n"), false)
	if len(r.errors)+len(r.fatals) != 0 {
		t.Errorf("equal output reported %q %q", r.errors, r.fatals)
	}
}

func TestCollectCheck(t *testing.T) {
	var ok Collect
	ok.Header().Runs = []trace.RunInfo{{ID: 0, Procs: 1}}
	ok.Header().States = []trace.StateDef{{ID: 1, Name: "a"}}
	for _, r := range []trace.Record{trace.State(0, 0, 5, 1), trace.State(0, 0, 7, 1)} {
		if err := ok.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	var rec recorder
	ok.Check(&rec)
	if len(rec.fatals) != 0 || len(ok.Records) != 2 {
		t.Fatalf("a valid import: %v, %d records", rec.fatals, len(ok.Records))
	}
	// Out of order: Add keeps it, Check refuses it.
	ok.Add(trace.State(0, 0, 3, 1))
	rec = recorder{}
	ok.Check(&rec)
	if len(rec.fatals) != 1 || !strings.Contains(rec.fatals[0], "record") {
		t.Errorf("records out of order: %v, want one failure naming the record", rec.fatals)
	}
	rec = recorder{}
	(&Collect{}).Check(&rec)
	if len(rec.fatals) == 0 || rec.fatals[0] != "no error and no records" {
		t.Errorf("no records: %v", rec.fatals)
	}
}

func TestErrorNames(t *testing.T) {
	var rec recorder
	ErrorNames(&rec, fmt.Errorf("reading: %w", &format.Error{File: "a.prv", Msg: "bad"}), "a.prv")
	if len(rec.fatals) != 0 {
		t.Errorf("an error naming the file: %v", rec.fatals)
	}
	for _, err := range []error{&format.Error{File: "b.prv", Msg: "bad"}, io.ErrUnexpectedEOF} {
		rec = recorder{}
		ErrorNames(&rec, err, "a.prv")
		if len(rec.fatals) != 1 || !strings.Contains(rec.fatals[0], "naming a.prv") {
			t.Errorf("%v: %v, want one failure", err, rec.fatals)
		}
	}
}

func TestCount(t *testing.T) {
	var c Count
	c.Header().Meta.Program = "p"
	for range 3 {
		if err := c.Add(trace.State(0, 0, 0, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if c.N != 3 || c.H.Meta.Program != "p" {
		t.Errorf("counted %d records, header %+v; want 3 and the program set", c.N, c.H.Meta)
	}
}

func TestReadCSV(t *testing.T) {
	path := WriteFile(t, "", "t.csv", "id,name\n1,\"a, b\"\n")
	rows := ReadCSV(t, path)
	if len(rows) != 2 || rows[1][1] != "a, b" {
		t.Errorf("rows %q", rows)
	}
}
