package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
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
			cfg := occupancy.SweepConfig{Axes: axes, Command: args, Repeat: repeat, Timeout: timeout, Keep: keep, Force: force,
				Means: occupancy.MeansOptions{Modes: modesFile, Start: start, Global: global}}
			if err := cfg.Check(); err != nil {
				return usagef("%v", err)
			}
			bar := progress.Start("sweep", int64(len(occupancy.Grid(axes))), progress.Steps)
			bar.Live()
			defer bar.Done()
			cfg.Progress = func(p occupancy.SweepProgress) {
				if !p.Done {
					bar.Describe(fmt.Sprintf("sweep: trial %d (%s)", p.Trial, p.Point))
					return
				}
				progress.Notef(cmd.ErrOrStderr(), "trial %d/%d %s: elapsed %s (ran in %s)\n", p.Trial, p.Trials, p.Point, human.Seconds(p.Kept.Elapsed), human.Duration(p.Took))
				bar.Set(int64(p.Trial))
			}
			sw, err := occupancy.RunSweep(cmd.Context(), cfg)
			if errors.Is(err, occupancy.ErrNoCounters) && !global {
				err = fmt.Errorf("%w (or give --global)", err)
			}
			if err != nil {
				return err
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
	fl.StringVar(&keep, "keep", "", "keep the traces in this directory (trial-NNNN.pst; --force replaces traces already there)")
	fl.DurationVar(&timeout, "timeout", 10*time.Minute, "kill a run that takes longer (0: no limit)")
	fl.IntVar(&repeat, "repeat", 1, "run each point this many times and keep the run of median elapsed time")
	fl.BoolVar(&asJSON, "json", false, "print the table as JSON")
	root.AddCommand(cmd)
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
				sw, name, err := occupancy.ReadSweepFile(path)
				if err != nil {
					return err
				}
				fixed, err := occupancy.ParseTerms(terms, sw.Params)
				if err != nil {
					return usagef("%s: --terms %v", path, err)
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
	tab := occupancy.NewTableau(fits)
	fmt.Fprintln(w, "estimators of the mean node occupancy (s); each column sums to the elapsed time T")
	tw := newTable(w)
	row := []string{"mode"}
	for _, f := range fits {
		row = append(row, f.Name)
	}
	fmt.Fprintln(tw, strings.Join(row, "\t"))
	for _, m := range tab.Modes {
		row = []string{m}
		for i := range fits {
			cell := "n.a."
			if e := tab.Equation(i, m); e != nil {
				cell = e.Format()
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
		fmt.Fprintf(w, "all: %d measurements : %d equations = %.0f:1\n", tab.Measurements, tab.Equations, tab.Compression)
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
			fits, err := occupancy.ReadFitsFile(args[0])
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
				v, err := occupancy.ParsePoint(spec, f.Params)
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

// predictCheck compares a fit's predictions with a sweep's measurements.
func predictCheck(w io.Writer, f *occupancy.Fit, path string, asJSON bool) error {
	sw, _, err := occupancy.ReadSweepFile(path)
	if err != nil {
		return err
	}
	c, err := f.Compare(sw)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if asJSON {
		return writeJSON(w, struct {
			Fit    string    `json:"fit"`
			Trials int       `json:"trials"`
			Acc95  float64   `json:"acc95"`
			MaxErr float64   `json:"max_err"`
			Errors []float64 `json:"errors"`
		}{f.Name, len(c.Errors), c.Acc95, c.MaxErr, c.Errors})
	}
	tw := newTable(w)
	fmt.Fprintln(tw, strings.Join(f.Params, "\t")+"\tpredicted T (s)\tmeasured T (s)\terror")
	for _, t := range c.Trials {
		var row []string
		for _, x := range t.Values {
			row = append(row, strconv.FormatFloat(x, 'g', -1, 64))
		}
		row = append(row, strconv.FormatFloat(t.Predicted, 'g', 4, 64), strconv.FormatFloat(t.Measured, 'g', 4, 64), fmt.Sprintf("%+.1f%%", 100*t.Error()))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d trials: T within %s of the measured elapsed time at 95%% (largest error %s)\n", len(c.Errors), pct(c.Acc95), pct(c.MaxErr))
	return nil
}
