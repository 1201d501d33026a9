// Command probe-model validates the probe on the model machines (issue
// 22, item 2): each workload runs under valgrind's callgrind with a
// simulated cache hierarchy, and a machine's time is its documented cost
// model (probe.Machine). The probe is built on the reference machine and
// run on every other; the actual time is the full run's modelled time on
// the target. Run-to-run noise is (almost) zero here, so the error is the
// method's own.
//
//	go run ./scripts/probe-model [-only matmul,sweep] [-out docs/probes-model.json] > docs/probes-model.md
//
// The markdown table goes to stdout; progress (with wall times) to stderr.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parscope/parscope/probe"
)

// workload is one worker with inputs small enough for valgrind (each full
// run executes some 10⁸–10⁹ instructions).
type workload struct {
	Name, Pkg string
	Args      []string
}

var workloads = []workload{
	{"matmul", "matmul", []string{"-n", "128", "-rows", "8", "-reps", "20"}},
	{"nbody", "nbody", []string{"-n", "128", "-steps", "300", "-bins", "65536"}},
	{"sweep", "sweep", []string{"-n", "96", "-iters", "100"}},
	{"phasesize", "phasesize", []string{"-n", "192", "-iters", "6", "-sweeps", "6", "-table", "65536"}},
	{"phasesize-bigger", "phasesize", []string{"-n", "128", "-iters", "30", "-sweeps", "10", "-table", "16384"}},
}

// Row is one workload on one target machine.
type Row struct {
	Workload string `json:"workload"`
	Machine  string `json:"machine"`
	// Actual is the full run's modelled time (s), Predicted the probe's
	// prediction from its representative intervals (s).
	Actual    float64 `json:"actual_s"`
	Predicted float64 `json:"predicted_s"`
	Error     float64 `json:"error"`
	// Reduced is the prediction of the probe reduced to its phases of at
	// least MinWeight time weight, from the same measurements.
	Reduced      float64 `json:"reduced_s"`
	ReducedError float64 `json:"reduced_error"`
	// Touched is the prediction of the probe whose snapshots were
	// trimmed to their touched sets (probe.TrimTouched), from its own
	// replays on the target; ReducedTouched that of the reduced probe
	// trimmed the same way, from the same replays.
	Touched             float64 `json:"touched_s"`
	TouchedError        float64 `json:"touched_error"`
	ReducedTouched      float64 `json:"reduced_touched_s"`
	ReducedTouchedError float64 `json:"reduced_touched_error"`
	// Stages is where the probe worker's time went, in the target's
	// modelled time (the wall-clock parts of probe.ProbeCosts are left
	// out: they are not deterministic).
	Stages *Stages `json:"stages"`
}

// Stages are the probe worker's stages on a model machine.
type Stages struct {
	// Instructions by stage: Start, Init, Load, FirstRound, Rounds.
	Instructions map[string]int64 `json:"instructions"`
	// The stages' modelled times (s).
	Start      float64 `json:"start_s"`
	Init       float64 `json:"init_s"`
	Load       float64 `json:"load_s"`
	FirstRound float64 `json:"first_round_s"`
}

// PhaseRatio is one phase's speed on every machine.
type PhaseRatio struct {
	Workload string  `json:"workload"`
	Phase    int     `json:"phase"`
	Weight   float64 `json:"time_weight"`
	TRef     float64 `json:"t_phase_ref_s"`
	// Ratio maps a target machine to TProbed/TPhaseRef.
	Ratio map[string]float64 `json:"ratio"`
}

// Size is a workload's probe size before and after reduction.
type Size struct {
	Workload     string `json:"workload"`
	Phases, Kept int
	RawBytes     int64 `json:"raw_bytes"`
	Bytes        int64 `json:"bytes"`
	ReducedBytes int64 `json:"reduced_bytes"`
	// TouchedBytes and ReducedTouchedBytes are the compressed sizes after
	// trimming every snapshot to its touched set, of all phases and of the
	// reduced probe's; Zeroed the raw bytes zeroed.
	TouchedBytes        int64 `json:"touched_bytes"`
	ReducedTouchedBytes int64 `json:"reduced_touched_bytes"`
	Zeroed              int64 `json:"zeroed_bytes"`
	Intervals           int   `json:"intervals"`
	Interval            int64 `json:"interval_blocks"`
}

// Result is the whole validation.
type Result struct {
	Machines  []probe.Machine `json:"machines"`
	Workloads []workload      `json:"workloads"`
	Rows      []Row           `json:"rows"`
	Phases    []PhaseRatio    `json:"phases"`
	Sizes     []Size          `json:"sizes"`
	MinWeight float64         `json:"min_weight"`
	// Checks are filled with -phase-check.
	Checks []PhaseCheck `json:"phase_checks,omitempty"`
}

// PhaseCheck compares, on one machine, a phase's representative interval
// with the phase's mean interval, both from a probe built on that machine
// (its counted run times every interval), and the representative's replay
// with its time in that counted run. The probe's prediction assumes both
// agree: the first is the representative's choice (SimPoint's, from the
// basic block vectors alone), the second the replay's fidelity.
type PhaseCheck struct {
	Workload string `json:"workload"`
	Machine  string `json:"machine"`
	Phase    int    `json:"phase"`
	// Intervals is the phase's size; Representative the interval measured.
	Intervals      int `json:"intervals"`
	Representative int `json:"representative"`
	// Mean is the phase's mean interval in the counted run (s); Counted the
	// representative's time there; Replayed its time restored and replayed.
	Mean     float64 `json:"mean_s"`
	Counted  float64 `json:"counted_s"`
	Replayed float64 `json:"replayed_s"`
}

// checks returns p's phase checks on machine m.
func checks(name, m string, p *probe.Probe) []PhaseCheck {
	var out []PhaseCheck
	for _, ph := range p.Manifest.Phases {
		out = append(out, PhaseCheck{Workload: name, Machine: m, Phase: ph.ID, Intervals: ph.Size, Representative: ph.Representative,
			Mean: ph.TimeShare * p.Manifest.ETRef / float64(ph.Size), Counted: ph.TIntervalRef, Replayed: ph.TPhaseRef})
	}
	return out
}

func main() {
	out := flag.String("out", "", "also write the result as JSON here")
	only := flag.String("only", "", "comma-separated workloads (default all)")
	intervals := flag.Int("intervals", 1000, "intervals the probe aims at")
	minWeight := flag.Float64("min-weight", 0.10, "time weight a phase needs to stay in the reduced probe")
	warm := flag.Float64("warmup", 8, "warm-up before a timed interval, in intervals (long enough to refill a 512 KiB cache after a restore; docs/probes.md)")
	check := flag.Bool("phase-check", false, "also build the probe on every target and compare each phase's representative with the phase's mean and its replay with the counted run (a build per target more)")
	flag.Parse()
	if err := run(*out, *only, *intervals, *minWeight, *warm, *check); err != nil {
		fmt.Fprintln(os.Stderr, "probe-model:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func run(outJSON, only string, intervals int, minWeight, warm float64, check bool) error {
	ctx := context.Background()
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return err
	}
	dir := filepath.Dir(strings.TrimSpace(string(root)))
	bin, err := os.MkdirTemp("", "probe-model-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	ref, targets := probe.ModelMachines[0], probe.ModelMachines[1:]
	res := Result{Machines: probe.ModelMachines, MinWeight: minWeight}
	for _, w := range workloads {
		if only != "" && !slices.Contains(strings.Split(only, ","), w.Name) {
			continue
		}
		res.Workloads = append(res.Workloads, w)
		exe := filepath.Join(bin, w.Pkg)
		cmd := exec.Command("go", "build", "-o", exe, "./examples/"+w.Pkg)
		// Go 1.26 places the heap at a random address in each process,
		// which changes which simulated cache sets the data falls in and
		// so the modelled time from run to run: the workers are built
		// with the heap where it was before.
		cmd.Dir, cmd.Stderr = dir, os.Stderr
		cmd.Env = append(os.Environ(), "GOEXPERIMENT=norandomizedheapbase64")
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: %w", w.Pkg, err)
		}
		c := probe.Command{Path: exe, Args: w.Args, Output: os.Stderr}
		// The interval Build would choose, to size the warm-up in
		// intervals (the vectors are counted natively: cheap).
		vec, err := probe.Local{}.Vectors(ctx, probe.Command{Path: exe, Args: w.Args}, 64)
		if err != nil {
			return fmt.Errorf("%s: counting blocks: %w", w.Name, err)
		}
		interval := probe.AutoInterval(vec.Blocks, vec.MaxStep, intervals, 64)
		t0 := time.Now()
		build := func(m probe.Machine) (*probe.Probe, error) {
			return probe.Build(ctx, c, probe.BuildOptions{Backend: probe.Valgrind{Machine: m}, Clock: probe.ModelClock,
				Interval: interval, WarmUp: max(1, int64(warm*float64(interval))), RefRuns: 1, Repeat: 1})
		}
		p, err := build(ref)
		if err != nil {
			return fmt.Errorf("%s: building the probe on %s: %w", w.Name, ref.Name, err)
		}
		var wchecks []PhaseCheck // this workload's, with -phase-check
		if check {
			wchecks = checks(w.Name, ref.Name, p)
		}
		logf("%s: probe built on %s in %v: %d phases, interval %d blocks", w.Name, ref.Name, time.Since(t0).Round(time.Second), len(p.Manifest.Phases), p.Manifest.Interval)
		for _, ph := range p.Manifest.Phases {
			logf("  phase %d: time weight %.3f, interval in the counted run %.2f µs, replayed %.2f µs", ph.ID, ph.TimeShare, 1e6*ph.TIntervalRef, 1e6*ph.TPhaseRef)
		}
		logf("  ETRef %.6f s, ETuninstRef %.6f s", p.Manifest.ETRef, p.Manifest.ETUninstRef)
		red := probe.Reduce(p, 0, minWeight, probe.TimeWeights)
		// The touched set is found natively: what a replay reads does
		// not depend on the machine.
		tp, trims, err := probe.TrimTouched(ctx, probe.Local{}, probe.Command{Path: exe, Args: w.Args}, p, probe.TouchedOptions{})
		if err != nil {
			return fmt.Errorf("%s: touched set: %w", w.Name, err)
		}
		sz := Size{Workload: w.Name, Phases: len(p.Manifest.Phases), Intervals: p.Manifest.Intervals, Interval: p.Manifest.Interval}
		for i, ph := range p.Manifest.Phases {
			if ph.Snapshot == nil {
				continue
			}
			sz.RawBytes += ph.Snapshot.RawSize
			sz.Bytes += ph.Snapshot.Size
			if red.Kept(i) {
				sz.Kept++
				sz.ReducedBytes += ph.Snapshot.Size
				sz.ReducedTouchedBytes += tp.Manifest.Phases[i].Snapshot.Size
			}
			sz.TouchedBytes += tp.Manifest.Phases[i].Snapshot.Size
		}
		for _, t := range trims {
			if t.Err != "" {
				logf("%s: touched set of phase %d: %s", w.Name, p.Manifest.Phases[t.Phase].ID, t.Err)
			}
			sz.Zeroed += t.Zeroed
		}
		logf("%s: touched set: %d of %d bytes zeroed, compressed %d → %d bytes", w.Name, sz.Zeroed, sz.RawBytes, sz.Bytes, sz.TouchedBytes)
		res.Sizes = append(res.Sizes, sz)
		ratios := map[int]*PhaseRatio{}
		for _, m := range targets {
			t0 := time.Now()
			actual, err := probe.Valgrind{Machine: m}.Plain(ctx, c)
			if err != nil {
				return fmt.Errorf("%s on %s: full run: %w", w.Name, m.Name, err)
			}
			pred, err := probe.Run(ctx, p, c, probe.RunOptions{Backend: probe.Valgrind{Machine: m}, Repeat: 1})
			if err != nil {
				return fmt.Errorf("%s on %s: probe: %w", w.Name, m.Name, err)
			}
			probed := map[int]float64{}
			for i, ph := range pred.Phases {
				if ph.Status != "ok" {
					continue
				}
				probed[i] = ph.TProbed
				r := ratios[i]
				if r == nil {
					r = &PhaseRatio{Workload: w.Name, Phase: ph.ID, Weight: ph.Weight, TRef: ph.TPhaseRef, Ratio: map[string]float64{}}
					ratios[i] = r
				}
				r.Ratio[m.Name] = ph.TProbed / ph.TPhaseRef
			}
			rp, err := probe.Predict(&red.Manifest, keep(probed, red), probe.TimeWeights)
			if err != nil {
				return fmt.Errorf("%s on %s: reduced prediction: %w", w.Name, m.Name, err)
			}
			tpred, err := probe.Run(ctx, tp, c, probe.RunOptions{Backend: probe.Valgrind{Machine: m}, Repeat: 1})
			if err != nil {
				return fmt.Errorf("%s on %s: trimmed probe: %w", w.Name, m.Name, err)
			}
			tprobed := map[int]float64{}
			for i, ph := range tpred.Phases {
				if ph.Status == "ok" {
					tprobed[i] = ph.TProbed
				}
			}
			trp, err := probe.Predict(&red.Manifest, keep(tprobed, red), probe.TimeWeights)
			if err != nil {
				return fmt.Errorf("%s on %s: reduced trimmed prediction: %w", w.Name, m.Name, err)
			}
			if check {
				q, err := build(m)
				if err != nil {
					return fmt.Errorf("%s: building the probe on %s: %w", w.Name, m.Name, err)
				}
				same := len(q.Manifest.Phases) == len(p.Manifest.Phases)
				for i, ph := range q.Manifest.Phases {
					same = same && ph.Size == p.Manifest.Phases[i].Size && ph.Representative == p.Manifest.Phases[i].Representative
				}
				if !same {
					return fmt.Errorf("%s: the probe built on %s has other phases than the one built on %s", w.Name, m.Name, ref.Name)
				}
				wchecks = append(wchecks, checks(w.Name, m.Name, q)...)
			}
			a := actual.Elapsed.Seconds()
			row := Row{Workload: w.Name, Machine: m.Name, Actual: a, Predicted: pred.Predicted, Error: pred.Predicted/a - 1,
				Reduced: rp.Predicted, ReducedError: rp.Predicted/a - 1,
				Touched: tpred.Predicted, TouchedError: tpred.Predicted/a - 1, ReducedTouched: trp.Predicted, ReducedTouchedError: trp.Predicted/a - 1}
			if c := pred.Costs; c != nil {
				row.Stages = &Stages{Instructions: c.Instructions, Start: c.Start, Init: c.Init, Load: c.Load, FirstRound: c.FirstRound}
			}
			res.Rows = append(res.Rows, row)
			logf("%s on %s: actual %.6f s, predicted %.6f s (%+.2f%%), reduced %+.2f%%, touched set %+.2f%%; %v", w.Name, m.Name, a, row.Predicted, 100*row.Error, 100*row.ReducedError, 100*row.TouchedError, time.Since(t0).Round(time.Second))
		}
		// By phase, the machines in the order measured.
		slices.SortStableFunc(wchecks, func(a, b PhaseCheck) int { return cmp.Compare(a.Phase, b.Phase) })
		res.Checks = append(res.Checks, wchecks...)
		idx := make([]int, 0, len(ratios))
		for i := range ratios {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		for _, i := range idx {
			res.Phases = append(res.Phases, *ratios[i])
		}
	}
	if outJSON != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(outJSON, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return markdown(os.Stdout, &res, targets)
}

// keep returns the measurements of the phases the reduced probe keeps.
func keep(probed map[int]float64, red *probe.Probe) map[int]float64 {
	out := map[int]float64{}
	for i, t := range probed {
		if red.Kept(i) {
			out[i] = t
		}
	}
	return out
}

// markdown writes the tables. Times are printed to the microsecond and
// errors to a hundredth of a point: the model's residual run-to-run noise
// (docs/probes.md) is below both.
func markdown(w io.Writer, r *Result, targets []probe.Machine) error {
	fmt.Fprintln(w, "Model machines (cycles = CPI·Ir + L1 miss·(I1mr+D1mr+D1mw) + LL miss·(ILmr+DLmr+DLmw); time = cycles / GHz):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| machine | GHz | CPI | L1 miss (cycles) | LL miss (cycles) | I1 | D1 | LL | about |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, m := range r.Machines {
		fmt.Fprintf(w, "| %s | %g | %g | %g | %g | %s | %s | %s | %s |\n", m.Name, m.GHz, m.CPI, m.L1Miss, m.LLMiss, cache(m.I1), cache(m.D1), cache(m.LL), m.About)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Workloads: "+workloadList(r.Workloads))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| workload | target | actual | probe | error | reduced (≥ %g%% time weight) | reduced error | touched set: probe | error | reduced + touched set: error |\n", 100*r.MinWeight)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var sum, sumRed, sumT, sumRT float64
	for _, row := range r.Rows {
		fmt.Fprintf(w, "| %s | %s | %.3f ms | %.3f ms | %+.2f%% | %.3f ms | %+.2f%% | %.3f ms | %+.2f%% | %+.2f%% |\n", row.Workload, row.Machine,
			1e3*row.Actual, 1e3*row.Predicted, 100*row.Error, 1e3*row.Reduced, 100*row.ReducedError, 1e3*row.Touched, 100*row.TouchedError, 100*row.ReducedTouchedError)
		sum += math.Abs(row.Error)
		sumRed += math.Abs(row.ReducedError)
		sumT += math.Abs(row.TouchedError)
		sumRT += math.Abs(row.ReducedTouchedError)
	}
	n := float64(len(r.Rows))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "mean |error| over %d rows: probe %.2f%%, reduced probe %.2f%%, touched-set probe %.2f%%, reduced touched-set probe %.2f%%\n", len(r.Rows), 100*sum/n, 100*sumRed/n, 100*sumT/n, 100*sumRT/n)
	fmt.Fprintln(w)
	fmt.Fprint(w, "Per-phase speed ratios, TProbed / TPhaseRef (target against ref):\n\n| workload | phase | time weight | TPhaseRef |")
	for _, m := range targets {
		fmt.Fprintf(w, " %s |", m.Name)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "|---|---|---|---|")
	for range targets {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, ph := range r.Phases {
		fmt.Fprintf(w, "| %s | %d | %.3f | %.2f µs |", ph.Workload, ph.Phase, ph.Weight, 1e6*ph.TRef)
		for _, m := range targets {
			fmt.Fprintf(w, " %.3f |", ph.Ratio[m.Name])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The probe worker's stages on slowmem (instructions, with their share of the worker's; modelled time). The stages are the events of the thread that read the stopwatch, the process's first (the driver stays on it); init, load and the first round repeat from run to run within 0.1%, the start (the runtime's own, and reading the configuration) within about 1%:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | start (runtime, config) | Init | load (read, decompress, check) | first round (restore, warm-up, interval per phase) | slowmem: fixed / first round |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, row := range r.Rows {
		c := row.Stages
		if row.Machine != "slowmem" || c == nil || c.Instructions == nil {
			continue
		}
		in := c.Instructions
		total := float64(in["Start"] + in["Init"] + in["Load"] + in["FirstRound"] + in["Rounds"])
		cell := func(n int64) string { return fmt.Sprintf("%.2f M (%.1f%%)", float64(n)/1e6, 100*float64(n)/total) }
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.3f ms / %.3f ms |\n", row.Workload, cell(in["Start"]), cell(in["Init"]), cell(in["Load"]), cell(in["FirstRound"]),
			1e3*(c.Start+c.Init+c.Load), 1e3*c.FirstRound)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Probe sizes:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | intervals × blocks | phases kept / all | raw | compressed | reduced | reduction | not read by the replays | touched set | reduction | reduced + touched set | reduction |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range r.Sizes {
		less := func(b int64) float64 { return 100 * (1 - float64(b)/float64(s.RawBytes)) }
		fmt.Fprintf(w, "| %s | %d × %d | %d/%d | %d kB | %d kB | %d kB | %.1f%% | %.1f%% | %d kB | %.1f%% | %d kB | %.1f%% |\n", s.Workload, s.Intervals, s.Interval, s.Kept, s.Phases,
			s.RawBytes/1000, s.Bytes/1000, s.ReducedBytes/1000, less(s.ReducedBytes), 100*float64(s.Zeroed)/float64(s.RawBytes),
			s.TouchedBytes/1000, less(s.TouchedBytes), s.ReducedTouchedBytes/1000, less(s.ReducedTouchedBytes))
	}
	if len(r.Checks) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Representatives against their phases (-phase-check: the probe built on each machine, whose counted run times every interval; the phases are the same on every machine):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| workload | phase | intervals | representative | machine | phase mean | representative, counted run | against the mean | representative, replayed | against the counted run |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
		for _, c := range r.Checks {
			fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %.2f µs | %.2f µs | %+.1f%% | %.2f µs | %+.1f%% |\n", c.Workload, c.Phase, c.Intervals, c.Representative, c.Machine,
				1e6*c.Mean, 1e6*c.Counted, 100*(c.Counted/c.Mean-1), 1e6*c.Replayed, 100*(c.Replayed/c.Counted-1))
		}
	}
	return nil
}

func cache(c probe.Cache) string {
	size := fmt.Sprintf("%d KiB", c.Size>>10)
	if c.Size >= 1<<20 {
		size = fmt.Sprintf("%d MiB", c.Size>>20)
	}
	return fmt.Sprintf("%s %d-way", size, c.Assoc)
}

func workloadList(ws []workload) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s `%s`", w.Name, strings.Join(w.Args, " ")))
	}
	return strings.Join(parts, "; ")
}
