package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// runOne runs the analysis name with the options params over the runs
// (a --runs list) of the trace at path (opened by openTrace), through the
// engine, and returns its envelope and the open trace (for exports that
// read the records).
func runOne(cmd *cobra.Command, path, name string, params any, runs string) (*engine.Envelope, *openedTrace, error) {
	sel, err := parseIDList(runs)
	if err != nil {
		return nil, nil, usagef("--runs: %v", err)
	}
	return runSelected(cmd, path, name, params, sel)
}

// runSelected is runOne over the runs sel, a --runs list already parsed:
// for commands that check their other flags in between.
func runSelected(cmd *cobra.Command, path, name string, params any, sel []int32) (*engine.Envelope, *openedTrace, error) {
	s, err := openTrace(cmd, path)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRuns(s, sel); err != nil {
		s.Close()
		return nil, nil, err
	}
	req := engine.Request{Analysis: name, Options: params, Runs: sel}
	if err := selectProcs(cmd, &req); err != nil {
		s.Close()
		return nil, nil, err
	}
	res, err := engine.Run(cmd.Context(), s, []engine.Request{req})
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return res.Envelopes[0], s, nil
}

// checkPlotName refuses, before any work, the file name of command's
// --plot unless it ends in .png or .svg (the formats show/plot writes);
// an empty name (no plot) passes.
func checkPlotName(command, path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); path != "" && ext != ".png" && ext != ".svg" {
		return usagef("%s: --plot %s: the file name must end in .png or .svg", command, path)
	}
	return nil
}

// addDeprecatedRun adds to cmd the deprecated --run N, which is --runs N;
// usage says what the run is for. withDeprecatedRun reads it.
func addDeprecatedRun(cmd *cobra.Command, usage string) {
	cmd.Flags().Int32("run", 0, usage)
	cmd.Flags().MarkDeprecated("run", "use --runs")
}

// withDeprecatedRun returns runs, the --runs list, or "N" when the
// deprecated --run N (addDeprecatedRun) was given instead; both is a usage
// error.
func withDeprecatedRun(cmd *cobra.Command, runs string) (string, error) {
	if !cmd.Flags().Changed("run") {
		return runs, nil
	}
	if runs != "" {
		return "", usagef("--run and --runs exclude each other")
	}
	run, err := cmd.Flags().GetInt32("run")
	return strconv.Itoa(int(run)), err
}

func init() {
	params := state.DefaultStatesParams()
	var (
		runs   string
		asCSV  bool
		asJSON bool
		force  bool
		out    string
	)
	cmd := &cobra.Command{
		Use:   "states TRACE",
		Short: "Reconstruct the total parallel states of each run (Gomez, Cai & Schubert 2017, section 5.5)",
		Long: `States rebuilds the parallel state of every run: each block entry sets its
process's column, and a new state begins whenever the time changes. A
process exists from its first block entry until it enters a state the trace
marks absent (a Go goroutine's not-exist); before and after, its column is
-1 and it is in no block (classes count the processes that exist). --start
puts every process in a block at time 0 instead, the paper's start block.

Without --csv it summarises the states of each run: how many, how many
distinct classes (states equal up to a permutation of the processes), and
when the first and last begin; --json prints the result in the envelope
every face shares (docs/results.md), which also samples the block of every
process at --timeline-samples instants of the run (the report's state
chart). With --csv it writes one row per state: run, t (ns), then the block
of each process.`,
		Example: `  parscope states --csv -o states.csv amoeba.pst
  parscope states --procs 4,5,6 philosophers.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asCSV {
				return exportStatesCSV(cmd, args[0], &params.Params, runs, out)
			}
			env, s, err := runOne(cmd, args[0], state.Name, params, runs)
			if err != nil {
				return err
			}
			s.Close()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), env)
			}
			w := newTable(cmd.OutOrStdout())
			fmt.Fprintln(w, "run\tprocs\tstates\tdistinct classes\tfirst state at\tlast state at")
			for _, r := range env.Result.(*state.Summary).Runs {
				fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%s\n", r.Run, r.Procs, human.Count(r.States), human.Count(int64(r.DistinctClasses)), human.Nanos(float64(r.FirstNS)), human.Nanos(float64(r.LastNS)))
			}
			return w.Flush()
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, state.Name)
	fl.BoolVar(&asCSV, "csv", false, "write the states as CSV rows")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fileOutputFlag(fl, &out, "output", "o", "-", "with --csv: the file to write (- for standard output)")
	forceFlag(fl, &force)
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// exportStatesCSV writes every state of the runs selected: an export of
// the reconstruction, not an analysis.
func exportStatesCSV(cmd *cobra.Command, path string, p *state.Params, runs, out string) error {
	return exportStates(cmd, path, p, state.Name, runs, out, func(w io.Writer, h *trace.Header, r trace.Reader, opts state.Options) error {
		return writeStatesCSV(cmd, h, r, opts, w)
	})
}

// exportStates opens the trace at path for an export of the states of the
// runs selected (--runs) with the state parameters p, and has write write
// the output out from the trace's state records; analysis names the
// command in the error of a trace without states.
func exportStates(cmd *cobra.Command, path string, p *state.Params, analysis, runs, out string,
	write func(w io.Writer, h *trace.Header, r trace.Reader, opts state.Options) error) error {
	sel, err := parseIDList(runs)
	if err != nil {
		return usagef("--runs: %v", err)
	}
	s, err := openTrace(cmd, path)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := needRecords(s, analysis, trace.KindState); err != nil {
		return err
	}
	if err := checkRuns(s, sel); err != nil {
		return err
	}
	opts, err := p.Options(s.Header())
	if err != nil {
		return usagef("--start: %v", err)
	}
	r := s.Records(store.ReadOptions{Runs: sel, Kinds: []trace.Kind{trace.KindState}, Procs: p.Procs})
	return createOutput(out, forced(cmd), func(w io.Writer) error { return write(w, s.Header(), r, opts) })
}

// writeStatesCSV writes run,t,x0..x(P-1) rows.
func writeStatesCSV(cmd *cobra.Command, h *trace.Header, r trace.Reader, opts state.Options, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf []byte
	header := -1
	err := state.Reconstruct(cmd.Context(), h, r, opts, func(row *state.Row) error {
		if row.P() != header {
			header = row.P()
			buf = append(buf[:0], "run,t"...)
			for i := 0; i < row.P(); i++ {
				col := i
				if opts.Procs != nil {
					col = int(opts.Procs[i])
				}
				buf = append(buf, ",x"...)
				buf = strconv.AppendInt(buf, int64(col), 10)
			}
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
		buf = strconv.AppendInt(buf[:0], int64(row.Run), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, row.T, 10)
		for _, x := range row.X {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(x), 10)
		}
		buf = append(buf, '\n')
		_, err := bw.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
