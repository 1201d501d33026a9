package occupancy

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
)

// Running a sweep (Lyon 1990, "Mean Node Occupancies"): a workload run
// once per point of a grid of parameters, each run's trace reduced to the
// mean node occupancy of each mode by the engine's occupancy analysis.

// SweepConfig is a sweep to run (RunSweep).
type SweepConfig struct {
	// Axes are the parameters and their values: the sweep runs every point
	// of Grid(Axes), the last axis varying fastest.
	Axes []Axis
	// Command is the workload, a program and its arguments: in each
	// argument {NAME} stands for the value of parameter NAME and {out} for
	// the path of the trace the program must write.
	Command []string
	// Means says how each trace is reduced (TrialMeans).
	Means MeansOptions
	// Repeat runs each point this many times and keeps the run of median
	// elapsed time (0 runs it once): a shared or loaded machine delays
	// some runs by far more than others.
	Repeat int
	// Timeout kills a run that takes longer (0: no limit).
	Timeout time.Duration
	// Keep is a directory to keep the traces in, trial-NNNN.pst for the
	// NNNNth point (from 1, in grid order; the point's last run). Empty
	// writes them to a temporary directory, each removed once reduced.
	Keep string
	// Force lets the sweep replace traces already in Keep; without it a
	// trial's path that exists ends the sweep before any run. A path that
	// holds something other than a trace is never replaced.
	Force bool
	// Progress, when not nil, is called before and after each point's
	// runs, in the goroutine of RunSweep.
	Progress func(SweepProgress)
}

// MeansOptions say how TrialMeans reduces a trace to its mean node
// occupancies.
type MeansOptions struct {
	// Modes is a file mapping states to modes (Params.Modes); empty makes
	// every state a mode.
	Modes string
	// Global takes the means from the state records (the occupancy table,
	// Lyon's global collection) instead of the instrument library's
	// occupancy counters (his local collection).
	Global bool
	// Start is the mode processes are in before their first state record
	// (Params.Start), with Global; the counters do not use it.
	Start string
}

// SweepProgress tells the caller of RunSweep how far it got: it is given
// before a point's runs (Done false) and after them.
type SweepProgress struct {
	// Trial is the point's number, from 1 in grid order, and Trials the
	// number of points.
	Trial, Trials int
	// Point names the point's parameter values ("n=4 g=20").
	Point string
	// Done is true after the point's runs: Kept is the run kept (of median
	// elapsed time) and Took the time the point's runs took.
	Done bool
	Kept Trial
	Took time.Duration
}

// Check reports what makes c a sweep RunSweep cannot run, or nil: no
// parameter, a parameter without values, a name that ParseAxis refuses,
// given twice or "out" (the trace's placeholder), no command, a command
// without {out} (its trace would not be found), or a negative Repeat.
func (c *SweepConfig) Check() error {
	if len(c.Axes) == 0 {
		return errors.New("a sweep needs at least one parameter")
	}
	for i, a := range c.Axes {
		switch {
		case a.Name == "" || strings.ContainsAny(a.Name, "*/(), "):
			return fmt.Errorf("parameter name %q: expected a name without '*', '/', '(', ')', ',' or space", a.Name)
		case a.Name == "out":
			return errors.New("parameter out: {out} is the trace path")
		case len(a.Values) == 0:
			return fmt.Errorf("parameter %s has no values", a.Name)
		case slices.ContainsFunc(c.Axes[:i], func(b Axis) bool { return b.Name == a.Name }):
			return fmt.Errorf("parameter %s given twice", a.Name)
		}
	}
	if len(c.Command) == 0 || c.Command[0] == "" {
		return errors.New("a sweep needs a command to run")
	}
	if !slices.ContainsFunc(c.Command, func(s string) bool { return strings.Contains(s, "{out}") }) {
		return errors.New("the command must write its trace to {out} (e.g. -o {out})")
	}
	if c.Repeat < 0 {
		return fmt.Errorf("repeat %d: expected 0 or more", c.Repeat)
	}
	return nil
}

// RunSweep runs the sweep c: for each point of the grid, in grid order,
// it runs the command with the point's values Repeat times, reduces each
// run's trace with TrialMeans and keeps the run of median elapsed time,
// whose occupancies still sum to its elapsed time. The sweep's modes are
// its traces'; a trace of other modes is an error. The first run that
// fails (a non-zero exit, a timeout, no readable trace) ends the sweep
// with an error naming the point.
func RunSweep(ctx context.Context, c SweepConfig) (*Sweep, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	dir := c.Keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "parscope-sweep-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	progress := func(p SweepProgress) {
		if c.Progress != nil {
			c.Progress(p)
		}
	}
	sw := &Sweep{HasElapsed: true}
	for _, a := range c.Axes {
		sw.Params = append(sw.Params, a.Name)
	}
	grid := Grid(c.Axes)
	trialPath := func(i int) string { return filepath.Join(dir, fmt.Sprintf("trial-%04d.pst", i+1)) }
	failAt := func(i int, err error) error {
		return fmt.Errorf("trial %d of %d (%s): %w", i+1, len(grid), formatValues(sw.Params, grid[i], " "), err)
	}
	if c.Keep != "" {
		// Nothing already in Keep is replaced unless Force says so, and
		// this is known before the first run.
		for i := range grid {
			path := trialPath(i)
			if _, err := os.Lstat(path); err != nil {
				continue
			}
			if err := store.Replaceable(path); err != nil {
				return nil, failAt(i, err)
			}
			if !c.Force {
				return nil, failAt(i, fmt.Errorf("%s exists: give --force to replace the traces in %s, or keep them elsewhere", path, c.Keep))
			}
		}
	}
	for i, v := range grid {
		point := formatValues(sw.Params, v, " ")
		fail := func(err error) error { return failAt(i, err) }
		progress(SweepProgress{Trial: i + 1, Trials: len(grid), Point: point})
		path := trialPath(i)
		argv := substitute(c.Command, sw.Params, v, path)
		began := time.Now()
		var reps []Trial
		var modes []string
		for range max(c.Repeat, 1) {
			// A fresh {out} for every run: programs may refuse to replace
			// a trace. Only a trace is removed (Keep may name a directory
			// that holds other things): this point's run before, or one
			// Force lets the sweep replace.
			if _, err := os.Lstat(path); err == nil {
				if err := store.Replaceable(path); err != nil {
					return nil, fail(err)
				}
				if err := os.RemoveAll(path); err != nil {
					return nil, fail(err)
				}
			}
			if err := runTrial(ctx, argv, c.Timeout); err != nil {
				return nil, fail(err)
			}
			m, means, elapsed, err := traceMeans(ctx, path, c.Means)
			if err != nil {
				return nil, fail(err)
			}
			modes = m
			reps = append(reps, Trial{Values: v, Means: means, Elapsed: elapsed})
		}
		// The replicate of median elapsed time: its occupancies still sum
		// to its elapsed time.
		slices.SortStableFunc(reps, func(a, b Trial) int { return cmp.Compare(a.Elapsed, b.Elapsed) })
		trial := reps[(len(reps)-1)/2]
		if sw.Modes == nil {
			sw.Modes = modes
		} else if !slices.Equal(sw.Modes, modes) {
			return nil, fmt.Errorf("trial %d (%s): modes %s, the trials before have %s", i+1, point, strings.Join(modes, ","), strings.Join(sw.Modes, ","))
		}
		sw.Trials = append(sw.Trials, trial)
		if c.Keep == "" {
			os.RemoveAll(path) // in our own temporary directory
		}
		progress(SweepProgress{Trial: i + 1, Trials: len(grid), Point: point, Done: true, Kept: trial, Took: time.Since(began)})
	}
	return sw, nil
}

// substitute replaces {NAME} by the value of parameter NAME (names[k] has
// the value v[k]) and {out} by path in every argument of args.
func substitute(args, names []string, v []float64, path string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k, name := range names {
			a = strings.ReplaceAll(a, "{"+name+"}", strconv.FormatFloat(v[k], 'g', -1, 64))
		}
		out[i] = strings.ReplaceAll(a, "{out}", path)
	}
	return out
}

// runTrial runs one workload, killing it after timeout (0: no limit), and
// reports the end of its standard error on failure.
func runTrial(ctx context.Context, argv []string, timeout time.Duration) error {
	run := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		run, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	c := exec.CommandContext(run, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("%s: %w", argv[0], ctx.Err())
		case run.Err() != nil:
			return fmt.Errorf("%s: killed after %v", argv[0], timeout)
		case msg != "":
			return fmt.Errorf("%s: %w: %s", argv[0], err, msg)
		}
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
}

// traceMeans reduces the trace a run wrote at path (TrialMeans).
func traceMeans(ctx context.Context, path string, o MeansOptions) ([]string, []float64, float64, error) {
	s, err := store.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("the command wrote no readable trace at {out}: %w", err)
	}
	defer s.Close()
	return TrialMeans(ctx, s, o)
}

// TrialMeans reduces a trial's trace to a row of its sweep: the mode
// names, the mean node occupancy of each mode (s) and the elapsed time
// (s), each averaged over the trace's runs. It runs the engine's
// occupancy analysis on the recorded state records (never states derived
// from regions) and takes, with o.Global, the means from the occupancy
// table and the elapsed time from the run's span (from its first record,
// or from 0 with a start mode, to its end); else the instrument library's
// occupancy counters (Lyon's local collection), averaged over the runs
// that have them, and the span they cover: such a trace need not hold
// state records.
func TrialMeans(ctx context.Context, src engine.Source, o MeansOptions) (modes []string, means []float64, elapsed float64, err error) {
	p := &Params{Modes: o.Modes, Counters: !o.Global, Top: 1, Windows: 0}
	if o.Global {
		p.Start = o.Start
	}
	res, err := engine.Run(ctx, src, []engine.Request{{Analysis: Name, Options: p, States: engine.StatesRecorded}})
	if err != nil {
		return nil, nil, 0, err
	}
	env := res.Envelopes[0]
	rep := env.Result.(*Report)
	defer rep.Close()
	var runMeans [][]float64
	var spans []float64
	for _, r := range rep.Runs {
		modes = r.Modes
		m := make([]float64, len(r.Mean))
		if o.Global {
			for j := range r.Mean {
				m[j] = r.Mean[j].GlobalNS
			}
			runMeans = append(runMeans, m)
			spans = append(spans, float64(r.EndNS-r.BeginNS))
			continue
		}
		if len(r.Mean) == 0 || r.Mean[0].CountersNS == nil {
			continue // a run without counters
		}
		for j := range r.Mean {
			m[j] = *r.Mean[j].CountersNS
		}
		runMeans = append(runMeans, m)
		spans = append(spans, r.CountersSpanNS)
	}
	if len(runMeans) == 0 {
		if o.Global {
			return nil, nil, 0, fmt.Errorf("%s: no runs", env.Trace)
		}
		return nil, nil, 0, fmt.Errorf("%s: no run has occupancy counters", env.Trace)
	}
	means = make([]float64, len(modes))
	for r := range runMeans {
		for j := range means {
			means[j] += runMeans[r][j] / 1e9 / float64(len(runMeans))
		}
		elapsed += spans[r] / 1e9 / float64(len(runMeans))
	}
	return modes, means, elapsed, nil
}
