package occupancy

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// workloadEnv makes this test binary, run again by a sweep, the workload
// TestSweepWorkload.
const workloadEnv = "PARSCOPE_OCCUPANCY_SWEEP_WORKLOAD"

// workload returns the command of a sweep that runs TestSweepWorkload
// with the arguments args, and sets workloadEnv for the test t.
func workload(t *testing.T, args ...string) []string {
	t.Setenv(workloadEnv, "1")
	return append([]string{os.Args[0], "-test.run=^TestSweepWorkload$", "--"}, args...)
}

// Times of the workload's trace (ns): a process starts at workT0, is in U
// for workA(n, g) then in S for workB(n, g), and ends.
const workT0 = 1000

func workA(n, g float64) float64 { return 100*g/n + 20 }
func workB(n, g float64) float64 { return 3*n*g + 7 }

// TestSweepWorkload is no test: it is the workload of the sweeps of the
// tests below, this test binary run again with workloadEnv set. Its
// arguments (after --) are what to do, n, g and the trace to write:
//
//   - states: n processes in U for workA(n, g) ns from workT0, then in S
//     for workB(n, g) ns; at their end the occupancy counters of U and S
//     (as the instrument library writes them);
//   - nocounters: the same without counters; counters: the counters
//     alone (the state records dropped, as instrument.DropKinds does);
//   - vary: states, S lasting 1000 ns more for each earlier run in the
//     trace's directory (the runs of one point are 0, 1000, 2000 ns apart);
//   - modes: states, S named R when n is 2;
//   - fail: writes "boom" on stderr and exits with status 3;
//   - sleep: sleeps for a minute; none: writes nothing.
func TestSweepWorkload(t *testing.T) {
	if os.Getenv(workloadEnv) == "" {
		t.Skip("the workload of the sweep tests, run by them")
	}
	args := flag.Args()
	switch args[0] {
	case "fail":
		fmt.Fprintln(os.Stderr, "boom")
		os.Exit(3)
	case "sleep":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "none":
		os.Exit(0)
	}
	n, _ := strconv.Atoi(args[1])
	g, _ := strconv.ParseFloat(args[2], 64)
	out := args[3]
	a, b := workA(float64(n), g), workB(float64(n), g)
	if args[0] == "vary" {
		runs := filepath.Join(filepath.Dir(out), "runs")
		before, _ := os.ReadFile(runs)
		b += 1000 * float64(len(before))
		if err := os.WriteFile(runs, append(before, 'x'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := "S"
	if args[0] == "modes" && n == 2 {
		s = "R"
	}
	h := &trace.Header{
		States:   []trace.StateDef{{ID: 1, Name: "U"}, {ID: 2, Name: s}},
		Counters: []trace.CounterDef{{ID: 0, Name: "occupancy U", Unit: "ns"}, {ID: 1, Name: "occupancy " + s, Unit: "ns"}},
		Runs:     []trace.RunInfo{{ID: 0, Procs: int32(n)}},
	}
	var recs []trace.Record
	if args[0] != "counters" {
		for p := range int32(n) {
			recs = append(recs, trace.State(0, p, workT0, 1))
		}
		for p := range int32(n) {
			recs = append(recs, trace.State(0, p, workT0+int64(a), 2))
		}
	}
	if args[0] == "nocounters" {
		h.Counters = nil
	} else {
		for p := range int32(n) {
			end := workT0 + int64(a+b)
			recs = append(recs, trace.Counter(0, p, end, 0, a), trace.Counter(0, p, end, 1, b))
		}
	}
	storetest.Create(t, out, h, recs)
}

func TestSubstitute(t *testing.T) {
	args := []string{"-n", "{n}", "-g={g}", "-o", "{out}", "{n}{g}", "{x}", "{out}.txt"}
	got := substitute(args, []string{"n", "g"}, []float64{4, 0.5}, "/tmp/trial-0001.pst")
	want := []string{"-n", "4", "-g=0.5", "-o", "/tmp/trial-0001.pst", "40.5", "{x}", "/tmp/trial-0001.pst.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("substitute = %q, want %q", got, want)
	}
	if args[1] != "{n}" {
		t.Error("substitute changed its arguments")
	}
	// Values as written in the table: shortest form, no exponent below 1e21.
	if got := substitute([]string{"{e}", "{f}"}, []string{"e", "f"}, []float64{1e21, 150000}, ""); !slices.Equal(got, []string{"1e+21", "150000"}) {
		t.Errorf("substitute of large values = %q", got)
	}
	if got := formatValues([]string{"n", "g"}, []float64{4, 0.25}, " "); got != "n=4 g=0.25" {
		t.Errorf("pointString = %q", got)
	}
}

// TestRunSweepGrid runs a sweep of two parameters: the trials in grid
// order (the last parameter fastest), each point's command with its
// values, the progress before and after each point, the traces kept as
// trial-NNNN.pst in the same order, and the means and elapsed times of
// each source (counters, state records, state records with a start mode).
func TestRunSweepGrid(t *testing.T) {
	keep := t.TempDir()
	var events []SweepProgress
	c := SweepConfig{
		Axes:     []Axis{{Name: "n", Values: []float64{1, 2}}, {Name: "g", Values: []float64{10, 20, 30}}},
		Command:  workload(t, "states", "{n}", "{g}", "{out}"),
		Keep:     keep,
		Timeout:  time.Minute,
		Progress: func(p SweepProgress) { events = append(events, p) },
	}
	sw, err := RunSweep(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	grid := [][]float64{{1, 10}, {1, 20}, {1, 30}, {2, 10}, {2, 20}, {2, 30}}
	if !slices.Equal(sw.Params, []string{"n", "g"}) || !slices.Equal(sw.Modes, []string{"U", "S"}) || !sw.HasElapsed || len(sw.Trials) != len(grid) {
		t.Fatalf("sweep %+v", sw)
	}
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Abs(y) }
	for i, v := range grid {
		tr := sw.Trials[i]
		a, b := workA(v[0], v[1]), workB(v[0], v[1])
		if !slices.Equal(tr.Values, v) || !near(tr.Means[0], a/1e9) || !near(tr.Means[1], b/1e9) || !near(tr.Elapsed, (a+b)/1e9) {
			t.Errorf("trial %d: %+v, want values %v, means %g, %g s and elapsed %g s", i+1, tr, v, a/1e9, b/1e9, (a+b)/1e9)
		}
		point := fmt.Sprintf("n=%g g=%g", v[0], v[1])
		before, after := events[2*i], events[2*i+1]
		if before.Trial != i+1 || before.Trials != 6 || before.Point != point || before.Done ||
			after.Trial != i+1 || after.Point != point || !after.Done || !slices.Equal(after.Kept.Values, v) || after.Took <= 0 {
			t.Errorf("progress of trial %d: %+v then %+v", i+1, before, after)
		}
		// The kept trace is the point's.
		s := storetest.Open(t, filepath.Join(keep, fmt.Sprintf("trial-%04d.pst", i+1)))
		if p := s.Header().Runs[0].Procs; p != int32(v[0]) {
			t.Errorf("trial-%04d.pst has %d processes, want n = %g", i+1, p, v[0])
		}
	}
	if len(events) != 2*len(grid) {
		t.Errorf("%d progress calls, want %d", len(events), 2*len(grid))
	}

	// From the state records: the same means; the elapsed time is the
	// run's, from its first record, or from 0 with a start mode, which
	// the processes are in before their first state.
	c.Axes, c.Keep, c.Progress = []Axis{{Name: "n", Values: []float64{2}}, {Name: "g", Values: []float64{10}}}, "", nil
	c.Means = MeansOptions{Global: true}
	a, b := workA(2, 10), workB(2, 10)
	for _, start := range []string{"", "U"} {
		c.Means.Start = start
		sw, err := RunSweep(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		wantU, wantT := a, a+b
		if start != "" {
			wantU, wantT = a+workT0, a+b+workT0
		}
		if tr := sw.Trials[0]; !near(tr.Means[0], wantU/1e9) || !near(tr.Means[1], b/1e9) || !near(tr.Elapsed, wantT/1e9) {
			t.Errorf("from the state records, start %q: %+v, want U %g s, S %g s, elapsed %g s", start, tr, wantU/1e9, b/1e9, wantT/1e9)
		}
	}

	// A trace of the counters alone: the counters' means and span; from
	// the state records there is nothing to read.
	c.Command = workload(t, "counters", "{n}", "{g}", "{out}")
	c.Means = MeansOptions{}
	sw, err = RunSweep(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if tr := sw.Trials[0]; !near(tr.Means[0], a/1e9) || !near(tr.Means[1], b/1e9) || !near(tr.Elapsed, (a+b)/1e9) {
		t.Errorf("from the counters alone: %+v, want U %g s, S %g s, elapsed %g s", tr, a/1e9, b/1e9, (a+b)/1e9)
	}
	c.Means.Global = true
	_, err = RunSweep(context.Background(), c)
	var missing *engine.MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "trial 1 of 1 (n=2 g=10): trial-0001.pst: occupancy needs state records") {
		t.Errorf("the counters alone with Global: %v", err)
	}
}

// TestRunSweepRepeat keeps, of a point's runs, the one of median elapsed
// time.
func TestRunSweepRepeat(t *testing.T) {
	keep := t.TempDir()
	sw, err := RunSweep(context.Background(), SweepConfig{
		Axes:    []Axis{{Name: "n", Values: []float64{2}}, {Name: "g", Values: []float64{10}}},
		Command: workload(t, "vary", "{n}", "{g}", "{out}"),
		Repeat:  3,
		Keep:    keep,
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := workA(2, 10), workB(2, 10)+1000 // the second of 0, +1000, +2000 ns
	if tr := sw.Trials[0]; math.Abs(tr.Elapsed-(a+b)/1e9) > 1e-15 || math.Abs(tr.Means[1]-b/1e9) > 1e-15 {
		t.Errorf("kept %+v, want the run of S %g s, elapsed %g s", tr, b/1e9, (a+b)/1e9)
	}
	if runs, _ := os.ReadFile(filepath.Join(keep, "runs")); len(runs) != 3 {
		t.Errorf("%d runs, want 3", len(runs))
	}
}

// TestRunSweepFailures checks that the first run that fails ends the
// sweep with an error naming the point: a failing command (with the end of
// its standard error), one that takes too long, one cancelled, one that
// writes no trace, traces of other modes, a trace without the counters,
// and a --keep directory that holds something other than a trace where a
// trace would go.
func TestRunSweepFailures(t *testing.T) {
	axes := []Axis{{Name: "n", Values: []float64{1, 2}}}
	run := func(ctx context.Context, c SweepConfig) ([]SweepProgress, time.Duration, error) {
		var events []SweepProgress
		c.Axes = axes
		c.Progress = func(p SweepProgress) { events = append(events, p) }
		began := time.Now()
		_, err := RunSweep(ctx, c)
		return events, time.Since(began), err
	}

	events, _, err := run(context.Background(), SweepConfig{Command: workload(t, "fail", "{n}", "{out}")})
	if want := "trial 1 of 2 (n=1): " + os.Args[0] + ": exit status 3: boom"; err == nil || err.Error() != want {
		t.Errorf("a failing command: %v, want %q", err, want)
	}
	if len(events) != 1 || events[0].Done {
		t.Errorf("a failing command: progress %+v, want the first point begun and no more", events)
	}

	_, took, err := run(context.Background(), SweepConfig{Command: workload(t, "sleep", "{n}", "{out}"), Timeout: 300 * time.Millisecond})
	if want := "trial 1 of 2 (n=1): " + os.Args[0] + ": killed after 300ms"; err == nil || err.Error() != want {
		t.Errorf("a command that takes too long: %v, want %q", err, want)
	}
	if took > 30*time.Second {
		t.Errorf("the sweep took %v to kill a run after 300ms", took)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, took, err = run(ctx, SweepConfig{Command: workload(t, "sleep", "{n}", "{out}")})
	if !errors.Is(err, context.Canceled) || took > 30*time.Second {
		t.Errorf("a sweep cancelled: %v after %v, want context.Canceled", err, took)
	}

	_, _, err = run(context.Background(), SweepConfig{Command: workload(t, "none", "{n}", "{out}")})
	if err == nil || !strings.HasPrefix(err.Error(), "trial 1 of 2 (n=1): the command wrote no readable trace at {out}: ") {
		t.Errorf("a command that writes no trace: %v", err)
	}

	events, _, err = run(context.Background(), SweepConfig{Command: workload(t, "modes", "{n}", "10", "{out}")})
	if err == nil || err.Error() != "trial 2 (n=2): modes U,R, the trials before have U,S" || len(events) != 3 {
		t.Errorf("traces of other modes: %v after %d progress calls", err, len(events))
	}

	_, _, err = run(context.Background(), SweepConfig{Command: workload(t, "nocounters", "{n}", "10", "{out}")})
	if !errors.Is(err, ErrNoCounters) || !strings.HasPrefix(err.Error(), "trial 1 of 2 (n=1): trial-0001.pst: occupancy: the trace has no occupancy counters") {
		t.Errorf("a trace without counters: %v", err)
	}

	keep := t.TempDir()
	other := filepath.Join(keep, "trial-0001.pst")
	if err := os.WriteFile(other, []byte("not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(context.Background(), SweepConfig{Command: workload(t, "states", "{n}", "10", "{out}"), Keep: keep})
	if err == nil || !strings.Contains(err.Error(), "trial 1 of 2 (n=1): "+other+" exists and is not a .pst") {
		t.Errorf("a file where a kept trace goes: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "not a trace\n" {
		t.Error("the sweep replaced a file that is not a trace")
	}
}

func TestSweepConfigCheck(t *testing.T) {
	good := SweepConfig{Axes: []Axis{{Name: "n", Values: []float64{1}}}, Command: []string{"prog", "-o", "{out}"}}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for want, change := range map[string]func(c *SweepConfig){
		"at least one parameter":  func(c *SweepConfig) { c.Axes = nil },
		"parameter n has no":      func(c *SweepConfig) { c.Axes[0].Values = nil },
		`parameter name "n*g"`:    func(c *SweepConfig) { c.Axes[0].Name = "n*g" },
		`parameter name ""`:       func(c *SweepConfig) { c.Axes[0].Name = "" },
		"{out} is the trace path": func(c *SweepConfig) { c.Axes[0].Name = "out" },
		"parameter n given twice": func(c *SweepConfig) { c.Axes = append(c.Axes, Axis{Name: "n", Values: []float64{2}}) },
		"needs a command":         func(c *SweepConfig) { c.Command = nil },
		"must write its trace to": func(c *SweepConfig) { c.Command = []string{"prog", "-o", "x.pst"} },
		"repeat -1":               func(c *SweepConfig) { c.Repeat = -1 },
	} {
		c := good
		c.Axes = slices.Clone(good.Axes)
		change(&c)
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v, want %q", err, want)
		}
		if _, err := RunSweep(context.Background(), c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("RunSweep: %v, want %q", err, want)
		}
	}
}

// TestTrialMeans reduces traces of two runs: the means and elapsed times
// averaged over the runs; with the counters, over the runs that have
// them; modes grouped by a modes file.
func TestTrialMeans(t *testing.T) {
	h := &trace.Header{
		States:   []trace.StateDef{{ID: 1, Name: "U"}, {ID: 2, Name: "S"}},
		Counters: []trace.CounterDef{{ID: 0, Name: "occupancy U"}, {ID: 1, Name: "occupancy S"}},
		Runs:     []trace.RunInfo{{ID: 0, Procs: 1}, {ID: 1, Procs: 2}},
	}
	recs := []trace.Record{
		// Run 0: U 100 ns, S 300 ns; counters U 100, S 300.
		trace.State(0, 0, 0, 1), trace.State(0, 0, 100, 2), trace.Counter(0, 0, 400, 0, 100), trace.Counter(0, 0, 400, 1, 300),
		// Run 1: from 50, U 200 ns, then S until the run's last record at
		// 450; no counters.
		trace.State(1, 0, 50, 1), trace.State(1, 1, 50, 1), trace.State(1, 0, 250, 2), trace.State(1, 1, 250, 2), trace.Event(1, 1, 450, 0, 0),
	}
	h.Events = []trace.EventDef{{ID: 0, Name: "end"}}
	s := storetest.New(t, "two.pst", h, recs)
	ctx := context.Background()
	check := func(o MeansOptions, modes []string, means []float64, elapsed float64) {
		t.Helper()
		m, mu, e, err := TrialMeans(ctx, s, o)
		if err != nil {
			t.Fatal(err)
		}
		for j := range means {
			means[j] /= 1e9
		}
		if !slices.Equal(m, modes) || len(mu) != len(means) || math.Abs(e-elapsed/1e9) > 1e-18 {
			t.Fatalf("%+v: modes %v, means %v, elapsed %g; want %v, %v, %g", o, m, mu, e, modes, means, elapsed/1e9)
		}
		for j := range means {
			if math.Abs(mu[j]-means[j]) > 1e-18 {
				t.Errorf("%+v: means %v, want %v", o, mu, means)
			}
		}
	}
	// Global: run 1's span is 400 ns.
	check(MeansOptions{Global: true}, []string{"U", "S"}, []float64{(100 + 200) / 2., (300 + 200) / 2.}, (400+400)/2.)
	// Counters: run 0 alone.
	check(MeansOptions{}, []string{"U", "S"}, []float64{100, 300}, 400)
	modes := filepath.Join(t.TempDir(), "busy.modes")
	if err := os.WriteFile(modes, []byte("U busy\nS busy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check(MeansOptions{Global: true, Modes: modes}, []string{"busy"}, []float64{(400 + 400) / 2.}, (400+400)/2.)
	// A start mode, with Global only: run 1 begins at 0, in S until 50.
	check(MeansOptions{Global: true, Start: "S"}, []string{"U", "S"}, []float64{(100 + 200) / 2., (300 + 250) / 2.}, (400+450)/2.)
	check(MeansOptions{Start: "nonesuch"}, []string{"U", "S"}, []float64{100, 300}, 400)
	if _, _, _, err := TrialMeans(ctx, s, MeansOptions{Global: true, Start: "nonesuch"}); err == nil || !strings.Contains(err.Error(), `start mode "nonesuch"`) {
		t.Errorf("an unknown start mode: %v", err)
	}
	// Counters declared, none recorded.
	none := storetest.New(t, "none.pst", h, recs[4:])
	if _, _, _, err := TrialMeans(ctx, none, MeansOptions{}); err == nil || err.Error() != "none.pst: no run has occupancy counters" {
		t.Errorf("no counters recorded: %v", err)
	}
}

// TestRunSweepKeepNeedsForce runs a sweep into a --keep directory twice:
// the second time, without Force, it ends before any run, naming the
// first trace already there and leaving every kept trace as it was; with
// Force it replaces them.
func TestRunSweepKeepNeedsForce(t *testing.T) {
	keep := t.TempDir()
	c := SweepConfig{Axes: []Axis{{Name: "n", Values: []float64{1, 2}}}, Command: workload(t, "states", "{n}", "10", "{out}"), Keep: keep}
	if _, err := RunSweep(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	// A mark in each kept trace tells whether it was replaced.
	marks := []string{filepath.Join(keep, "trial-0001.pst", "mark"), filepath.Join(keep, "trial-0002.pst", "mark")}
	for _, m := range marks {
		if err := os.WriteFile(m, []byte("kept\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ran int
	c.Progress = func(SweepProgress) { ran++ }
	_, err := RunSweep(context.Background(), c)
	want := "trial 1 of 2 (n=1): " + filepath.Join(keep, "trial-0001.pst") + " exists: give --force"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a second sweep into the same directory: %v, want %q...", err, want)
	}
	if ran != 0 {
		t.Errorf("%d progress calls before the error, want none (no run)", ran)
	}
	for _, m := range marks {
		if _, err := os.Stat(m); err != nil {
			t.Errorf("a kept trace was replaced without Force: %v", err)
		}
	}
	c.Force = true
	if _, err := RunSweep(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	for _, m := range marks {
		if _, err := os.Stat(m); !os.IsNotExist(err) {
			t.Errorf("with Force, %s is still there (%v): the trace was not replaced", m, err)
		}
	}
}
