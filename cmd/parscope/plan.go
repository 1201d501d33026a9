package main

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/plan"
)

// planReport is what `parscope plan --json` prints: the plan of package
// plan, performance in tasks per second.
type planReport struct {
	File  string `json:"file"`
	Units string `json:"units"`
	plan.Plan
}

func init() {
	var (
		threshold float64
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "plan SYSTEM.yaml",
		Short: "Multi-cluster master/worker plan: steady performance and which nodes to use (Strube 2011, eq. 4.8–4.9)",
		Long: `Plan reads a multi-cluster master/worker system (clusters, their nodes with
the time each takes per task, measured or predicted by a probe, the LAN and
internet throughputs, and the task and result sizes) and computes the
steady performance Perf_Ste of every cluster and of the whole system, eq.
(4.8)-(4.9) of Strube's thesis:

  Perf_Ste = min(CPerf_Avail, TPut_EC/S_Comm, N*TPut_InetIN/S_TaskInter,
                 N*TPut_InetOUT/S_ResultInter)     [tasks/s]
  CPerf_Avail = sum of Perf_Avail = sum of 1/task_time over the nodes used

It then chooses, per cluster, the nodes that give the most Perf_Ste while
the chosen nodes work at least --threshold of the time (efficiency
Perf_Ste/CPerf_Avail), and slashes clusters where no node can. It prints
the nodes, the clusters with the four terms of (4.8) and the term that
limits, and the system with all nodes and with the chosen ones.

The YAML format is in docs/multicluster-plan.md; errors name the file, line,
column and field.`,
		Example: `  parscope plan testdata/plan/two-clusters.yaml
  parscope plan --threshold 0.95 --json grid.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(threshold >= 0 && threshold <= 1) {
				return usagef("--threshold %v: expected an efficiency from 0 to 1", threshold)
			}
			sys, err := plan.ReadFile(args[0])
			if err != nil {
				return err
			}
			p, err := plan.Choose(sys, threshold)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(out, planReport{File: args[0], Units: "tasks/s", Plan: p})
			}
			return writePlan(out, args[0], sys, p)
		},
	}
	cmd.Flags().Float64Var(&threshold, "threshold", 0.9, "efficiency threshold: the chosen nodes of a cluster work at least this fraction of the time")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	root.AddCommand(cmd)
}

// fmtRate formats a tasks/s term; "-" for a link that does not limit.
func fmtRate(v float64) string {
	if math.IsInf(v, 1) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func writePlan(w io.Writer, file string, sys plan.System, p plan.Plan) error {
	t := sys.Task
	fmt.Fprintf(w, "%s: %d clusters, %d nodes; efficiency threshold %g\n", file, len(sys.Clusters), p.All.Nodes, p.Threshold)
	fmt.Fprintf(w, "task %s, result %s, S_Comm %s", human.Bytes(int64(t.Size)), human.Bytes(int64(t.Result)), human.Bytes(int64(t.CommBytes())))
	if t.N() > 1 || t.InterTask > 0 || t.InterResult > 0 {
		fmt.Fprintf(w, "; inter-cluster packages of %d tasks: %s, results %s", t.N(), human.Bytes(int64(t.InterTaskBytes())), human.Bytes(int64(t.InterResultBytes())))
	}
	fmt.Fprintln(w, "; performance in tasks/s")

	fmt.Fprintln(w, "\nnodes")
	tw := newTable(w)
	fmt.Fprintln(tw, "CLUSTER\tNODE\tTASK TIME\tSOURCE\tPERF_AVAIL\tUSED\tCONTRIBUTION")
	for _, c := range p.Chosen.Clusters {
		for _, n := range c.Nodes {
			used := "no"
			if n.Used {
				used = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%s\t%.3f\n", c.Name, n.Name, human.Seconds(n.TaskTime), n.Source, n.PerfAvail, used, n.Contribution)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nclusters (chosen nodes; eq. 4.8 terms)")
	tw = newTable(w)
	fmt.Fprintln(tw, "CLUSTER\tUSED\tCPERF_AVAIL\tLAN\tINET_IN\tINET_OUT\tPERF_STE\tLIMIT\tEFFICIENCY\tALL: PERF_STE\tEFFICIENCY")
	for i, c := range p.Chosen.Clusters {
		a := p.All.Clusters[i]
		used := fmt.Sprintf("%d/%d", c.Used, len(c.Nodes))
		limit := c.Limit
		if c.Used == 0 {
			used += " slashed"
			limit = "-"
		}
		name := c.Name
		if c.Master {
			name += " (master)"
		}
		b := c.Bounds
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t%s\t%s\t%.3f\t%s\t%.3f\t%.3f\t%.3f\n", name, used, b.Compute,
			fmtRate(b.LAN), fmtRate(b.InetIn), fmtRate(b.InetOut), c.PerfSte, limit, c.Efficiency, a.PerfSte, a.Efficiency)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nsystem")
	tw = newTable(w)
	head := "\tNODES\tCPERF_AVAIL\tPERF_STE\tEFFICIENCY"
	if p.Oper > 0 {
		head += "\tOPS/S"
	}
	fmt.Fprintln(tw, head)
	for _, row := range []struct {
		name string
		ev   plan.Evaluation
	}{{"all nodes", p.All}, {"chosen", p.Chosen}} {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f", row.name, row.ev.Nodes, row.ev.CPerfAvail, row.ev.PerfSte, row.ev.Efficiency)
		if p.Oper > 0 {
			fmt.Fprintf(tw, "\t%.4g", row.ev.PerfSte*p.Oper)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !p.Exact {
		fmt.Fprintf(w, "\nnote: a cluster had too many distinct node speeds to search every combination; its choice is the best of the first %d\n", plan.SearchLimit)
	}
	return nil
}
