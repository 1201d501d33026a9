package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/counters"
	"github.com/parscope/parscope/internal/human"
)

func init() {
	params := counters.DefaultParams()
	cmd := &cobra.Command{
		Use:   "counters TRACE",
		Short: "Counter samples (hardware counters, PAPI, rocprof metrics): range, mean and series over time",
		Long: `counters summarises the counter samples of every run: per counter, the
samples and the processes that took them, their minimum, mean and maximum,
each process's, and a series of the minimum, mean and maximum over the
processes in each of --windows time windows of the run (windows without a
sample are left out). NaN and infinite samples are counted apart and left
out of every figure.

It prints a table per run; --json prints the result in the JSON envelope
every face shares (docs/results.md); --csv prints the series, one row per
run, counter and window.`,
		Example: `  parscope counters testdata/real/traces/otf2/ping-pong-otf2-papi/traces.otf2
  parscope counters --windows 64 --csv trace.pst`,
		Args: cobra.ExactArgs(1),
	}
	addAnalysisCommand(cmd, counters.Name, params, tableOutput[counters.Result]{
		csvHelp: "print each counter's series as CSV",
		csv:     writeCountersCSV,
		text:    printCounters,
	})
}

// printCounters prints a table of the counters of each run.
func printCounters(out io.Writer, name string, r *counters.Result) error {
	for i, run := range r.Runs {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s, run %d: %d counters over %s\n", name, run.Run, len(run.Counters), human.Nanos(float64(run.EndNS-run.BeginNS)))
		w := newTable(out)
		fmt.Fprintln(w, "counter\tunit\tsamples\tprocesses\tmin\tmean\tmax\tnot finite")
		for _, c := range run.Counters {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%d\n", c.Name, c.Unit, human.Count(c.Samples), c.Procs,
				g6(c.Min), g6(c.Mean), g6(c.Max), c.NonFinite)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// writeCountersCSV writes every counter's series.
func writeCountersCSV(out io.Writer, r *counters.Result) error {
	cw := csv.NewWriter(out)
	cw.Write([]string{"run", "counter", "name", "t_ns", "samples", "min", "mean", "max"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, run := range r.Runs {
		for _, c := range run.Counters {
			for _, p := range c.Series {
				cw.Write([]string{fmt.Sprint(run.Run), fmt.Sprint(c.ID), c.Name, fmt.Sprint(p.TNS), fmt.Sprint(p.Samples), g(p.Min), g(p.Mean), g(p.Max)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// g6 writes v with six significant digits.
func g6(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
