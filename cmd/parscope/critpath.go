package main

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/critpath"
	"github.com/parscope/parscope/internal/human"
)

func init() {
	params := critpath.DefaultParams()
	cmd := &cobra.Command{
		Use:   "critpath TRACE",
		Short: "Critical path: the chain of computation and messages that determines a run's end, by region and process",
		Long: `critpath finds, per run, the critical path: the chain of computation and
messages that determines when the run ends (docs/critical-path.md has the
definition with a timeline). It walks back from the process that ends
last, along that process's timeline, until the latest dependency that
made it wait:

  late sender     a receive whose matching send began after the receiving
                  call (or the MPI_Wait that completed it) began waiting
  collective      the last entrant of a barrier, allreduce, allgather,
                  alltoall or reduce_scatter; the root of a bcast or
                  scatter; the last non-root of a reduce or gather

then jumps to the sender (last entrant, root) at its call's start, and so
on until the run's beginning. The time from the send to the end of the
waiting call is communication; the rest is computation, charged to the
innermost region open. The path's length is the run's span.

It prints the path's length and its split into computation and
communication, each region's and process's time on the path with its
share, and the path's first segments. --json prints the result in the JSON
envelope every face shares (docs/results.md); --csv prints every segment.`,
		Example: `  parscope critpath testdata/real/traces/dumpi/testtrace.meta
  parscope critpath --top 10 --segments 0 --json trace.pst`,
		Args: cobra.ExactArgs(1),
	}
	addAnalysisCommand(cmd, critpath.Name, params, tableOutput[critpath.Result]{
		csvHelp: "print every segment of the path as CSV",
		csv:     writeCritCSV,
		text:    printCrit,
		// --csv lists every segment.
		beforeCSV: func() { params.Segments = 0 },
	})
}

// printCrit prints, per run, the path's length, its regions, processes
// and first segments.
func printCrit(out io.Writer, name string, r *critpath.Result) error {
	for i, run := range r.Runs {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s, run %d: critical path %s, ending on process %d: %s computation, %s communication (%s); %d message and %d collective jumps\n",
			name, run.Run, human.Nanos(float64(run.LengthNS)), run.EndProc, human.Nanos(float64(run.ComputationNS)),
			human.Nanos(float64(run.CommunicationNS)), share(run.CommunicationNS, run.LengthNS), run.MessageJumps, run.CollectiveJumps)
		w := newTable(out)
		fmt.Fprintln(w, "region\ton path\tshare")
		for _, g := range run.Regions {
			fmt.Fprintf(w, "%s\t%s\t%s\n", g.Name, human.Nanos(float64(g.NS)), share(g.NS, run.LengthNS))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if run.RegionsOmitted > 0 {
			fmt.Fprintf(out, "… %d more regions (--top 0 lists them all)\n", run.RegionsOmitted)
		}
		w = newTable(out)
		fmt.Fprintln(w, "\nprocess\tcomputation on path\tshare")
		for _, p := range run.Processes {
			fmt.Fprintf(w, "%d\t%s\t%s\n", p.Proc, human.Nanos(float64(p.NS)), share(p.NS, run.LengthNS))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if len(run.Segments) > 0 {
			w = newTable(out)
			fmt.Fprintln(w, "\nprocess\tfrom\tto\tkind\tregion")
			for _, s := range run.Segments {
				what := s.RegionName
				if s.Kind == critpath.Communication {
					what = fmt.Sprintf("from process %d", s.Peer)
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", s.Proc, human.Nanos(float64(s.FromNS-run.BeginNS)),
					human.Nanos(float64(s.ToNS-run.BeginNS)), s.Kind, what)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if n := run.SegmentsTotal - len(run.Segments); n > 0 {
				fmt.Fprintf(out, "… %d more segments (--segments 0 lists them all)\n", n)
			}
		}
		if u := run.Uncomputed; u != (critpath.Uncomputed{}) {
			fmt.Fprintf(out, "\nnot used: %d unmatched sends, %d unmatched receives, %d collective records on unknown communicators, %d incomplete collectives, %d collectives of no dependency rule\n",
				u.UnmatchedSends, u.UnmatchedRecvs, u.UnknownComm, u.Incomplete, u.OtherCollectives)
			if u.TooLate > 0 {
				fmt.Fprintf(out, "not followed: %d dependencies resolved after the path was computed past them (more than %d region changes held back)\n",
					u.TooLate, critpath.MaxPending)
			}
		}
	}
	return nil
}

// writeCritCSV writes one row per run and segment.
func writeCritCSV(out io.Writer, r *critpath.Result) error {
	cw := csv.NewWriter(out)
	cw.Write([]string{"run", "proc", "from_ns", "to_ns", "kind", "region", "region_name", "peer"})
	for _, run := range r.Runs {
		for _, s := range run.Segments {
			cw.Write([]string{fmt.Sprint(run.Run), fmt.Sprint(s.Proc), fmt.Sprint(s.FromNS), fmt.Sprint(s.ToNS), s.Kind,
				fmt.Sprint(s.Region), s.RegionName, fmt.Sprint(s.Peer)})
		}
	}
	cw.Flush()
	return cw.Error()
}
