package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/show/plot"
)

// pcaReport is what `parscope pca --json` prints.
type pcaReport struct {
	*pca.Result
	// Runs gives, per run, the number of states projected.
	Runs []pcaRun `json:"runs"`
}

type pcaRun struct {
	Run    int32 `json:"run"`
	States int   `json:"states"`
	// VShapes counts the upward swings of PC1 against state number (the V
	// shapes of Figure 8: one per iteration of a loop the processes go
	// through together); see pca.Swings.
	VShapes int `json:"v_shapes"`
}

// maxPlotPoints bounds the points drawn per run.
const maxPlotPoints = 20000

func init() {
	var (
		f            stateFlags
		components   int
		timeWeighted bool
		plotPC1      string
		plotPC12     string
		asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "pca TRACE.pst",
		Short: "Principal components of the state matrix (Gomez, Cai & Schubert 2017, section 3.4)",
		Long: `PCA treats every reconstructed state as a row and every process as a column,
and finds the directions of largest variance. The first component shows the
typical progress of the processes; the next ones how they differ at a moment.
For a lockstep execution all the variance is in the first component.

Up to 4096 processes the covariance matrix is formed and decomposed exactly.
Above that (its P×P matrices would need gigabytes) the top components are
found by randomized subspace iteration (Halko, Martinsson & Tropp 2011),
which reads the trace a few more times and needs memory in proportion to
P times the number of components; --components 0 (all) is then refused.

--plot draws PC1 against the state number, one line per run (the paper's
Figure 8); --plot-pc12 draws PC1 against PC2 with markers growing with time
(Figure 6).`,
		Example: `  parscope pca amoeba.pst
  parscope pca --components 3 --plot pc1.png --plot-pc12 pc12.svg amoeba.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, open, sopts, err := f.open(cmd, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			pass := func(fn func(*state.Row) error) error {
				return state.Reconstruct(cmd.Context(), s.Header(), open(), sopts, fn)
			}
			procs, err := firstRowProcs(pass)
			if err != nil {
				return err
			}
			if procs < 0 {
				return fmt.Errorf("%s: no states to analyse (the trace has no state records)", args[0])
			}
			res, err := pca.Compute(cmd.Context(), procs, components, timeWeighted, 1, pass)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			// Second pass: scores per run, for the plots.
			sc := pca.NewScorer(res)
			var runs []pcaRun
			var pc1, pc2 []plot.Series
			err = state.Reconstruct(cmd.Context(), s.Header(), open(), sopts, func(r *state.Row) error {
				if len(runs) == 0 || runs[len(runs)-1].Run != r.Run {
					runs = append(runs, pcaRun{Run: r.Run})
					pc1 = append(pc1, plot.Series{Name: fmt.Sprintf("run %d", r.Run)})
					pc2 = append(pc2, plot.Series{Name: fmt.Sprintf("run %d", r.Run)})
					sc.Reset()
				}
				v := sc.Scores(r)
				i := len(runs) - 1
				runs[i].States++
				pc1[i].X = append(pc1[i].X, float64(r.Index))
				pc1[i].Y = append(pc1[i].Y, v[0])
				if len(v) > 1 {
					pc2[i].X = append(pc2[i].X, v[0])
					pc2[i].Y = append(pc2[i].Y, v[1])
				}
				return nil
			})
			if err != nil {
				return err
			}
			for i := range runs {
				runs[i].VShapes = pca.Swings(pc1[i].Y, pca.SwingProminence(pc1[i].Y))
			}
			explained := func(k int) float64 {
				e := 0.0
				for _, c := range res.Components[:min(k, len(res.Components))] {
					e += c.Explained
				}
				return 100 * e
			}
			if plotPC1 != "" {
				title := fmt.Sprintf("PC1 against state number (%.1f%% of the variance)", explained(1))
				if err := plot.Lines(plotPC1, title, "state", "PC1", thinSeries(pc1, false)); err != nil {
					return err
				}
			}
			if plotPC12 != "" {
				if len(res.Components) < 2 {
					return usagef("--plot-pc12 needs at least 2 components")
				}
				title := fmt.Sprintf("PC1 against PC2 (%.1f%% of the variance); markers grow with time", explained(2))
				if err := plot.Scatter(plotPC12, title, "PC1", "PC2", thinSeries(pc2, true)); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), pcaReport{Result: res, Runs: runs})
			}
			w := newTable(cmd.OutOrStdout())
			fmt.Fprintf(w, "states\t%s over %d runs, %d processes\n", human.Count(res.Rows), len(runs), res.Procs)
			fmt.Fprintf(w, "total variance\t%.6g\n", res.TotalVariance)
			fmt.Fprintln(w, "\ncomponent\tvariance\texplained\tcumulative")
			cum := 0.0
			for i, c := range res.Components {
				cum += c.Explained
				fmt.Fprintf(w, "PC%d\t%.6g\t%.2f%%\t%.2f%%\n", i+1, c.Variance, 100*c.Explained, 100*cum)
			}
			fmt.Fprintln(w, "\nrun\tstates\tPC1 V shapes")
			for _, r := range runs {
				fmt.Fprintf(w, "%d\t%d\t%d\n", r.Run, r.States, r.VShapes)
			}
			return w.Flush()
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&components, "components", 3, "number of components to report (0: all)")
	fl.BoolVar(&timeWeighted, "time-weighted", false, "weight each state by its duration instead of 1")
	fl.StringVar(&plotPC1, "plot", "", "draw PC1 against the state number to this .png or .svg")
	fl.StringVar(&plotPC12, "plot-pc12", "", "draw PC1 against PC2 to this .png or .svg")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	root.AddCommand(cmd)
}

// errFirstRow stops a pass after its first row.
var errFirstRow = errors.New("first row seen")

// firstRowProcs returns the number of processes of the first state row
// that pass gives, reading no further, or -1 when there is none.
func firstRowProcs(pass pca.Pass) (int, error) {
	procs := -1
	err := pass(func(r *state.Row) error {
		procs = r.P()
		return errFirstRow
	})
	if err != nil && !errors.Is(err, errFirstRow) {
		return 0, err
	}
	return procs, nil
}

// thinSeries keeps at most maxPlotPoints points per series; with sized, the
// markers grow with the position in the run.
func thinSeries(in []plot.Series, sized bool) []plot.Series {
	out := make([]plot.Series, len(in))
	for i, s := range in {
		idx := plot.Thin(len(s.X), maxPlotPoints)
		o := plot.Series{Name: s.Name}
		for k, j := range idx {
			o.X = append(o.X, s.X[j])
			o.Y = append(o.Y, s.Y[j])
			if sized {
				o.Size = append(o.Size, float64(k)/float64(max(len(idx)-1, 1)))
			}
		}
		out[i] = o
	}
	return out
}
