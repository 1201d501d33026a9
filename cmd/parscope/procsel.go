package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// procSel holds an analysis command's selection flags: the processes
// analysed and where their states come from.
type procSel struct {
	only, skip string
	states     string
}

// procSels are the selection flags of each analysis command.
var procSels = map[*cobra.Command]*procSel{}

// addProcFlags gives an analysis command --exclude-procs, and --procs
// unless the analysis' own options bind that name already (mentropy and
// phases select their processes themselves). The engine feeds the
// analysis only the selected processes' records; the others count as
// processes that never exist. A command of an analysis that reads
// processes' states (analysis, the registered name) also gets
// --states-from, where they come from (engine.StatesFrom).
func addProcFlags(cmd *cobra.Command, analysis string) {
	ps := &procSel{}
	fl := cmd.Flags()
	if fl.Lookup("procs") == nil {
		fl.StringVar(&ps.only, "procs", "", "only these processes (e.g. 0-15); the others count as absent")
	}
	fl.StringVar(&ps.skip, "exclude-procs", "", "leave these processes out (counter readers, GPU streams, helper threads); they count as absent")
	if a, ok := engine.Lookup(analysis); ok && !a.Recorded && slices.Contains(a.Kinds(a.Options()), trace.KindState) {
		fl.StringVar(&ps.states, "states-from", string(engine.StatesAuto), engine.StatesFromHelp)
	}
	procSels[cmd] = ps
}

// selectProcs sets req's process selection and source of states from
// cmd's flags.
func selectProcs(cmd *cobra.Command, req *engine.Request) error {
	ps := procSels[cmd]
	if ps == nil {
		return nil
	}
	var err error
	if req.Procs, err = parseIDList(ps.only); err != nil {
		return usagef("--procs: %v", err)
	}
	if req.ExcludeProcs, err = parseIDList(ps.skip); err != nil {
		return usagef("--exclude-procs: %v", err)
	}
	if req.States, err = engine.ParseStatesFrom(ps.states); err != nil {
		return usagef("--states-from: %v", err)
	}
	return nil
}
