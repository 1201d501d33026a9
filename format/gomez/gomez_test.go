package gomez

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// summary renders a header and the time-merged records for golden files.
func summary(m *trace.Memory) string {
	var b strings.Builder
	h := m.Header()
	fmt.Fprintf(&b, "source: %s\n", h.Meta.Source)
	fmt.Fprintf(&b, "clock resolution: %d ns\n", h.Meta.ClockResolution)
	var ins []string
	for _, in := range h.Meta.Inputs {
		ins = append(ins, filepath.Base(in))
	}
	fmt.Fprintf(&b, "inputs: %s\n", strings.Join(ins, " "))
	for _, r := range h.Runs {
		fmt.Fprintf(&b, "run %d: %d procs\n", r.ID, r.Procs)
	}
	for _, s := range h.States {
		fmt.Fprintf(&b, "state %d name=%q description=%q\n", s.ID, s.Name, s.Description)
	}
	if len(h.Repairs) > 0 {
		fmt.Fprintf(&b, "repairs: %v\n", h.Repairs)
	}
	fmt.Fprintf(&b, "records: %d\n", len(m.Records))
	m.Sort()
	for _, r := range m.Records {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func perProcFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/perproc/amoeba.*")
	if err != nil || len(files) != 3 {
		t.Fatalf("per-process test files: %v %v", files, err)
	}
	slices.Sort(files)
	return files
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		inputs []string
		opts   format.Options
	}{
		{"merged2runs", []string{"testdata/merged2runs.srt"}, format.Options{}},
		{"perproc", perProcFiles(t), format.Options{}},
		{"amoeba_dict", []string{"testdata/amoeba.srt"}, format.Options{Dict: "testdata/amoeba_blocks.txt"}},
		{"amoeba_procs_ms", []string{"testdata/amoeba.srt"}, format.Options{TimeUnit: time.Millisecond, Params: map[string]string{"procs": "4"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := formattest.MustImport(t, Importer{}, tc.opts, tc.inputs...)
			formattest.Golden(t, filepath.Join("testdata", tc.name+".golden"), []byte(summary(m)), *update)
		})
	}
}

// TestMergedValues checks the merged test file field by field, independently of the golden files.
func TestMergedValues(t *testing.T) {
	m, err := formattest.Import(t, Importer{}, []string{"testdata/merged2runs.srt"}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(m.Records), 24; got != want {
		t.Fatalf("%d records, want %d", got, want)
	}
	if got := m.H.Runs; len(got) != 2 || got[0].Procs != 3 || got[1].Procs != 2 {
		t.Fatalf("runs %+v, want 2 runs of 3 and 2 processes", got)
	}
	if m.H.Meta.ClockResolution != 1000 || m.H.Meta.Source != "gomez" {
		t.Errorf("meta %+v", m.H.Meta)
	}
	want := map[int]trace.Record{
		0:  trace.State(0, 0, 0, 1),
		7:  trace.State(0, 0, 120_000, 4),  // same time as the line before, kept after it
		9:  trace.State(0, 2, 150_500, 3),  // 150.5 µs
		15: trace.State(0, 2, 700_250, 13), // 700.25 µs
		16: trace.State(1, 0, 0, 1),        // the time drops back: run 1
		23: trace.State(1, 0, 610_000, 13),
	}
	for i, w := range want {
		if m.Records[i] != w {
			t.Errorf("record %d = %v, want %v", i, m.Records[i], w)
		}
	}
	var ids []int32
	for _, s := range m.H.States {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []int32{1, 2, 3, 4, 5, 13}) {
		t.Errorf("states %v, want the blocks used: 1 2 3 4 5 13", ids)
	}
}

func TestMergedEqualsPerProcess(t *testing.T) {
	merged, err := formattest.Import(t, Importer{}, []string{"testdata/merged2runs.srt"}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	per, err := formattest.Import(t, Importer{}, perProcFiles(t), format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	merged.Sort()
	per.Sort()
	if !slices.Equal(merged.Records, per.Records) {
		t.Errorf("merged and per-process imports differ:\n%v\n%v", merged.Records, per.Records)
	}
	if !reflect.DeepEqual(merged.H.Runs, per.H.Runs) || !slices.Equal(merged.H.States, per.H.States) {
		t.Errorf("headers differ: %+v %+v / %+v %+v", merged.H.Runs, merged.H.States, per.H.Runs, per.H.States)
	}
}

// TestGeneratedSplit splits a generated merged trace of several runs into
// one file per process and checks that both import to the same records.
func TestGeneratedSplit(t *testing.T) {
	const runs, procs, per = 3, 5, 40
	var buf bytes.Buffer
	if err := Generate(&buf, runs, procs, per, 7); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	merged := filepath.Join(dir, "gen.srt")
	if err := os.WriteFile(merged, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	split := make([][]byte, procs)
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		var pid int
		fmt.Sscan(f[2], &pid)
		split[pid] = append(split[pid], line...)
	}
	var files []string
	for p, data := range split {
		name := filepath.Join(dir, fmt.Sprintf("gen.%d", p))
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	a, err := formattest.Import(t, Importer{}, []string{merged}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := formattest.Import(t, Importer{}, files, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Records) != runs*procs*per {
		t.Fatalf("%d records, want %d", len(a.Records), runs*procs*per)
	}
	if len(a.H.Runs) != runs || len(b.H.Runs) != runs {
		t.Fatalf("runs: merged %d, per-process %d, want %d", len(a.H.Runs), len(b.H.Runs), runs)
	}
	a.Sort()
	b.Sort()
	if !slices.Equal(a.Records, b.Records) {
		t.Error("merged and per-process imports of a generated trace differ")
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		params  map[string]string
		unit    time.Duration
		line    int
		msg     string
	}{
		{"two fields", "0 1 0\n12 3\n", nil, 0, 2, `expected "time block pid" (3 integers), got 2 fields`},
		{"one field", "7\n", nil, 0, 1, `expected "time block pid" (3 integers), got 1 field`},
		{"four fields", "0 1 0 5\n", nil, 0, 1, `expected "time block pid" (3 integers), got 4 fields`},
		{"trailing comment", "0 1 0\n5 2 0 # note\n", nil, 0, 2, `expected "time block pid" (3 integers), got 5 fields`},
		{"bad time", "# c\n\nx 1 0\n", nil, 0, 3, `expected a non-negative number for the time (field 1 of "time block pid"), got "x"`},
		{"time with a dot only", "12. 1 0\n", nil, 0, 1, `expected a non-negative number for the time (field 1 of "time block pid"), got "12."`},
		{"bad pid", "0 1 0\n1 1 1e3\n", nil, 0, 2, `expected an integer pid (field 3 of "time block pid"), got "1e3"`},
		{"bad block", "0 +1 0\n", nil, 0, 1, `expected an integer block (field 2 of "time block pid"), got "+1"`},
		{"negative time", "0 1 0\n-5 1 0\n", nil, 0, 2, "time -5 is negative"},
		{"negative block", "0 -1 0\n", nil, 0, 1, "block -1 is negative"},
		{"negative pid", "0 1 0\n0 1 -2\n", nil, 0, 2, "pid -2 is negative"},
		{"too fine", "0 1 0\n12.3456 1 0\n", nil, 0, 2, "time 12.3456 is finer than 1ns (the time unit is 1µs: at most 3 fractional digits)"},
		{"too fine in ns", "1.5 1 0\n", nil, time.Nanosecond, 1, "time 1.5 is finer than 1ns (the time unit is 1ns: at most 0 fractional digits)"},
		{"time overflow", "99999999999999999999 1 0\n", nil, 0, 1, "time 99999999999999999999 is out of range (at most 9223372036854775.807 µs)"},
		{"time overflow in ns", "9223372036854775807 1 0\n9223372036854775808 1 0\n", nil, time.Nanosecond, 2, "time 9223372036854775808 is out of range (at most 9223372036854775807 ns)"},
		{"time overflow after scaling", "9223372036854776 1 0\n", nil, 0, 1, "time 9223372036854776 is out of range (at most 9223372036854775.807 µs)"},
		{"block overflow", "0 2147483648 0\n", nil, 0, 1, "block 2147483648 is out of range (at most 2147483647)"},
		{"pid out of range", "0 1 1048576\n", nil, 0, 1, "pid 1048576 is out of range (at most 1048575; declare procs=N for the number of processes)"},
		{"unknown rank", "0 1 0\n0 1 9\n5 2 12\n", map[string]string{"procs": "10"}, 0, 3, "unknown rank 12: the trace declares 10 processes"},
		{"binary", "0 1 0\n\x00\x01 \x02 \xff\n", nil, 0, 2, `expected a non-negative number for the time (field 1 of "time block pid"), got "\x00\x01"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := formattest.WriteFile(t, "", "mg.srt", tc.content)
			_, err := formattest.Import(t, Importer{}, []string{path}, format.Options{Params: tc.params, TimeUnit: tc.unit})
			if err == nil {
				t.Fatal("no error")
			}
			want := fmt.Sprintf("%s:%d: %s", path, tc.line, tc.msg)
			if err.Error() != want {
				t.Errorf("error\n%s\nwant\n%s", err, want)
			}
			var fe *format.Error
			if !errors.As(err, &fe) || fe.File != path || fe.Line != tc.line {
				t.Errorf("error %#v is not a *format.Error at %s:%d", err, path, tc.line)
			}
		})
	}
}

func TestEmptyAndBadOptions(t *testing.T) {
	empty := formattest.WriteFile(t, "", "empty.srt", "# nothing\n\n")
	ok := formattest.WriteFile(t, "", "ok.srt", "0 1 0\n")
	tests := []struct {
		name   string
		inputs []string
		opts   format.Options
		want   string
	}{
		{"no inputs", nil, format.Options{}, "gomez: no input files"},
		{"no records", []string{empty}, format.Options{}, empty + `: no records (expected lines of "time block pid")`},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.srt")}, format.Options{}, "no such file"},
		{"bad procs", []string{ok}, format.Options{Params: map[string]string{"procs": "ten"}}, `parameter procs="ten"`},
		{"zero procs", []string{ok}, format.Options{Params: map[string]string{"procs": "0"}}, `parameter procs="0"`},
		{"negative unit", []string{ok}, format.Options{TimeUnit: -time.Second}, "time unit -1s is negative"},
		{"missing dict", []string{ok}, format.Options{Dict: filepath.Join(t.TempDir(), "nope.txt")}, "block dictionary"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := formattest.Import(t, Importer{}, tc.inputs, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestAcrossFiles checks the rule that a process continues in time order
// from one file to the next, and that runs line up across files.
func TestAcrossFiles(t *testing.T) {
	a := formattest.WriteFile(t, "", "a.srt", "0 1 0\n100 2 0\n0 1 0\n50 2 0\n")
	c := formattest.WriteFile(t, "", "c.srt", "200 3 0\n60 3 0\n")
	m, err := formattest.Import(t, Importer{}, []string{a, c}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Sort()
	want := []trace.Record{
		trace.State(0, 0, 0, 1), trace.State(0, 0, 100_000, 2), trace.State(0, 0, 200_000, 3),
		trace.State(1, 0, 0, 1), trace.State(1, 0, 50_000, 2), trace.State(1, 0, 60_000, 3),
	}
	if !slices.Equal(m.Records, want) {
		t.Errorf("records %v, want %v", m.Records, want)
	}
}

func TestAcrossFilesError(t *testing.T) {
	a := formattest.WriteFile(t, "", "a.srt", "0 1 0\n100 2 0\n0 1 0\n50 2 0\n")
	b := formattest.WriteFile(t, "", "b.srt", "200 3 0\n30 3 0\n")
	_, err := formattest.Import(t, Importer{}, []string{a, b}, format.Options{})
	want := b + ":2: pid 0 of run 1 goes back in time: 30µs here, but input 1 (" + a + ") already had it at 50µs"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

func TestTimeUnits(t *testing.T) {
	tests := []struct {
		unit time.Duration
		in   string
		want int64
	}{
		{0, "12", 12_000},
		{0, "12.345", 12_345},
		{0, "12.3450000", 12_345},
		{0, "0.001", 1},
		{0, "007", 7_000},
		{0, "00000000000000000000000012", 12_000},
		{time.Nanosecond, "12", 12},
		{time.Nanosecond, "12.000", 12},
		{time.Millisecond, "1.5", 1_500_000},
		{time.Millisecond, "0.000001", 1},
		{10 * time.Microsecond, "3.0001", 30_001},
		{time.Second, "1.000000001", 1_000_000_001},
		{0, "9223372036854775", 9_223_372_036_854_775_000},
		{0, "9223372036854775.807", 9_223_372_036_854_775_807},
	}
	for _, tc := range tests {
		path := formattest.WriteFile(t, "", "u.srt", tc.in+" 1 0\n")
		m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{TimeUnit: tc.unit})
		if err != nil {
			t.Errorf("%q in %v: %v", tc.in, tc.unit, err)
			continue
		}
		if got := m.Records[0].T; got != tc.want {
			t.Errorf("%q in %v = %d ns, want %d", tc.in, tc.unit, got, tc.want)
		}
		wantRes := int64(tc.unit)
		if wantRes == 0 {
			wantRes = 1000
		}
		if m.H.Meta.ClockResolution != wantRes {
			t.Errorf("clock resolution %d, want %d", m.H.Meta.ClockResolution, wantRes)
		}
	}
}

func TestDeclaredProcs(t *testing.T) {
	path := formattest.WriteFile(t, "", "p.srt", "0 1 0\n5 2 1\n0 1 2\n")
	m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{Params: map[string]string{"procs": "4", "other": "ignored"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.H.Runs) != 2 || m.H.Runs[0].Procs != 4 || m.H.Runs[1].Procs != 4 {
		t.Errorf("runs %+v, want 2 runs of the 4 declared processes", m.H.Runs)
	}
}

func TestDict(t *testing.T) {
	defs, err := ReadDict("testdata/amoeba_blocks.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 13 {
		t.Fatalf("%d blocks, want 13", len(defs))
	}
	for i, d := range defs {
		if d.ID != int32(i+1) {
			t.Errorf("entry %d has id %d", i, d.ID)
		}
	}
	checks := []trace.StateDef{
		{ID: 1, Name: "copy initial arrays", Description: "copy initial arrays simplex (coordinate array for vertices) fval (value of function at vertices)"},
		{ID: 4, Name: "just before choice point", Description: "just before choice point"},
		{ID: 7, Name: "shrink simplex", Description: "shrink simplex - evaluates FUN dim+1 times at each vertex"},
		{ID: 11, Name: "broadcast simplex array", Description: "broadcast simplex array from node with best value"},
		{ID: 13, Name: "converged, print results", Description: "converged, print results outside loop"},
	}
	for _, c := range checks {
		if got := defs[c.ID-1]; got != c {
			t.Errorf("block %d = %+v, want %+v", c.ID, got, c)
		}
	}
}

func TestDictErrors(t *testing.T) {
	tests := []struct {
		name, content string
		line          int
		msg           string
	}{
		{"non-integer later", "Block #\tDescription\n1\tfirst\nzwei\tsecond\n", 3, `expected "id description" with an integer block id, got "zwei"`},
		{"header not first", "1 a\nBlock # Description\n", 2, `expected "id description" with an integer block id, got "Block"`},
		{"negative", "# ids\n-3 x\n", 2, "block id -3 is negative"},
		{"duplicate", "1 a\n\n1 b\n", 3, "block 1 is described twice (first at line 1)"},
		{"overflow", "2147483648 big\n", 1, "block id 2147483648 is out of range (at most 2147483647)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := formattest.WriteFile(t, "", "blocks.txt", tc.content)
			_, err := ReadDict(path)
			want := fmt.Sprintf("%s:%d: %s", path, tc.line, tc.msg)
			if err == nil || err.Error() != want {
				t.Errorf("error %v\nwant  %s", err, want)
			}
		})
	}
	// The import reports dictionary errors too, before reading the trace.
	dict := formattest.WriteFile(t, "", "blocks.txt", "1 a\n1 b\n")
	if _, err := formattest.Import(t, Importer{}, []string{"testdata/amoeba.srt"}, format.Options{Dict: dict}); err == nil ||
		!strings.HasPrefix(err.Error(), dict+":2: ") {
		t.Errorf("import with a bad dictionary: %v", err)
	}
}

func TestShortName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"loop", "loop"},
		{"end of shrink simplex", "end of shrink simplex"},
		{"if result(3) was good - extends projection", "if result(3) was good"},
		{"supercalifragilisticexpialidocious words", "supercalifragilisticexpi"},
		{"ééééééééééééééé x", "éééééééééééé"},
		{"- - -", ""},
	}
	for _, tc := range tests {
		if got := shortName(tc.in); got != tc.want {
			t.Errorf("shortName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGzip(t *testing.T) {
	plain, err := os.ReadFile("testdata/merged2runs.srt")
	if err != nil {
		t.Fatal(err)
	}
	path := formattest.WriteFile(t, "", "merged2runs.srt.gz", string(formattest.Gzip(t, plain)))
	gz, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	txt, err := formattest.Import(t, Importer{}, []string{"testdata/merged2runs.srt"}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gz.Records, txt.Records) || len(gz.Records) == 0 {
		t.Errorf("gzip import differs from plain: %d vs %d records", len(gz.Records), len(txt.Records))
	}
}

func TestTruncatedGzip(t *testing.T) {
	var buf bytes.Buffer
	if err := Generate(&buf, 1, 4, 2000, 1); err != nil {
		t.Fatal(err)
	}
	z := formattest.Gzip(t, buf.Bytes())
	for _, cut := range []int{len(z) / 2, len(z) - 4, 11} {
		path := formattest.WriteFile(t, "", "cut.srt.gz", string(z[:cut]))
		_, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
		var fe *format.Error
		if err == nil || !errors.As(err, &fe) || fe.File != path {
			t.Errorf("cut at %d of %d: error %v, want a *format.Error naming %s", cut, len(z), err, path)
		}
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Import(ctx, []string{"testdata/merged2runs.srt"}, format.Options{}, &trace.Memory{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}

	// Cancelled midway: the check every 64K lines stops a long file.
	var buf bytes.Buffer
	if err := Generate(&buf, 1, 10, 7000, 3); err != nil {
		t.Fatal(err)
	}
	path := formattest.WriteFile(t, "", "long.srt", buf.String())
	ctx, cancel = context.WithCancel(context.Background())
	w := &cancelAfter{n: 1000, cancel: cancel}
	err = Import(ctx, []string{path}, format.Options{}, w)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), path+":65536: import interrupted") {
		t.Errorf("error %v, want context.Canceled at line 65536", err)
	}
}

// cancelAfter is a writer that cancels a context after n records.
type cancelAfter struct {
	h      trace.Header
	n      int
	cancel func()
}

func (c *cancelAfter) Header() *trace.Header { return &c.h }
func (c *cancelAfter) Add(trace.Record) error {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return nil
}

// failWriter refuses every record.
type failWriter struct{ h trace.Header }

var errFull = errors.New("store full")

func (f *failWriter) Header() *trace.Header  { return &f.h }
func (f *failWriter) Add(trace.Record) error { return errFull }

func TestWriterError(t *testing.T) {
	err := Import(context.Background(), []string{"testdata/amoeba.srt"}, format.Options{}, &failWriter{})
	if !errors.Is(err, errFull) || !strings.HasPrefix(err.Error(), "testdata/amoeba.srt:2: cannot write the record") {
		t.Errorf("error %v", err)
	}
}

// refuseAt takes records until the n-th (from 1), which it refuses.
type refuseAt struct {
	h       trace.Header
	n, seen int
	got     []trace.Record
}

func (f *refuseAt) Header() *trace.Header { return &f.h }
func (f *refuseAt) Add(r trace.Record) error {
	if f.seen++; f.seen == f.n {
		return errFull
	}
	f.got = append(f.got, r)
	return nil
}

// batchRefuseAt is refuseAt taking batches, as the store's writer does.
type batchRefuseAt struct{ refuseAt }

func (f *batchRefuseAt) AddBatch(rs []trace.Record) (int, error) {
	for i, r := range rs {
		if err := f.Add(r); err != nil {
			return i, err
		}
	}
	return len(rs), nil
}

// TestWriterErrorLine checks that a record the writer refuses, in a later
// batch of records, is reported at its own line, ahead of a bad line
// after it, and that a bad line is reported once the records before it
// are written.
func TestWriterErrorLine(t *testing.T) {
	var text strings.Builder
	text.WriteString("# comment\n")
	recLine := map[int]int{} // record number (from 1) -> line
	line := 1
	for i := 1; i <= 3000; i++ {
		if i%500 == 0 {
			text.WriteString("\n") // a blank line moves the line numbers
			line++
		}
		fmt.Fprintf(&text, "%d %d %d\n", i, i%7+1, i%3)
		line++
		recLine[i] = line
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.srt")
	if err := os.WriteFile(good, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.srt")
	if err := os.WriteFile(bad, []byte(text.String()+"3001 x 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badLine := line + 1
	for _, batches := range []bool{false, true} {
		newWriter := func(n int) (trace.Writer, *refuseAt) {
			if batches {
				w := &batchRefuseAt{refuseAt{n: n}}
				return w, &w.refuseAt
			}
			w := &refuseAt{n: n}
			return w, w
		}
		for _, n := range []int{1, 1024, 1025, 2049, 3000} {
			for _, path := range []string{good, bad} {
				w, ra := newWriter(n)
				err := Import(context.Background(), []string{path}, format.Options{}, w)
				want := fmt.Sprintf("%s:%d: cannot write the record", path, recLine[n])
				if !errors.Is(err, errFull) || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("batches %v, refusing record %d of %s: error %v, want %q", batches, n, path, err, want)
				}
				if len(ra.got) != n-1 {
					t.Errorf("batches %v, refusing record %d: %d records taken before it", batches, n, len(ra.got))
				}
			}
		}
		// A writer that refuses nothing up to the bad line: the bad line,
		// after every record before it.
		w, ra := newWriter(4000)
		err := Import(context.Background(), []string{bad}, format.Options{}, w)
		want := fmt.Sprintf("%s:%d: ", bad, badLine)
		if err == nil || errors.Is(err, errFull) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("batches %v, bad line: error %v, want %q", batches, err, want)
		}
		if len(ra.got) != 3000 {
			t.Errorf("batches %v, bad line: %d records written before it, want 3000", batches, len(ra.got))
		}
	}
}

func TestRegistered(t *testing.T) {
	imp, err := format.Lookup("gomez")
	if err != nil {
		t.Fatal(err)
	}
	if imp.Name() != "gomez" || imp.Describe() == "" {
		t.Errorf("registered importer %q %q", imp.Name(), imp.Describe())
	}
	got, err := format.Detect("testdata/merged2runs.srt")
	if err != nil || got.Name() != "gomez" {
		t.Errorf("format.Detect: %v %v", got, err)
	}
	m := &trace.Memory{}
	if err := imp.Import(context.Background(), []string{"testdata/amoeba.srt"}, format.Options{}, m); err != nil || len(m.Records) != 23 {
		t.Errorf("Import through the registry: %d records, %v", len(m.Records), err)
	}
}

func TestDetect(t *testing.T) {
	many := strings.Repeat("10 2 3\n", 30)
	tests := []struct {
		name string
		head string
		want bool
	}{
		{"merged", "0 1 0\n0 1 1\n30 2 0\n", true},
		{"tabs and crlf", "0\t1\t0\r\n10\t2\t0\r\n", true},
		{"comment first", "# amoeba\n\n0 1 0\n", true},
		{"decimal time", "12.345 1 0\n", true},
		{"no final newline", "0 1 0", true},
		{"cut last line", "0 1 0\n0 1 1\n30 2", true},
		{"only 20 lines looked at", many + "garbage here\n", true},
		{"bad within 20", "0 1 0\n0 1\n" + many, false},
		{"empty", "", false},
		{"comments only", "# nothing\n\n", false},
		{"bbv", "T:1:2   :3:4   \nT:5:6\n", false},
		{"json", `{"traceEvents": []}` + "\n", false},
		{"json array", "[\n0, 1, 2\n]\n", false},
		{"two columns", "0 1\n1 2\n", false},
		{"four columns", "0 1 0 9\n", false},
		{"negative", "0 -1 0\n", false},
		{"dictionary", "Block #\tDescription\n1\tcopy initial arrays\n", false},
		{"dictionary body", "1 copy initial arrays\n", false},
		{"paraver", "#Paraver (01/01/2020 at 10:00):100_ns:1(4):1:1(4:1)\n1:1:1:1:1:0:100:1\n", false},
		{"csv", "time,block,pid\n0,1,0\n", false},
		{"binary", "\x1f\x8b\x08\x00", false},
	}
	var imp Importer
	for _, tc := range tests {
		if got := imp.Detect("x", []byte(tc.head)); got != tc.want {
			t.Errorf("%s: Detect = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGenerate(t *testing.T) {
	var a, b, c bytes.Buffer
	if err := Generate(&a, 2, 4, 30, 42); err != nil {
		t.Fatal(err)
	}
	if err := Generate(&b, 2, 4, 30, 42); err != nil {
		t.Fatal(err)
	}
	if err := Generate(&c, 2, 4, 30, 43); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same seed gave different output")
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("different seeds gave the same output")
	}
	path := formattest.WriteFile(t, "", "gen.srt", a.String())
	if !(Importer{}).Detect(path, a.Bytes()) {
		t.Error("Detect does not recognise generated output")
	}
	m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Records) != 2*4*30 || len(m.H.Runs) != 2 || m.H.Runs[1].Procs != 4 {
		t.Fatalf("%d records in %+v", len(m.Records), m.H.Runs)
	}
	// The file is time-sorted within each run, each process starts in
	// block 1 at time 0, ends in block 13 and loops over blocks 2..12
	// with either 5,6 or 7,8 after 4; everyone enters 11 together.
	type key struct{ run, proc int32 }
	seq := map[key][]int32{}
	enter11 := map[[2]int64]int{} // (run, time) -> processes entering 11 then
	for i, r := range m.Records {
		if i > 0 && m.Records[i-1].Run == r.Run && m.Records[i-1].T > r.T {
			t.Fatalf("record %d goes back in time", i)
		}
		if r.T%10_000 != 0 {
			t.Errorf("record %v is not on the 10 µs grid", r)
		}
		k := key{r.Run, r.Proc}
		if len(seq[k]) == 0 && (r.T != 0 || r.ID != 1) {
			t.Errorf("process %v starts with %v", k, r)
		}
		seq[k] = append(seq[k], r.ID)
		if r.ID == 11 {
			enter11[[2]int64{int64(r.Run), r.T}]++
		}
	}
	for k, s := range seq {
		if s[len(s)-1] != 13 {
			t.Errorf("process %v ends in block %d", k, s[len(s)-1])
		}
		for i := 1; i+1 < len(s); i++ {
			want := amoebaBody[(i-1)%len(amoebaBody)]
			if want == 0 {
				ok := (s[i] == 5 || s[i] == 7) && (i-1)%9 == 3 || (s[i] == 6 || s[i] == 8) && (i-1)%9 == 4 && s[i] == s[i-1]+1
				if !ok {
					t.Errorf("process %v: block %d at %d breaks the branch", k, s[i], i)
				}
				continue
			}
			if s[i] != want {
				t.Errorf("process %v: block %d at %d, want %d", k, s[i], i, want)
			}
		}
	}
	for at, n := range enter11 {
		if n != 4 {
			t.Errorf("%d processes enter block 11 at %v, want all 4", n, at)
		}
	}
}

func TestGenerateArgs(t *testing.T) {
	var buf bytes.Buffer
	for _, args := range [][3]int{{-1, 1, 1}, {1, -1, 1}, {1, 1, -1}, {2, 3, 1}, {1, MaxProcs + 1, 1}} {
		if err := Generate(&buf, args[0], args[1], args[2], 0); err == nil {
			t.Errorf("Generate%v: no error", args)
		}
	}
	if err := Generate(&buf, 0, 5, 5, 0); err != nil || buf.Len() != 0 {
		t.Errorf("Generate of nothing: %v, %d bytes", err, buf.Len())
	}
	if err := Generate(&buf, 1, 3, 1, 0); err != nil || buf.String() != "0 1 0\n0 1 1\n0 1 2\n" {
		t.Errorf("Generate of one record each: %v, %q", err, buf.String())
	}
	if err := Generate(errWriter{}, 1, 3, 100, 0); err == nil {
		t.Error("write error not reported")
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
