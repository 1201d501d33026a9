package main

import (
	"github.com/spf13/cobra"

	"github.com/parscope/parscope/engine"
)

// procSels are the selection flags of each analysis command.
var procSels = map[*cobra.Command]*engine.ProcFlags{}

// addProcFlags gives an analysis command the selection flags every face
// gives an analysis (engine.BindProcFlags): --exclude-procs, and --procs
// unless the analysis' own options bind that name already (mentropy,
// phases and the state analyses select their processes themselves). The
// engine feeds the analysis only the selected processes' records; the
// others count as processes that never exist. A command of an analysis
// that reads processes' states (analysis, the registered name) also gets
// --states-from, where they come from (engine.StatesFrom).
func addProcFlags(cmd *cobra.Command, analysis string) {
	procSels[cmd] = engine.BindProcFlags(cmd.Flags(), analysis)
}

// selectProcs sets req's process selection and source of states from
// cmd's flags.
func selectProcs(cmd *cobra.Command, req *engine.Request) error {
	ps := procSels[cmd]
	if ps == nil {
		return nil
	}
	if err := ps.Apply(req); err != nil {
		return usagef("%v", err)
	}
	return nil
}
