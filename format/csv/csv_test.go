package csv

import (
	"bytes"
	encsv "encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// awkward names: every one needs quoting or must survive it.
const (
	commaName   = "loop i, j"
	quoteName   = `say "hi"`
	newlineName = "two\nlines"
	spaceName   = " leading space"
)

// smallTrace is a hand-built run of two processes with one record of
// every kind, dictionaries whose names need quoting, and BBV records.
func smallTrace(t testing.TB) (*trace.Memory, []trace.Record) {
	m := &trace.Memory{}
	h := m.Header()
	h.EnsureRun(0, 2)
	h.Runs[0].Name = "n=2, small"
	h.Procs = []trace.ProcInfo{{Run: 0, Proc: 1, Name: "rank 1"}, {Run: 0, Proc: 0, Name: quoteName}}
	h.States = []trace.StateDef{
		{ID: 1, Name: "compute", Description: newlineName, File: "a.c", Line: 10},
		{ID: 0, Name: "idle"},
	}
	h.Regions = []trace.RegionDef{
		{ID: 0, Kind: trace.RegionFunction, Label: "main", Function: "main", File: "a.c", Line: 1, EndLine: 50, Parent: -1},
		{ID: 1, Kind: trace.RegionLoop, Label: commaName, Function: "main", File: "dir, with comma/a.c", Line: 5, EndLine: 20, Parent: 0},
	}
	h.Events = []trace.EventDef{{ID: 0, Name: spaceName}}
	h.Counters = []trace.CounterDef{{ID: 0, Name: "flops", Unit: "GF/s"}, {ID: 1, Name: "ratio"}}
	h.Comms = []trace.CommDef{{ID: 0, Name: "world"}, {ID: 1, Name: "pair", Members: []int32{1, 0}}}
	add := func(r trace.Record) {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	add(trace.State(0, 0, 0, 1))
	add(trace.Enter(0, 0, 0, 0))
	add(trace.Enter(0, 0, 100, 1))
	add(trace.Send(0, 0, 1000, 1200, 1, 4096, 7, 0))
	dyn := trace.Send(0, 0, 1100, 0, 1, 8, 8, 1)
	dyn.Seq, dyn.Flags = 3, trace.FlagDynamic
	add(dyn)
	add(trace.Coll(0, 0, 1500, 2500, trace.OpAllreduce, -1, 8, 0))
	add(trace.Exit(0, 0, 2500, 1))
	add(trace.Event(0, 0, 2600, 0, -42))
	add(trace.Counter(0, 0, 3200, 0, 1.5))
	add(trace.Counter(0, 0, 3300, 1, 1.0/3))
	add(trace.State(0, 1, 0, 0))
	any := trace.Recv(0, 1, 500, 1300, trace.NoPeer, 4096, 7, 0)
	any.Flags = trace.FlagAnySource
	add(any)
	add(trace.Coll(0, 1, 1500, 2600, trace.OpBcast, 0, 8, 0))
	add(trace.Counter(0, 1, 3300, 0, math.Inf(1)))
	m.Sort()
	bbv := []trace.Record{
		trace.BBV(0, 0, 0, 1000, 3, 120),
		trace.BBV(0, 0, 0, 1000, 4, 7),
		trace.BBV(0, 1, 0, 0, 3, 99),
		trace.BBV(0, 0, 1, 2000, 3, 5),
	}
	return m, bbv
}

func exportSmall(t *testing.T, dir string) {
	m, bbv := smallTrace(t)
	if err := Export(dir, &m.H, m.Reader(), trace.NewSliceReader(bbv), Options{}); err != nil {
		t.Fatal(err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	exportSmall(t, dir)
	golden := filepath.Join("testdata", "small")
	got := listDir(t, dir)
	if *update {
		os.RemoveAll(golden)
		os.MkdirAll(golden, 0o755)
		for _, n := range got {
			data, _ := os.ReadFile(filepath.Join(dir, n))
			if err := os.WriteFile(filepath.Join(golden, n), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"bbv.csv", "collectives.csv", "comms.csv", "counter_names.csv", "counters.csv", "event_names.csv",
		"events.csv", "messages.csv", "procs.csv", "region_names.csv", "regions.csv", "runs.csv", "state_names.csv", "states.csv"}
	if !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
	if g := listDir(t, golden); !slices.Equal(g, want) {
		t.Errorf("golden files = %q (run go test -update)", g)
	}
	for _, n := range got {
		data, _ := os.ReadFile(filepath.Join(dir, n))
		wantData, err := os.ReadFile(filepath.Join(golden, n))
		if err != nil {
			t.Errorf("%v (run go test -update)", err)
			continue
		}
		if !bytes.Equal(data, wantData) {
			t.Errorf("%s differs from the golden file:\n%s", n, data)
		}
		fi, _ := os.Stat(filepath.Join(dir, n))
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", n, fi.Mode())
		}
	}
}

// TestReadBack checks the columns and values through encoding/csv, so it
// does not depend on the golden files being right.
func TestReadBack(t *testing.T) {
	dir := t.TempDir()
	exportSmall(t, dir)
	want := map[string][][]string{
		"states.csv":      {{"run", "proc", "t", "state"}, {"0", "0", "0", "1"}, {"0", "1", "0", "0"}},
		"regions.csv":     {{"run", "proc", "t", "kind", "region"}, {"0", "0", "0", "enter", "0"}, {"0", "0", "100", "enter", "1"}, {"0", "0", "2500", "exit", "1"}},
		"messages.csv":    {{"run", "proc", "t", "end", "kind", "peer", "bytes", "tag", "comm", "request", "flags"}, {"0", "1", "500", "1300", "recv", "-1", "4096", "7", "0", "-1", "2"}, {"0", "0", "1000", "1200", "send", "1", "4096", "7", "0", "-1", "0"}, {"0", "0", "1100", "0", "send", "1", "8", "8", "1", "3", "1"}},
		"collectives.csv": {{"run", "proc", "t", "end", "op", "root", "bytes", "comm"}, {"0", "0", "1500", "2500", "allreduce", "-1", "8", "0"}, {"0", "1", "1500", "2600", "bcast", "0", "8", "0"}},
		"events.csv":      {{"run", "proc", "t", "event", "value"}, {"0", "0", "2600", "0", "-42"}},
		"counters.csv":    {{"run", "proc", "t", "counter", "value"}, {"0", "0", "3200", "0", "1.5"}, {"0", "0", "3300", "1", "0.3333333333333333"}, {"0", "1", "3300", "0", "+Inf"}},
		"bbv.csv":         {{"run", "proc", "interval", "t", "block", "count"}, {"0", "0", "0", "1000", "3", "120"}, {"0", "0", "0", "1000", "4", "7"}, {"0", "1", "0", "0", "3", "99"}, {"0", "0", "1", "2000", "3", "5"}},
		"runs.csv":        {{"id", "name", "procs"}, {"0", "n=2, small", "2"}},
		"procs.csv":       {{"run", "proc", "name"}, {"0", "0", quoteName}, {"0", "1", "rank 1"}},
		"state_names.csv": {{"id", "name", "description", "file", "line"}, {"0", "idle", "", "", "0"}, {"1", "compute", newlineName, "a.c", "10"}},
		"region_names.csv": {{"id", "kind", "label", "function", "file", "line", "end_line", "parent"},
			{"0", "function", "main", "main", "a.c", "1", "50", "-1"}, {"1", "loop", commaName, "main", "dir, with comma/a.c", "5", "20", "0"}},
		"event_names.csv":   {{"id", "name"}, {"0", spaceName}},
		"counter_names.csv": {{"id", "name", "unit"}, {"0", "flops", "GF/s"}, {"1", "ratio", ""}},
		"comms.csv":         {{"id", "name", "members"}, {"0", "world", ""}, {"1", "pair", "1;0"}},
	}
	for name, rows := range want {
		got := formattest.ReadCSV(t, filepath.Join(dir, name))
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", rows) {
			t.Errorf("%s = %q\nwant %q", name, got, rows)
		}
	}
}

func TestQuoting(t *testing.T) {
	for _, s := range []string{"", "plain", commaName, quoteName, newlineName, spaceName, "\ttab", "cr\r", `""`, `\.`, "é,ü", "trailing ", "a;b"} {
		got := string(appendField(nil, s))
		var buf bytes.Buffer
		w := encsv.NewWriter(&buf)
		w.Write([]string{s})
		w.Flush()
		if want := strings.TrimSuffix(buf.String(), "\n"); got != want {
			t.Errorf("appendField(%q) = %q, encoding/csv writes %q", s, got, want)
		}
		rows, err := encsv.NewReader(strings.NewReader(got + ",x\n")).ReadAll()
		if err != nil || len(rows) != 1 || rows[0][0] != s || rows[0][1] != "x" {
			t.Errorf("appendField(%q) = %q reads back as %q (%v)", s, got, rows, err)
		}
	}
}

func TestExportTable(t *testing.T) {
	m, bbv := smallTrace(t)
	dir := t.TempDir()
	exportSmall(t, dir)
	for _, name := range []string{"states", "messages.csv", "counters", "state_names", "comms"} {
		var buf bytes.Buffer
		if err := ExportTable(&buf, name, &m.H, m.Reader()); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(name, ".csv")+".csv"))
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("ExportTable(%s) = %q, want %q", name, buf.Bytes(), want)
		}
	}
	var buf bytes.Buffer
	if err := ExportTable(&buf, "bbv", &m.H, trace.NewSliceReader(bbv)); err != nil {
		t.Fatal(err)
	}
	if want, _ := os.ReadFile(filepath.Join(dir, "bbv.csv")); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("ExportTable(bbv) = %q", buf.Bytes())
	}
	// An empty table still has its header line; a nil reader is no records.
	buf.Reset()
	if err := ExportTable(&buf, "events", nil, nil); err != nil || buf.String() != "run,proc,t,event,value\n" {
		t.Errorf("empty events table = %q, %v", buf.String(), err)
	}
	if err := ExportTable(&buf, "nonsense", &m.H, nil); err == nil || !strings.Contains(err.Error(), "states") {
		t.Errorf("unknown table: err = %v", err)
	}
	if err := ExportTable(&buf, "states", &m.H, errReader{}); err == nil {
		t.Error("read error not returned")
	}
}

func TestTableNames(t *testing.T) {
	want := []string{"states", "regions", "messages", "collectives", "events", "counters", "bbv",
		"runs", "procs", "state_names", "region_names", "event_names", "counter_names", "comms"}
	if got := TableNames(); !slices.Equal(got, want) {
		t.Errorf("TableNames() = %q", got)
	}
}

func TestEmptyTrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "sub")
	if err := Export(dir, nil, trace.NewSliceReader(nil), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"runs.csv"}) {
		t.Errorf("files = %q, want only runs.csv", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "runs.csv")); string(data) != "id,name,procs\n" {
		t.Errorf("runs.csv = %q", data)
	}
}

func TestSelectedTables(t *testing.T) {
	m, bbv := smallTrace(t)
	dir := t.TempDir()
	if err := Export(dir, &m.H, m.Reader(), trace.NewSliceReader(bbv), Options{Tables: []string{"states.csv", "comms"}}); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"comms.csv", "states.csv"}) {
		t.Errorf("files = %q", got)
	}
	if err := Export(dir, &m.H, m.Reader(), nil, Options{Tables: []string{"nope"}}); err == nil {
		t.Error("unknown table accepted")
	}
}

// TestStaleTablesRemoved: a second export of a trace without counters
// leaves no counters.csv from the first one.
func TestStaleTablesRemoved(t *testing.T) {
	dir := t.TempDir()
	exportSmall(t, dir)
	m := &trace.Memory{}
	m.Header().EnsureRun(0, 1)
	m.Add(trace.State(0, 0, 5, 0))
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	if err := Export(dir, &m.H, m.Reader(), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"notes.txt", "runs.csv", "states.csv"}) {
		t.Errorf("files = %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "states.csv")); string(data) != "run,proc,t,state\n0,0,5,0\n" {
		t.Errorf("states.csv = %q", data)
	}
}

type errReader struct{}

func (errReader) Read([]trace.Record) (int, error) { return 0, errors.New("broken store") }

// failAfter yields the records of r, then fails.
type failAfter struct{ r trace.Reader }

func (f *failAfter) Read(buf []trace.Record) (int, error) {
	n, err := f.r.Read(buf)
	if errors.Is(err, io.EOF) {
		return 0, errors.New("broken store")
	}
	return n, err
}

// previous fills dir with an earlier export and returns its files' contents.
func previous(t *testing.T, dir string) map[string]string {
	exportSmall(t, dir)
	files := map[string]string{}
	for _, n := range listDir(t, dir) {
		data, _ := os.ReadFile(filepath.Join(dir, n))
		files[n] = string(data)
	}
	return files
}

func sameDir(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := listDir(t, dir)
	var wantNames []string
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	if !slices.Equal(got, wantNames) {
		t.Errorf("files after the failed export = %q, want %q", got, wantNames)
	}
	for n, w := range want {
		if data, _ := os.ReadFile(filepath.Join(dir, n)); string(data) != w {
			t.Errorf("%s was changed by the failed export", n)
		}
	}
}

func TestFailureLeavesNoPartialFiles(t *testing.T) {
	other := &trace.Memory{}
	other.Header().EnsureRun(0, 3)
	for i := int64(0); i < 100_000; i++ { // enough to spill the write buffers
		other.Records = append(other.Records, trace.State(0, int32(i%3), i, int32(i%7)), trace.Event(0, int32(i%3), i, 1, i))
	}
	t.Run("read error", func(t *testing.T) {
		dir := t.TempDir()
		want := previous(t, dir)
		err := Export(dir, &other.H, &failAfter{other.Reader()}, nil, Options{})
		if err == nil || !strings.Contains(err.Error(), "broken store") {
			t.Fatalf("err = %v", err)
		}
		sameDir(t, dir, want)
	})
	t.Run("bbv reader error", func(t *testing.T) {
		dir := t.TempDir()
		want := previous(t, dir)
		err := Export(dir, &other.H, other.Reader(), trace.NewSliceReader([]trace.Record{trace.State(0, 0, 0, 0)}), Options{})
		if err == nil {
			t.Fatal("a non-BBV record from the BBV reader was accepted")
		}
		sameDir(t, dir, want)
	})
	t.Run("file cannot be written", func(t *testing.T) {
		// A directory where events.csv should go: nothing may be renamed.
		dir := t.TempDir()
		want := previous(t, dir)
		os.Remove(filepath.Join(dir, "events.csv"))
		if err := os.Mkdir(filepath.Join(dir, "events.csv"), 0o755); err != nil {
			t.Fatal(err)
		}
		want["events.csv"] = "" // a directory reads as ""
		err := Export(dir, &other.H, other.Reader(), nil, Options{})
		if err == nil || !strings.Contains(err.Error(), "events.csv") {
			t.Fatalf("err = %v", err)
		}
		sameDir(t, dir, want)
		if fi, err := os.Stat(filepath.Join(dir, "events.csv")); err != nil || !fi.IsDir() {
			t.Error("the directory in the way is gone")
		}
	})
	t.Run("dir is a file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "file")
		os.WriteFile(path, []byte("x"), 0o644)
		if err := Export(path, &other.H, other.Reader(), nil, Options{}); err == nil {
			t.Fatal("export into a regular file succeeded")
		}
	})
}

func TestGeneratedCounts(t *testing.T) {
	dir := t.TempDir()
	h := &trace.Header{}
	h.EnsureRun(0, 4)
	if err := Export(dir, h, &tracetest.Stream{Procs: 4, Limit: 10_000}, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range listDir(t, dir) {
		rows := formattest.ReadCSV(t, filepath.Join(dir, n))
		if n != "runs.csv" {
			total += len(rows) - 1
		}
	}
	if total != 10_000 {
		t.Errorf("%d record rows, want 10000", total)
	}
}

const benchRecords = 1_000_000

// BenchmarkExportTable measures formatting alone: the messages table (the
// widest) into a writer that counts lines.
func BenchmarkExportTable(b *testing.B) {
	h := &trace.Header{}
	h.EnsureRun(0, 16)
	var w lineCounter
	b.ReportAllocs()
	for b.Loop() {
		if err := ExportTable(&w, "messages", h, &tracetest.Stream{Procs: 16, Limit: benchRecords}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(w.lines-int64(b.N))/b.Elapsed().Seconds(), "rows/s")
}

type lineCounter struct{ lines int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// BenchmarkExport measures a whole export into files.
func BenchmarkExport(b *testing.B) {
	h := &trace.Header{}
	h.EnsureRun(0, 16)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := Export(dir, h, &tracetest.Stream{Procs: 16, Limit: benchRecords}, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
