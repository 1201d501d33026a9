// Command probe-validate checks parscope's performance probes (Strube 2011,
// issue 9 item 3) on emulated targets whose speed differs per phase:
//
//	go run ./scripts/probe-validate [-out docs/probes-wall.json] [-plots docs]
//
// For every workload it builds the worker four times (normally; without
// optimisations, -gcflags=all=-N -l; without bounds checks,
// -gcflags=all=-B; with GOAMD64=v3), builds a probe on the reference (the
// normal build on this machine), then for every target — each other
// build, and the normal build pinned to CPU 0 beside a memory-bandwidth
// neighbour (./membw) pinned to CPU 1 — measures:
//
//   - the actual run time (the worker's uninstrumented step loop, as
//     ETuninstRef is measured),
//   - the probe's prediction, its error, and the probe run's own time as a
//     fraction of the actual run,
//   - the prediction of the probe reduced to its phases of at least 10%
//     weight, compressed (size before: every snapshot uncompressed),
//   - naive predictor (a): ETuninstRef times the speed ratio of a short
//     benchmark (./bench, built the same way as the target) between target
//     and reference,
//   - naive predictor (b): the first 1% of the run timed on the target and
//     extrapolated by blocks (read off the interval marks of a counted run
//     on the target; stopping the run there would time the same thing),
//   - the noise floor: the mean distance of the full runs from their
//     median.
//
// Wall-clock figures mean something only on a machine that runs nothing
// else: take them on an idle machine.
//
// It prints a Markdown table and writes the raw numbers as JSON, and the
// quality-against-size curves of phasesize (small and large) as PNG.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/probe"
	"github.com/parscope/parscope/show/plot"
)

type workload struct {
	Name, Pkg string
	Args      []string
	Parallel  bool
}

// workloads run 11–15 s each on the reference (10.6–15.1 s on 2026-11-28):
// long enough that the probe's fixed costs (reading the probe, starting
// the worker, loading its snapshots) and its obligatory first round fit
// its 1% budget. (They ran about 15 s with half these sizes on the
// machine of 2026-11-21, which was slower.)
var workloads = []workload{
	{"matmul", "matmul", []string{"-n", "256", "-rows", "16", "-reps", "3600"}, true},
	{"nbody", "nbody", []string{"-steps", "36000"}, true},
	{"sweep", "sweep", []string{"-iters", "7200"}, true},
	{"phasesize-large", "phasesize", []string{"-n", "512", "-iters", "2000"}, false},
	{"phasesize-small", "phasesize", []string{"-n", "96", "-iters", "36000"}, false},
}

type target struct {
	Name string
	// Build is the variant of the worker (and of the benchmark) the
	// target runs: a suffix of the binaries built below.
	Build string
	// MemBW runs a memory-bandwidth neighbour pinned to the other core
	// while the worker is pinned to the first.
	MemBW bool
}

// Targets that each run every phase at its own steady speed (issue 22,
// item 1): other builds of the same worker, and a neighbour that takes
// memory bandwidth, which slows memory-bound phases more than
// compute-bound ones.
var targets = []target{
	{Name: "noopt", Build: "-noopt"},
	{Name: "nobounds", Build: "-nobounds"},
	{Name: "goamd64=v3", Build: "-v3"},
	{Name: "membw", MemBW: true},
}

// variants are the builds of the workers and the benchmark: suffix, the
// extra go build flags and environment.
var variants = []struct {
	Suffix string
	Flags  []string
	Env    []string
}{
	{"", nil, nil},
	{"-noopt", []string{"-gcflags=all=-N -l"}, nil},
	{"-nobounds", []string{"-gcflags=all=-B"}, nil},
	{"-v3", nil, []string{"GOAMD64=v3"}},
}

// row is one workload on one target.
type row struct {
	Workload, Target string
	Actual           float64 // s: the median of the full runs
	ActualMin        float64
	ActualMax        float64
	StdErr           float64 // the probe's own standard error (s)
	Samples          int     // the fewest measurements of a phase
	Drift            float64 // the reference's plain run after the targets, against ETuninstRef
	Floor            float64 // mean |full run − median| / median on the target
	Predicted        float64
	Error            float64 // relative, signed
	IntervalWeights  float64 // prediction with SimPoint's weights
	IntervalError    float64
	ProbeTime        float64 // s
	ProbeFixed       float64 // s: the probe's fixed cost (probe.ProbeCosts.Fixed)
	FirstRound       float64 // s: its first, obligatory round
	Rounds           int     // the rounds it made
	ProbeFraction    float64
	Reduced          float64 // prediction of the reduced probe
	ReducedError     float64
	NaiveBench       float64
	NaiveBenchError  float64
	NaiveFirst       float64
	NaiveFirstError  float64
	Phases, Kept     int
	RawBytes         int64 // every snapshot, uncompressed
	Bytes            int64 // every snapshot, compressed
	ReducedBytes     int64 // reduced probe, compressed
	Failed           int
}

func main() {
	outJSON := flag.String("out", "", "write the rows as JSON here")
	plots := flag.String("plots", "", "write the phasesize curves (PNG) into this directory")
	curvesJSON := flag.String("curves", "", "write the phasesize curves' points as JSON here (what -replot reads)")
	replot := flag.String("replot", "", "draw the curves of this JSON (written by -curves) into the -plots directory, without running anything")
	only := flag.String("only", "", "comma-separated workloads to run (default all)")
	repeat := flag.Int("repeat", 0, "measurements per phase on the targets (0: as many as the probe's 1% budget allows)")
	refRuns := flag.Int("ref-runs", 3, "uninstrumented reference runs when building probes (the mean is kept)")
	actualRuns := flag.Int("actual-runs", 3, "full runs on each target (median): the actual time")
	clock := flag.String("clock", "wall", "what the times measure: wall or cpu")
	flag.Parse()
	if *replot != "" {
		if *plots == "" {
			fmt.Fprintln(os.Stderr, "probe-validate: -replot needs -plots DIR")
			os.Exit(2)
		}
		if err := replotCurves(*replot, *plots); err != nil {
			fmt.Fprintln(os.Stderr, "probe-validate:", err)
			os.Exit(1)
		}
		return
	}
	c, err := probe.ParseClock(*clock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe-validate:", err)
		os.Exit(2)
	}
	if err := run(*outJSON, *plots, *curvesJSON, *only, *repeat, *refRuns, *actualRuns, c); err != nil {
		fmt.Fprintln(os.Stderr, "probe-validate:", err)
		os.Exit(1)
	}
}

func run(outJSON, plots, curvesJSON, only string, repeat, refRuns, actualRuns int, clock probe.Clock) error {
	ctx := context.Background()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	bin, err := os.MkdirTemp("", "probe-validate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	build := func(pkg, out string, flags, env []string) error {
		args := append([]string{"build", "-o", filepath.Join(bin, out)}, flags...)
		c := exec.Command("go", append(args, "./"+pkg)...)
		c.Dir, c.Env = root, append(os.Environ(), env...)
		if b, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
		return nil
	}
	for _, v := range variants {
		for _, p := range []string{"matmul", "nbody", "sweep", "phasesize"} {
			if err := build("examples/"+p, p+v.Suffix, v.Flags, v.Env); err != nil {
				return err
			}
		}
		if err := build("scripts/probe-validate/bench", "bench"+v.Suffix, v.Flags, v.Env); err != nil {
			return err
		}
	}
	if err := build("scripts/probe-validate/membw", "membw", nil, nil); err != nil {
		return err
	}
	be := probe.Local{Clock: clock}
	started := fmt.Sprintf("started %s on %s, GOMAXPROCS %d, %s clock", time.Now().Format(time.RFC3339), host(), runtime.GOMAXPROCS(0), clock)
	fmt.Fprintln(os.Stderr, started)
	var rows []row
	curves := map[string][]probe.CurvePoint{}
	for _, w := range workloads {
		if only != "" && !strings.Contains(","+only+",", ","+w.Name+",") {
			continue
		}
		ref := probe.Command{Path: filepath.Join(bin, w.Pkg), Args: w.Args}
		t0 := time.Now()
		p, err := probe.Build(ctx, ref, probe.BuildOptions{RefRuns: refRuns, Clock: clock})
		if err != nil {
			return fmt.Errorf("%s: %w", w.Name, err)
		}
		m := &p.Manifest
		fmt.Fprintf(os.Stderr, "%s: built in %v: ETuninstRef %.3fs ETRef %.3fs, k %d, %d intervals of %d blocks\n",
			w.Name, time.Since(t0).Round(time.Millisecond), m.ETUninstRef, m.ETRef, m.K, m.Intervals, m.Interval)
		file := filepath.Join(bin, w.Name+".probe")
		if err := p.WriteFile(file); err != nil {
			return err
		}
		// Naive predictor (a)'s reference, measured with the probe's.
		benchRef, err := bench(filepath.Join(bin, "bench"), nil, false)
		if err != nil {
			return err
		}
		reduced := probe.Reduce(p, 0, 0.1, probe.TimeWeights)
		comp, raw := p.Sizes()
		rcomp, _ := reduced.Sizes()
		for _, tg := range targets {
			c := ref
			c.Path = filepath.Join(bin, w.Pkg+tg.Build)
			benchBin := filepath.Join(bin, "bench"+tg.Build)
			var stop func()
			if tg.MemBW {
				if stop, err = startMemBW(filepath.Join(bin, "membw")); err != nil {
					return fmt.Errorf("%s on %s: %w", w.Name, tg.Name, err)
				}
			}
			r, curve, err := measure(ctx, be, p, reduced, file, c, benchBin, benchRef, repeat, actualRuns)
			if stop != nil {
				stop()
			}
			if err != nil {
				return fmt.Errorf("%s on %s: %w", w.Name, tg.Name, err)
			}
			r.Workload, r.Target = w.Name, tg.Name
			r.Phases, r.RawBytes, r.Bytes, r.ReducedBytes = len(m.Phases), raw, comp, rcomp
			for i := range reduced.Manifest.Phases {
				if reduced.Kept(i) {
					r.Kept++
				}
			}
			rows = append(rows, r)
			if strings.HasPrefix(w.Name, "phasesize") && tg.Name == "noopt" {
				curves[w.Name] = curve
			}
			fmt.Fprintf(os.Stderr, "  %-13s actual %.3fs probe %.3fs (%+.1f%%) probe time %.1fms naive bench %+.1f%% first-1%% %+.1f%%\n",
				tg.Name, r.Actual, r.Predicted, 100*r.Error, 1000*r.ProbeTime, 100*r.NaiveBenchError, 100*r.NaiveFirstError)
		}
		// How far the machine itself drifted: the reference worker again.
		if again, err := be.Plain(ctx, ref); err == nil {
			for i := range rows {
				if rows[i].Workload == w.Name {
					rows[i].Drift = rel(again.Elapsed.Seconds(), m.ETUninstRef)
				}
			}
			fmt.Fprintf(os.Stderr, "  reference again: %.3fs (%+.1f%% against ETuninstRef)\n", again.Elapsed.Seconds(), 100*rel(again.Elapsed.Seconds(), m.ETUninstRef))
		}
		fmt.Fprintln(os.Stderr)
		printPhases(w.Name, p)
	}
	printTable(rows)
	if curvesJSON != "" {
		b, _ := json.MarshalIndent(curveFile{Source: "scripts/probe-validate, run " + started, Curves: curves}, "", "  ")
		if err := os.WriteFile(curvesJSON, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	for name, c := range curves {
		printCurve(name, c)
		if plots != "" {
			if err := writeCurve(filepath.Join(plots, "probes-curve-"+name+".png"), name, c); err != nil {
				return err
			}
		}
	}
	if outJSON != "" {
		b, _ := json.MarshalIndent(rows, "", "  ")
		return os.WriteFile(outJSON, append(b, '\n'), 0o644)
	}
	return nil
}

// measure runs one workload on one target.
func measure(ctx context.Context, be probe.Local, p, reduced *probe.Probe, file string, c probe.Command, benchBin string, benchRef float64, repeat, actualRuns int) (row, []probe.CurvePoint, error) {
	var r row
	m := &p.Manifest
	// The actual time is the median of actualRuns full runs; the probe
	// runs after the first of them, so that it meets the target in the
	// same state as the runs around it.
	var actuals []float64
	var pred *probe.Prediction
	for i := range max(actualRuns, 1) {
		plain, err := be.Plain(ctx, c)
		if err != nil {
			return r, nil, err
		}
		actuals = append(actuals, plain.Elapsed.Seconds())
		if i == 0 {
			// As `parscope probe run` does: the probe's time counts
			// from reading its file.
			t0 := time.Now()
			q, err := probe.ReadFile(file)
			if err != nil {
				return r, nil, err
			}
			if pred, err = probe.Run(ctx, q, c, probe.RunOptions{Repeat: repeat, OtherBinary: true, Started: t0}); err != nil {
				return r, nil, err
			}
		}
	}
	slices.Sort(actuals)
	r.Actual = actuals[(len(actuals)-1)/2]
	r.ActualMin, r.ActualMax = actuals[0], actuals[len(actuals)-1]
	// The machine's own noise floor: how far one full run lies from the
	// median of the runs (a perfect predictor of one run could do no
	// better against the median).
	for _, a := range actuals {
		r.Floor += math.Abs(rel(a, r.Actual)) / float64(len(actuals))
	}
	r.StdErr = pred.StdErr
	for _, ph := range pred.Phases {
		if ph.Status == "ok" && (r.Samples == 0 || ph.Samples < r.Samples) {
			r.Samples = ph.Samples
		}
	}
	r.Predicted, r.ProbeTime, r.Failed = pred.Predicted, pred.ProbeTime, pred.Failed
	r.Error = rel(r.Predicted, r.Actual)
	r.ProbeFraction = r.ProbeTime / r.Actual
	if c := pred.Costs; c != nil {
		r.ProbeFixed, r.FirstRound, r.Rounds = c.Fixed(), c.FirstRound, c.RoundsMade
	}
	probed := map[int]float64{}
	for i, ph := range pred.Phases {
		if ph.Status == "ok" {
			probed[i] = ph.TProbed
		}
	}
	if iw, err := probe.Predict(m, probed, probe.IntervalWeights); err == nil {
		r.IntervalWeights, r.IntervalError = iw.Predicted, rel(iw.Predicted, r.Actual)
	}
	sub := map[int]float64{}
	for i, t := range probed {
		if reduced.Kept(i) {
			sub[i] = t
		}
	}
	if rp, err := probe.Predict(m, sub, probe.TimeWeights); err == nil {
		r.Reduced, r.ReducedError = rp.Predicted, rel(rp.Predicted, r.Actual)
	}
	curve, err := probe.Curve(p, probed, probe.TimeWeights, r.Actual)
	if err != nil {
		return r, nil, err
	}
	// Naive (a): one global speed ratio from a short benchmark.
	bt, err := bench(benchBin, c.Env, false)
	if err != nil {
		return r, nil, err
	}
	r.NaiveBench = m.ETUninstRef * bt / benchRef
	r.NaiveBenchError = rel(r.NaiveBench, r.Actual)
	// Naive (b): the first 1% of the run, extrapolated.
	capt, err := be.CapturePrefix(ctx, c, m.Interval, max(1, m.TotalBlocks/100))
	if err != nil {
		return r, nil, err
	}
	r.NaiveFirst = capt.Elapsed.Seconds() * float64(m.TotalBlocks) / float64(capt.Blocks) / probe.Noise(m.ETRef, m.ETUninstRef)
	r.NaiveFirstError = rel(r.NaiveFirst, r.Actual)
	return r, curve, nil
}

func rel(pred, actual float64) float64 { return (pred - actual) / actual }

// bench runs the benchmark and returns its time.
func bench(path string, env []string, _ bool) (float64, error) {
	c := exec.Command(path)
	c.Env = append(os.Environ(), env...)
	out, err := c.Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return 0, fmt.Errorf("%s printed nothing", path)
	}
	return strconv.ParseFloat(f[0], 64)
}

// startMemBW pins this process (all its threads, and so the workers it
// starts) to CPU 0 and starts the memory-bandwidth neighbour pinned to
// CPU 1; the function it returns stops the neighbour and unpins.
func startMemBW(path string) (func(), error) {
	if runtime.NumCPU() < 2 {
		return nil, fmt.Errorf("the membw target needs two CPUs, this machine has %d", runtime.NumCPU())
	}
	pid := strconv.Itoa(os.Getpid())
	if b, err := exec.Command("taskset", "-a", "-p", "-c", "0", pid).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("taskset: pinning to CPU 0: %v: %s", err, b)
	}
	unpin := func() {
		exec.Command("taskset", "-a", "-p", "-c", fmt.Sprintf("0-%d", runtime.NumCPU()-1), pid).Run()
	}
	n := exec.Command("taskset", "-c", "1", path)
	if err := n.Start(); err != nil {
		unpin()
		return nil, err
	}
	return func() {
		n.Process.Kill()
		n.Wait()
		unpin()
	}, nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

func host() string {
	h, _ := os.Hostname()
	return h
}

func printPhases(name string, p *probe.Probe) {
	fmt.Printf("<!-- %s phases -->\n", name)
	fmt.Printf("%s: k = %d; phases (weight / time share / snapshot kB): ", name, p.Manifest.K)
	for _, ph := range p.Manifest.Phases {
		kb := "dropped"
		if ph.Snapshot != nil {
			kb = fmt.Sprintf("%.0f", float64(ph.Snapshot.Size)/1024)
		}
		fmt.Printf("%d: %.3f/%.3f/%s; ", ph.ID, ph.Weight, ph.TimeShare, kb)
	}
	fmt.Println()
}

func pct(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }

func printTable(rows []row) {
	fmt.Println()
	fmt.Println("| workload | target | actual (min–max) | probe ± s.e. | samples | error | error (SimPoint weights) | probe time (fixed + first round; rounds) | probe/actual | reduced: phases, error | naive bench | naive first 1% | size raw → compressed → reduced | reference drift | noise floor |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var sumAbs, sumRed, sumA, sumB, sumFrac, maxFrac, sumFloor float64
	for _, r := range rows {
		fmt.Printf("| %s | %s | %.3f s (%.3f–%.3f) | %.3f ± %.3f s | %d | %s | %s | %.1f ms (%.1f + %.1f; %d) | %.2f%% | %d/%d, %s | %s | %s | %s → %s → %s | %s | %.1f%% |\n",
			r.Workload, r.Target, r.Actual, r.ActualMin, r.ActualMax, r.Predicted, r.StdErr, r.Samples, pct(r.Error), pct(r.IntervalError), 1000*r.ProbeTime, 1000*r.ProbeFixed, 1000*r.FirstRound, r.Rounds, 100*r.ProbeFraction,
			r.Kept, r.Phases, pct(r.ReducedError), pct(r.NaiveBenchError), pct(r.NaiveFirstError), kb(r.RawBytes), kb(r.Bytes), kb(r.ReducedBytes), pct(r.Drift), 100*r.Floor)
		sumAbs += math.Abs(r.Error)
		sumRed += math.Abs(r.ReducedError)
		sumA += math.Abs(r.NaiveBenchError)
		sumB += math.Abs(r.NaiveFirstError)
		sumFrac += r.ProbeFraction
		sumFloor += r.Floor
		maxFrac = max(maxFrac, r.ProbeFraction)
	}
	n := float64(cmp.Or(len(rows), 1))
	fmt.Printf("\nmean |error|: probe %.2f%%, reduced probe %.2f%%, naive bench %.2f%%, naive first 1%% %.2f%%; machine noise floor %.2f%%; probe time / actual: mean %.2f%%, max %.2f%%\n",
		100*sumAbs/n, 100*sumRed/n, 100*sumA/n, 100*sumB/n, 100*sumFloor/n, 100*sumFrac/n, 100*maxFrac)
}

func kb(b int64) string { return fmt.Sprintf("%.0f kB", float64(b)/1000) }

func printCurve(name string, c []probe.CurvePoint) {
	fmt.Printf("\n%s, noopt target: quality against size\n\n| K | weight | size | predicted | error |\n|---|---|---|---|---|\n", name)
	for _, pt := range c {
		fmt.Printf("| %d | %.3f | %s | %.3f s | %.2f%% |\n", pt.K, pt.Weight, kb(pt.Bytes), pt.Predicted, 100*pt.Error)
	}
}

// curveFile holds the quality-against-size curves of a run, by workload,
// with where they come from.
type curveFile struct {
	Source string                        `json:"source"`
	Curves map[string][]probe.CurvePoint `json:"curves"`
}

// replotCurves draws the curves of the JSON file path (a curveFile) into
// the directory dir, as a run with -plots does.
func replotCurves(path, dir string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var f curveFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Curves) == 0 {
		return fmt.Errorf("%s: no curves", path)
	}
	for name, c := range f.Curves {
		if len(c) == 0 {
			return fmt.Errorf("%s: curve %s has no points", path, name)
		}
		if err := writeCurve(filepath.Join(dir, "probes-curve-"+name+".png"), name, c); err != nil {
			return err
		}
	}
	return nil
}

// writeCurve draws a curve (plot.ProbeCurve) to path.
func writeCurve(path, name string, pts []probe.CurvePoint) error {
	fig, err := plot.ProbeCurve(path, name, pts)
	if err != nil {
		return err
	}
	return fig.WriteFile(path)
}
