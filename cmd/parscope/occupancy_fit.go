package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// The parameter sweeps, estimator fits and predictions of Lyon (1990)
// (Lyon's "Mean Node Occupancies and Three Hypercube Paradigms" to
// "Estimators and Modeling"): `parscope sweep`, `parscope fit` and
// `parscope predict`.

func init() {
	var (
		params                []string
		modesFile, start, out string
		keep                  string
		global, asJSON, force bool
		timeout               time.Duration
		repeat                int
	)
	cmd := &cobra.Command{
		Use:   "sweep --param NAME=VALUES... [flags] -- COMMAND [ARGS...]",
		Short: "Run a workload over a grid of parameters and tabulate its mean node occupancies (Lyon 1990)",
		Long: `Sweep runs COMMAND once per point of the grid of --param values (every
combination, the last --param varying fastest). In COMMAND and ARGS, {NAME}
is replaced by the value of parameter NAME and {out} by the path of a .pst
the command must write (an instrumented program). Each trace is reduced to
the mean node occupancy of each mode, in seconds: by default from the
instrument library's local occupancy counters (Lyon's local collection),
with --global from the state records. Modes are the trace's states, or
groups of them given by --modes (a file of lines "STATE MODE").

--repeat K runs each point K times and keeps the run of median elapsed time
(its occupancies still sum to its elapsed time): a shared or loaded machine
delays some runs by far more than others.

The table (parameters, "mode:NAME" columns, "elapsed") is printed and, with
-o, written as comma-separated values for parscope fit. A failing run stops
the sweep; -o is written only when every run succeeded.`,
		Example: `  go build -o lyon ./examples/lyon
  parscope sweep --param n=4,8,16 --param p=1,4,8,12,16 --param g=20:100:20 -o ring.csv -- ./lyon -bench ring -n {n} -p {p} -g {g} -o {out}`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return usagef("give the command after --: parscope sweep --param n=4,8 -- ./program -n {n} -o {out}")
			}
			if len(params) == 0 {
				return usagef("give at least one --param NAME=VALUES")
			}
			if repeat < 1 {
				return usagef("--repeat %d: expected at least 1", repeat)
			}
			var axes []occupancy.Axis
			for _, p := range params {
				a, err := occupancy.ParseAxis(p)
				if err != nil {
					return usagef("--param: %v", err)
				}
				if slices.ContainsFunc(axes, func(b occupancy.Axis) bool { return b.Name == a.Name }) {
					return usagef("--param %s given twice", a.Name)
				}
				if a.Name == "out" {
					return usagef("--param out: {out} is the trace path")
				}
				axes = append(axes, a)
			}
			if !slices.ContainsFunc(args, func(s string) bool { return strings.Contains(s, "{out}") }) {
				return usagef("the command must write its trace to {out} (e.g. -o {out})")
			}
			dir := keep
			if dir == "" {
				tmp, err := os.MkdirTemp("", "parscope-sweep-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = tmp
			} else if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			sw := &occupancy.Sweep{HasElapsed: true}
			for _, a := range axes {
				sw.Params = append(sw.Params, a.Name)
			}
			grid := occupancy.Grid(axes)
			bar := progress.Start("sweep", int64(len(grid)), progress.Steps)
			bar.Live()
			defer bar.Done()
			for i, v := range grid {
				bar.Describe(fmt.Sprintf("sweep: trial %d (%s)", i+1, pointString(sw.Params, v)))
				path := filepath.Join(dir, fmt.Sprintf("trial-%04d.pst", i+1))
				argv := substitute(args, sw.Params, v, path)
				began := time.Now()
				var reps []occupancy.Trial
				var modes []string
				for range repeat {
					// A fresh {out} for every run: programs may refuse to
					// replace a trace. Only a trace is removed (--keep may
					// name a directory that holds other things).
					if _, err := os.Lstat(path); err == nil {
						if err := store.Replaceable(path); err != nil {
							return fmt.Errorf("--keep: %w", err)
						}
						if err := os.RemoveAll(path); err != nil {
							return err
						}
					}
					if err := runTrial(cmd.Context(), argv, timeout); err != nil {
						return fmt.Errorf("trial %d of %d (%s): %w", i+1, len(grid), pointString(sw.Params, v), err)
					}
					m, means, elapsed, err := trialMeans(cmd.Context(), path, modesFile, start, global)
					if err != nil {
						return fmt.Errorf("trial %d of %d (%s): %w", i+1, len(grid), pointString(sw.Params, v), err)
					}
					modes = m
					reps = append(reps, occupancy.Trial{Values: v, Means: means, Elapsed: elapsed})
				}
				// The replicate of median elapsed time: its occupancies
				// still sum to its elapsed time.
				slices.SortStableFunc(reps, func(a, b occupancy.Trial) int { return cmp.Compare(a.Elapsed, b.Elapsed) })
				trial := reps[(len(reps)-1)/2]
				elapsed := trial.Elapsed
				if sw.Modes == nil {
					sw.Modes = modes
				} else if !slices.Equal(sw.Modes, modes) {
					return fmt.Errorf("trial %d (%s): modes %s, the trials before have %s", i+1, pointString(sw.Params, v), strings.Join(modes, ","), strings.Join(sw.Modes, ","))
				}
				sw.Trials = append(sw.Trials, trial)
				if keep == "" {
					os.RemoveAll(path) // in our own temporary directory
				}
				progress.Notef(cmd.ErrOrStderr(), "trial %d/%d %s: elapsed %s (ran in %s)\n", i+1, len(grid), pointString(sw.Params, v), human.Seconds(elapsed), human.Duration(time.Since(began)))
				bar.Set(int64(i + 1))
			}
			bar.Done() // before anything is written: -o may be stdout
			if out != "" {
				if err := createOutput(out, force, func(w io.Writer) error { return occupancy.WriteSweep(w, sw) }); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), sweepJSON(sw))
			}
			return printSweep(cmd.OutOrStdout(), sw)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&params, "param", nil, "a parameter and its values: NAME=V1,V2,... or NAME=FROM:TO:STEP (repeatable)")
	fl.StringVar(&modesFile, "modes", "", "a file mapping states to modes (lines \"STATE MODE\")")
	fl.StringVar(&start, "start", "", "with --global: put processes in this mode before their first state (default: they do not exist before it)")
	fl.BoolVar(&global, "global", false, "compute the occupancies from the state records instead of the occupancy counters")
	fileOutputFlag(fl, &out, "output", "o", "", "write the sweep table (CSV) to this file")
	forceFlag(fl, &force)
	fl.StringVar(&keep, "keep", "", "keep the traces in this directory (trial-NNNN.pst)")
	fl.DurationVar(&timeout, "timeout", 10*time.Minute, "kill a run that takes longer")
	fl.IntVar(&repeat, "repeat", 1, "run each point this many times and keep the run of median elapsed time")
	fl.BoolVar(&asJSON, "json", false, "print the table as JSON")
	root.AddCommand(cmd)
}

// substitute replaces {NAME} by the parameter values and {out} by path.
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

func pointString(names []string, v []float64) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatFloat(v[i], 'g', -1, 64)
	}
	return strings.Join(parts, " ")
}

// runTrial runs one workload, reporting the end of its stderr on failure.
func runTrial(ctx context.Context, argv []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: killed after %v", argv[0], timeout)
		}
		if msg != "" {
			return fmt.Errorf("%s: %w: %s", argv[0], err, msg)
		}
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
}

// trialMeans reduces one trial's trace to the mean node occupancy of each
// mode (s) and the elapsed time (s), averaged over the trace's runs.
func trialMeans(ctx context.Context, path, modesFile, start string, global bool) ([]string, []float64, float64, error) {
	s, err := store.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("the command wrote no readable trace at {out}: %w", err)
	}
	defer s.Close()
	h := s.Header()
	modes, err := loadModes(h, modesFile)
	if err != nil {
		return nil, nil, 0, err
	}
	var means [][]float64
	var elapsed []float64
	if global {
		// Only the means are needed: they come from the table's sums, and
		// the table need not be kept beyond its one largest row.
		res, err := occupancy.Compute(ctx, h, s.Records(store.ReadOptions{}), modes, occupancy.Options{Start: start, Top: 1})
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		for _, r := range res {
			means = append(means, r.Mean())
			elapsed = append(elapsed, float64(r.End-r.Begin))
		}
	} else {
		cs, err := occupancy.ReadCounters(ctx, h, s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindCounter}}), modes)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w (or give --global)", path, err)
		}
		for _, c := range cs {
			means = append(means, c.Mean())
			elapsed = append(elapsed, c.Span())
		}
	}
	if len(means) == 0 {
		return nil, nil, 0, fmt.Errorf("%s: no runs", path)
	}
	m := make([]float64, len(modes.Names))
	var e float64
	for r := range means {
		for j := range m {
			m[j] += means[r][j] / 1e9 / float64(len(means))
		}
		e += elapsed[r] / 1e9 / float64(len(means))
	}
	return modes.Names, m, e, nil
}

// loadModes returns the modes of h: its states, or the mapping file's.
func loadModes(h *trace.Header, modesFile string) (*occupancy.Modes, error) {
	modes := occupancy.StateModes(h)
	if modesFile != "" {
		f, err := regular.Open(modesFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if modes, err = occupancy.ParseModes(f, modesFile, h); err != nil {
			return nil, err
		}
	}
	if len(modes.Names) == 0 {
		return nil, errors.New("the trace defines no states (give --modes)")
	}
	return modes, nil
}

type sweepTrialJSON struct {
	Params  map[string]float64 `json:"params"`
	Means   map[string]float64 `json:"means_s"`
	Elapsed float64            `json:"elapsed_s,omitempty"`
}

func sweepJSON(sw *occupancy.Sweep) any {
	out := struct {
		Params []string         `json:"params"`
		Modes  []string         `json:"modes"`
		Trials []sweepTrialJSON `json:"trials"`
	}{Params: sw.Params, Modes: sw.Modes, Trials: []sweepTrialJSON{}}
	for _, t := range sw.Trials {
		j := sweepTrialJSON{Params: map[string]float64{}, Means: map[string]float64{}, Elapsed: t.Elapsed}
		for i, p := range sw.Params {
			j.Params[p] = t.Values[i]
		}
		for i, m := range sw.Modes {
			j.Means[m] = t.Means[i]
		}
		out.Trials = append(out.Trials, j)
	}
	return out
}

func printSweep(w io.Writer, sw *occupancy.Sweep) error {
	tw := newTable(w)
	head := slices.Clone(sw.Params)
	for _, m := range sw.Modes {
		head = append(head, m+" (s)")
	}
	if sw.HasElapsed {
		head = append(head, "elapsed (s)")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, t := range sw.Trials {
		var row []string
		for _, v := range t.Values {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		for _, v := range t.Means {
			row = append(row, strconv.FormatFloat(v, 'g', 4, 64))
		}
		if sw.HasElapsed {
			row = append(row, strconv.FormatFloat(t.Elapsed, 'g', 4, 64))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// readSweepFile reads a sweep table; its name (without extension) names
// the fit.
func readSweepFile(path string) (*occupancy.Sweep, string, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	sw, err := occupancy.ReadSweep(f, path)
	if err != nil {
		return nil, "", err
	}
	return sw, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), nil
}

// parseTermsFlag parses --terms MODE=T1+T2+... against a sweep's
// parameters.
func parseTermsFlag(specs []string, params []string) (map[string][]occupancy.Term, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := map[string][]occupancy.Term{}
	for _, spec := range specs {
		mode, list, ok := strings.Cut(spec, "=")
		if !ok || mode == "" || list == "" {
			return nil, fmt.Errorf("--terms %q: expected MODE=TERM+TERM+... (e.g. U=g/n+1)", spec)
		}
		if _, dup := out[mode]; dup {
			return nil, fmt.Errorf("--terms: mode %s given twice", mode)
		}
		for _, ts := range strings.Split(list, "+") {
			t, err := occupancy.ParseTerm(ts, params)
			if err != nil {
				return nil, fmt.Errorf("--terms %s: %w", mode, err)
			}
			out[mode] = append(out[mode], t)
		}
	}
	return out, nil
}

func init() {
	var (
		maxOrder, maxTerms int
		minGain            float64
		terms              []string
		out                string
		asJSON, force      bool
	)
	cmd := &cobra.Command{
		Use:   "fit SWEEP.csv [SWEEP.csv...]",
		Short: "Fit estimator equations of the mean node occupancies of sweeps: Lyon's tableau (Lyon 1990)",
		Long: `Fit fits, for every mode of each sweep table (written by parscope sweep), an
estimator equation of its mean node occupancy in the sweep's parameters, and
prints the tableau: one column per sweep (workload), one row per mode; each
column sums to the estimated elapsed time T.

Terms are chosen from the constant, x, 1/x and products of up to
--max-order parameters each raised to the power 1 or -1 (x*y, x/y, 1/(x*y),
x*y*z, ...) by forward selection with swaps: the term that most lowers the
leave-one-out cross-validated error (PRESS) is added while it lowers it by
at least --min-gain, up to --max-terms terms. --terms MODE=T1+T2 fixes a
mode's terms instead (e.g. --terms U=g/n+1).

Accuracy is "±X% of measured elapsed time at 95% confidence": the 95th
percentile over trials of |T̂ - T| / T, with T the measured elapsed time,
both for the fitted equations and with each trial left out of the fit of
its equations' coefficients (cross-validated). Compression is measurements
(trials × modes) per equation, and per equation term. Parameters constant
over a sweep, terms undefined on it (a division by zero), terms equal to
simpler ones and terms collinear with the selected ones are reported.

-o writes the fits as JSON for parscope predict.`,
		Example: `  parscope fit random.csv mesh.csv ring.csv -o lyon.json
  parscope fit --max-order 3 --terms U=n*p*g+1 ring.csv`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var fits []*occupancy.Fit
			for _, path := range args {
				sw, name, err := readSweepFile(path)
				if err != nil {
					return err
				}
				fixed, err := parseTermsFlag(terms, sw.Params)
				if err != nil {
					return usagef("%s: %v", path, err)
				}
				f, err := occupancy.FitSweep(sw, occupancy.FitOptions{MaxOrder: maxOrder, MaxTerms: maxTerms, MinGain: minGain, Terms: fixed})
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				f.Name = name
				fits = append(fits, f)
			}
			if out != "" {
				if err := createOutput(out, force, func(w io.Writer) error { return occupancy.WriteFits(w, fits) }); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), fits)
			}
			return printTableau(cmd.OutOrStdout(), fits)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&maxOrder, "max-order", 2, "the most parameters in a term (1 to 3)")
	fl.IntVar(&maxTerms, "max-terms", 4, "the most terms in an equation")
	fl.Float64Var(&minGain, "min-gain", 0.02, "add a term only if it lowers the cross-validated error by this fraction")
	fl.StringArrayVar(&terms, "terms", nil, "fix a mode's terms: MODE=T1+T2+... (repeatable)")
	fileOutputFlag(fl, &out, "output", "o", "", "write the fits (JSON) to this file, for parscope predict")
	forceFlag(fl, &force)
	fl.BoolVar(&asJSON, "json", false, "print the fits as JSON")
	root.AddCommand(cmd)
}

// pct formats an accuracy (a relative error) as "±12.3%".
func pct(x float64) string { return "±" + human.Percent(x) }

// printTableau prints the fits as Lyon's tableau, then their details.
func printTableau(w io.Writer, fits []*occupancy.Fit) error {
	var modes []string
	for _, f := range fits {
		for _, m := range f.Modes {
			if !slices.Contains(modes, m) {
				modes = append(modes, m)
			}
		}
	}
	fmt.Fprintln(w, "estimators of the mean node occupancy (s); each column sums to the elapsed time T")
	tw := newTable(w)
	row := []string{"mode"}
	for _, f := range fits {
		row = append(row, f.Name)
	}
	fmt.Fprintln(tw, strings.Join(row, "\t"))
	for _, m := range modes {
		row = []string{m}
		for _, f := range fits {
			cell := "n.a."
			if j := slices.Index(f.Modes, m); j >= 0 {
				cell = f.Equations[j].Format()
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	lines := []struct {
		name string
		cell func(f *occupancy.Fit) string
	}{
		{"T, 95% confidence", func(f *occupancy.Fit) string { return pct(f.Acc95) + " of measured elapsed time" }},
		{"cross-validated", func(f *occupancy.Fit) string { return pct(f.CVAcc95) }},
		{"largest error", func(f *occupancy.Fit) string { return pct(f.MaxErr) }},
		{"trials", func(f *occupancy.Fit) string { return strconv.Itoa(f.Trials) }},
		{"compression", func(f *occupancy.Fit) string {
			return fmt.Sprintf("%d measurements : %d equations = %.0f:1 (%.1f:1 per term)", f.Measurements, len(f.Equations), f.Compression, f.TermCompression)
		}},
	}
	for _, l := range lines {
		row = []string{l.name}
		for _, f := range fits {
			row = append(row, l.cell(f))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(fits) > 1 {
		meas, eqs := 0, 0
		for _, f := range fits {
			meas += f.Measurements
			eqs += len(f.Equations)
		}
		fmt.Fprintf(w, "all: %d measurements : %d equations = %.0f:1\n", meas, eqs, float64(meas)/float64(eqs))
	}
	for _, f := range fits {
		fmt.Fprintf(w, "\n%s: %d trials over %s\n", f.Name, f.Trials, strings.Join(f.Params, ", "))
		tw := newTable(w)
		fmt.Fprintln(tw, "mode\tterms\tR²\tRMS\tcross-validated RMS\tshare of T's error (95%)")
		for _, e := range f.Equations {
			fmt.Fprintf(tw, "%s\t%d\t%.4f\t%s\t%s\t%s\n", e.Mode, len(e.Terms), e.R2, human.Seconds(e.RMS), human.Seconds(e.CVRMS), pct(e.Acc95))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if f.Constant != nil {
			fmt.Fprintf(w, "constant parameters (left out of the terms): %s\n", strings.Join(f.Constant, ", "))
		}
		if f.Undefined != nil {
			fmt.Fprintf(w, "terms undefined on the sweep (division by zero): %s\n", strings.Join(f.Undefined, ", "))
		}
		if f.Duplicate != nil {
			fmt.Fprintf(w, "terms equal to simpler ones on the sweep: %s\n", strings.Join(f.Duplicate, ", "))
		}
		for _, e := range f.Equations {
			if e.Collinear != nil {
				fmt.Fprintf(w, "%s: terms collinear with the selected ones, left out: %s\n", e.Mode, strings.Join(e.Collinear, ", "))
			}
		}
	}
	return nil
}

func init() {
	var (
		name, check string
		at          []string
		asJSON      bool
	)
	cmd := &cobra.Command{
		Use:   "predict FIT.json (--at NAME=V,... ... | --check SWEEP.csv) [flags]",
		Short: "Evaluate fitted occupancy estimators at new parameter settings (Lyon 1990)",
		Long: `Predict evaluates the equations of a fit written by parscope fit -o: with
--at (repeatable) at the given parameter settings, printing the estimated
mean node occupancy of each mode, the elapsed time T and T relative to the
first setting (Lyon's "what if grain g changes"); with --check at every trial
of a sweep table (for instance new measurements), comparing T with the
measured elapsed time. --fit selects a fit by name when the file has several.`,
		Example: `  parscope predict lyon.json --fit ring --at n=16,p=16,g=100 --at n=16,p=16,g=50
  parscope predict lyon.json --fit ring --check ring-new.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(at) == 0) == (check == "") {
				return usagef("give --at NAME=V,... (repeatable) or --check SWEEP.csv")
			}
			r, err := regular.Open(args[0])
			if err != nil {
				return err
			}
			fits, err := occupancy.ReadFits(r, args[0])
			r.Close()
			if err != nil {
				return err
			}
			f := fits[0]
			if name != "" || len(fits) > 1 {
				i := slices.IndexFunc(fits, func(f *occupancy.Fit) bool { return f.Name == name })
				if i < 0 {
					var names []string
					for _, f := range fits {
						names = append(names, f.Name)
					}
					return usagef("--fit %q: %s has the fits %s", name, args[0], strings.Join(names, ", "))
				}
				f = fits[i]
			}
			if check != "" {
				return predictCheck(cmd.OutOrStdout(), f, check, asJSON)
			}
			var preds []occupancy.Prediction
			for _, spec := range at {
				v, err := parsePoint(spec, f.Params)
				if err != nil {
					return usagef("--at %s: %v", spec, err)
				}
				p, err := f.Predict(v)
				if err != nil {
					return err
				}
				preds = append(preds, p)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), struct {
					Fit         string                 `json:"fit"`
					Params      []string               `json:"params"`
					Modes       []string               `json:"modes"`
					Predictions []occupancy.Prediction `json:"predictions"`
				}{f.Name, f.Params, f.Modes, preds})
			}
			tw := newTable(cmd.OutOrStdout())
			head := slices.Clone(f.Params)
			for _, m := range f.Modes {
				head = append(head, m+" (s)")
			}
			head = append(head, "T (s)", "T / first")
			fmt.Fprintln(tw, strings.Join(head, "\t"))
			for _, p := range preds {
				var row []string
				for _, v := range p.Values {
					row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
				}
				for _, m := range p.Means {
					row = append(row, strconv.FormatFloat(m, 'g', 4, 64))
				}
				row = append(row, strconv.FormatFloat(p.Total, 'g', 4, 64), strconv.FormatFloat(p.Total/preds[0].Total, 'f', 3, 64))
				fmt.Fprintln(tw, strings.Join(row, "\t"))
			}
			return tw.Flush()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "fit", "", "the fit to use, by name (the sweep file's)")
	fl.StringArrayVar(&at, "at", nil, "a parameter setting NAME=V,NAME=V,... (repeatable)")
	fl.StringVar(&check, "check", "", "compare the predictions with the trials of this sweep table")
	fl.BoolVar(&asJSON, "json", false, "print the predictions as JSON")
	root.AddCommand(cmd)
}

// parsePoint parses "n=16,p=8,g=100" into values in params' order.
func parsePoint(spec string, params []string) ([]float64, error) {
	v := make([]float64, len(params))
	seen := make([]bool, len(params))
	for _, kv := range strings.Split(spec, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("%q: expected NAME=VALUE", kv)
		}
		i := slices.Index(params, k)
		if i < 0 {
			return nil, fmt.Errorf("%q is not a parameter of the fit (%s)", k, strings.Join(params, ", "))
		}
		x, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("%s=%q: expected a finite number", k, val)
		}
		if seen[i] {
			return nil, fmt.Errorf("%s given twice", k)
		}
		v[i], seen[i] = x, true
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("no value for %s", params[i])
		}
	}
	return v, nil
}

// predictCheck compares a fit's predictions with a sweep's measurements.
func predictCheck(w io.Writer, f *occupancy.Fit, path string, asJSON bool) error {
	sw, _, err := readSweepFile(path)
	if err != nil {
		return err
	}
	errs, err := f.Check(sw)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	q := occupancy.Quantile95(errs)
	worst := slices.Max(errs)
	if asJSON {
		return writeJSON(w, struct {
			Fit    string    `json:"fit"`
			Trials int       `json:"trials"`
			Acc95  float64   `json:"acc95"`
			MaxErr float64   `json:"max_err"`
			Errors []float64 `json:"errors"`
		}{f.Name, len(errs), q, worst, errs})
	}
	idx, _ := f.ParamIndex(sw.Params)
	tw := newTable(w)
	fmt.Fprintln(tw, strings.Join(f.Params, "\t")+"\tpredicted T (s)\tmeasured T (s)\terror")
	v := make([]float64, len(f.Params))
	for i, t := range sw.Trials {
		for k, j := range idx {
			v[k] = t.Values[j]
		}
		p, _ := f.Predict(v)
		var row []string
		for _, x := range v {
			row = append(row, strconv.FormatFloat(x, 'g', -1, 64))
		}
		row = append(row, strconv.FormatFloat(p.Total, 'g', 4, 64), strconv.FormatFloat(t.Total(sw.HasElapsed), 'g', 4, 64), fmt.Sprintf("%+.1f%%", 100*(p.Total-t.Total(sw.HasElapsed))/t.Total(sw.HasElapsed)))
		_ = errs[i]
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d trials: T within %s of the measured elapsed time at 95%% (largest error %s)\n", len(errs), pct(q), pct(worst))
	return nil
}
