package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/profile"
	"github.com/parscope/parscope/internal/human"
)

func init() {
	params := profile.DefaultParams()
	var showTree int
	cmd := &cobra.Command{
		Use:   "profile TRACE",
		Short: "Flat and call-tree profiles: time per region (inclusive, exclusive), visits, spread over processes, message statistics",
		Long: `profile tells where the processes spent their time, by code region: for
each region its visits, its inclusive time (entry to exit; a recursive call
is counted once) and its exclusive time (when it was the innermost region),
summed over processes, the exclusive share of the run, and the minimum,
mean and maximum over processes with the processes that hold them. A
trace without regions is profiled by its states (--of states): a state
lasts from its record to the process's next state record.

The call tree sums each call path over processes (--tree N prints its N
largest nodes; --json holds up to --max-nodes). The message statistics
count the point-to-point messages and their bytes by size bucket, by the
region (or state) the sender was in, and by pair of processes.

Time outside every region is counted as outside. Exits of a region the
process was not in, exits out of nesting order and regions left open at a
process's last record are repaired and counted under problems.

--json prints the result in the JSON envelope every face shares
(docs/results.md); --csv prints the flat profile.`,
		Example: `  parscope profile ring.pst
  parscope profile --sort inclusive --top 10 --tree 20 mg.pst
  parscope profile --of states --json amoeba.pst`,
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().IntVar(&showTree, "tree", 15, "print the call tree's N nodes of the largest inclusive time (0: none)")
	addAnalysisCommand(cmd, profile.Name, params, tableOutput[profile.Result]{
		csvHelp: "print the flat profile as CSV",
		csv:     writeProfileCSV,
		text:    func(w io.Writer, name string, r *profile.Result) error { return printProfile(w, name, r, showTree) },
	})
}

// printProfile prints, per run, the flat profile, the largest call-tree
// nodes and the message statistics.
func printProfile(out io.Writer, name string, r *profile.Result, treeNodes int) error {
	for i, run := range r.Runs {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s, run %d: %d processes, %s of process time profiled by %s", name, run.Run, run.Procs,
			human.Nanos(float64(run.TotalNS)), strings.TrimSuffix(r.Of, "s"))
		if run.OutsideNS > 0 && run.TotalNS > 0 {
			fmt.Fprintf(out, ", %s outside every %s", human.Percent(float64(run.OutsideNS)/float64(run.TotalNS)), strings.TrimSuffix(r.Of, "s"))
		}
		fmt.Fprintln(out)
		w := newTable(out)
		fmt.Fprintln(w, "region\tvisits\tprocs\texclusive\tshare\tinclusive\texcl. min\tmean\tmax (process)")
		for _, e := range run.Flat {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s (%d)\n", e.Name, human.Count(e.Visits), e.Procs,
				human.Nanos(float64(e.ExclusiveNS)), human.Percent(e.ExclusiveShare), human.Nanos(float64(e.InclusiveNS)),
				human.Nanos(float64(e.Exclusive.MinNS)), human.Nanos(e.Exclusive.MeanNS), human.Nanos(float64(e.Exclusive.MaxNS)), e.Exclusive.MaxProc)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if run.FlatOmitted > 0 {
			fmt.Fprintf(out, "… %d more regions (--top 0 lists them all)\n", run.FlatOmitted)
		}
		if treeNodes > 0 && len(run.Tree) > 0 {
			fmt.Fprintln(out, "\ncall tree (inclusive, exclusive, visits):")
			shown := 0
			for _, n := range run.Tree {
				if shown == treeNodes {
					fmt.Fprintf(out, "… %d more nodes (--tree N, or --json)\n", len(run.Tree)-shown+run.TreeOmitted)
					break
				}
				fmt.Fprintf(out, "%s%s  %s  %s  %s\n", strings.Repeat("  ", n.Depth), n.Name, human.Nanos(float64(n.InclusiveNS)),
					human.Nanos(float64(n.ExclusiveNS)), human.Count(n.Visits))
				shown++
			}
		}
		m := run.Messages
		if m.Count == 0 {
			continue
		}
		fmt.Fprintf(out, "\nmessages: %s, %s\n", human.Count(m.Count), human.Bytes(m.Bytes))
		w = newTable(out)
		fmt.Fprintln(w, "size\tmessages\tbytes")
		for _, b := range m.BySize {
			fmt.Fprintf(w, "%s\t%s\t%s\n", sizeRange(b), human.Count(b.Count), human.Bytes(b.Bytes))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		w = newTable(out)
		fmt.Fprintln(w, "\nsent from\tmessages\tbytes")
		for _, x := range m.ByRegion {
			fmt.Fprintf(w, "%s\t%s\t%s\n", x.Name, human.Count(x.Count), human.Bytes(x.Bytes))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		w = newTable(out)
		fmt.Fprintln(w, "\nsender → receiver\tmessages\tbytes")
		for _, x := range m.ByPair {
			fmt.Fprintf(w, "%d → %d\t%s\t%s\n", x.Src, x.Dst, human.Count(x.Count), human.Bytes(x.Bytes))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if m.PairsOmitted > 0 {
			fmt.Fprintf(out, "… %d more pairs (--top 0 lists them all)\n", m.PairsOmitted)
		}
		if p := run.Problems; p != (profile.Problems{}) {
			fmt.Fprintf(out, "\nrepaired: %d exits of a region not entered, %d exits out of nesting order, %d regions left open\n",
				p.UnmatchedExits, p.MismatchedExits, p.Unclosed)
		}
	}
	return nil
}

// sizeRange names a size bucket: "0 B", "1 B", "2–3 B", "1–2 KiB" …
func sizeRange(b profile.SizeBucket) string {
	switch {
	case b.MaxBytes <= 1:
		return "0 B"
	case b.MaxBytes == 2:
		return "1 B"
	}
	return human.Bytes(b.MinBytes) + " – " + human.Bytes(b.MaxBytes-1)
}

// writeProfileCSV writes the flat profile of every run, one row per run
// and region.
func writeProfileCSV(out io.Writer, r *profile.Result) error {
	cw := csv.NewWriter(out)
	cw.Write([]string{"run", "region", "name", "visits", "procs", "inclusive_ns", "exclusive_ns", "exclusive_share",
		"exclusive_min_ns", "exclusive_mean_ns", "exclusive_max_ns", "exclusive_max_proc"})
	for _, run := range r.Runs {
		for _, e := range run.Flat {
			cw.Write([]string{fmt.Sprint(run.Run), fmt.Sprint(e.Region), e.Name, fmt.Sprint(e.Visits), fmt.Sprint(e.Procs),
				fmt.Sprint(e.InclusiveNS), fmt.Sprint(e.ExclusiveNS), strconv.FormatFloat(e.ExclusiveShare, 'g', -1, 64),
				fmt.Sprint(e.Exclusive.MinNS), strconv.FormatFloat(e.Exclusive.MeanNS, 'g', -1, 64), fmt.Sprint(e.Exclusive.MaxNS),
				fmt.Sprint(e.Exclusive.MaxProc)})
		}
	}
	cw.Flush()
	return cw.Error()
}
