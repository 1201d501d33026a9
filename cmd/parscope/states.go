package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// stateFlags are the options shared by the commands that reconstruct
// parallel states.
type stateFlags struct {
	runs, procs string
	start       int32
	perRecord   bool
}

func (f *stateFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	fl.StringVar(&f.procs, "procs", "", "a partial state over these processes, in this order (e.g. 4,5,6)")
	fl.Int32Var(&f.start, "start", 0, "the start block every process is in at time 0 (default: the smallest state id)")
	fl.BoolVar(&f.perRecord, "per-record", false, "a state row per record instead of per distinct time")
}

// open opens the trace and returns a time-merged reader of its state
// records and the reconstruction options.
func (f *stateFlags) open(cmd *cobra.Command, path string) (*store.Store, func() trace.Reader, state.Options, error) {
	sel, err := readSelection(f.runs, "")
	if err != nil {
		return nil, nil, state.Options{}, err
	}
	procs, err := parseIDList(f.procs)
	if err != nil {
		return nil, nil, state.Options{}, usagef("--procs: %v", err)
	}
	s, err := store.Open(path)
	if err != nil {
		return nil, nil, state.Options{}, err
	}
	opts := state.Options{Procs: procs, PerRecord: f.perRecord}
	if cmd.Flags().Changed("start") {
		opts.Start, opts.StartSet = f.start, true
	}
	sel.Kinds = []trace.Kind{trace.KindState}
	sel.Procs = procs
	open := func() trace.Reader { return s.Records(sel) }
	return s, open, opts, nil
}

// stateSummary is what `parscope states` prints without --csv.
type stateSummary struct {
	Run             int32 `json:"run"`
	Procs           int   `json:"procs"`
	Rows            int64 `json:"rows"`
	DistinctClasses int   `json:"distinct_classes"`
	End             int64 `json:"end_ns"`
}

func init() {
	var (
		f      stateFlags
		asCSV  bool
		asJSON bool
		out    string
	)
	cmd := &cobra.Command{
		Use:   "states TRACE.pst",
		Short: "Reconstruct the total parallel states of each run (Gomez, Cai & Schubert 2017, section 5.5)",
		Long: `States rebuilds the parallel state of every run: the first state has every
process in the start block at time 0; each block entry sets its process's
column, and a new state begins whenever the time changes.

Without --csv it summarises the states of each run; with --csv it writes
one row per state: run, t (ns), then the block of each process.`,
		Example: `  parscope states --csv -o states.csv amoeba.pst
  parscope states --procs 4,5,6 philosophers.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, open, opts, err := f.open(cmd, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			if asCSV {
				return createOutput(out, func(w io.Writer) error { return writeStatesCSV(cmd, s.Header(), open(), opts, w) })
			}
			var sums []stateSummary
			classes := map[uint64]bool{}
			err = state.Reconstruct(cmd.Context(), s.Header(), open(), opts, func(r *state.Row) error {
				if len(sums) == 0 || sums[len(sums)-1].Run != r.Run {
					sums = append(sums, stateSummary{Run: r.Run, Procs: r.P()})
					clear(classes)
				}
				cur := &sums[len(sums)-1]
				cur.Rows++
				cur.End = r.T + r.Dur
				if !classes[r.ClassHash()] {
					classes[r.ClassHash()] = true
					cur.DistinctClasses++
				}
				return nil
			})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), sums)
			}
			w := newTable(cmd.OutOrStdout())
			fmt.Fprintln(w, "run\tprocs\tstates\tdistinct classes\tlast state at")
			for _, r := range sums {
				fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\n", r.Run, r.Procs, human.Count(r.Rows), human.Count(int64(r.DistinctClasses)), fmtNS(r.End))
			}
			return w.Flush()
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asCSV, "csv", false, "write the states as CSV rows")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	cmd.Flags().StringVarP(&out, "output", "o", "-", "with --csv: the file to write (- for standard output)")
	root.AddCommand(cmd)
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
