// Command parscope-beam runs parscope's engine analyses as Apache Beam
// pipelines, on Prism (locally, the default) or on Flink, Spark or
// Dataflow:
//
//	parscope-beam ANALYSIS --input TRACE.pst --output RESULT.json [--runner prism|flink|spark|dataflow|inprocess] [flags] [beam flags]
//
// ANALYSIS is occupancy, comm, entropy, pca, mentropy, phases or states,
// with the options of `parscope ANALYSIS` under the same flags. The result
// is the engine's envelope, the bytes `parscope ANALYSIS --json` prints;
// see docs/scale.md for running at scale.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/spf13/pflag"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/beam/pipelines"
)

func usage(w io.Writer) {
	fmt.Fprintf(w, `usage: parscope-beam ANALYSIS --input TRACE.pst --output RESULT.json [--runner RUNNER] [flags] [beam flags]

Runs an analysis of parscope's engine as an Apache Beam pipeline and writes
its result as `+"`parscope ANALYSIS --json`"+` prints it (the engine's envelope).

ANALYSIS: %s
RUNNER:   %s (default prism: in-process, loopback workers),
          or inprocess: the engine in this process, without Beam.

Run "parscope-beam ANALYSIS --help" for the flags of an analysis: the
flags of parscope ANALYSIS, and the pipeline's.
`, strings.Join(pipelines.Analyses, ", "), strings.Join(pipelines.Runners, ", "))
}

func main() {
	if len(os.Args) >= 2 {
		switch arg := os.Args[1]; {
		case arg == "-h" || arg == "--help" || arg == "help":
			usage(os.Stdout)
			return
		case strings.HasPrefix(arg, "-"):
			// A Beam worker (the runner starts this binary with its own
			// flags): beam.Init runs the worker harness and does not return.
			flag.Parse()
			beam.Init()
		}
	}
	if len(os.Args) < 2 || !slices.Contains(pipelines.Analyses, os.Args[1]) {
		if len(os.Args) >= 2 && os.Args[1] == "entropy-histogram" {
			fmt.Fprintln(os.Stderr, "parscope-beam: entropy-histogram is the series of the engine's entropy analysis: parscope-beam entropy --window-ns 1ms ...")
		}
		usage(os.Stderr)
		os.Exit(2)
	}
	cfg, run, err := parse(os.Args[1], os.Args[2:], os.Stdout)
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parscope-beam:", err)
		os.Exit(2)
	}
	beam.Init()
	ctx := context.Background()
	if run.runner == "inprocess" {
		data, err := pipelines.InProcess(ctx, cfg)
		if err == nil {
			err = pipelines.WriteOutput(ctx, cfg.Output, data)
		}
		if err != nil {
			fail(err)
		}
		return
	}
	if err := pipelines.Run(ctx, cfg, run.runner, run.timeout); err != nil {
		fail(err)
	}
}

// runFlags are the flags that say where a pipeline runs.
type runFlags struct {
	runner  string
	timeout time.Duration
}

// parse parses the flags of analysis (args): the analysis' options bound
// as parscope binds them (engine.BindFlags), --runs and the selection
// flags of every face (engine.BindProcFlags), the pipeline's flags and
// Beam's (the Go flags its packages define). --help writes the help to
// help and returns pflag.ErrHelp.
func parse(analysis string, args []string, help io.Writer) (pipelines.Config, runFlags, error) {
	cfg := pipelines.Config{Analysis: analysis}
	var rf runFlags
	a, ok := engine.Lookup(analysis)
	if !ok {
		return cfg, rf, fmt.Errorf("unknown analysis %q", analysis)
	}
	fs := pflag.NewFlagSet("parscope-beam "+analysis, pflag.ContinueOnError)
	fs.SetOutput(help)
	opts := a.Options()
	if err := engine.BindFlags(fs, opts); err != nil {
		return cfg, rf, err
	}
	if analysis == entropy.Name {
		// As parscope entropy takes it.
		fs.Var(fs.Lookup("window-ns").Value, "window", "the same as --window-ns")
		if err := fs.MarkDeprecated("window", "use --window-ns"); err != nil {
			return cfg, rf, err
		}
	}
	var runs string
	fs.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	sel := engine.BindProcFlags(fs, analysis)

	fs.StringVar(&cfg.Input, "input", "", "the .pst trace (a local path, or a path on a filesystem Beam supports)")
	fs.StringVar(&cfg.Output, "output", "", "the RESULT.json to write")
	fs.StringVar(&rf.runner, "runner", "prism", "the Beam runner: "+strings.Join(pipelines.Runners, ", ")+", or inprocess (the engine in this process, without Beam)")
	fs.DurationVar(&rf.timeout, "connect-timeout", 20*time.Second, "give up when the runner's job service does not answer within this time")
	fs.IntVar(&cfg.Shards, "shards", 0, "cut the trace into about this many parts ("+pipelines.Sharding(analysis)+"); 0: one part per run or process")
	ours := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { ours[f.Name] = true })
	// Beam's flags (--endpoint, --environment_type, --project...), not
	// listed by --help.
	fs.AddGoFlagSet(flag.CommandLine)
	fs.VisitAll(func(f *pflag.Flag) {
		if !ours[f.Name] {
			f.Hidden = true
		}
	})
	fs.Usage = func() {
		fmt.Fprintf(help, "usage: parscope-beam %s --input TRACE.pst --output RESULT.json [--runner RUNNER] [flags] [beam flags]\n\n%s: %s.\nThe pipeline cuts the trace %s.\n\nFlags:\n%s\nBeam's flags (--endpoint, --environment_type, --project, --region, --staging_location...) are taken too; see docs/scale.md.\n",
			analysis, analysis, a.Doc, pipelines.Sharding(analysis), fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		return cfg, rf, err
	}
	if fs.NArg() > 0 {
		return cfg, rf, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if cfg.Runs, err = engine.ParseIDs(runs); err != nil {
		return cfg, rf, fmt.Errorf("--runs: %w", err)
	}
	var req engine.Request
	if err := sel.Apply(&req); err != nil {
		return cfg, rf, err
	}
	cfg.Procs, cfg.ExcludeProcs = req.Procs, req.ExcludeProcs
	if req.States != engine.StatesAuto {
		cfg.States = req.States
	}
	if err := cfg.SetOptions(opts); err != nil {
		return cfg, rf, err
	}
	if cfg.Input == "" || cfg.Output == "" {
		return cfg, rf, errors.New("--input and --output are required")
	}
	return cfg, rf, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "parscope-beam:", err)
	os.Exit(1)
}
