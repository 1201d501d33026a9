package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runTmp runs parscope with TMPDIR set to tmp, where the traces imported
// on the fly go.
func runTmp(t *testing.T, tmp string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	return runCmd(t, cmd)
}

// mustRunTmp is runTmp failing the test unless parscope succeeds.
func mustRunTmp(t *testing.T, tmp string, args ...string) string {
	t.Helper()
	out, errOut, code := runTmp(t, tmp, args...)
	if code != 0 {
		t.Fatalf("parscope %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// checkNoTemporaries fails the test when anything is left in tmp.
func checkNoTemporaries(t *testing.T, tmp string) {
	t.Helper()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left %s in the temporary directory", e.Name())
	}
}

// decodeJSON decodes the output of a --json command into a generic value.
func decodeJSON(t *testing.T, what, out string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	return v
}

// TestRawTraceEverywhere: every analysis command takes a trace file (or an
// OTF2 directory) as well as a .pst, imports it on the fly, gives the same
// result as on the .pst imported from it, titles it with the trace's own
// name, and leaves no temporary behind.
func TestRawTraceEverywhere(t *testing.T) {
	tmp := t.TempDir()
	dict := filepath.Join(examples, "amoeba_blocks.txt")
	srt := filepath.Join(examples, "amoeba.srt")
	pst := importAmoeba(t)
	for _, args := range [][]string{
		{"overview", "--json"},
		{"states", "--json"},
		{"entropy", "--json"},
		{"pca", "--json"},
		{"phasespace", "--json"},
		{"occupancy", "--json"},
	} {
		fromPst := decodeJSON(t, args[0], mustRun(t, append(args, pst)...)).(map[string]any)
		fromRaw := decodeJSON(t, args[0], mustRunTmp(t, tmp, append(args, "--dict", dict, srt)...)).(map[string]any)
		if fromPst["trace"] != "amoeba.pst" || fromRaw["trace"] != "amoeba.srt" {
			t.Errorf("%s: traces %v and %v, want amoeba.pst and amoeba.srt", args[0], fromPst["trace"], fromRaw["trace"])
		}
		if fromRaw["analysis"] != args[0] {
			t.Errorf("%s --json: analysis %v", args[0], fromRaw["analysis"])
		}
		delete(fromPst, "trace")
		delete(fromRaw, "trace")
		if !reflect.DeepEqual(fromPst, fromRaw) {
			t.Errorf("%s: the result on amoeba.srt differs from the one on its .pst", args[0])
		}
	}
	// The text output is titled with the trace's name.
	if out := mustRunTmp(t, tmp, "overview", srt); !regexp.MustCompile(`(?m)^trace +amoeba\.srt$`).MatchString(out) {
		t.Errorf("overview of amoeba.srt:\n%s", out)
	}
	// mentropy: the same result, each named after its own trace.
	mp := decodeJSON(t, "mentropy", mustRun(t, "mentropy", "--of", "states", "--json", pst)).(map[string]any)
	mr := decodeJSON(t, "mentropy", mustRunTmp(t, tmp, "mentropy", "--of", "states", "--dict", dict, "--json", srt)).(map[string]any)
	if mp["trace"] != filepath.Base(pst) || mr["trace"] != filepath.Base(srt) || !reflect.DeepEqual(mp["result"], mr["result"]) || mp["result"] == nil {
		t.Errorf("mentropy --of states differs between amoeba.srt (%v) and its .pst (%v)", mr["trace"], mp["trace"])
	}
	// info names the trace as given and counts the same records.
	info := decodeJSON(t, "info", mustRunTmp(t, tmp, "info", "--json", srt)).(map[string]any)
	if info["trace"] != srt || info["records"].(map[string]any)["state"] != 17000.0 {
		t.Errorf("info of amoeba.srt: trace %v, records %v", info["trace"], info["records"])
	}
	// export: the same Chrome JSON from the trace file as from the .pst.
	dir := t.TempDir()
	mustRun(t, "export", "--format", "chrome", "-o", filepath.Join(dir, "a.json"), pst)
	mustRunTmp(t, tmp, "export", "--format", "chrome", "--input-format", "gomez", "--dict", dict, "-o", filepath.Join(dir, "b.json"), srt)
	if a, b := readFile(t, filepath.Join(dir, "a.json")), readFile(t, filepath.Join(dir, "b.json")); a != b || len(a) < 1000 {
		t.Errorf("export of amoeba.srt (%d bytes) differs from that of its .pst (%d bytes)", len(b), len(a))
	}

	// An OTF2 archive, as its directory and as its anchor file: the trace
	// is named after the archive.
	otf2 := realTrace(t, "otf2/ping-pong-otf2")
	ppPst := filepath.Join(t.TempDir(), "pp.pst")
	mustRun(t, "import", "-o", ppPst, otf2)
	for _, in := range []string{otf2, filepath.Join(otf2, "traces.otf2")} {
		ov := decodeJSON(t, "overview", mustRunTmp(t, tmp, "overview", "--json", in)).(map[string]any)
		if ov["trace"] != "ping-pong-otf2" {
			t.Errorf("overview of %s: trace %v, want ping-pong-otf2", in, ov["trace"])
		}
	}
	// comm names the trace by the path given.
	commPst := decodeJSON(t, "comm", mustRun(t, "comm", "--json", ppPst)).(map[string]any)
	commRaw := decodeJSON(t, "comm", mustRunTmp(t, tmp, "comm", "--json", otf2)).(map[string]any)
	if commPst["trace"] != filepath.Base(ppPst) || commRaw["trace"] != "ping-pong-otf2" {
		t.Errorf("comm: traces %v and %v", commPst["trace"], commRaw["trace"])
	}
	delete(commPst, "trace")
	delete(commRaw, "trace")
	if !reflect.DeepEqual(commPst, commRaw) {
		t.Error("comm of the OTF2 directory differs from that of its .pst")
	}
	if out := mustRunTmp(t, tmp, "ocs", "--planes", "1-2", otf2); !strings.Contains(out, "16 messages") {
		t.Errorf("ocs of the OTF2 directory:\n%s", out)
	}
	// analyze takes the directory too (it took it for a .pst before).
	report := filepath.Join(t.TempDir(), "report")
	mustRunTmp(t, tmp, "analyze", "-o", report, otf2)
	var bundle struct {
		Trace string   `json:"trace"`
		Ran   []string `json:"ran"`
	}
	readJSONFile(t, filepath.Join(report, "report.json"), &bundle)
	if bundle.Trace != "ping-pong-otf2" || len(bundle.Ran) == 0 {
		t.Errorf("analyze of the OTF2 directory: trace %q, ran %v", bundle.Trace, bundle.Ran)
	}
	// Paraver and DUMPI.
	prv := realTrace(t, "paraver/qsort_beo3.prv")
	if ov := decodeJSON(t, "overview", mustRunTmp(t, tmp, "overview", "--json", prv)).(map[string]any); ov["trace"] != "qsort_beo3.prv" {
		t.Errorf("overview of %s: trace %v", prv, ov["trace"])
	}
	meta := realTrace(t, "dumpi/testtrace.meta")
	if out := mustRunTmp(t, tmp, "comm", meta); !strings.Contains(out, "4 processes") {
		t.Errorf("comm of %s:\n%s", meta, out)
	}
	checkNoTemporaries(t, tmp)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServeRawTrace: serve imports a trace file and lists it by its name,
// and removes the imported copy when it stops.
func TestServeRawTrace(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(bin, "serve", "--dict", filepath.Join(examples, "amoeba_blocks.txt"), filepath.Join(examples, "amoeba.srt"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/) `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Get(m[1] + "api/traces")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"trace":"amoeba.srt"`) {
		t.Errorf("api/traces: %s", body)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve: %v", err)
	}
	checkNoTemporaries(t, tmp)
}

// TestRawTraceErrors: errors name the path the user gave, never a
// temporary one, and a missing path says so.
func TestRawTraceErrors(t *testing.T) {
	tmp := t.TempDir()
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.srt")
	for _, c := range []string{"overview", "states", "info", "analyze"} {
		args := []string{c, missing}
		if c == "analyze" {
			args = []string{c, "-o", filepath.Join(dir, "r"), missing}
		}
		_, errOut, code := runTmp(t, tmp, args...)
		if want := "parscope: " + missing + ": no such file or directory\n"; code != 1 || errOut != want {
			t.Errorf("%s of a missing trace: exit %d, %q; want %q", c, code, errOut, want)
		}
	}
	broken := filepath.Join(dir, "broken.srt")
	os.WriteFile(broken, []byte("0 1 0\n10 2\n"), 0o644)
	_, errOut, code := runTmp(t, tmp, "states", "--format", "gomez", broken)
	if code != 1 || !strings.HasPrefix(errOut, "parscope: "+broken+":2: ") || strings.Count(errOut, "\n") != 1 ||
		strings.Contains(errOut, "parscope-tmp") || strings.Contains(errOut, "parscope-import") {
		t.Errorf("states of a broken trace: exit %d, %q", code, errOut)
	}
	odd := filepath.Join(dir, "odd.txt")
	os.WriteFile(odd, []byte("hello world\n"), 0o644)
	if _, errOut, code := runTmp(t, tmp, "entropy", odd); code != 1 || !strings.Contains(errOut, odd+": cannot tell the format") {
		t.Errorf("entropy of an unknown format: exit %d, %q", code, errOut)
	}
	// A --source-dir that is not there is an error, not a program without
	// source lines.
	pst := importAmoeba(t)
	for _, args := range [][]string{
		{"comm", "--source-dir", filepath.Join(dir, "src"), pst},
		{"analyze", "-o", filepath.Join(dir, "report"), "--source-dir", filepath.Join(dir, "src"), pst},
	} {
		if _, errOut, code := runTmp(t, tmp, args...); code != 1 || errOut != "parscope: --source-dir "+filepath.Join(dir, "src")+": no such directory\n" {
			t.Errorf("%s with a missing --source-dir: exit %d, %q", args[0], code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report")); err == nil {
		t.Error("analyze with a missing --source-dir wrote a report")
	}
	// The import flags apply to a trace to import, not to a .pst.
	if _, errOut, code := runTmp(t, tmp, "overview", "--dict", odd, pst); code != 2 || !strings.Contains(errOut, "is a .pst trace") {
		t.Errorf("overview --dict of a .pst: exit %d, %q", code, errOut)
	}
	checkNoTemporaries(t, tmp)
}

// TestNotApplicable: an analysis that does not apply to a trace exits 1
// with one line saying why, prints nothing and writes nothing.
func TestNotApplicable(t *testing.T) {
	tmp := t.TempDir()
	dir := t.TempDir()
	otf2 := realTrace(t, "otf2/ping-pong-otf2") // messages and regions, no states
	amoeba := importAmoeba(t)                   // states only
	out := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"states", "--states-from", "recorded", otf2}, 1, "ping-pong-otf2: states needs state records, and the trace has none"},
		{[]string{"states", "--csv", "-o", out("s.csv"), "--states-from", "recorded", otf2}, 1, "ping-pong-otf2: states needs state records"},
		{[]string{"states", "--csv", "--states-from", "recorded", otf2}, 1, "ping-pong-otf2: states needs state records"},
		{[]string{"entropy", "--states-from", "recorded", otf2}, 1, "ping-pong-otf2: entropy needs state records"},
		{[]string{"pca", "--plot", out("pc.png"), "--states-from", "recorded", otf2}, 1, "ping-pong-otf2: pca needs state records"},
		{[]string{"phasespace", "--plot", out("ps.svg"), "--states-from", "recorded", otf2}, 1, "ping-pong-otf2: phasespace needs state records"},
		{[]string{"phasespace", "--csv", out("ps.csv"), "--states-from", "recorded", otf2}, 1, "ping-pong-otf2: phasespace needs state records"},
		{[]string{"occupancy", "--states-from", "recorded", otf2}, 1, "ping-pong-otf2: occupancy needs state records"},
		{[]string{"occupancy", "--states-from", "regions", amoeba}, 1, "amoeba.pst: states from regions need region records, and the trace has none"},
		{[]string{"entropy", "--states-from", "blocks", amoeba}, 2, "--states-from: states from \"blocks\": want one of auto, recorded, regions, mpi"},
		{[]string{"mentropy", amoeba}, 1, "amoeba.pst: mentropy needs event records, and the trace has none"},
		{[]string{"comm", amoeba}, 1, "amoeba.pst: comm needs send or recv or collective or enter records"},
		{[]string{"ocs", "--planes", "1-2", amoeba}, 1, "amoeba.pst: ocs needs send or recv or collective records"},
		{[]string{"phasespace", "--plot", out("ps7.svg"), "--runs", "7", amoeba}, 2, "--runs: amoeba.pst has no run 7 (its runs: 0, 1, 2, 3, 4)"},
		{[]string{"states", "--runs", "2,9", amoeba}, 2, "--runs: amoeba.pst has no run 9"},
	} {
		stdout, stderr, code := runTmp(t, tmp, c.args...)
		if code != c.code || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "parscope: "+c.want) {
			t.Errorf("parscope %s: exit %d, stdout %q, stderr %q; want exit %d and one line %q",
				strings.Join(c.args, " "), code, stdout, stderr, c.code, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("analyses that do not apply wrote %d file(s), the first %s", len(ents), ents[0].Name())
	}
	checkNoTemporaries(t, tmp)
}

// TestMentropySummary: mentropy summarises each process unless --series
// asks for the value of every event (Özmen's ABBBBCCCCA stream, K = 100).
func TestMentropySummary(t *testing.T) {
	args := []string{"mentropy", "--K", "100", "--stream", "A B B B B C C C C A"}
	out := mustRun(t, args...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "run process events event types H min H mean H max phases" {
		t.Fatalf("summary:\n%s", out)
	}
	if got := strings.Join(strings.Fields(lines[1]), " "); got != "0 0 10 3 0.005736 4.147249 11.552453 0" {
		t.Errorf("summary row %q, want 0 0 10 3 0.005736 4.147249 11.552453 0", got)
	}
	series := mustRun(t, append(args, "--series")...)
	rows := regexp.MustCompile(`(?m)^\d+ +\d+ +[ABC] +`).FindAllString(series, -1)
	if len(rows) != 10 || !strings.Contains(series, "5      5  C      B B B B  3  beta   7.675284") {
		t.Errorf("--series: %d rows\n%s", len(rows), series)
	}
}

// TestHideTemporary: an error about the temporary .pst of a trace imported
// on the fly says what went wrong with the trace's path instead.
func TestHideTemporary(t *testing.T) {
	tmp := filepath.Join(os.TempDir(), ".parscope-import.parscope-tmp-1-2")
	full := fmt.Errorf("store: %w", &fs.PathError{Op: "write", Path: filepath.Join(tmp, "amoeba.srt", "states.parquet"), Err: syscall.ENOSPC})
	odd := fmt.Errorf("store: %s is damaged", filepath.Join(tmp, "amoeba.srt"))
	input := fmt.Errorf("amoeba.srt:2: expected 3 fields")
	for _, c := range []struct {
		err  error
		want string
	}{
		{full, "importing amoeba.srt into a temporary .pst: no space left on device"},
		{odd, "importing amoeba.srt into a temporary .pst: store: amoeba.srt is damaged"},
		{input, "amoeba.srt:2: expected 3 fields"},
	} {
		if got := hideTemporary(c.err, tmp, "amoeba.srt").Error(); got != c.want {
			t.Errorf("hideTemporary(%q) = %q, want %q", c.err, got, c.want)
		}
	}
	if !errors.Is(hideTemporary(full, tmp, "amoeba.srt"), syscall.ENOSPC) {
		t.Error("the cause is lost")
	}
}

// TestOutputModes: under a restrictive umask, every file parscope writes
// (the .pst tables, exports, the report and its marker) gets mode 0644
// and every directory 0755.
func TestOutputModes(t *testing.T) {
	dir := t.TempDir()
	script := strings.Join([]string{
		"umask 077",
		`"$P" import -q --dict "$E/amoeba_blocks.txt" -o a.pst "$E/amoeba.srt"`,
		`"$P" export -q --format chrome -o a.json a.pst`,
		`"$P" export -q --format csv -o csv a.pst`,
		`"$P" export -q --format prv -o p a.pst`,
		`"$P" states -q --csv -o s.csv a.pst`,
		`"$P" analyze -q -o report a.pst > /dev/null`,
	}, "\n")
	examplesDir, _ := filepath.Abs(examples)
	cmd := exec.Command("bash", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "P="+bin, "E="+examplesDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o644)
		if e.IsDir() {
			want = 0o755
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %#o, want %#o", p, fi.Mode().Perm(), want)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Errorf("checked %d files, want at least 20", n)
	}
}

// TestTraceFolder: a folder of trace files of one format is one trace,
// imported on the fly from every file in it, as import would import them
// together: the ring's four per-rank files are one 4-process run with
// every rank's messages, in every command that reads a trace. A folder of
// mixed formats or of nothing is an error naming what is wrong.
func TestTraceFolder(t *testing.T) {
	tmp := t.TempDir()
	ring := filepath.Join(examples, "ring")
	var info infoReport
	if err := json.Unmarshal([]byte(mustRunTmp(t, tmp, "info", "--json", ring)), &info); err != nil {
		t.Fatal(err)
	}
	// Each rank sends 64 messages (testdata/examples/README.md).
	if info.Trace != ring || len(info.Runs) != 1 || info.Runs[0].Procs != 4 || info.Sends != 256 || info.Recvs != 256 || len(info.Inputs) != 4 {
		t.Errorf("info of the ring folder: trace %q, %d runs, %+v, %d sends, %d receives, %d inputs",
			info.Trace, len(info.Runs), info.Runs, info.Sends, info.Recvs, len(info.Inputs))
	}
	// The same trace as importing the four files.
	pst := filepath.Join(t.TempDir(), "ring.pst")
	files, _ := filepath.Glob(filepath.Join(ring, "ring.*.trace"))
	mustRun(t, append([]string{"import", "-o", pst}, files...)...)
	if a, b := mustRunTmp(t, tmp, "comm", "--json", ring), mustRun(t, "comm", "--json", pst); a != strings.ReplaceAll(b, `"ring.pst"`, `"ring"`) {
		t.Errorf("comm of the folder differs from comm of its import:\n%s\n%s", a, b)
	}

	dir := t.TempDir()
	mixed := filepath.Join(dir, "mixed")
	os.Mkdir(mixed, 0o755)
	copyFile(t, files[0], filepath.Join(mixed, "ring.0.trace"))
	copyFile(t, filepath.Join(examples, "amoeba.srt"), filepath.Join(mixed, "amoeba.srt"))
	if _, errOut, code := runTmp(t, tmp, "profile", mixed); code != 1 || !strings.Contains(errOut, "ring.0.trace is annotated, but amoeba.srt is gomez") {
		t.Errorf("profile of a mixed folder: exit %d, %q", code, errOut)
	}
	os.WriteFile(filepath.Join(mixed, "notes.txt"), []byte("hello\n"), 0o644)
	if _, errOut, code := runTmp(t, tmp, "profile", mixed); code != 1 || !strings.Contains(errOut, "notes.txt is of no format parscope reads") {
		t.Errorf("profile of a folder with a note: exit %d, %q", code, errOut)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if _, errOut, code := runTmp(t, tmp, "info", empty); code != 1 || !strings.Contains(errOut, "it holds no file") {
		t.Errorf("info of an empty folder: exit %d, %q", code, errOut)
	}
	checkNoTemporaries(t, tmp)
}
