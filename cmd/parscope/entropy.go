package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/internal/human"
)

// entropyReport is what `parscope entropy` computes; --json prints it.
type entropyReport struct {
	Runs    []runEntropy           `json:"runs"`
	All     *entropy.Result        `json:"all,omitempty"`
	Series  []entropy.WindowPoint  `json:"series,omitempty"`
	Subsets []entropy.SubsetResult `json:"subsets,omitempty"`
	Measure entropy.Measure        `json:"measure,omitempty"`
	Options map[string]any         `json:"options"`
}

type runEntropy struct {
	Run int32 `json:"run"`
	entropy.Result
}

func init() {
	var (
		f            stateFlags
		measure      string
		blocks       int
		timeWeighted bool
		subsets      int
		cyclic       bool
		window       time.Duration
		asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "entropy TRACE.pst",
		Short: "Entropy of the parallel execution: combinatorial, histogram, empirical, per subset and over time",
		Long: `Entropy measures how disordered the execution was, from its parallel states
(Gomez, Cai & Schubert 2017). A state of P processes among N blocks has the
combinatorial probability p = P!/(N^P Π b_k!), where b_k processes are in
block k. Measures (bits), per run and over all runs:

  comb_entropy            −Σ over states of p log2 p (signed_comb_entropy is the paper's sign)
  comb_entropy_distinct   −Σ over distinct observed classes of p log2 p
  surprisal_mean          mean of −log2 p
  histogram_entropy_mean  mean of −Σ_k (b_k/P) log2(b_k/P)
  empirical_entropy       entropy of the observed class frequencies
  class_entropy_max       the largest class entropy possible for P and N

--window gives the histogram entropy per time window as a series; --subsets K
ranks every window of K adjacent processes by how far its entropy stands from
the others (the search that finds a starving philosopher).`,
		Example: `  parscope entropy amoeba.pst
  parscope entropy --measure comb_entropy_distinct --procs 4,5,6 philosophers.pst
  parscope entropy --subsets 3 --cyclic philosophers.pst
  parscope entropy --window 1ms --json amoeba.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, open, sopts, err := f.open(cmd, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			m := entropy.Measure(measure)
			if measure != "" {
				if _, err := (entropy.Result{}).Value(m); err != nil {
					return usagef("--measure: %v", err)
				}
			}
			h := s.Header()
			if blocks == 0 {
				blocks = len(h.States)
			}
			eopts := entropy.Options{Blocks: blocks, TimeWeighted: timeWeighted}
			rep := entropyReport{Measure: m, Options: map[string]any{"blocks": blocks, "time_weighted": timeWeighted}}
			switch {
			case subsets > 0:
				if m == "" {
					m = entropy.MeasureCombDistinct
					rep.Measure = m
				}
				rep.Subsets, err = entropy.Subsets(cmd.Context(), h, open, subsets, cyclic, eopts, m)
				if err != nil {
					return err
				}
			case window > 0:
				w, err := entropy.NewWindows(int64(window))
				if err != nil {
					return usagef("--window: %v", err)
				}
				if err := state.Reconstruct(cmd.Context(), h, open(), sopts, w.Add); err != nil {
					return err
				}
				rep.Series = w.Result()
			default:
				var cur *entropy.Accumulator
				var run int32
				all := entropy.NewAccumulator(eopts)
				allOK := true
				flush := func() {
					if cur == nil {
						return
					}
					rep.Runs = append(rep.Runs, runEntropy{run, cur.Result()})
					if allOK && all.Merge(cur) != nil {
						allOK = false
					}
				}
				err := state.Reconstruct(cmd.Context(), h, open(), sopts, func(r *state.Row) error {
					if cur == nil || r.Run != run {
						flush()
						cur, run = entropy.NewAccumulator(eopts), r.Run
					}
					return cur.Add(r)
				})
				if err != nil {
					return err
				}
				flush()
				if allOK && len(rep.Runs) > 1 {
					a := all.Result()
					rep.All = &a
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return printEntropy(cmd, rep)
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&measure, "measure", "", "print only this measure ("+strings.Join(measureNames(), ", ")+")")
	fl.IntVar(&blocks, "blocks", 0, "N, the number of blocks of the code (default: the trace's state dictionary)")
	fl.BoolVar(&timeWeighted, "time-weighted", false, "weight each state by its duration instead of 1")
	fl.IntVar(&subsets, "subsets", 0, "rank every window of this many adjacent processes")
	fl.BoolVar(&cyclic, "cyclic", false, "with --subsets: windows wrap around (processes in a ring)")
	fl.DurationVar(&window, "window", 0, "histogram entropy per time window of this duration")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	root.AddCommand(cmd)
}

func measureNames() []string {
	var ns []string
	for _, m := range entropy.Measures {
		ns = append(ns, string(m))
	}
	return ns
}

func printEntropy(cmd *cobra.Command, rep entropyReport) error {
	w := newTable(cmd.OutOrStdout())
	switch {
	case rep.Subsets != nil:
		fmt.Fprintf(w, "rank\tprocesses\t%s (bits)\tscore\n", rep.Measure)
		for i, s := range rep.Subsets {
			fmt.Fprintf(w, "%d\t%s\t%.6g\t%+.2f\n", i+1, joinIDs(s.Procs), s.Value, s.Score)
		}
	case rep.Series != nil:
		fmt.Fprintln(w, "run\tstart\tend\thistogram entropy (bits)")
		for _, p := range rep.Series {
			fmt.Fprintf(w, "%d\t%s\t%s\t%.6f\n", p.Run, fmtNS(p.Start), fmtNS(p.End), p.Entropy)
		}
	case rep.Measure != "":
		fmt.Fprintf(w, "run\t%s (bits)\n", rep.Measure)
		for _, r := range rep.Runs {
			v, _ := r.Value(rep.Measure)
			fmt.Fprintf(w, "%d\t%.6g\n", r.Run, v)
		}
		if rep.All != nil {
			v, _ := rep.All.Value(rep.Measure)
			fmt.Fprintf(w, "all\t%.6g\n", v)
		}
	default:
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
	return w.Flush()
}

func joinIDs(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ",")
}
