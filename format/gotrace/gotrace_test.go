package gotrace

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// realFile returns the path of a real Go trace of testdata/real/traces/go
// (its README gives their origin), failing the test when it is missing.
func realFile(t testing.TB, name string) string {
	t.Helper()
	return realdata.Path(t, "traces/go/"+name)
}

// importFile imports inputs with params into memory, failing the test on
// an error or an invalid header.
func importFile(t testing.TB, params map[string]string, inputs ...string) *trace.Memory {
	t.Helper()
	return formattest.MustImport(t, Importer{}, format.Options{Params: params}, inputs...)
}

// counts is what a summary counts.
type counts struct {
	procs   int32
	states  map[string]int
	events  map[string]int
	enters  map[string]int
	exits   int
	records map[trace.Kind]int
}

func count(m *trace.Memory) counts {
	ix := trace.NewIndex(&m.H)
	c := counts{procs: m.H.Runs[0].Procs, states: map[string]int{}, events: map[string]int{},
		enters: map[string]int{}, records: formattest.CountKinds(m.Records)}
	for _, r := range m.Records {
		switch r.Kind {
		case trace.KindState:
			c.states[ix.StateName(r.ID)]++
		case trace.KindEvent:
			c.events[ix.EventName(r.ID)]++
		case trace.KindEnter:
			c.enters[ix.RegionName(r.ID)]++
		case trace.KindExit:
			c.exits++
		}
	}
	return c
}

// summary is the golden text of an import: processes, records by kind,
// states, events and regions by name, repairs and Meta.Extra.
func summary(m *trace.Memory) string {
	c := count(m)
	var b strings.Builder
	fmt.Fprintf(&b, "runs %d\nprocesses %d\n", len(m.H.Runs), c.procs)
	for _, k := range trace.Kinds {
		if c.records[k] > 0 {
			fmt.Fprintf(&b, "records %s %d\n", k, c.records[k])
		}
	}
	sorted := func(prefix string, mm map[string]int) {
		keys := make([]string, 0, len(mm))
		for k := range mm {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s %q %d\n", prefix, k, mm[k])
		}
	}
	sorted("state", c.states)
	sorted("event", c.events)
	sorted("region", c.enters)
	fmt.Fprintf(&b, "exits %d\n", c.exits)
	rep := map[string]int{}
	for k, n := range m.H.Repairs {
		rep[k] = int(n)
	}
	sorted("repair", rep)
	keys := make([]string, 0, len(m.H.Meta.Extra))
	for k := range m.H.Meta.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "extra %s %s\n", k, m.H.Meta.Extra[k])
	}
	if c.procs <= 40 {
		for _, p := range m.H.Procs {
			fmt.Fprintf(&b, "proc %d %q goid=%s pid=%s created_by=%q\n", p.Proc, p.Name, p.Extra["goid"], p.Extra["pid"], p.Extra["created_by"])
		}
	}
	return b.String()
}

// TestRealTraces imports the three real traces of testdata/real, by
// goroutine and by P, and checks the counts against what Go 1.26.8's
// `go tool trace -d=parsed FILE` reports, and the whole summary against a
// golden file. The reference counts come from:
//
//	go tool trace -d=parsed FILE > FILE.parsed
//	grep -c '^M=' FILE.parsed                                 # events
//	grep -c 'StateTransition.* GoID=' FILE.parsed             # goroutine transitions
//	grep -c 'StateTransition.* ProcID=' FILE.parsed           # P transitions
//	grep -o 'StateTransition Time=[0-9]* GoID=[0-9]*' FILE.parsed | sort -u -t= -k3 | wc -l   # goroutines
//	grep -o 'StateTransition Time=[0-9]* ProcID=[0-9]*' FILE.parsed | sort -u -t= -k3 | wc -l # Ps
//	grep -o 'GoID=[0-9]* [A-Za-z]*->[A-Za-z]* Reason="[^"]*"' FILE.parsed | ...               # reasons
//	grep -c '^M=.* RegionBegin' / RegionEnd / RangeBegin / RangeEnd / Label / Metric / Sync
//
// annotations.go1.26: 58 events; 27 goroutine and 8 P transitions; 10
// goroutines, 4 Ps; 5 RegionBegin, 2 RegionEnd, 1 TaskBegin, 1 TaskEnd,
// 1 Log, 1+1 ranges, 9 Metric, 2 Sync; reasons: chan receive 2, sync 1,
// system goroutine wait 1 (to Waiting), preempted 1 (Running->Runnable).
//
// stress.go1.26: 108,239 events; 35,063 goroutine and 69,530 P
// transitions; 37 goroutines, 10 Ps; 794+794 ranges, 818 Label, 1,238
// Metric, 2 Sync; 16,663 transitions with a reason (14,907
// runtime.Gosched, 969 system goroutine wait, ...).
//
// test-encoding-json.go1.25: 23,759 events; 5,467 goroutine and 1,290 P
// transitions; 624 goroutines, 10 Ps; 209 RangeBegin, 1 RangeActive, 210
// RangeEnd, 238 Label, 16,302 Metric, 40 StackSample, 2 Sync; 1,058
// transitions with a reason (601 chan receive, 8 select, 12 sync, ...).
func TestRealTraces(t *testing.T) {
	tests := []struct {
		file, by                   string
		events, procs, states      int
		reasons, ranges, labels    int
		regions, regionEnds, tasks int
		logs, metrics, samples     int
		chanRecv, selects          int
	}{
		{"annotations.go1.26.trace", "g", 58, 10, 27, 5, 2, 0, 5, 2, 2, 1, 9, 0, 2, 0},
		{"annotations.go1.26.trace", "p", 58, 4, 8, 5, 2, 0, 5, 2, 2, 1, 9, 0, 2, 0},
		{"stress.go1.26.trace", "g", 108239, 37, 35063, 16663, 1588, 818, 0, 0, 0, 0, 1238, 0, 29, 0},
		{"stress.go1.26.trace", "p", 108239, 10, 69530, 16663, 1588, 818, 0, 0, 0, 0, 1238, 0, 29, 0},
		{"test-encoding-json.go1.25.trace", "g", 23759, 624, 5467, 1058, 420, 238, 0, 0, 0, 0, 16302, 40, 601, 8},
		{"test-encoding-json.go1.25.trace", "p", 23759, 10, 1290, 1058, 420, 238, 0, 0, 0, 0, 16302, 40, 601, 8},
	}
	for _, tc := range tests {
		t.Run(tc.file+"/by="+tc.by, func(t *testing.T) {
			m := importFile(t, map[string]string{ParamBy: tc.by}, realFile(t, tc.file))
			c := count(m)
			if c.procs != int32(tc.procs) {
				t.Errorf("%d processes, go tool trace has %d", c.procs, tc.procs)
			}
			if c.records[trace.KindState] != tc.states {
				t.Errorf("%d states, go tool trace has %d transitions", c.records[trace.KindState], tc.states)
			}
			if got := m.H.Meta.Extra["gotrace.events"]; got != fmt.Sprint(tc.events) {
				t.Errorf("%s events read, go tool trace has %d", got, tc.events)
			}
			var reasons, ranges, labels, regionEvents, tasks, logs int
			for name, n := range c.events {
				switch {
				case strings.HasPrefix(name, "block: "), strings.HasPrefix(name, "stop: "), strings.Contains(name, "->"):
					reasons += n
				case strings.HasPrefix(name, "label: "):
					labels += n
				case strings.HasPrefix(name, "task "):
					tasks += n
				case strings.HasPrefix(name, "log: "):
					logs += n
				case strings.HasPrefix(name, "region begin: "):
					regionEvents += n
				case strings.HasPrefix(name, "region end: "):
				default:
					ranges += n
				}
			}
			regions := 0
			for _, n := range c.enters {
				regions += n
			}
			if tc.by == "p" {
				regions = regionEvents
			}
			for _, x := range []struct {
				what      string
				got, want int
			}{
				{"transitions with a reason", reasons, tc.reasons},
				{"range events", ranges, tc.ranges},
				{"labels", labels, tc.labels},
				{"region begins", regions, tc.regions},
				{"tasks", tasks, tc.tasks},
				{"logs", logs, tc.logs},
				{"chan receive blocks", c.events["block: chan receive"], tc.chanRecv},
				{"select blocks", c.events["block: select"], tc.selects},
			} {
				if x.got != x.want {
					t.Errorf("%s: %d, go tool trace has %d", x.what, x.got, x.want)
				}
			}
			if got := m.H.Meta.Extra["gotrace.skipped.metric"]; tc.metrics > 0 && got != fmt.Sprint(tc.metrics) {
				t.Errorf("%s metrics skipped, go tool trace has %d", got, tc.metrics)
			}
			if got := m.H.Meta.Extra["gotrace.skipped.stack-sample"]; tc.samples > 0 && got != fmt.Sprint(tc.samples) {
				t.Errorf("%s stack samples skipped, go tool trace has %d", got, tc.samples)
			}
			if tc.by == "g" {
				// Every region end closes its region; the ones left open are closed at the end.
				open := tc.regions - tc.regionEnds
				if c.exits != tc.regions || m.H.Repairs[RepairUnendedRegion] != int64(open) {
					t.Errorf("%d exits, %d closed at the end; want %d and %d", c.exits, m.H.Repairs[RepairUnendedRegion], tc.regions, open)
				}
			}
			formattest.Golden(t, filepath.Join("testdata", strings.TrimSuffix(tc.file, ".trace")+".by-"+tc.by+".golden"), []byte(summary(m)), *update)
		})
	}
}

// TestAnnotationsDetail checks the user annotations of annotations.go1.26
// record by record: which goroutine has which regions, in which order, and
// that the unended ones are closed at the last time.
func TestAnnotationsDetail(t *testing.T) {
	m := importFile(t, nil, realFile(t, "annotations.go1.26.trace"))
	ix := trace.NewIndex(&m.H)
	byName := map[string]int32{}
	for _, p := range m.H.Procs {
		byName[p.Extra["goid"]] = p.Proc
	}
	var last int64
	for _, r := range m.Records {
		last = max(last, r.T)
	}
	seq := map[int32][]string{}
	for _, r := range m.Records {
		switch r.Kind {
		case trace.KindEnter:
			seq[r.Proc] = append(seq[r.Proc], "enter "+ix.RegionName(r.ID))
		case trace.KindExit:
			s := "exit " + ix.RegionName(r.ID)
			if r.T == last {
				s += " (at end)"
			}
			seq[r.Proc] = append(seq[r.Proc], s)
		case trace.KindEvent:
			seq[r.Proc] = append(seq[r.Proc], ix.EventName(r.ID))
		}
	}
	want := map[string][]string{
		"1": {"stop-the-world (start trace) begin", "stop-the-world (start trace) end", "task begin: task0",
			"enter task0 region", "block: sync", "enter post-existing region",
			"exit post-existing region (at end)", "exit task0 region (at end)"},
		"25": {"enter unended region", "enter region0", "enter region1", "log: key0", "exit region1",
			"exit region0", "task end: task0", "exit unended region"},
	}
	for goid, w := range want {
		p, ok := byName[goid]
		if !ok {
			t.Fatalf("no process for goroutine %s", goid)
		}
		if got := seq[p]; !slices.Equal(got, w) {
			t.Errorf("goroutine %s:\ngot  %q\nwant %q", goid, got, w)
		}
	}
	// Goroutine 25 ends inside "unended region": the region closes when it ends.
	var endT, exitT int64 = -1, -2
	for _, r := range m.Records {
		if r.Proc == byName["25"] && r.Kind == trace.KindState && r.ID == StateNotExist {
			endT = r.T
		}
		if r.Proc == byName["25"] && r.Kind == trace.KindExit && ix.RegionName(r.ID) == "unended region" {
			exitT = r.T
		}
	}
	if endT != exitT {
		t.Errorf("goroutine 25 ends at %d but its unended region closes at %d", endT, exitT)
	}
	if got := m.H.Procs[byName["25"]].Name; got != "main.main.func1" {
		t.Errorf("goroutine 25 is named %q, want main.main.func1", got)
	}
	if got := m.H.Procs[byName["25"]].Extra["created_by"]; got != "main.main" {
		t.Errorf("goroutine 25 created by %q, want main.main", got)
	}
	if byName["1"] != 0 {
		t.Errorf("goroutine 1 is process %d, want 0 (the first seen)", byName["1"])
	}
}

// TestGzipAndRuns imports the same trace plain and gzipped as two runs:
// both runs must hold the same records.
func TestGzipAndRuns(t *testing.T) {
	src := realFile(t, "annotations.go1.26.trace")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	gzPath := formattest.WriteFile(t, "", "a.trace.gz", string(formattest.Gzip(t, data)))
	if !(Importer{}).Detect(src, data) {
		t.Error("Detect rejects a Go 1.26 trace")
	}
	m := importFile(t, nil, src, gzPath)
	if len(m.H.Runs) != 2 || m.H.Runs[0].Procs != 10 || m.H.Runs[1].Procs != 10 {
		t.Fatalf("runs %+v, want 2 runs of 10 goroutines", m.H.Runs)
	}
	if m.H.Runs[1].Name != "a.trace.gz" || m.H.Runs[0].Extra["go_version"] != "go 1.26" {
		t.Errorf("runs %+v", m.H.Runs)
	}
	var per [2][]string
	for _, r := range m.Records {
		run := r.Run
		r.Run = 0
		per[run] = append(per[run], r.String())
	}
	if len(per[0]) == 0 || !slices.Equal(per[0], per[1]) {
		t.Errorf("the gzipped run differs: %d and %d records", len(per[0]), len(per[1]))
	}
	if len(m.H.Regions) != 5 {
		t.Errorf("%d region defs across both runs, want 5 (shared)", len(m.H.Regions))
	}
}

// TestBadInput checks the errors on inputs that are not (whole) traces.
func TestBadInput(t *testing.T) {
	good, err := os.ReadFile(realFile(t, "annotations.go1.26.trace"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		data   []byte
		params map[string]string
		want   string // in the error
		offset bool   // the error has a byte offset > 0
	}{
		{"empty", nil, nil, `not a Go execution trace: the file starts with ""`, false},
		{"text", []byte("0 1 0\n1 2 0\n"), nil, "not a Go execution trace", false},
		{"future version", append([]byte("go 1.99 trace\x00\x00\x00"), good[16:]...), nil,
			"cannot read this go 1.99 trace", false},
		{"header only", good[:16], nil, "the go 1.26 trace has no goroutine or P events", false},
		{"truncated mid-batch", good[:len(good)/2], nil, "cannot decode the go 1.26 trace after", true},
		{"cut header", good[:10], nil, "not a Go execution trace", false},
		{"bad by", good, map[string]string{ParamBy: "m"}, "parameter by=", false},
		{"bad partial", good, map[string]string{ParamPartial: "maybe"}, "parameter partial=", false},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("in%d.trace", i))
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var m trace.Memory
			err := Import(context.Background(), []string{path}, format.Options{Params: tc.params}, &m)
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			var fe *format.Error
			if strings.HasPrefix(tc.want, "parameter") {
				return
			}
			if !errors.As(err, &fe) || fe.File != path {
				t.Fatalf("error %v is not a format.Error naming %s", err, path)
			}
			if tc.offset && (fe.Offset <= 16 || fe.Offset > int64(len(tc.data))) {
				t.Errorf("offset %d, want one within the data after the header (%d bytes)", fe.Offset, len(tc.data))
			}
		})
	}
}

// TestRegistered checks that the importer is registered and that Detect
// tells traces from other files.
func TestRegistered(t *testing.T) {
	imp, err := format.Lookup(Name)
	if err != nil || imp.Name() != Name {
		t.Fatalf("Lookup(%q) = %v, %v", Name, imp, err)
	}
	for _, tc := range []struct {
		head string
		want bool
	}{
		{"go 1.26 trace\x00\x00\x00\x01", true},
		{"go 1.25 trace\x00\x00\x00", true},
		{"go 1.11 trace\x00\x00\x00", true},
		{"go 1.99 trace", true}, // Import then names the unsupported version
		{"go 1.26 tra", false},
		{"go 2.0 trace", false},
		{"0 1 0\n", false},
		{"", false},
		{"go 1.26 nothing here trace", false},
	} {
		if got := imp.Detect("x", []byte(tc.head)); got != tc.want {
			t.Errorf("Detect(%q) = %v, want %v", tc.head, got, tc.want)
		}
	}
}

// TestTruncated cuts real traces at several points: each cut fails with a
// located error, and with partial=true keeps the complete generations
// before the cut (stress.go1.26 has one generation, so nothing can be
// kept; twogen.go1.26, from testdata/gen/twogen.go, has three).
func TestTruncated(t *testing.T) {
	tests := []struct {
		path string
		frac float64
		keep bool // partial=true keeps a prefix
	}{
		{realFile(t, "stress.go1.26.trace"), 0.1, false},
		{realFile(t, "stress.go1.26.trace"), 0.5, false},
		{realFile(t, "stress.go1.26.trace"), 0.999, false},
		{filepath.Join("testdata", "twogen.go1.26.trace"), 0.2, false},
		{filepath.Join("testdata", "twogen.go1.26.trace"), 0.6, true},
		{filepath.Join("testdata", "twogen.go1.26.trace"), 0.9, true},
		{filepath.Join("testdata", "twogen.go1.26.trace"), 0.99, true},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		data, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		full := importFile(t, nil, tc.path)
		n := int(float64(len(data)) * tc.frac)
		path := filepath.Join(dir, fmt.Sprintf("cut%d.trace", n))
		if err := os.WriteFile(path, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		var m trace.Memory
		err = Import(context.Background(), []string{path}, format.Options{}, &m)
		var fe *format.Error
		if !errors.As(err, &fe) || fe.Offset <= 16 || fe.Offset > int64(n) {
			t.Errorf("%s cut at %d: error %v, want a format.Error with an offset within the file", tc.path, n, err)
		}
		var p trace.Memory
		err = Import(context.Background(), []string{path}, format.Options{Params: map[string]string{ParamPartial: "true"}}, &p)
		if !tc.keep {
			if err == nil {
				t.Errorf("%s cut at %d, partial: no error, %d records", tc.path, n, len(p.Records))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s cut at %d, partial: %v", tc.path, n, err)
			continue
		}
		if p.H.Repairs[RepairTruncated] != 1 || p.H.Meta.Extra["gotrace.truncated-at-byte"] == "" {
			t.Errorf("cut at %d, partial: repairs %v extra %v", n, p.H.Repairs, p.H.Meta.Extra)
		}
		if len(p.Records) == 0 || len(p.Records) >= len(full.Records) {
			t.Errorf("cut at %d, partial: %d records of %d", n, len(p.Records), len(full.Records))
		}
		// The kept records are the full import's first ones, except the
		// exits that close regions left open at the cut.
		for i, r := range p.Records {
			if r != full.Records[i] && !(r.Kind == trace.KindExit && i >= len(p.Records)-3) {
				t.Fatalf("cut at %d: record %d is %v, the full trace has %v", n, i, r, full.Records[i])
			}
		}
	}
}

// TestTruncatedEverywhere cuts the small annotations trace at every 7th
// byte: never a panic, always a located error.
func TestTruncatedEverywhere(t *testing.T) {
	data, err := os.ReadFile(realFile(t, "annotations.go1.26.trace"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.trace")
	for n := 0; n < len(data); n += 7 {
		if err := os.WriteFile(path, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		var m trace.Memory
		err := Import(context.Background(), []string{path}, format.Options{}, &m)
		var fe *format.Error
		if !errors.As(err, &fe) || fe.File != path {
			t.Fatalf("cut at %d: %v, want a located error", n, err)
		}
	}
}

// TestContextCanceled checks that a canceled context stops the import.
func TestContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var m trace.Memory
	err := Import(ctx, []string{realFile(t, "stress.go1.26.trace")}, format.Options{}, &m)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
