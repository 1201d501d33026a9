package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/pop"
	"github.com/parscope/parscope/internal/human"
)

func init() {
	params := pop.DefaultParams()
	cmd := &cobra.Command{
		Use:   "pop TRACE",
		Short: "POP efficiencies: load balance, communication, serialisation and transfer efficiency, parallel efficiency",
		Long: `pop computes, for each run, the efficiency metrics of the POP Centre of
Excellence from the time each process spends computing (useful time:
outside every region --runtime-regions names, by default the MPI and PMPI
functions; on a trace without regions, outside the states it names):

  load balance              LB    = mean(useful) / max(useful)
  communication efficiency  CommE = max(useful) / T
  parallel efficiency       PE    = LB × CommE = mean(useful) / T

where T is the largest elapsed time of a process. When the trace holds its
messages or collectives, the run is replayed on an ideal network (MPI
calls and transfers take no time; a receive waits for its send, a
collective for its last member) and CommE splits into

  serialisation efficiency  SerE = max(useful) / T_ideal
  transfer efficiency       TrfE = T_ideal / T

docs/pop.md gives the definitions. MPI_Init and MPI_Finalize count as MPI
time like every MPI call; --without-init counts each process only from its
exit of MPI_Init to its entry into MPI_Finalize, as POP reports do.

--json prints the result in the JSON envelope every face shares
(docs/results.md); --csv prints one row per process.`,
		Example: `  parscope pop trace.pst
  parscope pop --without-init trace.pst
  parscope pop --runtime-regions '^(P?MPI_|omp_)' --json trace.pst
  parscope pop testdata/real/traces/otf2/ping-pong-otf2`,
		Args: cobra.ExactArgs(1),
	}
	addAnalysisCommand(cmd, pop.Name, params, tableOutput[pop.Result]{
		csvHelp: "print one row per process as CSV",
		csv:     writePopCSV,
		text:    printPop,
	})
}

// printPop prints, per run, the efficiencies and each process's times.
func printPop(out io.Writer, name string, r *pop.Result) error {
	for i, run := range r.Runs {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s, run %d: %d processes, runtime %s, useful time by %s outside %s\n", name, run.Run, run.Procs,
			human.Nanos(float64(run.RuntimeNS)), strings.TrimSuffix(r.Of, "s"), strings.Join(run.RuntimeNames, ", "))
		w := newTable(out)
		fmt.Fprintf(w, "parallel efficiency\t%s\n", human.Percent(run.ParallelEfficiency))
		fmt.Fprintf(w, "  load balance\t%s\n", human.Percent(run.LoadBalance))
		fmt.Fprintf(w, "  communication efficiency\t%s\n", human.Percent(run.CommunicationEfficiency))
		if id := run.Ideal; id != nil {
			fmt.Fprintf(w, "    serialisation efficiency\t%s\n", human.Percent(id.SerializationEfficiency))
			fmt.Fprintf(w, "    transfer efficiency\t%s\n", human.Percent(id.TransferEfficiency))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if id := run.Ideal; id != nil {
			fmt.Fprintf(out, "ideal network: runtime %s (%s messages, %s collectives replayed)\n", human.Nanos(float64(id.RuntimeNS)),
				human.Count(id.Messages), human.Count(id.Collectives))
		} else {
			fmt.Fprintln(out, "no messages or collectives: serialisation and transfer efficiency need them")
		}
		fmt.Fprintln(out)
		w = newTable(out)
		fmt.Fprintln(w, "process\telapsed\tuseful\tMPI\tuseful share\tideal")
		for _, p := range run.Processes {
			ideal := "-"
			if run.Ideal != nil {
				ideal = human.Nanos(float64(p.IdealNS))
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", p.Proc, human.Nanos(float64(p.ElapsedNS)), human.Nanos(float64(p.UsefulNS)),
				human.Nanos(float64(p.MPINS)), human.Percent(p.UsefulShare), ideal)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if p := run.Problems; p != (pop.Problems{}) {
			fmt.Fprintf(out, "problems: %s\n", popProblems(p))
		}
	}
	return nil
}

// popProblems lists the non-zero problem counts.
func popProblems(p pop.Problems) string {
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(p.UnmatchedExits, "exits of a region not entered")
	add(p.MismatchedExits, "exits out of nesting order")
	add(p.Unclosed, "regions left open")
	add(p.UnmatchedSends, "unmatched sends")
	add(p.UnmatchedRecvs, "unmatched receives")
	add(p.UnknownComm, "collectives on a communicator of unknown members")
	add(p.OutsideComm, "collectives outside their communicator")
	add(p.IncompleteCollectives, "incomplete collectives")
	add(p.ForcedWaits, "waits the replay gave up")
	add(p.CollectiveRegionsWithoutRecords, "collective calls without collective records (not synchronised in the replay)")
	return strings.Join(parts, ", ")
}

// writePopCSV writes one row per run and process.
func writePopCSV(out io.Writer, r *pop.Result) error {
	cw := csv.NewWriter(out)
	cw.Write([]string{"run", "proc", "elapsed_ns", "useful_ns", "mpi_ns", "useful_share", "ideal_ns",
		"load_balance", "communication_efficiency", "parallel_efficiency", "serialization_efficiency", "transfer_efficiency"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, run := range r.Runs {
		ser, trf, ideal := "", "", ""
		for _, p := range run.Processes {
			if run.Ideal != nil {
				ser, trf, ideal = f(run.Ideal.SerializationEfficiency), f(run.Ideal.TransferEfficiency), fmt.Sprint(p.IdealNS)
			}
			cw.Write([]string{fmt.Sprint(run.Run), fmt.Sprint(p.Proc), fmt.Sprint(p.ElapsedNS), fmt.Sprint(p.UsefulNS), fmt.Sprint(p.MPINS),
				f(p.UsefulShare), ideal, f(run.LoadBalance), f(run.CommunicationEfficiency), f(run.ParallelEfficiency), ser, trf})
		}
	}
	cw.Flush()
	return cw.Error()
}
