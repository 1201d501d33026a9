package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/internal/needtool"
)

// buildTest builds a probe of the test worker once per test.
func buildTest(t *testing.T) *Probe {
	t.Helper()
	p, err := Build(context.Background(), testWorker(4000), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildAndRun(t *testing.T) {
	p := buildTest(t)
	m := &p.Manifest
	if m.Worker.Info != testInfo || m.TotalSteps != 4000 || m.TotalBlocks != 16000 {
		t.Fatalf("worker %+v, %d steps, %d blocks; want %+v, 4000 steps, 16000 blocks", m.Worker.Info, m.TotalSteps, m.TotalBlocks, testInfo)
	}
	// 16000 blocks / DefaultIntervals is under 8 steps of 4 blocks: the
	// interval is 32 blocks, rounded up to the fine interval of 64.
	if m.Interval != 64 || m.WarmUp != 16 || m.Intervals != 250 {
		t.Fatalf("interval %d, warm-up %d, %d intervals; want 64, 16, 250", m.Interval, m.WarmUp, m.Intervals)
	}
	if m.K < 2 {
		t.Fatalf("k = %d, want at least the two stages", m.K)
	}
	var w, ts float64
	for _, ph := range m.Phases {
		w += ph.Weight
		ts += ph.TimeShare
		if ph.Snapshot == nil {
			continue
		}
		// The interval holds 16 steps of 4 blocks; the snapshot is taken
		// 16 blocks (4 steps) before it, or at step 0.
		if ph.Blocks != 64 || ph.EndStep-ph.StartStep != 16 || ph.StartStep-ph.SnapshotStep != min(4, ph.StartStep) || ph.WarmBlocks != 4*(ph.StartStep-ph.SnapshotStep) {
			t.Errorf("phase %+v: want 64 blocks in 16 steps after a warm-up of 4 steps", ph)
		}
		raw, err := p.SnapshotBytes(phaseIndex(p, ph.ID))
		if err != nil || len(raw) != 16 {
			t.Errorf("phase %d snapshot: %d bytes, %v", ph.ID, len(raw), err)
		}
	}
	if math.Abs(w-1) > 1e-9 || math.Abs(ts-1) > 1e-9 {
		t.Fatalf("weights sum to %g and time shares to %g, want 1", w, ts)
	}

	path := filepath.Join(t.TempDir(), "t.probe")
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	q, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := Run(context.Background(), q, testWorker(4000), RunOptions{Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	if pred.Failed != 0 || math.Abs(pred.Covered-1) > 1e-9 || !(pred.Predicted > 0) || math.IsInf(pred.Predicted, 0) {
		t.Fatalf("prediction %+v: want every phase measured and a finite time", pred)
	}
	// The prediction is eq. 4.7 of what was measured.
	probed := map[int]float64{}
	for i, ph := range pred.Phases {
		if ph.Status == "ok" {
			probed[i] = ph.TProbed
		}
	}
	again, err := Predict(&q.Manifest, probed, TimeWeights)
	if err != nil || !near(again.Predicted, pred.Predicted) {
		t.Fatalf("Predict from the measured times = %v, %v; Run said %g", again, err, pred.Predicted)
	}
	var blocks int64
	for _, ph := range q.Manifest.Phases {
		if ph.Snapshot != nil {
			blocks += ph.WarmBlocks + ph.Blocks
		}
	}
	if want := float64(blocks) / 16000; !near(pred.Represented, want) {
		t.Fatalf("represented %g, want %g", pred.Represented, want)
	}
	// Where the probe's time went: two rounds, every stage of the worker
	// took some time, and the stages that follow one another add up to no
	// more than the probe's time.
	c := pred.Costs
	if c == nil || c.RoundsMade != 2 || c.Instructions != nil {
		t.Fatalf("costs %+v: want 2 rounds and no instruction counts (wall clock)", c)
	}
	for name, d := range map[string]float64{"hash": c.Hash, "snapshots": c.Snapshots, "start": c.Start, "init": c.Init,
		"load": c.Load, "first round": c.FirstRound, "rounds": c.Rounds} {
		if !(d > 0) {
			t.Errorf("%s took %g s, want a positive time", name, d)
		}
	}
	if sum := c.Fixed() + c.FirstRound + c.Rounds; sum > pred.ProbeTime {
		t.Errorf("the stages sum to %g s, more than the probe's time %g s", sum, pred.ProbeTime)
	}
}

func phaseIndex(p *Probe, id int) int {
	for i, ph := range p.Manifest.Phases {
		if ph.ID == id {
			return i
		}
	}
	return -1
}

// TestRunCrashedPhase: a target that dies (os.Exit) or panics in stage B
// reports those phases as failed, measures the others, and says which
// fraction of the run the prediction covers.
func TestRunCrashedPhase(t *testing.T) {
	p := buildTest(t)
	for _, env := range []string{"TEST_CRASH=1", "TEST_PANIC=1"} {
		pred, err := Run(context.Background(), p, testWorker(4000, env), RunOptions{})
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		if pred.Failed == 0 || pred.Covered >= 1 || pred.Covered <= 0 {
			t.Fatalf("%s: %d failed, covered %g: want failed phases and a partial coverage", env, pred.Failed, pred.Covered)
		}
		for _, ph := range pred.Phases {
			if ph.Status == "failed" && !strings.Contains(ph.Error, map[string]string{"TEST_CRASH=1": "crashed", "TEST_PANIC=1": "panicked"}[env]) {
				t.Errorf("%s: phase %d error %q", env, ph.ID, ph.Error)
			}
		}
		if want, _ := RuleOfThree(pred.Partial, pred.Covered); !near(pred.Predicted, want) {
			t.Fatalf("%s: predicted %g, want the rule of three %g", env, pred.Predicted, want)
		}
	}
}

// TestSnapshotFailure: the reference run completes and the error names
// the phase.
func TestSnapshotFailure(t *testing.T) {
	_, err := Build(context.Background(), testWorker(4000, "TEST_SNAPSHOT_FAIL=1"), BuildOptions{})
	var se *SnapshotError
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want a SnapshotError", err)
	}
	if !(se.Probe.Manifest.ETRef > 0) || se.Probe.Manifest.Intervals != 250 || !strings.Contains(err.Error(), "injected snapshot failure") ||
		!strings.Contains(err.Error(), "reference run completed") {
		t.Fatalf("error %q (ETRef %g): want the failure and the completed run", err, se.Probe.Manifest.ETRef)
	}
}

// TestIdentity: a probe is refused by another worker, version, arguments
// or executable, naming what differs.
func TestIdentity(t *testing.T) {
	p := buildTest(t)
	ctx := context.Background()
	_, err := Run(ctx, p, testWorker(3000), RunOptions{})
	var ie *IdentityError
	if !errors.As(err, &ie) || ie.What != "arguments" {
		t.Fatalf("other arguments: %v", err)
	}
	if id, _ := GoBuildID(os.Args[0]); p.Manifest.Worker.GoBuildID != id || id == "" {
		t.Fatalf("the probe's Go build ID %q, the worker's %q", p.Manifest.Worker.GoBuildID, id)
	}
	q := p.Clone()
	q.Manifest.Worker.GoBuildID = "other/build"
	if _, err = Run(ctx, q, testWorker(4000), RunOptions{}); !errors.As(err, &ie) || ie.What != "Go build ID" || !strings.Contains(err.Error(), "other/build") {
		t.Fatalf("other Go build ID: %v", err)
	}
	// A probe without a build ID (an older parscope, or a worker that is
	// not a Go ELF file) is checked by the executable's SHA-256.
	q.Manifest.Worker.GoBuildID = ""
	q.Manifest.Worker.SHA256 = strings.Repeat("0", 64)
	if _, err = Run(ctx, q, testWorker(4000), RunOptions{}); !errors.As(err, &ie) || ie.What != "executable SHA-256" {
		t.Fatalf("other executable: %v", err)
	}
	q.Manifest.Worker.SHA256 = p.Manifest.Worker.SHA256
	if _, err = Run(ctx, q, testWorker(4000), RunOptions{Repeat: 1}); err != nil {
		t.Fatalf("the same executable by SHA-256: %v", err)
	}
	q.Manifest.Worker.GoBuildID = "other/build"
	q.Manifest.Worker.Version = "0"
	_, err = Run(ctx, q, testWorker(4000), RunOptions{OtherBinary: true})
	if !errors.As(err, &ie) || ie.What != "name/version" || !strings.Contains(err.Error(), "probe-test-worker/0") {
		t.Fatalf("other version: %v", err)
	}
}

func TestNotAWorker(t *testing.T) {
	sh := needtool.Path(t, "coreutils", "true")
	_, err := Build(context.Background(), Command{Path: sh}, BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "probe.Main") {
		t.Fatalf("error %v, want a hint that the program is not a worker", err)
	}
}

// TestCPUClock builds and runs a probe timed with the worker's CPU time.
func TestCPUClock(t *testing.T) {
	p, err := Build(context.Background(), testWorker(2000), BuildOptions{Clock: CPUClock})
	if err != nil {
		t.Fatal(err)
	}
	if p.Manifest.Clock != CPUClock || !(p.Manifest.ETRef > 0) || !(p.Manifest.ETUninstRef > 0) {
		t.Fatalf("manifest clock %q, ETRef %g, ETuninstRef %g", p.Manifest.Clock, p.Manifest.ETRef, p.Manifest.ETUninstRef)
	}
	pred, err := Run(context.Background(), p, testWorker(2000), RunOptions{})
	if err != nil || !(pred.Predicted > 0) || math.Abs(pred.Covered-1) > 1e-9 {
		t.Fatalf("prediction %+v, %v", pred, err)
	}
	if _, err := Build(context.Background(), testWorker(2000), BuildOptions{Clock: "sundial"}); err == nil || !strings.Contains(err.Error(), "sundial") {
		t.Fatalf("unknown clock: %v", err)
	}
}

// TestRunRounds: --repeat measures every phase exactly that many times; a
// budget makes at least one round, stops when the next round would not fit,
// and never exceeds MaxRounds.
func TestRunRounds(t *testing.T) {
	p := buildTest(t)
	for _, tc := range []struct {
		name string
		o    RunOptions
		want func(n int) bool
	}{
		{"repeat 4", RunOptions{Repeat: 4}, func(n int) bool { return n == 4 }},
		{"no budget", RunOptions{Budget: -1}, func(n int) bool { return n == 3 }},
		{"tiny budget", RunOptions{Budget: 1e-9}, func(n int) bool { return n == 1 }},
		{"huge budget, 5 rounds at most", RunOptions{Budget: 1e9, MaxRounds: 5}, func(n int) bool { return n == 5 }},
	} {
		pred, err := Run(context.Background(), p, testWorker(4000), tc.o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, ph := range pred.Phases {
			if ph.Status == "ok" && !tc.want(ph.Samples) {
				t.Errorf("%s: phase %d measured %d times", tc.name, ph.ID, ph.Samples)
			}
			if ph.Status == "ok" && ph.Samples > 1 && !(ph.TProbedErr > 0) {
				t.Errorf("%s: phase %d: %d samples but standard error %g", tc.name, ph.ID, ph.Samples, ph.TProbedErr)
			}
		}
		if tc.o.Repeat == 4 && !(pred.StdErr > 0 && pred.StdErr < pred.Predicted) {
			t.Errorf("%s: standard error %g of a prediction of %g", tc.name, pred.StdErr, pred.Predicted)
		}
	}
}

// TestReplayCrashAttribution: when the worker dies, the phase it died in
// is the one after the last measurement in round order; the phases before
// it keep their measurements and the rest are measured by a new process.
func TestReplayCrashAttribution(t *testing.T) {
	p := buildTest(t)
	var all []int
	for i := range p.Manifest.Phases {
		if p.Kept(i) {
			all = append(all, i)
		}
	}
	runs, err := Local{}.Replay(context.Background(), testWorker(4000, "TEST_CRASH=1"), p, all, ReplayOptions{Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	crashed, measured := 0, 0
	for _, r := range runs {
		ph := p.Manifest.Phases[r.Phase]
		// The crash is in stage B: its phases are the ones whose
		// representative runs stage B steps (blocks 2 and 3).
		if r.Err != nil {
			crashed++
			if !strings.Contains(r.Err.Error(), fmt.Sprintf("crashed in phase %d", ph.ID)) {
				t.Errorf("phase %d: error %v", ph.ID, r.Err)
			}
			continue
		}
		measured++
		if len(r.Probed) < 2 {
			t.Errorf("phase %d: %d measurements, want at least 2", ph.ID, len(r.Probed))
		}
	}
	if crashed == 0 || measured == 0 || crashed+measured != len(all) {
		t.Fatalf("%d phases crashed and %d measured of %d", crashed, measured, len(all))
	}
}

// TestBuildLogsItsSteps checks that Build writes BuildSteps lines to its
// log, the total a progress line shows, and that Run reports every
// measurement of a fixed number of rounds, ending at the total it gave.
func TestBuildLogsItsSteps(t *testing.T) {
	var log strings.Builder
	o := BuildOptions{RefRuns: 2, Repeat: 2, Log: &log}
	p, err := Build(context.Background(), testWorker(2000), o)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != BuildSteps(o) || BuildSteps(o) != 6 {
		t.Fatalf("%d log lines, BuildSteps %d, want 6:\n%s", len(lines), BuildSteps(o), log.String())
	}
	kept := 0
	for i := range p.Manifest.Phases {
		if p.Kept(i) {
			kept++
		}
	}
	var calls [][2]int
	_, err = Run(context.Background(), p, testWorker(2000), RunOptions{Repeat: 3, Progress: func(n, total int) {
		calls = append(calls, [2]int{n, total})
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := 3 * kept
	if len(calls) < 2 || calls[0] != [2]int{0, want} || calls[len(calls)-1] != [2]int{want, want} {
		t.Fatalf("progress calls %v, want from [0 %d] to [%d %d]", calls, want, want, want)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] < calls[i-1][0] || calls[i][1] != want {
			t.Fatalf("progress calls %v: not rising to %d", calls, want)
		}
	}
}
