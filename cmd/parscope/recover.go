package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/internal/progress"
)

func init() {
	var force bool
	cmd := &cobra.Command{
		Use:   "recover TRACE.pst",
		Short: "Build a .pst from what a recording program left behind when it died",
		Long: `A program recording itself with the instrument library writes its buffers
to TRACE.pst.spill/ as it goes and builds TRACE.pst when it calls Close.
If it ended without Close (os.Exit, a panic in a goroutine, a kill),
recover builds TRACE.pst from the spill: every record up to each process's
last flush point, and every full buffer already written. Records still in
memory at the exit are lost.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spill := instrument.SpillDir(args[0])
			if _, err := os.Stat(spill); err != nil {
				return fmt.Errorf("nothing to recover for %s: %w", args[0], err)
			}
			if err := instrument.Recover(args[0], force); err != nil {
				return err
			}
			progress.Notef(cmd.ErrOrStderr(), "recovered %s from %s\n", args[0], spill)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace TRACE.pst if it exists")
	root.AddCommand(cmd)
}
