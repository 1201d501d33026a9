package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/internal/memlimit"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

var update = flag.Bool("update", false, "rewrite golden files")

// bin is the parscope binary built for these tests.
var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	if memlimit.Child() {
		// A test under a memory limit runs in process: building the
		// binary would count in its peak (go build is its child).
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "parscope-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "parscope")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building parscope: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// golden compares got, the output of what (say "info output"), with the
// golden file testdata/name; with -update it first writes got there. A
// missing golden file stops the test; a difference fails it and shows got.
func golden(t *testing.T, name, what, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run with -update to accept):\n%s", what, path, got)
	}
}

// run runs parscope and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCmd(t, exec.Command(bin, args...))
}

// runCmd runs cmd and returns its stdout, stderr and exit code.
func runCmd(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exitCode(t, cmd.Run())
	return stdout.String(), stderr.String(), code
}

// exitCode returns the exit code of a command that ended with err (0 for
// nil), failing the test when it did not run at all.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, args...)
	if code != 0 {
		t.Fatalf("parscope %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

const examples = "../../testdata/examples"

// gomezRow is one record of the example's text, read independently of the
// importer: run (by the documented rule), time in µs, block, pid.
type gomezRow struct {
	run, pid, block int
	t               int64
}

func readGomezText(t *testing.T, path string) []gomezRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []gomezRow
	run, last := 0, int64(-1)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			continue
		}
		tm, _ := strconv.ParseInt(fs[0], 10, 64)
		b, _ := strconv.Atoi(fs[1])
		p, _ := strconv.Atoi(fs[2])
		if tm < last {
			run++
		}
		last = tm
		rows = append(rows, gomezRow{run, p, b, tm})
	}
	return rows
}

// TestGomezRoundTrip imports the bundled example, checks info, exports the
// states table as CSV and compares it with the text it came from.
func TestGomezRoundTrip(t *testing.T) {
	dir := t.TempDir()
	pst := filepath.Join(dir, "amoeba.pst")
	src := filepath.Join(examples, "amoeba.srt")
	mustRun(t, "import", "-o", pst, "--dict", filepath.Join(examples, "amoeba_blocks.txt"), src)

	var info infoReport
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", pst)), &info); err != nil {
		t.Fatal(err)
	}
	text := readGomezText(t, src)
	if len(info.Runs) != 5 || info.Runs[0].Procs != 17 || info.Records["state"] != int64(len(text)) {
		t.Fatalf("info: %d runs, %d procs, %d states; want 5, 17, %d", len(info.Runs), info.Runs[0].Procs, info.Records["state"], len(text))
	}
	if info.StatesUsed != 13 || info.StatesNamed != 13 || info.ClockResolutionNS != 1000 || info.Source != "gomez" {
		t.Fatalf("info: %+v", info)
	}

	csvPath := filepath.Join(dir, "states.csv")
	mustRun(t, "export", "--format", "csv", "--table", "states", "-o", csvPath, pst)
	rows := formattest.ReadCSV(t, csvPath)
	if strings.Join(rows[0], ",") != "run,proc,t,state" {
		t.Fatalf("header %v", rows[0])
	}
	rows = rows[1:]
	if len(rows) != len(text) {
		t.Fatalf("%d CSV rows, %d text lines", len(rows), len(text))
	}
	// Every (run, pid) stream must come back in its text order.
	type key struct{ run, pid int }
	want := map[key][]string{}
	for _, r := range text {
		k := key{r.run, r.pid}
		want[k] = append(want[k], fmt.Sprintf("%d %d", r.t*1000, r.block))
	}
	got := map[key][]string{}
	prevRun, prevT := -1, int64(-1)
	for _, r := range rows {
		run, _ := strconv.Atoi(r[0])
		pid, _ := strconv.Atoi(r[1])
		tm, _ := strconv.ParseInt(r[2], 10, 64)
		if run < prevRun || (run == prevRun && tm < prevT) {
			t.Fatalf("CSV not in time-merged order at %v", r)
		}
		prevRun, prevT = run, tm
		got[key{run, pid}] = append(got[key{run, pid}], r[2]+" "+r[3])
	}
	if len(got) != len(want) {
		t.Fatalf("%d process streams, want %d", len(got), len(want))
	}
	for k, w := range want {
		if strings.Join(got[k], ";") != strings.Join(w, ";") {
			t.Fatalf("run %d pid %d differs", k.run, k.pid)
		}
	}
}

// TestInfoGolden pins the text output of info.
func TestInfoGolden(t *testing.T) {
	dir := t.TempDir()
	pst := filepath.Join(dir, "ring.pst")
	files, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
	mustRun(t, append([]string{"import", "-o", pst}, files...)...)
	got := strings.ReplaceAll(mustRun(t, "info", pst), dir, "DIR")
	golden(t, "info_ring.golden", "info output", got)
}

// TestChromeExport checks that the ring example exports to trace-event
// JSON with one flow arrow per message.
func TestChromeExport(t *testing.T) {
	dir := t.TempDir()
	pst := filepath.Join(dir, "ring.pst")
	files, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
	mustRun(t, append([]string{"import", "-o", pst}, files...)...)
	out := filepath.Join(dir, "ring.json")
	mustRun(t, "export", "--format", "chrome", "-o", out, pst)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph  string `json:"ph"`
			Pid int    `json:"pid"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	pids := map[int]bool{}
	for _, e := range doc.TraceEvents {
		counts[e.Ph]++
		pids[e.Pid] = true
	}
	if counts["s"] != 256 || counts["f"] != 256 || len(pids) != 4 {
		t.Fatalf("flows s=%d f=%d over %d processes; want 256, 256, 4", counts["s"], counts["f"], len(pids))
	}
}

// TestImportErrors checks located errors, exit codes and that nothing is
// left behind or overwritten.
func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.srt")
	os.WriteFile(bad, []byte("0 1 0\n10 2 0\n20 x 1\n"), 0o644)
	out := filepath.Join(dir, "out.pst")

	_, errOut, code := run(t, "import", "--format", "gomez", "-o", out, bad)
	if code != 1 || !strings.Contains(errOut, bad+":3:") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming %s:3", code, errOut, bad)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a failed import left its output behind")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %d entries", len(ents))
	}

	// An existing trace is neither overwritten without --force nor damaged
	// by a failed import with it.
	mustRun(t, "import", "-o", out, filepath.Join(examples, "amoeba.srt"))
	before := mustRun(t, "info", "--json", out)
	if _, errOut, code := run(t, "import", "-o", out, filepath.Join(examples, "amoeba.srt")); code == 0 || !strings.Contains(errOut, "--force") {
		t.Fatalf("import over an existing trace: exit %d, %q", code, errOut)
	}
	if _, _, code := run(t, "import", "--force", "--format", "gomez", "-o", out, bad); code == 0 {
		t.Fatal("failed import with --force exited 0")
	}
	if after := mustRun(t, "info", "--json", out); after != before {
		t.Fatal("a failed --force import changed the existing trace")
	}

	// Content that fits no format.
	odd := filepath.Join(dir, "odd.txt")
	os.WriteFile(odd, []byte("hello world\n"), 0o644)
	if _, errOut, code := run(t, "import", "-o", filepath.Join(dir, "o2.pst"), odd); code == 0 || !strings.Contains(errOut, "give --format") {
		t.Fatalf("undetectable input: exit %d, %q", code, errOut)
	}
	// Usage errors exit 2.
	if _, _, code := run(t, "import", odd); code != 2 {
		t.Fatalf("import without -o: exit %d, want 2", code)
	}
	if _, _, code := run(t, "export", "--format", "svg", "-o", "x", out); code != 2 {
		t.Fatalf("unknown export format: exit %d, want 2", code)
	}
	// Not a trace.
	if _, errOut, code := run(t, "info", dir); code != 1 || !strings.Contains(errOut, "not a parscope trace") {
		t.Fatalf("info on a plain directory: exit %d, %q", code, errOut)
	}
}

func TestParseIDList(t *testing.T) {
	got, err := parseIDList("1,4, 7-9")
	if err != nil || fmt.Sprint(got) != "[1 4 7 8 9]" {
		t.Fatalf("parseIDList = %v, %v", got, err)
	}
	for _, bad := range []string{"a", "3-1", "-2", "1-"} {
		if _, err := parseIDList(bad); err == nil {
			t.Errorf("parseIDList(%q) accepted", bad)
		}
	}
}

// TestImportOTF2Directory imports a Score-P archive by its directory, with
// the format detected, and checks the summary against otf2-print's counts.
func TestImportOTF2Directory(t *testing.T) {
	dir := realTrace(t, "otf2/ping-pong-otf2")
	pst := filepath.Join(t.TempDir(), "pp.pst")
	mustRun(t, "import", "-o", pst, dir)
	var info infoReport
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", pst)), &info); err != nil {
		t.Fatal(err)
	}
	// 120 events: 2 program begin/end (events), 42 enter, 42 leave, 16 sends, 16 receives.
	if info.Source != "otf2" || info.TotalRecords != 120 || info.Sends != 16 || info.Recvs != 16 || info.Records["enter"] != 42 || info.Host != "quartz10" {
		t.Fatalf("info %+v", info)
	}
}

// TestInfoDroppedByFilter: info sums the recorder's dropped-count events.
func TestInfoDroppedByFilter(t *testing.T) {
	pst := filepath.Join(t.TempDir(), "f.pst")
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}}
	h.Events = []trace.EventDef{{ID: 0, Name: "task"}, {ID: 1, Name: instrument.DroppedEvent}}
	storetest.Create(t, pst, h, []trace.Record{
		trace.State(0, 0, 1, 2), trace.Event(0, 0, 5, 1, 40), trace.Event(0, 0, 6, 0, 7),
		trace.Event(0, 1, 9, 1, 2), trace.State(0, 1, 10, 3),
	})
	var info infoReport
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", pst)), &info); err != nil {
		t.Fatal(err)
	}
	if info.DroppedByFilter != 42 {
		t.Fatalf("dropped by filter = %d, want 42", info.DroppedByFilter)
	}
	if out := mustRun(t, "info", pst); !strings.Contains(out, "42 events by a recording filter") {
		t.Fatalf("info text lacks the dropped count:\n%s", out)
	}
}

// TestParaverOccupancyLyonModes runs the occupancy analysis on an imported
// Paraver trace with the mapping of docs/formats.md, and checks the mean
// node occupancy that page reports.
func TestParaverOccupancyLyonModes(t *testing.T) {
	prv := realTrace(t, "paraver/qsort_beo3.prv")
	pst := filepath.Join(t.TempDir(), "qsort.pst")
	mustRun(t, "import", "-o", pst, prv)
	out := mustRun(t, "occupancy", "--modes", filepath.Join(examples, "paraver-lyon-modes.txt"), "--mean", pst)
	for _, want := range []string{"28 observed of 35 possible", "U     76.12ms     76.12ms", "S     74.14ms     74.14ms", "R     65.7ms      65.7ms", "I     44.23ms     44.23ms"} {
		if !strings.Contains(out, want) {
			t.Fatalf("occupancy output lacks %q:\n%s", want, out)
		}
	}
}

// TestInfoSummarisesDictionaries imports a Paraver trace whose .pcf has
// hundreds of event values: the text output shows each dictionary as its
// count and first entries, and --json keeps every entry.
func TestInfoSummarisesDictionaries(t *testing.T) {
	prv := realTrace(t, "paraver/lulesh_7+1_with_uncores_sockets1+2.chop8.prv")
	pst := filepath.Join(t.TempDir(), "lulesh.pst")
	mustRun(t, "import", "-o", pst, prv)
	out := mustRun(t, "info", pst)
	for _, want := range []string{
		"meta prv.values.30000100  441 entries: 0 End, 1 0 (Unresolved), 2 0 (_NOT_Found), 3 0 (., libc-2.28.so), … (--json lists them all)",
		"meta prv.values.30000000  17 entries: 0 End, 1 Unresolved, 2 _NOT_Found, 3 __GI___openat, … (--json lists them all)",
		"meta prv.pcf ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 200 {
			t.Errorf("info line of %d bytes: %.120s…", len(line), line)
		}
	}
	var rep struct {
		Extra map[string]string `json:"extra"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", pst)), &rep); err != nil {
		t.Fatal(err)
	}
	var vals map[string]string
	if err := json.Unmarshal([]byte(rep.Extra["prv.values.30000100"]), &vals); err != nil || len(vals) != 441 || vals["440"] != "0 (malloc.c, libc-2.28.so)" {
		t.Errorf("--json prv.values.30000100: %d entries, [440] = %q, %v", len(vals), vals["440"], err)
	}
}

func TestCompareNatural(t *testing.T) {
	got := []string{"type.10", "type.9", "a", "type.009x", "type.9a", "b1", "b"}
	slices.SortFunc(got, compareNatural)
	want := []string{"a", "b", "b1", "type.9", "type.9a", "type.009x", "type.10"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %q, want %q", got, want)
	}
}

// TestSummariseMetaGroups checks that a group of many keys is cut after
// its first keys with a count of the rest.
func TestSummariseMetaGroups(t *testing.T) {
	extra := map[string]string{"other": "x"}
	for i := range 300 {
		extra[fmt.Sprintf("prv.type.%d", i)] = fmt.Sprintf("type %d", i)
	}
	rows := summariseMeta(extra)
	if len(rows) != maxMetaGroup+1 {
		t.Fatalf("%d rows, want %d: %q", len(rows), maxMetaGroup+1, rows)
	}
	if rows[0] != [2]string{"meta other", "x"} || rows[1] != [2]string{"meta prv.type.0", "type 0"} ||
		rows[maxMetaGroup-1] != [2]string{"meta prv.type.10", "type 10"} ||
		rows[maxMetaGroup] != [2]string{"  …", "289 more prv.type.* keys (--json lists them all)"} {
		t.Errorf("rows %q", rows)
	}
}
