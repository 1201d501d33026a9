package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/internal/human"
)

func init() {
	params := waitstate.DefaultParams()
	cmd := &cobra.Command{
		Use:   "waitstates TRACE",
		Short: "MPI wait states (Scalasca): late sender, late receiver, wait at N×N and barrier, late broadcast, early reduce",
		Long: `waitstates measures the time MPI calls spent waiting for another process,
by Scalasca's patterns (docs/wait-states.md has the definitions with a
timeline of each):

  late_sender     a receive (or the wait completing it) entered before
                  the matching send: send enter − receive enter
  late_receiver   a blocking send entered before the receive was posted:
                  receive enter − send enter (an upper bound: the trace
                  does not say whether the send was eager)
  wait_nxn        allreduce, allgather, alltoall, reduce_scatter: from a
                  member's entry to the last member's entry
  wait_barrier    the same for barriers
  late_broadcast  bcast, scatter: a non-root entered before the root
  early_reduce    reduce, gather: the root entered before every other
                  member, until the first of them enters

and, as part of late_sender (Scalasca's metric tree), reported apart:

  late_sender_wrong_order   a late sender while a message sent earlier
                  was received later by the same process (after it):
                  receiving that first would have avoided the wait;
                  split into _same_source and _different_source

Every wait is bounded by the duration of the call that waits, and a call
is charged its longest wait once. A call's span is its MPI region's
(OTF2, DUMPI, Extrae's Paraver), or in a trace without MPI regions its
record's; what the trace does not give (a receive's start, the call that
completed a non-blocking receive, a communicator's members) is counted
under "not computed", never guessed.

Messages received before they were sent (the clock condition violated:
the processes' clocks disagree) are counted, with the largest violation
and the processes involved. --clock-correction shifts each process's
clock by a constant offset before measuring: the least offsets that make
every receive complete at least --clock-min-latency ns after its send,
found in a first pass over the records, before the pass that measures
(docs/wait-states.md says what it does not correct).

It prints the total of each pattern and its share of the MPI time, each
process's waits, and the call sites (the MPI call and the region it was
called from) of the largest waits. --json prints the result in the JSON
envelope every face shares (docs/results.md); --csv prints one row per
run, process and pattern.`,
		Example: `  parscope waitstates testdata/real/traces/dumpi/testtrace.meta
  parscope waitstates --top 10 --json trace.pst
  parscope waitstates --clock-correction --clock-min-latency 500 trace.pst`,
		Args: cobra.ExactArgs(1),
	}
	addAnalysisCommand(cmd, waitstate.Name, params, tableOutput[waitstate.Result]{
		csvHelp: "print each process's waits per pattern as CSV",
		csv:     writeWaitsCSV,
		text:    printWaits,
	})
}

// share formats part of whole as a percentage ("-" when whole is 0).
func share(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return human.Percent(float64(part) / float64(whole))
}

// printWaits prints, per run, the patterns, the processes, the call sites
// and what was not computed.
func printWaits(out io.Writer, name string, r *waitstate.Result) error {
	for i, run := range r.Runs {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s, run %d: %d processes, %s in MPI calls, %s of it waiting (%s); %s messages, %s collectives\n",
			name, run.Run, len(run.ByProcess), human.Nanos(float64(run.MPINS)), human.Nanos(float64(run.WaitNS)), share(run.WaitNS, run.MPINS),
			human.Count(run.Messages), human.Count(run.Collectives))
		w := newTable(out)
		fmt.Fprintln(w, "pattern\twait\tof MPI time\tcalls")
		for _, a := range run.Patterns {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", a.Pattern, human.Nanos(float64(a.WaitNS)), share(a.WaitNS, run.MPINS), human.Count(a.Calls))
			for _, sub := range subPatternsOf(run.SubPatterns, a.Pattern, "  ", run.MPINS) {
				fmt.Fprint(w, sub)
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		w = newTable(out)
		head := []string{"\nprocess", "MPI time", "wait"}
		for _, a := range run.Patterns {
			head = append(head, a.Pattern)
		}
		fmt.Fprintln(w, strings.Join(head, "\t"))
		for _, p := range run.ByProcess {
			row := []string{fmt.Sprint(p.Proc), human.Nanos(float64(p.MPINS)), human.Nanos(float64(p.WaitNS))}
			for _, a := range p.Patterns {
				row = append(row, human.Nanos(float64(a.WaitNS)))
			}
			fmt.Fprintln(w, strings.Join(row, "\t"))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if len(run.Sites) > 0 {
			w = newTable(out)
			fmt.Fprintln(w, "\npattern\tcall\tcalled from\twait\tcalls")
			for _, s := range run.Sites {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.Pattern, s.Call, s.RegionName, human.Nanos(float64(s.WaitNS)), human.Count(s.Calls))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if run.SitesOmitted > 0 {
				fmt.Fprintf(out, "… %d more call sites (--top 0 lists them all)\n", run.SitesOmitted)
			}
		}
		printClock(out, run.Clock)
		if u := run.Uncomputed; u != (waitstate.Uncomputed{}) {
			var parts []string
			for _, x := range []struct {
				n    int64
				what string
			}{
				{u.UnknownSpan, "records whose call's start or end is not in the trace"},
				{u.NoWaitCall, "non-blocking receives whose completing call is not in the trace (no late sender)"},
				{u.UnmatchedSends, "unmatched sends"},
				{u.UnmatchedRecvs, "unmatched receives"},
				{u.UnknownComm, "collective records on communicators of unknown members"},
				{u.OutsideComm, "collective records of a process outside their communicator"},
				{u.Incomplete, "collectives some member never recorded"},
				{u.NoRoot, "rooted collectives whose root is not a member"},
				{u.OtherCollectives, "collectives of no pattern (scan, exscan, unknown)"},
			} {
				if x.n > 0 {
					parts = append(parts, fmt.Sprintf("%s %s", human.Count(x.n), x.what))
				}
			}
			fmt.Fprintf(out, "\nnot computed: %s\n", strings.Join(parts, "; "))
		}
	}
	return nil
}

// subPatternsOf returns the table rows of the sub-patterns under parent,
// and theirs under them, indented under it: "  late_sender_wrong_order\t…"
// (their time is part of the parent's).
func subPatternsOf(subs []waitstate.Amount, parent, indent string, mpiNS int64) []string {
	var rows []string
	for _, a := range subs {
		if a.Parent == parent {
			rows = append(rows, fmt.Sprintf("%s%s\t%s\t%s\t%s\n", indent, a.Pattern, human.Nanos(float64(a.WaitNS)), share(a.WaitNS, mpiNS), human.Count(a.Calls)))
			rows = append(rows, subPatternsOf(subs, a.Pattern, indent+"  ", mpiNS)...)
		}
	}
	return rows
}

// maxClockPairs bounds the sender → receiver pairs printed.
const maxClockPairs = 10

// printClock says how many messages violate the clock condition, between
// which processes, and what the correction did, if asked for.
func printClock(out io.Writer, c waitstate.ClockCheck) {
	if c.Violations > 0 {
		var pairs []string
		for i, p := range c.Pairs {
			if i == maxClockPairs {
				pairs = append(pairs, fmt.Sprintf("… %d more pairs", len(c.Pairs)-i))
				break
			}
			pairs = append(pairs, fmt.Sprintf("%d→%d: %s (up to %s)", p.Sender, p.Receiver, human.Count(p.Violations), human.Nanos(float64(p.MaxNS))))
		}
		fmt.Fprintf(out, "\nclock condition violated: %s messages received before they were sent, by up to %s (sender→receiver: %s)\n",
			human.Count(c.Violations), human.Nanos(float64(c.MaxNS)), strings.Join(pairs, ", "))
		if c.Correction == nil {
			fmt.Fprintln(out, "the waits measured across these processes' clocks are off by their disagreement; --clock-correction shifts each process's clock before measuring")
		}
	}
	cc := c.Correction
	if cc == nil {
		return
	}
	switch {
	case !cc.Applied:
		fmt.Fprintf(out, "\nclock correction (least latency %s): not applied, no constant offsets satisfy every message; measured on the trace's times\n", human.Nanos(float64(cc.MinLatencyNS)))
	case len(cc.Offsets) == 0:
		fmt.Fprintf(out, "\nclock correction (least latency %s): no process moved\n", human.Nanos(float64(cc.MinLatencyNS)))
	default:
		var offs []string
		for i, o := range cc.Offsets {
			if i == maxClockPairs {
				offs = append(offs, fmt.Sprintf("… %d more", len(cc.Offsets)-i))
				break
			}
			offs = append(offs, fmt.Sprintf("%d +%s", o.Proc, human.Nanos(float64(o.OffsetNS))))
		}
		fmt.Fprintf(out, "\nclock correction (least latency %s): %d processes moved forward (%s); %s violations left\n",
			human.Nanos(float64(cc.MinLatencyNS)), len(cc.Offsets), strings.Join(offs, ", "), human.Count(cc.Violations))
	}
}

// writeWaitsCSV writes one row per run, process and pattern.
func writeWaitsCSV(out io.Writer, r *waitstate.Result) error {
	cw := csv.NewWriter(out)
	cw.Write([]string{"run", "proc", "pattern", "wait_ns", "calls", "mpi_ns"})
	for _, run := range r.Runs {
		for _, p := range run.ByProcess {
			for _, a := range p.Patterns {
				cw.Write([]string{fmt.Sprint(run.Run), fmt.Sprint(p.Proc), a.Pattern, fmt.Sprint(a.WaitNS), fmt.Sprint(a.Calls), fmt.Sprint(p.MPINS)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
