package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/show/plot"
)

func init() {
	params := pca.DefaultParams()
	var (
		runs     string
		plotPC1  string
		plotPC12 string
		asJSON   bool
		force    bool
	)
	cmd := &cobra.Command{
		Use:   "pca TRACE",
		Short: "Principal components of the state matrix (Gomez, Cai & Schubert 2017, section 3.4)",
		Long: `PCA treats every reconstructed state as a row and every process as a column,
and finds the directions of largest variance. The first component shows the
typical progress of the processes; the next ones how they differ at a moment.
For a lockstep execution all the variance is in the first component. A
process that does not exist at a state's time (before its first record,
after a goroutine ended) has the value -1 there, one below every block id.

Up to 4096 processes the covariance matrix is formed and decomposed exactly
in one pass over the trace. Above that (its P×P matrices would need
gigabytes) the top components are found by randomized subspace iteration
(Halko, Martinsson & Tropp 2011), which reads the trace a few more times and
needs memory in proportion to P times the number of components;
--components 0 (all) is then refused. One more pass scores every state: it
counts the V shapes of PC1 of each run (its rises of 1.5 standard deviations
of PC1, one per iteration of a loop the processes go through together) and
keeps the scores of at most --max-points evenly spaced states per run.

--plot draws PC1 against the state number, one line per run (the paper's
Figure 8); --plot-pc12 draws PC1 against PC2 with markers growing with time
(Figure 6), both from the kept scores. --json prints the result in the
envelope every face shares (docs/results.md).`,
		Example: `  parscope pca amoeba.pst
  parscope pca --components 3 --plot pc1.png --plot-pc12 pc12.svg amoeba.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if params.Components < 0 || params.MaxPoints < 0 {
				return usagef("--components and --max-points must not be negative")
			}
			if plotPC12 != "" && params.Components == 1 {
				return usagef("--plot-pc12 needs at least 2 components")
			}
			env, s, err := runOne(cmd, args[0], pca.Name, params, runs)
			if err != nil {
				return err
			}
			s.Close()
			rep := env.Result.(*pca.Report)
			if err := plotPCA(rep, plotPC1, plotPC12, force); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), env)
			}
			return printPCA(cmd.OutOrStdout(), rep)
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, pca.Name)
	fileOutputFlag(fl, &plotPC1, "plot", "", "", "draw PC1 against the state number to this .png or .svg")
	fileOutputFlag(fl, &plotPC12, "plot-pc12", "", "", "draw PC1 against PC2 to this .png or .svg")
	forceFlag(fl, &force)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// explained returns the percentage of the variance the first k components
// of rep explain.
func explained(rep *pca.Report, k int) float64 {
	e := 0.0
	for _, c := range rep.Components[:min(k, len(rep.Components))] {
		e += c.Explained
	}
	return 100 * e
}

// plotPCA draws the kept scores of rep: PC1 against the state number to
// pc1 and PC1 against PC2 to pc12 (each when not empty), replacing a file
// only with force.
func plotPCA(rep *pca.Report, pc1, pc12 string, force bool) error {
	if pc1 != "" {
		var series []plot.Series
		for _, r := range rep.Runs {
			s := plot.Series{Name: fmt.Sprintf("run %d", r.Run), Y: r.Scores[0]}
			for _, i := range r.Index {
				s.X = append(s.X, float64(i))
			}
			series = append(series, s)
		}
		title := fmt.Sprintf("PC1 against state number (%.1f%% of the variance)", explained(rep, 1))
		fig, err := plot.Lines(pc1, title, "state", "PC1", series)
		if err := writeFigure(pc1, force, fig, err); err != nil {
			return err
		}
	}
	if pc12 != "" {
		if len(rep.Components) < 2 {
			return usagef("--plot-pc12 needs at least 2 components")
		}
		var series []plot.Series
		for _, r := range rep.Runs {
			s := plot.Series{Name: fmt.Sprintf("run %d", r.Run), X: r.Scores[0], Y: r.Scores[1]}
			for k := range r.Index {
				s.Size = append(s.Size, float64(k)/float64(max(len(r.Index)-1, 1)))
			}
			series = append(series, s)
		}
		title := fmt.Sprintf("PC1 against PC2 (%.1f%% of the variance); markers grow with time", explained(rep, 2))
		fig, err := plot.Scatter(pc12, title, "PC1", "PC2", series)
		if err := writeFigure(pc12, force, fig, err); err != nil {
			return err
		}
	}
	return nil
}

// printPCA prints the components and, per run, the states and V shapes.
func printPCA(out io.Writer, rep *pca.Report) error {
	w := newTable(out)
	fmt.Fprintf(w, "states\t%s over %d runs, %d processes (%s method)\n", human.Count(rep.Rows), len(rep.Runs), rep.Procs, rep.Method)
	fmt.Fprintf(w, "total variance\t%.6g\n", rep.TotalVariance)
	fmt.Fprintln(w, "\ncomponent\tvariance\texplained\tcumulative")
	cum := 0.0
	for i, c := range rep.Components {
		cum += c.Explained
		fmt.Fprintf(w, "PC%d\t%.6g\t%.2f%%\t%.2f%%\n", i+1, c.Variance, 100*c.Explained, 100*cum)
	}
	fmt.Fprintf(w, "\nrun\tstates\tPC1 V shapes (rises of %.4g)\n", rep.VShapeProminence)
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "%d\t%s\t%d\n", r.Run, human.Count(r.States), r.VShapes)
	}
	return w.Flush()
}
