package engine

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/parscope/parscope/trace"
)

// ProcFlags are the flags every face gives an analysis to select the
// processes it reads and where their states come from: --procs (unless
// the analysis' options bind that name: mentropy, phases and the state
// analyses select processes themselves), --exclude-procs, and, for an
// analysis that reads processes' states, --states-from.
type ProcFlags struct {
	only, skip, states string
}

// BindProcFlags defines the ProcFlags of the analysis named analysis on
// fs, where its options are bound already (BindFlags).
func BindProcFlags(fs *pflag.FlagSet, analysis string) *ProcFlags {
	f := &ProcFlags{}
	if fs.Lookup("procs") == nil {
		fs.StringVar(&f.only, "procs", "", "only these processes (e.g. 0-15); the others count as absent")
	}
	fs.StringVar(&f.skip, "exclude-procs", "", "leave these processes out (counter readers, GPU streams, helper threads); they count as absent")
	if a, ok := Lookup(analysis); ok && !a.Recorded && slices.Contains(a.Kinds(a.Options()), trace.KindState) {
		fs.StringVar(&f.states, "states-from", string(StatesAuto), StatesFromHelp)
	}
	return f
}

// Apply sets the process selection and the source of states of req from
// the flags parsed; an error names the flag.
func (f *ProcFlags) Apply(req *Request) error {
	var err error
	if req.Procs, err = ParseIDs(f.only); err != nil {
		return fmt.Errorf("--procs: %w", err)
	}
	if req.ExcludeProcs, err = ParseIDs(f.skip); err != nil {
		return fmt.Errorf("--exclude-procs: %w", err)
	}
	if req.States, err = ParseStatesFrom(f.states); err != nil {
		return fmt.Errorf("--states-from: %w", err)
	}
	return nil
}
