package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/internal/needtool"
	"github.com/parscope/parscope/internal/realdata"
)

const ownBBV = "../../testdata/bbv"

// realBBV returns the path of a real BBV file or SimPoint output of
// testdata/real/bbv, failing the test when it is missing.
func realBBV(t *testing.T, rel string) string {
	t.Helper()
	return realdata.Path(t, "bbv/"+rel)
}

// TestPhasesCompatFiles checks that --simpoint-compat writes SimPoint
// 3.2's files byte for byte, for two option sets.
func TestPhasesCompatFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"bzip2_rt_100M", nil},
		{"phases.seeded", []string{"--seed", "12345", "--seedproj", "67890"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := realBBV(t, strings.TrimSuffix(tc.name, ".seeded")+".bb.gz")
			dir := t.TempDir()
			args := append([]string{"phases", "--simpoint-compat", in,
				"--save-simpoints", filepath.Join(dir, "s"), "--save-weights", filepath.Join(dir, "w"),
				"--save-labels", filepath.Join(dir, "l")}, tc.args...)
			out := mustRun(t, args...)
			if !strings.Contains(out, "compat mode") {
				t.Errorf("output does not name the mode:\n%s", out)
			}
			for ext, f := range map[string]string{".simpoints": "s", ".weights": "w", ".labels": "l"} {
				got, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(realBBV(t, "simpoint-3.2/"+tc.name+ext))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from SimPoint's (%d vs %d bytes)", ext, len(got), len(want))
				}
			}
		})
	}
}

// TestPhasesJSON checks the --json values against the files written in
// the same run and the documented structure.
func TestPhasesJSON(t *testing.T) {
	in := realBBV(t, "bzip2_rt_100M.bb.gz")
	dir := t.TempDir()
	sp := filepath.Join(dir, "s")
	out := mustRun(t, "phases", "--simpoint-compat", "--json", "--save-simpoints", sp, in)
	var rep phasesReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Result.Streams) != 1 {
		t.Fatalf("%d streams", len(rep.Result.Streams))
	}
	res := rep.Result.Streams[0].Result
	// SimPoint's log for this file: 7 runs, run 7 (k = 12) chosen.
	if res.Mode != "compat" || res.K != 12 || res.Chosen != 6 || len(res.Evaluated) != 7 || res.Intervals != 260 || res.InputDim != 4235 || len(res.Labels) != 260 {
		t.Fatalf("mode %s k %d chosen %d evaluated %d intervals %d dim %d", res.Mode, res.K, res.Chosen, len(res.Evaluated), res.Intervals, res.InputDim)
	}
	var lines []string
	sum := 0.0
	for _, p := range res.Phases {
		lines = append(lines, strconv.Itoa(p.Representative)+" "+strconv.Itoa(p.ID))
		sum += p.Weight
		if p.Variance < 0 || p.Size < 1 || res.Labels[p.Representative] != p.ID {
			t.Errorf("phase %+v", p)
		}
	}
	file, _ := os.ReadFile(sp)
	if got := strings.Join(lines, "\n") + "\n"; got != string(file) {
		t.Errorf("JSON phases give\n%s\nthe file has\n%s", got, file)
	}
	if sum < 0.999999 || sum > 1.000001 {
		t.Errorf("weights sum to %v", sum)
	}
	if len(res.Hints.Runs) == 0 || res.Hints.Runs[len(res.Hints.Runs)-1].End != 260 {
		t.Errorf("hints runs %v", res.Hints.Runs)
	}
}

// TestPhasesOwnFiles runs default mode on our own BBV files, from a .pst
// holding two of them as two processes, and checks the phases found and
// the plot.
func TestPhasesOwnFiles(t *testing.T) {
	dir := t.TempDir()
	pst := filepath.Join(dir, "two.pst")
	// cycle.bb.gz is process 0, seq.bb.gz process 1 (input order: no keys).
	mustRun(t, "import", "--format", "bbv", "-o", pst, filepath.Join(ownBBV, "cycle.bb.gz"), filepath.Join(ownBBV, "seq.bb.gz"))
	var rep phasesReport
	if err := json.Unmarshal([]byte(mustRun(t, "phases", "--simpoint-compat", "--json", pst)), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Result.Streams) != 2 || rep.Result.Streams[0].Proc != 0 || rep.Result.Streams[1].Proc != 1 {
		t.Fatalf("%d streams", len(rep.Result.Streams))
	}
	cyc := rep.Result.Streams[0].Result
	if cyc.Intervals != 174 || cyc.K != 6 || cyc.Hints.Period != 20 || cyc.Hints.InitEnd != 11 || len(cyc.Hints.Cycle) != 3 {
		t.Errorf("cycle: %d intervals, k %d, init end %d, period %d, cycle %v", cyc.Intervals, cyc.K, cyc.Hints.InitEnd, cyc.Hints.Period, cyc.Hints.Cycle)
	}
	// The envelope of one process's phases, pinned (docs/results.md).
	out := mustRun(t, "phases", "--simpoint-compat", "--maxk", "4", "--procs", "1", "--json", pst)
	golden(t, filepath.Join("results", "phases.golden.json"), "phases --json", out)
	var one phasesReport
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		t.Fatal(err)
	}
	if one.Analysis != "phases" || len(one.Result.Streams) != 1 || one.Result.Streams[0].Proc != 1 || one.Result.Streams[0].Result.K > 4 {
		t.Errorf("--procs 1 --maxk 4: %+v", one.Result.Streams)
	}
	// The same analysis straight from the .bb.gz gives the same labels.
	var direct phasesReport
	if err := json.Unmarshal([]byte(mustRun(t, "phases", "--simpoint-compat", "--json", filepath.Join(ownBBV, "cycle.bb.gz"))), &direct); err != nil {
		t.Fatal(err)
	}
	if !equalInts(direct.Result.Streams[0].Result.Labels, cyc.Labels) {
		t.Error(".pst and .bb.gz inputs give different labels")
	}
	// One process, with a plot.
	png := filepath.Join(dir, "seq.png")
	out = mustRun(t, "phases", "--procs", "1", "--plot", png, pst)
	if !strings.Contains(out, "proc 1: 434 intervals") || !strings.Contains(out, "default mode") {
		t.Errorf("text output:\n%s", out)
	}
	data, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Errorf("plot: %v, %d bytes", err, len(data))
	}
	svg := filepath.Join(dir, "seq.svg")
	mustRun(t, "phases", "--k", "4", "--plot", svg, filepath.Join(ownBBV, "seq.bb.gz"))
	if data, err := os.ReadFile(svg); err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Errorf("svg plot: %v", err)
	}
}

// TestPhasesGuard runs default mode on cycle.bb.gz, whose phases repeat
// almost exactly: with the phase-size guard (the default) it chooses k = 6
// with no phase of one interval and reports each k's guarded BIC; with
// --min-phase-size 1 the BIC runs away to k = 30.
func TestPhasesGuard(t *testing.T) {
	in := filepath.Join(ownBBV, "cycle.bb.gz")
	var on, off phasesReport
	if err := json.Unmarshal([]byte(mustRun(t, "phases", "--json", in)), &on); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(mustRun(t, "phases", "--json", "--min-phase-size", "1", in)), &off); err != nil {
		t.Fatal(err)
	}
	res := on.Result.Streams[0].Result
	if res.Mode != "default" || res.K != 6 || res.Hints.InitEnd != 11 || res.Hints.Period != 20 {
		t.Errorf("guard: mode %s, k %d, init end %d, period %d", res.Mode, res.K, res.Hints.InitEnd, res.Hints.Period)
	}
	for _, p := range res.Phases {
		if p.Size < 2 {
			t.Errorf("guard: phase %d has %d interval", p.ID, p.Size)
		}
	}
	for _, ev := range res.Evaluated {
		if ev.GuardedBIC == nil {
			t.Errorf("k=%d: no guarded BIC", ev.K)
		}
	}
	if k := off.Result.Streams[0].Result.K; k != 30 {
		t.Errorf("without the guard: k = %d, want 30", k)
	}
	text := mustRun(t, "phases", in)
	if !strings.Contains(text, "30:86967.5(") || !strings.Contains(text, "chosen k = 6") {
		t.Errorf("text output:\n%s", text)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPhasesErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.bb")
	os.WriteFile(bad, []byte("T:1:5   :2:7\nT:0:3\n"), 0o644)
	one := filepath.Join(ownBBV, "cycle.bb.gz")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing file", []string{"phases", filepath.Join(dir, "nope.bb")}, 1, "nope.bb: no such file"},
		{"bad k", []string{"phases", "--k", "3:x", one}, 2, `--k: phase: k list "3:x"`},
		{"k zero", []string{"phases", "--k", "0", one}, 2, "k must be at least 1"},
		{"bad dim", []string{"phases", "--dim", "-3", one}, 2, "--dim"},
		{"bad init", []string{"phases", "--init", "random", one}, 2, "unknown initialisation"},
		{"bad coverage", []string{"phases", "--coverage", "1.5", one}, 2, "--coverage"},
		{"plot extension", []string{"phases", "--plot", filepath.Join(dir, "x.gif"), one}, 2, ".png or .svg"},
		{"bad input", []string{"phases", bad}, 1, "bad.bb:2: column 3: block id 0"},
		{"no args", []string{"phases"}, 2, "accepts 1 arg"},
		{"procs on a file", []string{"phases", "--procs", "1", one}, 2, "apply to a .pst"},
		{"min phase size", []string{"phases", "--min-phase-size", "0", one}, 2, "--min-phase-size must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.want)
			}
		})
	}
	// Nothing is written when the run fails.
	if _, _, code := run(t, "phases", "--k", "0", "--save-weights", filepath.Join(dir, "w"), one); code == 0 {
		t.Fatal("no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "w")); err == nil {
		t.Error("a failed run wrote its output")
	}
}

// TestBBVCommand runs a real program under valgrind exp-bbv: one process,
// then two started concurrently by a shell.
func TestBBVCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs valgrind")
	}
	needtool.Path(t, "valgrind", "valgrind")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	os.WriteFile(in, bytes.Repeat([]byte("parscope phases from basic block vectors\n"), 20000), 0o644)
	one := filepath.Join(dir, "one.pst")
	mustRun(t, "bbv", "-o", one, "--interval", "1000000", "--keep", filepath.Join(dir, "raw"), "--", "gzip", "-c", in)
	var info infoReport
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", one)), &info); err != nil {
		t.Fatal(err)
	}
	raw, _ := filepath.Glob(filepath.Join(dir, "raw", "bb.out.*"))
	if len(info.Runs) != 1 || info.Runs[0].Procs != 1 || info.Records["bbv"] == 0 || len(raw) != 1 {
		t.Fatalf("one process: %+v, raw files %v", info, raw)
	}
	// The stored vectors are those of the raw file.
	var a, b phasesReport
	json.Unmarshal([]byte(mustRun(t, "phases", "--simpoint-compat", "--json", "--maxk", "5", one)), &a)
	json.Unmarshal([]byte(mustRun(t, "phases", "--simpoint-compat", "--json", "--maxk", "5", raw[0])), &b)
	if len(a.Result.Streams) != 1 || len(b.Result.Streams) != 1 || a.Result.Streams[0].Result.Intervals < 2 || !equalInts(a.Result.Streams[0].Result.Labels, b.Result.Streams[0].Result.Labels) {
		t.Fatalf("the .pst and the raw file disagree")
	}

	// The shell, too short for an interval, also writes the GODEBUG it
	// was given: cpu.rdtscp=off added to the caller's settings (a Go
	// program under valgrind 3.19 on AMD dies on RDTSCP otherwise).
	two := filepath.Join(dir, "two.pst")
	godebug := filepath.Join(dir, "godebug.txt")
	t.Setenv("GODEBUG", "madvdontneed=1")
	script := "echo \"$GODEBUG\" > " + godebug + "; gzip -c " + in + " > /dev/null & gzip -9 -c " + in + " > /dev/null; wait"
	mustRun(t, "bbv", "-o", two, "--interval", "1000000", "--", "sh", "-c", script)
	if got, err := os.ReadFile(godebug); err != nil || string(got) != "madvdontneed=1,cpu.rdtscp=off\n" {
		t.Errorf("the program under valgrind was given GODEBUG=%q (%v), want madvdontneed=1,cpu.rdtscp=off", got, err)
	}
	info = infoReport{}
	json.Unmarshal([]byte(mustRun(t, "info", "--json", two)), &info)
	if len(info.Runs) != 1 || info.Runs[0].Procs != 2 {
		t.Fatalf("two processes: %+v", info)
	}
	// Errors: an existing output, a failing command.
	if _, errOut, code := run(t, "bbv", "-o", two, "--", "true"); code != 1 || !strings.Contains(errOut, "exists") {
		t.Errorf("existing output: exit %d %s", code, errOut)
	}
	if _, errOut, code := run(t, "bbv", "-o", filepath.Join(dir, "f.pst"), "--", "sh", "-c", "exit 3"); code != 1 || !strings.Contains(errOut, "status 3") {
		t.Errorf("failing command: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "f.pst")); err == nil {
		t.Error("a failed run wrote its output")
	}
}

// phasesReport is the --json output of phases: the engine's envelope of
// a phase.Phases.
type phasesReport struct {
	Analysis string       `json:"analysis"`
	Result   phase.Phases `json:"result"`
}

// TestPhasesTitle: the phase plot's title writes the counts with
// thousands separators (1,315 intervals, not 1315).
func TestPhasesTitle(t *testing.T) {
	res := &phase.Result{Intervals: 1315, Phases: make([]phase.Phase, 10)}
	res.Hints.Period = 3
	if got, want := phasesTitle("phases.bb.gz", res), "phases.bb.gz: 10 phases over 1,315 intervals (no initialisation told apart, period 3)"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	res.Hints.InitEnd = 1200
	if got, want := phasesTitle("x", res), "x: 10 phases over 1,315 intervals (initialisation 0-1,199, period 3)"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}

// TestValgrindEnv: bbv's program gets cpu.rdtscp=off added to GODEBUG,
// unless GODEBUG already says what to do with RDTSCP.
func TestValgrindEnv(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"PATH=/bin"}, []string{"PATH=/bin", "GODEBUG=cpu.rdtscp=off"}},
		{[]string{"GODEBUG="}, []string{"GODEBUG=cpu.rdtscp=off"}},
		{[]string{"GODEBUG=gctrace=1", "HOME=/"}, []string{"GODEBUG=gctrace=1,cpu.rdtscp=off", "HOME=/"}},
		{[]string{"GODEBUG=cpu.rdtscp=on"}, []string{"GODEBUG=cpu.rdtscp=on"}},
		{[]string{"XGODEBUG=a=1"}, []string{"XGODEBUG=a=1", "GODEBUG=cpu.rdtscp=off"}},
	} {
		if got := valgrindEnv(tc.in); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("valgrindEnv(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
