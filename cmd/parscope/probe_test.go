package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/probe"
)

var (
	workersOnce sync.Once
	workersDir  string
	workersErr  error
)

// probeWorkers builds the example workers once for the probe tests.
func probeWorkers(t *testing.T) string {
	t.Helper()
	workersOnce.Do(func() {
		workersDir, workersErr = os.MkdirTemp("", "parscope-workers-")
		if workersErr != nil {
			return
		}
		for _, w := range []string{"matmul", "sweep", "phasesize"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(workersDir, w), "../../examples/"+w).CombinedOutput()
			if err != nil {
				workersErr = &exec.Error{Name: w, Err: err}
				t.Logf("%s", out)
				return
			}
		}
	})
	if workersErr != nil {
		t.Fatal(workersErr)
	}
	t.Cleanup(func() {}) // the directory is shared by the tests of this run
	return workersDir
}

// TestProbeBuildRun builds a probe of a small matmul and runs it through
// the CLI, then reduces it and draws its curve.
func TestProbeBuildRun(t *testing.T) {
	w := probeWorkers(t)
	dir := t.TempDir()
	pf := filepath.Join(dir, "mm.probe")
	worker := []string{"--", filepath.Join(w, "matmul"), "-n", "24", "-reps", "40", "-rows", "2"}
	out := mustRun(t, append([]string{"probe", "build", "-o", pf, "--json", "--intervals", "100"}, worker...)...)
	var info probeInfo
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := info.Manifest
	// 40 repetitions of 24 rows, one block a row: 960 blocks; 10,000
	// intervals would be under a block, below 8 steps of 2 rows (16), so the
	// interval is the fine interval, 64 blocks: 15 intervals.
	if m.Worker.Name != "matmul" || m.TotalBlocks != 960 || m.TotalSteps != 480 || m.Interval != 64 || m.Intervals != 15 || m.WarmUp != 16 {
		t.Fatalf("manifest %+v", m)
	}
	if m.K != 1 || len(m.Phases) != 1 || m.Phases[0].Weight != 1 || m.Phases[0].Snapshot == nil {
		t.Fatalf("matmul has one phase; got k %d, phases %+v", m.K, m.Phases)
	}
	if _, err := os.Stat(pf); err != nil {
		t.Fatal(err)
	}
	out = mustRun(t, append([]string{"probe", "run", pf, "--json"}, worker...)...)
	var pred probe.Prediction
	if err := json.Unmarshal([]byte(out), &pred); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if pred.Covered != 1 || pred.Failed != 0 || !(pred.Predicted > 0) || pred.Phases[0].Status != "ok" ||
		math.Abs(pred.Represented-float64(m.Phases[0].WarmBlocks+m.Phases[0].Blocks)/960) > 1e-12 {
		t.Fatalf("prediction %+v", pred)
	}
	table := mustRun(t, append([]string{"probe", "run", pf}, worker...)...)
	for _, want := range []string{"TimeUnitValue", "predicted run time:", "probe run time:", "100.0% of the run", "probe time by stage: read ", ", first round "} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if info := mustRun(t, "probe", "info", pf); !strings.Contains(info, "worker matmul 2") {
		t.Errorf("info:\n%s", info)
	}
	png := filepath.Join(dir, "curve.png")
	curve := mustRun(t, append([]string{"probe", "curve", pf, "--json", "--plot", png}, worker...)...)
	var pts []probe.CurvePoint
	if err := json.Unmarshal([]byte(curve), &pts); err != nil || len(pts) != 1 || pts[0].K != 1 || pts[0].Error != 0 {
		t.Fatalf("curve %v: %s", err, curve)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Fatalf("curve plot: %v", err)
	}
}

// TestProbeReduceTouched trims a phasesize probe to its touched sets: the
// setup's table steps only write the table, so most of their snapshot goes,
// and the trimmed probe still runs every phase.
func TestProbeReduceTouched(t *testing.T) {
	w := probeWorkers(t)
	dir := t.TempDir()
	pf, tf := filepath.Join(dir, "ps.probe"), filepath.Join(dir, "trim.probe")
	worker := []string{"--", filepath.Join(w, "phasesize"), "-n", "32", "-iters", "3", "-sweeps", "2", "-table", "4096"}
	mustRun(t, append([]string{"probe", "build", "-o", pf, "--intervals", "200"}, worker...)...)
	out := mustRun(t, append([]string{"probe", "reduce", pf, "-o", tf, "--touched", "--chunk", "512"}, worker...)...)
	if !strings.Contains(out, "not read") || !strings.Contains(out, "reduction: touched set: zeroed ") {
		t.Fatalf("reduce --touched:\n%s", out)
	}
	p, err := probe.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	q, err := probe.ReadFile(tf)
	if err != nil {
		t.Fatal(err)
	}
	pc, praw := p.Sizes()
	qc, qraw := q.Sizes()
	if praw != qraw || qc >= pc {
		t.Fatalf("sizes: %d → %d compressed, %d → %d raw; want smaller compressed, the same raw", pc, qc, praw, qraw)
	}
	var pred probe.Prediction
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"probe", "run", tf, "--json", "--repeat", "1"}, worker...)...)), &pred); err != nil {
		t.Fatal(err)
	}
	if pred.Failed != 0 || pred.Covered < 0.999 {
		t.Fatalf("trimmed probe: %d phases failed, %.3f covered", pred.Failed, pred.Covered)
	}
	// A worker is given with --touched only, and --touched needs one.
	if _, stderr, code := run(t, append([]string{"probe", "reduce", pf, "-o", filepath.Join(dir, "x.probe")}, worker...)...); code != 2 || !strings.Contains(stderr, "only given with --touched") {
		t.Errorf("worker without --touched: exit %d, %s", code, stderr)
	}
	if _, stderr, code := run(t, "probe", "reduce", pf, "-o", filepath.Join(dir, "y.probe"), "--touched"); code != 2 || !strings.Contains(stderr, "WORKER ARGS") {
		t.Errorf("--touched without a worker: exit %d, %s", code, stderr)
	}
}

// TestProbeBadInput: a corrupted probe, a probe of another worker, another
// executable, and an existing output.
func TestProbeBadInput(t *testing.T) {
	w := probeWorkers(t)
	dir := t.TempDir()
	pf := filepath.Join(dir, "sw.probe")
	args := []string{"-n", "12", "-iters", "4"}
	mustRun(t, append([]string{"probe", "build", "-o", pf, "--", filepath.Join(w, "sweep")}, args...)...)

	_, stderr, code := run(t, append([]string{"probe", "build", "-o", pf, "--", filepath.Join(w, "sweep")}, args...)...)
	if code == 0 || !strings.Contains(stderr, "exists") {
		t.Errorf("build over an existing probe: exit %d, %s", code, stderr)
	}
	// Another worker taking the same arguments.
	_, stderr, code = run(t, append([]string{"probe", "run", pf, "--", filepath.Join(w, "phasesize")}, args...)...)
	if code == 0 || !strings.Contains(stderr, "Go build ID") {
		t.Errorf("other executable: exit %d, %s", code, stderr)
	}
	_, stderr, code = run(t, append([]string{"probe", "run", pf, "--other-binary", "--", filepath.Join(w, "phasesize")}, args...)...)
	if code == 0 || !strings.Contains(stderr, "name/version sweep/2") || !strings.Contains(stderr, "phasesize/3") {
		t.Errorf("other worker: exit %d, %s", code, stderr)
	}
	_, stderr, code = run(t, "probe", "run", pf, "--", filepath.Join(w, "sweep"), "-n", "13", "-iters", "4")
	if code == 0 || !strings.Contains(stderr, "arguments") {
		t.Errorf("other arguments: exit %d, %s", code, stderr)
	}
	// Corruption.
	b, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	bad := filepath.Join(dir, "bad.probe")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, append([]string{"probe", "run", bad, "--", filepath.Join(w, "sweep")}, args...)...)
	if code == 0 || !strings.Contains(stderr, "checksum mismatch") || !strings.Contains(stderr, bad) {
		t.Errorf("corrupted probe: exit %d, %s", code, stderr)
	}
	// Not a worker, and no worker at all.
	_, stderr, code = run(t, "probe", "build", "-o", filepath.Join(dir, "x.probe"), "--", "go", "version")
	if code == 0 || !strings.Contains(stderr, "probe.Main") {
		t.Errorf("not a worker: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.probe")); err == nil {
		t.Error("a failed build wrote its output")
	}
	if _, _, code = run(t, "probe", "build", "-o", filepath.Join(dir, "y.probe")); code != 2 {
		t.Errorf("build without a worker: exit %d, want 2", code)
	}
}
