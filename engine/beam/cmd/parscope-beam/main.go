// Command parscope-beam runs parscope's analyses as Apache Beam pipelines,
// on Prism (locally, the default) or on Flink, Spark or Dataflow:
//
//	parscope-beam ANALYSIS --input TRACE.pst --output RESULT.json [--runner prism|flink|spark|dataflow] [flags] [beam flags]
//
// ANALYSIS is occupancy, comm, entropy-histogram, pca, mentropy, phases or
// states. The result is a JSON document (pipelines.Document) equal to what
// the in-process engine computes; see docs/scale.md for running at scale.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/spf13/pflag"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/beam/pipelines"
)

func usage() {
	fmt.Fprintf(os.Stderr, `usage: parscope-beam ANALYSIS --input TRACE.pst --output RESULT.json [--runner RUNNER] [flags] [beam flags]

ANALYSIS: %s
RUNNER:   %s (default prism: in-process, loopback workers)
          --runner inprocess computes the same document without Beam (the reference).

Run "parscope-beam ANALYSIS -h" for the flags of an analysis.
`, strings.Join(pipelines.Analyses, ", "), strings.Join(pipelines.Runners, ", "))
}

func main() {
	if len(os.Args) < 2 || !slices.Contains(pipelines.Analyses, os.Args[1]) {
		if len(os.Args) >= 2 && strings.HasPrefix(os.Args[1], "-") {
			// A Beam worker (the runner starts this binary with its own
			// flags): beam.Init runs the worker harness and does not return.
			flag.Parse()
			beam.Init()
		}
		usage()
		os.Exit(2)
	}
	cfg := pipelines.Config{Analysis: os.Args[1]}
	fl := flag.CommandLine
	var (
		runner        = fl.String("runner", "prism", "the Beam runner: "+strings.Join(pipelines.Runners, ", ")+", or inprocess")
		timeout       = fl.Duration("connect-timeout", 20*time.Second, "give up when the runner's job service does not answer within this time")
		window        time.Duration
		phaseMode     string
		phaseMaxK     int
		phaseDim      int
		phaseK        string
		phaseVariable bool
	)
	fl.StringVar(&cfg.Input, "input", "", "the .pst trace (a local path, or a path on a filesystem Beam supports)")
	fl.StringVar(&cfg.Output, "output", "", "the RESULT.json to write")
	fl.IntVar(&cfg.Shards, "shards", 0, "time windows per run for occupancy, entropy-histogram, pca and states (0: 16)")
	switch cfg.Analysis {
	case pipelines.EntropyHistogram:
		fl.DurationVar(&window, "window", time.Millisecond, "the histogram-entropy window")
	case pipelines.PCA:
		fl.BoolVar(&cfg.TimeWeighted, "time-weighted", false, "weight each state by its duration instead of 1")
		fl.IntVar(&cfg.Components, "components", 3, "number of components to report (0: all)")
	case pipelines.Occupancy:
		fl.StringVar(&cfg.Start, "start", "", "put processes in this mode before their first state (default: a process does not exist before its first state)")
	case pipelines.Comm:
		// The options of parscope comm, bound as for mentropy.
		cfg.Comm = comm.DefaultParams()
		if err := bindGoFlags(fl, cfg.Comm); err != nil {
			fail(err)
		}
	case pipelines.MEntropy:
		// The options of parscope mentropy, bound the same way (the flags of
		// the engine's options struct), on Go's flag set.
		cfg.MEntropy = mentropy.DefaultParams()
		if err := bindGoFlags(fl, cfg.MEntropy); err != nil {
			fail(err)
		}
	case pipelines.Phases:
		fl.StringVar(&phaseMode, "mode", "default", "compat (SimPoint 3.2) or default")
		fl.IntVar(&phaseMaxK, "maxK", 0, "largest k of the search (0: the core default)")
		fl.StringVar(&phaseK, "k", "", "the k values to evaluate instead of searching")
		fl.IntVar(&phaseDim, "dim", 0, "projected dimensions (0: the core default, -1: none)")
		fl.BoolVar(&phaseVariable, "variable-length", false, "weigh intervals by their instruction counts")
		fl.IntVar(&cfg.Chunk, "chunk", 0, "intervals projected per task (0: 256)")
	}
	if err := fl.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "parscope-beam: unexpected arguments %q\n", fl.Args())
		os.Exit(2)
	}
	beam.Init()
	cfg.Window = int64(window)
	if cfg.Analysis == pipelines.MEntropy {
		if _, _, _, err := cfg.MEntropy.Config(); err != nil {
			fail(err)
		}
	}
	if cfg.Analysis == pipelines.Phases {
		o := phase.DefaultOptions()
		m, err := phase.ParseMode(phaseMode)
		if err != nil {
			fail(err)
		}
		o.Mode = m
		if phaseMaxK > 0 {
			o.MaxK = phaseMaxK
		}
		if phaseDim != 0 {
			o.Dim = phaseDim
		}
		if phaseK != "" {
			if o.K, err = phase.ParseKList(phaseK); err != nil {
				fail(err)
			}
		}
		o.VariableLength = phaseVariable
		cfg.Phase = o
	}
	ctx := context.Background()
	if *runner == "inprocess" {
		doc, err := pipelines.InProcess(ctx, cfg)
		if err == nil {
			err = pipelines.WriteOutput(ctx, cfg.Output, doc)
		}
		if err != nil {
			fail(err)
		}
		return
	}
	if err := pipelines.Run(ctx, cfg, *runner, *timeout); err != nil {
		fail(err)
	}
}

// bindGoFlags defines on the Go flag set fl the flags engine.BindFlags
// defines for the options struct opts, so that parscope-beam takes the
// options of an analysis under the names and defaults parscope does.
func bindGoFlags(fl *flag.FlagSet, opts any) error {
	pf := pflag.NewFlagSet("", pflag.ContinueOnError)
	if err := engine.BindFlags(pf, opts); err != nil {
		return err
	}
	pf.VisitAll(func(f *pflag.Flag) { fl.Var(f.Value, f.Name, f.Usage) })
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "parscope-beam:", err)
	os.Exit(1)
}
