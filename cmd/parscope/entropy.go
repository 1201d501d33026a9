package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
)

func init() {
	params := entropy.DefaultParams()
	var (
		runs   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "entropy TRACE",
		Short: "Entropy of the parallel execution: combinatorial, histogram, empirical, per subset and over time",
		Long: `Entropy measures how disordered the execution was, from its parallel states
(Gomez, Cai & Schubert 2017). A state of P processes among N blocks has the
combinatorial probability p = P!/(N^P Π b_k!), where b_k processes are in
block k. P counts the processes that exist at the state's time: a process is
absent before its first record and after it enters a state the trace marks
absent (a Go goroutine's not-exist), which is no block (N leaves it out).
Measures (bits), per run and over all runs:

  comb_entropy            −Σ over states of p log2 p (signed_comb_entropy is the paper's sign)
  comb_entropy_distinct   −Σ over distinct observed classes of p log2 p
  surprisal_mean          mean of −log2 p
  histogram_entropy_mean  mean of −Σ_k (b_k/P) log2(b_k/P)
  empirical_entropy       entropy of the observed class frequencies
  class_entropy_max       the largest class entropy possible for P and N

--window-ns gives the histogram entropy per time window as a series; --subsets
K ranks every window of K adjacent processes of run 0 by how far its entropy
(--measure, comb_entropy_distinct by default) stands from the others (the
search that finds a starving philosopher), in the same pass over the trace.
--json prints the result in the envelope every face shares (docs/results.md).`,
		Example: `  parscope entropy amoeba.pst
  parscope entropy --measure comb_entropy_distinct --procs 4,5,6 philosophers.pst
  parscope entropy --subsets 3 --cyclic philosophers.pst
  parscope entropy --window-ns 1ms --json amoeba.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if params.Measure != "" {
				if _, err := (entropy.Result{}).Value(entropy.Measure(params.Measure)); err != nil {
					return usagef("--measure: %v", err)
				}
			}
			if params.Window < 0 || params.Subsets < 0 || params.Blocks < 0 {
				return usagef("--window-ns, --subsets and --blocks must not be negative")
			}
			env, s, err := runOne(cmd, args[0], entropy.Name, params, runs)
			if err != nil {
				return err
			}
			s.Close()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), env)
			}
			return printEntropy(cmd.OutOrStdout(), env.Result.(*entropy.Report), entropy.Measure(params.Measure))
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	// --window was the series' width before the window of mentropy, an
	// event count, made the unit part of the name.
	fl.Var(fl.Lookup("window-ns").Value, "window", "the same as --window-ns")
	fl.MarkDeprecated("window", "use --window-ns")
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, entropy.Name)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// printEntropy prints the measures of each run (only m when given), then
// the series and the subset ranking when the result has them.
func printEntropy(out io.Writer, rep *entropy.Report, m entropy.Measure) error {
	w := newTable(out)
	if m != "" {
		fmt.Fprintf(w, "run\t%s (bits)\n", m)
		for _, r := range rep.Runs {
			v, _ := r.Value(m)
			fmt.Fprintf(w, "%d\t%.6g\n", r.Run, v)
		}
		if rep.All != nil {
			v, _ := rep.All.Value(m)
			fmt.Fprintf(w, "all\t%.6g\n", v)
		}
	} else {
		fmt.Fprintln(w, "run\tP\tN\tstates\tcomb\tcomb distinct\tclasses\tsurprisal mean\thistogram mean\tempirical\tclass max")
		row := func(name string, r entropy.Result) {
			fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%.6g\t%.6g\t%d\t%.6g\t%.6g\t%.6g\t%.6g\n", name, r.P, r.N, human.Count(r.Rows),
				r.CombEntropy, r.CombEntropyDistinct, r.DistinctClasses, r.SurprisalMean, r.HistogramEntropyMean, r.EmpiricalEntropy, r.ClassEntropyMax)
		}
		for _, r := range rep.Runs {
			row(fmt.Sprint(r.Run), r.Result)
		}
		if rep.All != nil {
			row("all", *rep.All)
		}
	}
	if rep.Series != nil {
		fmt.Fprintln(w, "\nrun\tstart\tend\thistogram entropy (bits)")
		for _, p := range rep.Series {
			fmt.Fprintf(w, "%d\t%s\t%s\t%.6f\n", p.Run, human.Nanos(float64(p.Start)), human.Nanos(float64(p.End)), p.Entropy)
		}
	}
	if sub := rep.Subsets; sub != nil {
		fmt.Fprintf(w, "\nrank\tprocesses of run %d\t%s (bits)\tscore\n", sub.Run, sub.Measure)
		for i, s := range sub.Results {
			fmt.Fprintf(w, "%d\t%s\t%.6g\t%+.2f\n", i+1, joinIDs(s.Procs), s.Value, s.Score)
		}
	}
	return w.Flush()
}

func joinIDs(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ",")
}
