// Command parscope records, stores, analyses and predicts the performance of
// parallel programs. Each subcommand lives in its own file and is a thin
// shell over a package: the packages compute, the command only formats.
//
// Exit status: 0 when the command did what was asked, 1 when it failed, 2
// when it was called wrongly (an unknown command or flag, a bad flag value,
// a missing or extra argument).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	_ "github.com/parscope/parscope/format/all" // register every importer
	"github.com/parscope/parscope/internal/progress"
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
that DuckDB, pandas or Spark open directly. Every command that reads a
TRACE also takes a trace import reads (OTF2, Paraver, DUMPI, ...), or a
folder of trace files of one format (one per rank or run): it imports it
on the fly into a temporary .pst, removed afterwards, and names results
after the trace.

Outputs never replace what exists without --force: a file at an output
path (-o, --plot, --csv, --save-*, ...) is refused unless --force is given,
and even then only a regular file is replaced; no output ever replaces an
input.

Exit status: 0 success, 1 failure, 2 wrong usage (unknown command or flag,
bad flag value, missing or extra argument).`,
	SilenceUsage:  true,
	SilenceErrors: true,
	Args:          cobra.ArbitraryArgs,
	RunE:          needSubcommand,
}

// Global flags: one meaning for every command.
var quiet, verbose bool

func init() {
	pf := root.PersistentFlags()
	pf.BoolVarP(&quiet, "quiet", "q", false, "report errors and warnings only: no progress, no notes on stderr (warnings, that data was lost, left out or repaired, are never silenced)")
	pf.BoolVarP(&verbose, "verbose", "v", false, "report extra detail on stderr")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if quiet && verbose {
			return usagef("--quiet and --verbose exclude each other")
		}
		switch {
		case quiet:
			progress.SetLevel(progress.Quiet)
		case verbose:
			progress.SetLevel(progress.Verbose)
		default:
			progress.SetLevel(progress.Normal)
		}
		// Results never land on a progress line: on a terminal they share
		// it with stderr. Set only now: cobra prints its own messages
		// (a deprecated flag's) to the same writer while it parses flags,
		// and they belong on stderr.
		if w := progress.Results(os.Stdout); w != io.Writer(os.Stdout) {
			root.SetOut(w)
		}
		return checkOutputs(cmd, args)
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%s: %w (see %s --help)", cmd.Name(), err, cmd.CommandPath())}
	})
	root.SuggestionsMinimumDistance = 2
	root.Version = buildVersion().Version
	root.SetVersionTemplate("{{.Name}} " + versionText() + "\n")
}

func main() {
	// Ctrl-C, and the SIGTERM of kill, systemd or a container's stop,
	// cancel the command's context: a long command stops where it is and
	// removes what it had not finished (a temporary import, a half-written
	// output), and serve shuts down and removes its imports on the fly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(execute(ctx, os.Args[1:]))
}

// execute runs the command line args and returns the exit status.
func execute(ctx context.Context, args []string) int {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	checkUsage(root)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Not "context canceled": the user stopped it.
			err = errors.New("stopped by a signal before it finished")
		}
		fmt.Fprintln(os.Stderr, "parscope:", err)
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// usageError marks errors in how a command was called (exit status 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// checkUsage makes every way of calling a command wrongly a usageError: the
// argument checks of each command are wrapped, and a command that only
// groups subcommands (parscope, parscope probe) refuses to run without one.
func checkUsage(c *cobra.Command) {
	if c.Args != nil {
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				var ue usageError
				if errors.As(err, &ue) {
					return err
				}
				return usageError{fmt.Errorf("%s: %w (see %s --help)", cmd.Name(), err, cmd.CommandPath())}
			}
			return nil
		}
	}
	if !c.Runnable() && c.HasSubCommands() {
		c.Args = cobra.ArbitraryArgs
		c.RunE = needSubcommand
	}
	for _, s := range c.Commands() {
		checkUsage(s)
	}
}

// needSubcommand is the RunE of commands that only group subcommands.
func needSubcommand(cmd *cobra.Command, args []string) error {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	if len(args) > 0 {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if sugg := cmd.SuggestionsFor(args[0]); len(sugg) > 0 {
			msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(sugg, " or "))
		}
		return usagef("%s; commands: %s", msg, strings.Join(names, ", "))
	}
	return usagef("%s needs a command: %s (see %s --help)", cmd.CommandPath(), strings.Join(names, ", "), cmd.CommandPath())
}
