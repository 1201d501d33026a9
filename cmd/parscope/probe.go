package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/probe"
	"github.com/parscope/parscope/show/plot"
)

// probeWorker splits `PROBE -- WORKER ARGS` (or `-- WORKER ARGS`) at the dash.
func probeWorker(cmd *cobra.Command, args []string, before int, use string) ([]string, probe.Command, error) {
	dash := cmd.ArgsLenAtDash()
	if dash != before || len(args) <= before {
		return nil, probe.Command{}, usagef("usage: parscope %s", use)
	}
	return args[:before], probe.Command{Path: args[before], Args: args[before+1:], Output: cmd.ErrOrStderr()}, nil
}

func init() {
	pc := &cobra.Command{
		Use:   "probe",
		Short: "Build and run performance probes of Go workers (Strube 2011)",
		Long: `probe predicts a worker's run time on another machine from a few
representative intervals (Strube 2011, chapters 4–5). The worker is a Go
program that describes its computation as a probe.Task and calls
probe.Main; parscope runs it as a child process and talks to the driver
through a work directory named by PARSCOPE_PROBE_DIR.

  build   run the worker on the reference machine: basic block vectors,
          phases, reference times, snapshots → one .probe file
  run     on the target: restore each snapshot, warm up, time one interval,
          predict the full run time (eq. 4.7)
  reduce  keep the heaviest phases only (rule of three), and zero what
          the replays do not read (the touched set)
  curve   prediction quality against probe size (Figures 5.1–5.2)
  info    show a probe's manifest`,
	}
	pc.AddCommand(probeBuildCmd(), probeRunCmd(), probeReduceCmd(), probeCurveCmd(), probeInfoCmd())
	root.AddCommand(pc)
}

func probeBuildCmd() *cobra.Command {
	var (
		out     string
		o       probe.BuildOptions
		force   bool
		jsonOut bool
		passes  bool
		clock   string
	)
	cmd := &cobra.Command{
		Use:   "build -o OUT.probe [flags] -- WORKER ARGS...",
		Short: "Build a probe of a worker on this (reference) machine",
		Long: `build runs the worker three times: a basic block vector run (the instrument
library counts vectors), an uninstrumented timed run (ETuninstRef) and a
counted run that times every interval (ETRef, TPhaseRef) and snapshots the
state at each representative interval's start minus the warm-up. The phase
engine (analysis/phase) chooses the phases between the first and the
others. OUT is written only when everything succeeded.`,
		Example: `  parscope probe build -o mm.probe -- ./matmul -n 160
  parscope probe build -o nb.probe --interval 4096 --warmup 1024 -- ./nbody`,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, c, err := probeWorker(cmd, args, 0, "probe build -o OUT.probe -- WORKER ARGS...")
			if err != nil {
				return err
			}
			if out == "" {
				return usagef("probe build: -o OUT.probe is required")
			}
			// Each pass is a line with --passes or --verbose, else the
			// stage the progress line shows on a terminal, of the passes
			// Build makes.
			bar := progress.Start("probe build", int64(probe.BuildSteps(o)), progress.Steps)
			bar.Live()
			defer bar.Done()
			if passes || progress.CurrentLevel() >= progress.Verbose {
				o.Log = cmd.ErrOrStderr()
			} else if bar != nil {
				o.Log = bar.Stages("probe build")
			}
			if o.Clock, err = probe.ParseClock(clock); err != nil {
				return usageError{err}
			}
			p, err := probe.Build(cmd.Context(), c, o)
			bar.Done()
			var se *probe.SnapshotError
			if errors.As(err, &se) {
				return fmt.Errorf("probe build: %w; nothing was written", err)
			}
			if err != nil {
				return fmt.Errorf("probe build: %w", err)
			}
			if err := p.WriteFile(out); err != nil {
				return fmt.Errorf("probe build: %w", err)
			}
			if jsonOut {
				return writeJSON(cmd.OutOrStdout(), probeInfoJSON(out, p))
			}
			return printManifest(cmd.OutOrStdout(), out, p)
		},
	}
	f := cmd.Flags()
	fileOutputFlag(f, &out, "output", "o", "", "the probe file to write")
	f.Int64Var(&o.Interval, "interval", 0, "interval size in blocks (0: about --intervals intervals)")
	f.IntVar(&o.Intervals, "intervals", probe.DefaultIntervals, "number of intervals aimed at when --interval is 0")
	f.Int64Var(&o.WarmUp, "warmup", 0, "warm-up in blocks before each interval (0: a quarter interval, -1: none)")
	f.IntVar(&o.MaxK, "maxk", 10, "largest number of phases")
	f.Int64Var(&o.Seed, "seed", 0, "seed of the phase engine (0: SimPoint's)")
	f.Float64Var(&o.MinWeight, "min-weight", 0.01, "drop phases under this weight at build (negative: keep all)")
	f.StringVar(&clock, "clock", "wall", "what the times measure: wall (elapsed) or cpu (the worker's CPU time)")
	f.IntVar(&o.Repeat, "repeat", probe.DefaultRefRepeat, "replays of each phase on the reference for TPhaseRef (the mean is kept)")
	f.IntVar(&o.RefRuns, "ref-runs", 3, "uninstrumented reference runs, each followed by its share of the replays (the mean is kept)")
	forceFlag(f, &force)
	f.BoolVar(&jsonOut, "json", false, "print the manifest as JSON")
	f.BoolVar(&passes, "progress", false, "report each pass on stderr, a line each (as --verbose does)")
	return cmd
}

// probeInfo is the --json form of a probe's description.
type probeInfo struct {
	File     string         `json:"file"`
	Bytes    int64          `json:"snapshot_bytes"`
	RawBytes int64          `json:"snapshot_raw_bytes"`
	Manifest probe.Manifest `json:"manifest"`
}

func probeInfoJSON(path string, p *probe.Probe) probeInfo {
	c, r := p.Sizes()
	return probeInfo{File: path, Bytes: c, RawBytes: r, Manifest: p.Manifest}
}

func printManifest(w io.Writer, path string, p *probe.Probe) error {
	m := &p.Manifest
	c, r := p.Sizes()
	fmt.Fprintf(w, "probe %s: worker %s %s (%s %v)\n", path, m.Worker.Name, m.Worker.Version, m.Worker.Path, m.Worker.Args)
	fmt.Fprintf(w, "reference (%s clock): ETuninstRef %.4fs  ETRef %.4fs  noise %.4f  %d intervals of %d blocks, warm-up %d blocks\n",
		m.Clock, m.ETUninstRef, m.ETRef, probe.Noise(m.ETRef, m.ETUninstRef), m.Intervals, m.Interval, m.WarmUp)
	fmt.Fprintf(w, "snapshots: %s compressed, %s raw\n", human.Bytes(c), human.Bytes(r))
	if m.Reduction != "" {
		fmt.Fprintf(w, "reduction: %s\n", m.Reduction)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "phase\tweight\ttime share\tintervals\trepresentative\tsteps\tTPhaseRef\tsnapshot")
	for _, ph := range m.Phases {
		snap := "dropped"
		if ph.Snapshot != nil {
			snap = human.Bytes(ph.Snapshot.Size)
		}
		fmt.Fprintf(tw, "%d\t%.4f\t%.4f\t%d\t%d\t%d-%d\t%s\t%s\n", ph.ID, ph.Weight, ph.TimeShare, ph.Size, ph.Representative,
			ph.StartStep, ph.EndStep, human.Seconds(ph.TPhaseRef), snap)
	}
	return tw.Flush()
}

func probeRunOptions(cmd *cobra.Command, o *probe.RunOptions, weights *string) {
	f := cmd.Flags()
	f.IntVar(&o.Repeat, "repeat", 0, "measure each phase exactly this many times (0: as many rounds as --budget allows; the mean is kept)")
	f.Float64Var(&o.Budget, "budget", probe.DefaultBudget, "keep the probe's own time within this fraction of the predicted run (negative: no budget, 3 rounds)")
	f.IntVar(&o.MaxRounds, "max-rounds", 100, "the most rounds a budget allows")
	f.StringVar(weights, "weights", "time", "Weight_i of eq. 4.7: time (measured time shares) or intervals (SimPoint's)")
	f.BoolVar(&o.OtherBinary, "other-binary", false, "accept a rebuild of the worker (same name, version and arguments)")
}

func probeRunCmd() *cobra.Command {
	var (
		o       probe.RunOptions
		weights string
		jsonOut bool
	)
	cmd := &cobra.Command{
		Use:   "run PROBE [flags] -- WORKER ARGS...",
		Short: "Run a probe on this (target) machine and predict the worker's run time",
		Long: `run restores each snapshot of PROBE in the worker, runs the warm-up, times one
interval, and predicts the full run time with eq. 4.7 (extrapolated by the
rule of three when phases were dropped or crashed). It measures the phases
in rounds, each phase once per round, and keeps each phase's mean; another
round starts only while the probe's own time stays within --budget of the
run time it predicts (or exactly --repeat rounds). The worker must be the
one the probe was built from: same name, version and arguments, and the
same executable unless --other-binary. A phase that crashes the worker is
reported and the others are still measured; the prediction then says
which fraction of the run it covers, and the exit status is 1.`,
		Example: `  parscope probe run mm.probe -- ./matmul -n 160`,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, pred, err := runProbe(cmd, args, "run", &o, weights)
			if err != nil {
				return err
			}
			if jsonOut {
				err = writeJSON(cmd.OutOrStdout(), pred)
			} else {
				err = printPrediction(cmd.OutOrStdout(), pred)
			}
			if err != nil {
				return err
			}
			if pred.Failed > 0 {
				return fmt.Errorf("probe run: %d phase(s) crashed on this machine; the prediction rests on %.1f%% of the run", pred.Failed, 100*pred.Covered)
			}
			return nil
		},
	}
	probeRunOptions(cmd, &o, &weights)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the prediction as JSON")
	return cmd
}

// runProbe reads the probe of `probe NAME PROBE -- WORKER ARGS` and runs it.
func runProbe(cmd *cobra.Command, args []string, name string, o *probe.RunOptions, weights string) (*probe.Probe, *probe.Prediction, error) {
	pre, c, err := probeWorker(cmd, args, 1, "probe "+name+" PROBE -- WORKER ARGS...")
	if err != nil {
		return nil, nil, err
	}
	if o.Weights, err = probe.ParseWeights(weights); err != nil {
		return nil, nil, usageError{err}
	}
	o.Started = time.Now() // the probe's own time includes reading it
	p, err := probe.ReadFile(pre[0])
	if err != nil {
		return nil, nil, fmt.Errorf("probe %s: %w", name, err)
	}
	bar := progress.Start(fmt.Sprintf("probe %s: measuring %d phases of %s", name, len(p.Manifest.Phases), p.Manifest.Worker.Name), 0, progress.Steps)
	bar.Live()
	ro := *o
	if bar != nil {
		// The measurements taken, of the phases times the rounds when
		// these are fixed.
		ro.Progress = func(n, total int) {
			bar.SetTotal(int64(total))
			bar.Set(int64(n))
		}
	}
	pred, err := probe.Run(cmd.Context(), p, c, ro)
	bar.Done()
	if err != nil {
		return nil, nil, fmt.Errorf("probe %s: %w", name, err)
	}
	return p, pred, nil
}

func printPrediction(w io.Writer, pred *probe.Prediction) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "phase\tweight\tTPhaseRef\tTProbed\tsamples\tTimeUnitValue\tPhasePredicted\tstatus")
	for _, ph := range pred.Phases {
		st := ph.Status
		if ph.Error != "" {
			st += ": " + ph.Error
		}
		probed, n, tuv, pp := "-", "-", "-", "-"
		if ph.Status == "ok" {
			probed, tuv, pp = human.Seconds(ph.TProbed), strconv.FormatFloat(ph.TimeUnitValue, 'f', 2, 64), human.Seconds(ph.PhasePredicted)
			if ph.Samples > 1 {
				probed += " ±" + human.Seconds(ph.TProbedErr)
			}
			n = strconv.Itoa(ph.Samples)
		}
		fmt.Fprintf(tw, "%d\t%.4f\t%s\t%s\t%s\t%s\t%s\t%s\n", ph.ID, ph.Weight, human.Seconds(ph.TPhaseRef), probed, n, tuv, pp, st)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "predicted run time: %s ±%s (eq. 4.7 over %.1f%% of the run: %s; noise %.4f)\n",
		human.Seconds(pred.Predicted), human.Seconds(pred.StdErr), 100*pred.Covered, human.Seconds(pred.Partial), pred.Noise)
	fmt.Fprintf(w, "probe run time: %s (%.2f%% of the predicted run); executed %.2f%% of the run's blocks\n",
		human.Seconds(pred.ProbeTime), 100*pred.ProbeFraction, 100*pred.Represented)
	if c := pred.Costs; c != nil {
		fmt.Fprintf(w, "probe time by stage: read %s, snapshots %s (identity check %s beside), start %s, init %s, load %s, first round %s, %d more rounds %s, exit %s\n",
			human.Seconds(c.Read), human.Seconds(c.Snapshots+c.Wait), human.Seconds(c.Hash), human.Seconds(c.Start), human.Seconds(c.Init),
			human.Seconds(c.Load), human.Seconds(c.FirstRound), max(0, c.RoundsMade-1), human.Seconds(c.Rounds), human.Seconds(c.Exit))
	}
	return nil
}

func probeReduceCmd() *cobra.Command {
	var (
		out     string
		top     int
		minW    float64
		weights string
		force   bool
		touched bool
		chunk   int
	)
	cmd := &cobra.Command{
		Use:   "reduce IN.probe -o OUT.probe [--top K] [--min-weight W] [--touched -- WORKER ARGS...]",
		Short: "Make a probe smaller: keep the heaviest phases, zero what the replays do not read",
		Long: `reduce makes a probe smaller in two of the three ways of Strube (2011),
chapter 5; the third, compression, every probe has.

--top and --min-weight keep only the heaviest phases; the prediction then
extrapolates from them by the rule of three, which assumes the dropped
phases change speed like the kept ones.

--touched zeroes, in each kept snapshot, the bytes its replay (restore,
warm-up, interval) does not read, so that the snapshot compresses to
little more than what is read: the thesis's touched set. It runs the
worker given after -- (the probe's worker, with the probe's arguments) on
this machine and tries zeroing parts of each snapshot, halving the parts
that fail down to --chunk bytes: a part counts as not read when the
replay with it zeroed executes the same basic blocks and ends in the same
state (where a zeroed byte the replay left alone may stay zero). The
replays of the trimmed probe therefore do the same work on the same
values as the whole probe's; only where their data lie in memory can
differ.`,
		Example: `  parscope probe reduce mm.probe -o small.probe --top 2
  parscope probe reduce mm.probe -o small.probe --touched -- ./matmul -n 160 -reps 300`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("probe reduce: -o OUT.probe is required")
			}
			in, c := args, probe.Command{}
			if touched {
				var err error
				if in, c, err = probeWorker(cmd, args, 1, "probe reduce IN.probe -o OUT.probe --touched -- WORKER ARGS..."); err != nil {
					return err
				}
			} else if len(args) != 1 {
				return usagef("probe reduce: a worker is only given with --touched")
			}
			w, err := probe.ParseWeights(weights)
			if err != nil {
				return usageError{err}
			}
			p, err := probe.ReadFile(in[0])
			if err != nil {
				return fmt.Errorf("probe reduce: %w", err)
			}
			q := p
			if top > 0 || minW > 0 || !touched {
				q = probe.Reduce(p, top, minW, w)
			}
			var trims []probe.TouchedPhase
			if touched {
				bar := progress.Start(fmt.Sprintf("probe reduce: the touched sets of %s's phases", p.Manifest.Worker.Name), 0, progress.Steps)
				bar.Live()
				o := probe.TouchedOptions{Chunk: chunk}
				if bar != nil {
					o.Progress = func(done, total int) {
						bar.SetTotal(int64(total))
						bar.Set(int64(done))
					}
				}
				q, trims, err = probe.TrimTouched(cmd.Context(), probe.Local{}, c, q, o)
				bar.Done()
				if err != nil {
					return fmt.Errorf("probe reduce: %w", err)
				}
			}
			if err := q.WriteFile(out); err != nil {
				return fmt.Errorf("probe reduce: %w", err)
			}
			if trims != nil {
				if err := printTouched(cmd.OutOrStdout(), q, trims); err != nil {
					return err
				}
			}
			return printManifest(cmd.OutOrStdout(), out, q)
		},
	}
	f := cmd.Flags()
	fileOutputFlag(f, &out, "output", "o", "", "the reduced probe to write")
	f.IntVar(&top, "top", 0, "keep the K heaviest phases (0: no limit)")
	f.Float64Var(&minW, "min-weight", 0, "drop phases under this weight")
	f.StringVar(&weights, "weights", "time", "which weight ranks phases: time or intervals")
	f.BoolVar(&touched, "touched", false, "zero what each replay does not read (runs the worker given after --)")
	f.IntVar(&chunk, "chunk", probe.DefaultChunk, "with --touched: the smallest part of a snapshot tried, in bytes")
	forceFlag(f, &force)
	return cmd
}

// printTouched prints the touched-set search of each phase.
func printTouched(w io.Writer, q *probe.Probe, trims []probe.TouchedPhase) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "phase\tsnapshot\tnot read\ttrials\tcompressed before\tafter\tnote")
	for _, t := range trims {
		fmt.Fprintf(tw, "%d\t%s\t%.1f%%\t%d\t%s\t%s\t%s\n", q.Manifest.Phases[t.Phase].ID, human.Bytes(t.Raw),
			100*float64(t.Zeroed)/float64(max(t.Raw, 1)), t.Tries, human.Bytes(t.Before), human.Bytes(t.After), t.Err)
	}
	return tw.Flush()
}

func probeCurveCmd() *cobra.Command {
	var (
		o        probe.RunOptions
		weights  string
		actual   float64
		plotPath string
		jsonOut  bool
		force    bool
	)
	cmd := &cobra.Command{
		Use:   "curve PROBE [--actual SECONDS] [--plot F.png] -- WORKER ARGS...",
		Short: "Prediction quality against probe size, keeping the K heaviest phases",
		Long: `curve runs every phase of PROBE once on this machine and, for K = 1, 2, ...,
predicts the run time from the K heaviest phases (rule of three), with the
size of their snapshots: the quality-against-size curve of Figures 5.1–5.2.
The error is against --actual (the worker's real run time here) or, without
it, against the prediction from every phase.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, pred, err := runProbe(cmd, args, "curve", &o, weights)
			if err != nil {
				return err
			}
			probed := map[int]float64{}
			for i, ph := range pred.Phases {
				if ph.Status == "ok" {
					probed[i] = ph.TProbed
				}
			}
			pts, err := probe.Curve(p, probed, o.Weights, actual)
			if err != nil {
				return fmt.Errorf("probe curve: %w", err)
			}
			if plotPath != "" {
				fig, err := plot.ProbeCurve(plotPath, args[0], pts)
				if err := writeFigure(plotPath, force, fig, err); err != nil {
					return fmt.Errorf("probe curve: %w", err)
				}
			}
			if jsonOut {
				return writeJSON(cmd.OutOrStdout(), pts)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "K\tweight\tsize\traw size\tpredicted\terror")
			for _, pt := range pts {
				fmt.Fprintf(tw, "%d\t%.4f\t%s\t%s\t%s\t%.2f%%\n", pt.K, pt.Weight, human.Bytes(pt.Bytes), human.Bytes(pt.RawBytes), human.Seconds(pt.Predicted), 100*pt.Error)
			}
			return tw.Flush()
		},
	}
	probeRunOptions(cmd, &o, &weights)
	f := cmd.Flags()
	f.Float64Var(&actual, "actual", 0, "the worker's actual run time on this machine, in seconds")
	fileOutputFlag(f, &plotPath, "plot", "", "", "draw the curve (PNG or SVG)")
	forceFlag(f, &force)
	f.BoolVar(&jsonOut, "json", false, "print the curve as JSON")
	return cmd
}

func probeInfoCmd() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "info PROBE",
		Short: "Show a probe's manifest",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := probe.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("probe info: %w", err)
			}
			if jsonOut {
				return writeJSON(cmd.OutOrStdout(), probeInfoJSON(args[0], p))
			}
			return printManifest(cmd.OutOrStdout(), args[0], p)
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the manifest as JSON")
	return cmd
}
