package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/engine"
)

// tableOutput is how an analysis command prints its result: as CSV with
// --csv, as text tables otherwise (--json prints the envelope).
type tableOutput[R any] struct {
	// csvHelp is the help of --csv.
	csvHelp string
	// csv writes the result as CSV.
	csv func(w io.Writer, r *R) error
	// text prints the result of the trace named name.
	text func(w io.Writer, name string, r *R) error
	// beforeCSV, when not nil, adjusts the options when --csv is asked,
	// before the analysis runs.
	beforeCSV func()
}

// addAnalysisCommand makes cmd run the engine analysis name with the
// options params (bound to flags), with --runs, --procs/--exclude-procs,
// --json (the envelope every face shares), --csv and the trace import
// flags, and adds it to the root command. Flags of its own are added to
// cmd before or after.
func addAnalysisCommand[R any](cmd *cobra.Command, name string, params any, out tableOutput[R]) {
	var (
		runs          string
		asJSON, asCSV bool
	)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if asJSON && asCSV {
			return usagef("--json and --csv: choose one")
		}
		if asCSV && out.beforeCSV != nil {
			out.beforeCSV()
		}
		env, s, err := runOne(cmd, args[0], name, params, runs)
		if err != nil {
			return err
		}
		defer s.Close()
		r := env.Result.(*R)
		switch {
		case asJSON:
			return writeJSON(cmd.OutOrStdout(), env)
		case asCSV:
			return out.csv(cmd.OutOrStdout(), r)
		}
		return out.text(cmd.OutOrStdout(), env.Trace, r)
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, name)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.BoolVar(&asCSV, "csv", false, out.csvHelp)
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}
