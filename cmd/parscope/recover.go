package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/instrument"
	_ "github.com/parscope/parscope/instrument/pst" // instrument.Recover builds recordings (see package pst)
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
)

func init() {
	var (
		force, keep, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "recover TRACE.pst",
		Short: "Build a .pst from a recording left unbuilt, or from what a recording program left behind when it died",
		Long: `A program recording itself with the instrument library writes its buffers
to TRACE.pst.spill/ as it goes and, when it links the trace store (the
examples do, and programs rewritten with parscope instrument
--build-at-exit), builds TRACE.pst when it calls Close. A program that
does not link the store (a program rewritten by parscope instrument, by
default), or that records with PARSCOPE_BUILD=later (Options.BuildLater),
leaves the whole recording there instead, so that it does not pay for
building the trace; recover builds TRACE.pst from it, the trace Close
would have built (every command given TRACE.pst builds it too, the first
time).
If the program ended without Close (os.Exit, a panic in a goroutine, a kill),
recover builds TRACE.pst from the spill: every record up to each process's
last flush point, and every full buffer already written. Records still in
memory at the exit are lost.

A chunk of the spill file that is damaged (its checksum or header does not
check out) is skipped, and every intact chunk after it is still recovered.
recover then names the skipped byte ranges, keeps the spill directory and
exits with status 1: the trace is written but incomplete. A chunk cut short
at the very end of the file is what the program's death left unfinished,
not damage. The spill directory is removed only when the trace holds every
intact chunk and --keep is not given.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rec, err := instrument.Recover(args[0], instrument.RecoverOptions{Force: force, Keep: keep})
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), rec); err != nil {
					return err
				}
			}
			spill := instrument.SpillDir(args[0])
			if len(rec.Skipped) == 0 {
				verb := "recovered"
				if rec.Complete {
					verb = "built"
				}
				progress.Notef(cmd.ErrOrStderr(), "%s %s: %s records in %s chunks from %s\n",
					verb, args[0], human.Count(rec.Records), human.Count(int64(rec.Chunks)), spill)
				if rec.TornTail > 0 {
					progress.Warnf(cmd.ErrOrStderr(), "the last %s of %s were a chunk left unfinished when the program died: its records are lost", human.Bytes(rec.TornTail), rec.Spill)
				}
				if rec.Kept {
					progress.Notef(cmd.ErrOrStderr(), "kept %s (--keep)\n", spill)
				}
				return nil
			}
			for _, s := range rec.Skipped {
				progress.Warnf(cmd.ErrOrStderr(), "skipped damaged bytes %d to %d (%s) of %s", s.Offset, s.Offset+s.Bytes, human.Bytes(s.Bytes), rec.Spill)
			}
			return fmt.Errorf("recovered %s only in part: %s records in %s intact chunks; %d damaged stretch(es) of %s (%s) skipped; %s is kept",
				args[0], human.Count(rec.Records), human.Count(int64(rec.Chunks)), len(rec.Skipped), rec.Spill, human.Bytes(rec.SkippedBytes()), spill)
		},
	}
	forceFlag(cmd.Flags(), &force)
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the spill directory (always kept when anything was skipped)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was recovered and skipped as JSON")
	root.AddCommand(cmd)
}

// buildRecording builds the .pst at path from the complete recording a
// program left in its spill directory (a program without the trace store,
// or PARSCOPE_BUILD=later), as recover
// does, saying so on stderr; damage found in the spill is an error, with
// the spill directory kept.
func buildRecording(cmd *cobra.Command, path string) error {
	spill := instrument.SpillDir(path)
	progress.Notef(cmd.ErrOrStderr(), "building %s from the recording the program left in %s\n", path, spill)
	rec, err := instrument.Recover(path, instrument.RecoverOptions{})
	if err != nil {
		return err
	}
	if len(rec.Skipped) > 0 {
		return fmt.Errorf("built %s only in part: %d damaged stretch(es) of %s (%s) skipped; %s is kept (see parscope recover)",
			path, len(rec.Skipped), rec.Spill, human.Bytes(rec.SkippedBytes()), spill)
	}
	return nil
}
