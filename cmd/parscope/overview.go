package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/trace"
)

func init() {
	params := overview.DefaultParams()
	var (
		runs   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "overview TRACE",
		Short: "What a trace holds: runs, processes, time spans, records by kind and over time",
		Long: `Overview reads every record of a trace once and reports, per run, its
processes, records and time span (from its first record to the last time a
record covers), the records of each kind, and the names of the processes
whose name says more than their number (the pid or rank an importer
renumbered). The counts come from the records, so they check the manifest
that info reads.

--json prints the result in the JSON envelope every face of parscope shares
(see docs/results.md); it also holds, per run, the records of each kind per
time window at several levels of detail (--windows at the finest, each
coarser level 4 times fewer): what the report's "Records over time" chart
and parscope serve's overview queries show.`,
		Example: `  parscope overview amoeba.pst
  parscope overview --runs 0 --windows 64 --json ring.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sel, err := parseIDList(runs)
			if err != nil {
				return usagef("--runs: %v", err)
			}
			if params.Windows < 1 {
				return usagef("--windows %d: want 1 or more", params.Windows)
			}
			env, s, err := runSelected(cmd, args[0], overview.Name, params, sel)
			if err != nil {
				return err
			}
			defer s.Close()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), env)
			}
			return printOverview(cmd.OutOrStdout(), env.Trace, env.Result.(*overview.Result))
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, overview.Name)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// printOverview prints the overview as tables: the records by kind, the
// runs, and the informative process names.
func printOverview(out io.Writer, name string, r *overview.Result) error {
	w := newTable(out)
	var total int64
	var kinds []string
	for _, k := range trace.Kinds {
		if n, ok := r.Records[k.String()]; ok {
			total += n
			kinds = append(kinds, fmt.Sprintf("%s %s", human.Count(n), k))
		}
	}
	fmt.Fprintf(w, "trace\t%s\n", name)
	fmt.Fprintf(w, "runs\t%d\n", len(r.Runs))
	fmt.Fprintf(w, "records\t%s\n", human.Count(total))
	if len(kinds) > 0 {
		fmt.Fprintf(w, "  by kind\t%s\n", strings.Join(kinds, ", "))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	w = newTable(out)
	fmt.Fprintln(w, "run\tname\tprocs\trecords\tstart\tend\tspan")
	for _, rs := range r.Runs {
		n := rs.Name
		if n == "" {
			n = "-"
		}
		fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%s\t%s\t%s\n", rs.Run, n, rs.Procs, human.Count(rs.Records),
			time.Duration(rs.BeginNS), time.Duration(rs.EndNS), time.Duration(rs.EndNS-rs.BeginNS))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	shown := 0
	for _, rs := range r.Runs {
		for _, p := range rs.ProcessNames {
			if shown == 0 {
				fmt.Fprintln(out)
				w = newTable(out)
			}
			if shown == maxInfoProcs {
				fmt.Fprintf(w, "  …\tmore process names (--json lists them all)\n")
				return w.Flush()
			}
			fmt.Fprintf(w, "process %d of run %d\t%s\n", p.Proc, rs.Run, p.Name)
			shown++
		}
	}
	if shown > 0 {
		return w.Flush()
	}
	return nil
}
