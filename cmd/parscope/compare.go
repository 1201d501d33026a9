package main

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/compare"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/report"
)

func init() {
	var (
		runA, runB int32
		asJSON     bool
		f          reportFlags
	)
	cmd := &cobra.Command{
		Use:   "compare A [B]",
		Short: "Compare two traces or two runs: every analysis side by side with its differences",
		Long: `compare runs every analysis that applies (as analyze does) on two traces,
or on one trace given once or twice, and sets run --run-a of A beside run
--run-b of B: before and after a change, 16 against 64 ranks, two runs of
an ensemble. With one trace, --run-b defaults to 1.

Processes differ between traces, so it compares what does not depend on
them: the run's records and span, the profile's times and visits of each
region (matched by name, the largest changes first), the POP
efficiencies, the wait time of each wait-state pattern, the critical
path's length and its regions, the communication totals, and the
occupancy and entropy headline figures. An analysis that applies to one
side only is listed with the reason the other lacks it.

Each figure prints as A, B and the change B − A with its sign and in
percent of A. --json prints {schema_version, analysis: "compare",
a: {trace, run}, b: {trace, run}, result} (docs/compare.md).`,
		Example: `  parscope compare before.pst after.pst
  parscope compare --json ring16.pst ring64.pst
  parscope compare --run-a 0 --run-b 2 ensemble.pst`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runA < 0 || runB < 0 {
				return usagef("--run-a and --run-b: want a run number ≥ 0")
			}
			pathA, pathB := args[0], args[0]
			if len(args) == 2 {
				pathB = args[1]
			} else if !cmd.Flags().Changed("run-b") {
				runB = 1
			}
			a, err := f.build(cmd, pathA)
			if err != nil {
				return err
			}
			b := a
			if pathB != pathA && !sameFile(pathA, pathB) {
				if b, err = f.build(cmd, pathB); err != nil {
					return err
				}
			}
			res, err := compare.Bundles(a, b, runA, runB)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), compare.Wrap(res))
			}
			return printCompare(cmd.OutOrStdout(), res)
		},
	}
	fl := cmd.Flags()
	fl.Int32Var(&runA, "run-a", 0, "the run of trace A to compare")
	fl.Int32Var(&runB, "run-b", 0, "the run of trace B to compare (default 1 when one trace is given)")
	fl.BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	fl.StringVar(&f.states, "states-from", string(engine.StatesAuto), engine.StatesFromHelp)
	addTraceFlags(cmd, "format")
	f.maxPoints = report.DefaultMaxPoints
	root.AddCommand(cmd)
}

// printCompare prints a table per analysis: figure, A, B, change.
func printCompare(w io.Writer, r *compare.Result) error {
	fmt.Fprintf(w, "A: %s run %d\nB: %s run %d\n", r.TraceA, r.RunA, r.TraceB, r.RunB)
	for _, s := range r.Sections {
		for _, t := range s.Tables {
			fmt.Fprintf(w, "\n%s: %s\n", s.Analysis, t.Title)
			if t.Note != "" {
				fmt.Fprintf(w, "  (%s)\n", t.Note)
			}
			tw := newTable(w)
			fmt.Fprintln(tw, "  figure\tA\tB\tchange\t")
			for _, row := range t.Rows {
				name := row.Name
				if row.Only != "" {
					name += " (only in " + map[string]string{compare.SideA: "A", compare.SideB: "B"}[row.Only] + ")"
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", name, fmtFigure(row.Unit, row.A, false), fmtFigure(row.Unit, row.B, false), fmtChange(row))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if t.Omitted > 0 {
				fmt.Fprintf(w, "  (%d more rows of smaller change)\n", t.Omitted)
			}
		}
	}
	if len(r.Missing) > 0 {
		fmt.Fprintln(w, "\nnot compared:")
		for _, m := range r.Missing {
			fmt.Fprintf(w, "  %s: %s\n", m.Analysis, missingText(m))
		}
	}
	return nil
}

// missingText says which side lacks an analysis, and why.
func missingText(m compare.Missing) string {
	switch m.In {
	case compare.SideA:
		return "only in A; B: " + m.ReasonB
	case compare.SideB:
		return "only in B; A: " + m.ReasonA
	}
	if m.ReasonA == m.ReasonB {
		return "in neither: " + m.ReasonA
	}
	return "in neither: A: " + m.ReasonA + "; B: " + m.ReasonB
}

// fmtFigure formats a figure by its unit, with a sign when signed.
func fmtFigure(unit string, v float64, signed bool) string {
	sign := ""
	if signed && v > 0 {
		sign = "+"
	}
	switch unit {
	case compare.UnitNS:
		return sign + human.Nanos(v)
	case compare.UnitBytes:
		return sign + human.Bytes(int64(math.Round(v)))
	case compare.UnitCount:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return sign + human.Count(int64(v))
		}
		return sign + strconv.FormatFloat(v, 'g', 4, 64)
	case compare.UnitBits:
		return sign + fixed(v, 3) + " bits"
	}
	return sign + fixed(v, 4)
}

// fixed formats v with prec decimals, or with 4 significant digits when
// those decimals would show a figure that is not 0 as 0: the entropy of a
// run of 64 ranks, 1.8e-33 bits, against 1.2e-07 of 16 is a change of
// −100%, not of 0.000 bits.
func fixed(v float64, prec int) string {
	if v != 0 && math.Abs(v) < 0.5*math.Pow10(-prec) {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// fmtChange formats B − A with its sign and its percentage of A.
func fmtChange(r compare.Row) string {
	if r.Diff == 0 {
		return "="
	}
	s := fmtFigure(r.Unit, r.Diff, true)
	if r.DiffPct == nil {
		return s + " (new)"
	}
	sign := ""
	if *r.DiffPct > 0 {
		sign = "+"
	}
	return s + " (" + sign + strconv.FormatFloat(*r.DiffPct, 'f', 1, 64) + "%)"
}
