// Command parscope records, stores, analyses and predicts the performance of
// parallel programs. Each subcommand lives in its own file and is a thin
// shell over a package: the packages compute, the command only formats.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	_ "github.com/parscope/parscope/format/all" // register every importer
)

// root is the parscope command; subcommands add themselves to it from init
// functions in their own files.
var root = &cobra.Command{
	Use:   "parscope",
	Short: "Record, store, analyse and predict the performance of parallel programs",
	Long: `parscope turns traces of parallel runs into understanding: parallel states,
entropy and phase space, communication per code structure, state occupancy,
program phases and performance probes.

Traces are stored as .pst directories (Parquet tables plus a JSON manifest)
that DuckDB, pandas or Spark open directly.`,
	SilenceUsage:      true,
	SilenceErrors:     true,
	PersistentPreRunE: checkOutputs,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "parscope:", err)
		code := 1
		var ue usageError
		if errors.As(err, &ue) {
			code = 2
		}
		os.Exit(code)
	}
}

// usageError marks errors in how a command was called (exit status 2).
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }
