package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/ocs"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/show/plot"
)

func init() {
	params := ocs.DefaultAnalysisParams()
	var (
		runs     string
		plotPath string
		asJSON   bool
		force    bool
	)
	cmd := &cobra.Command{
		Use:   "ocs TRACE",
		Short: "Optical circuit switch planning and simulation: time and delay against planes (Jones et al. 2007, Figures 12–13)",
		Long: `ocs simulates the trace's messages on an interconnect of optical circuit
switch planes (each plane gives every node at most one outgoing and one
incoming circuit) beside a slow electronic packet network, for each number
of planes and strategy, and prints the completion time, the average message
delay and the fraction of bytes carried by circuits.

Strategies: best, worst and indexed establish circuits before the run from
the connections ranked by volume, by reversed volume, or by destination
index: plane after plane, each connection that does not conflict with a
circuit already on the plane gets one; what is left uses the electronic
network. runtime sets circuits up while the program runs for messages of at
least --threshold bytes, replacing the least frequently used circuit, and
pays the switching latency on every set-up.

The replay keeps each process's order and its compute time between
communications; sends are eager, receives wait for their message, links
serialise messages first come first served (see docs/optical-switch.md).
Collectives are decomposed into point-to-point messages by --decompose.
--structure ranks the connections of one code structure (as parscope comm
names them) instead of the whole program's.

Every run is simulated (--runs selects some; --run N, deprecated, is --runs
N). --json prints the result in the envelope every face shares
(docs/results.md). --plot out.png draws Figures 12–13: out-time.png
(completion time) and out-delay.png (average message delay) against planes,
one line per strategy (.svg works too); with several runs, one pair per run
(out-run1-time.png...).`,
		Example: `  parscope ocs mg.pst
  parscope ocs --planes 1-11 --ranking best,worst,indexed,runtime --plot mg.png mg.pst
  parscope ocs --optical-bw 100 --switch-ms 10 --elec-bw 10 --threshold 65536 --json --runs 0 mg.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := withDeprecatedRun(cmd, runs)
			if err != nil {
				return err
			}
			if err := params.Check(); err != nil {
				return usagef("--%v", err)
			}
			if err := checkPlotName("ocs", plotPath); err != nil {
				return err
			}
			env, s, err := runOne(cmd, args[0], ocs.Name, params, runs)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := runsInHeader(args[0], s.Header(), env.Runs); err != nil {
				return err
			}
			rep := env.Result.(*ocs.Report)
			var plots []string
			if plotPath != "" {
				paths := make([]string, len(rep.Runs))
				var names []string
				for i, rc := range rep.Runs {
					paths[i] = plotPath
					if len(rep.Runs) > 1 {
						ext := filepath.Ext(plotPath)
						paths[i] = fmt.Sprintf("%s-run%d%s", strings.TrimSuffix(plotPath, ext), rc.Run, ext)
					}
					names = append(names, ocsPlotNames(paths[i])...)
				}
				// Refuse before drawing any, so that no curve is left alone.
				if err := checkFileOutputs(force, names...); err != nil {
					return err
				}
				for i, rc := range rep.Runs {
					ps, err := plotOCS(paths[i], force, env.Trace, rc)
					if err != nil {
						return err
					}
					plots = append(plots, ps...)
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), env)
			}
			if len(rep.Runs) == 0 {
				return fmt.Errorf("%s: no run selected has messages or collectives", args[0])
			}
			return printOCS(cmd.OutOrStdout(), env.Trace, rep, plots)
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, ocs.Name)
	addDeprecatedRun(cmd, "the run to simulate")
	fl.StringVar(&plotPath, "plot", "", "draw the curves to NAME-time and NAME-delay (.png or .svg)")
	forceFlag(fl, &force)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// plotOCS draws the completion time and the delay against planes, one line
// per strategy and a flat line for the electronic network alone.
func plotOCS(path string, force bool, traceName string, rep ocs.RunCurves) ([]string, error) {
	names := ocsPlotNames(path)
	c := rep.Curves
	var out []string
	for k, fig := range []struct {
		title, ylabel string
		value         func(r ocs.Result) float64
	}{
		{"completion time", "time (ms)", func(r ocs.Result) float64 { return r.Time * 1e3 }},
		{"average message delay", "delay (µs)", func(r ocs.Result) float64 { return r.Delay * 1e6 }},
	} {
		var series []plot.Series
		for i, s := range c.Strategies {
			ser := plot.Series{Name: s.String()}
			for j, k := range c.Planes {
				ser.X = append(ser.X, float64(k))
				ser.Y = append(ser.Y, fig.value(c.Results[i][j]))
			}
			series = append(series, ser)
		}
		if len(c.Planes) > 0 {
			e := fig.value(c.Electronic)
			lo, hi := c.Planes[0], c.Planes[0]
			for _, k := range c.Planes {
				lo, hi = min(lo, k), max(hi, k)
			}
			series = append(series, plot.Series{Name: "electronic only", X: []float64{float64(lo), float64(hi)}, Y: []float64{e, e}})
		}
		name := names[k]
		title := fmt.Sprintf("%s run %d: %s, %d processes (optical circuit switch, Jones et al. 2007)", traceName, rep.Run, fig.title, rep.Procs)
		f, err := plot.Lines(name, title, "optical switch planes", fig.ylabel, series)
		if err := writeFigure(name, force, f, err); err != nil {
			return out, err
		}
		out = append(out, name)
	}
	return out, nil
}

// printOCS prints every run's curves, then the plots drawn.
func printOCS(w io.Writer, traceName string, rep *ocs.Report, plots []string) error {
	t := newTable(w)
	for i, rc := range rep.Runs {
		if i > 0 {
			fmt.Fprintln(t)
		}
		printOCSRun(t, traceName, rc)
	}
	for _, f := range plots {
		fmt.Fprintf(t, "plot\t%s\n", f)
	}
	return t.Flush()
}

// printOCSRun prints one run's curves.
func printOCSRun(t io.Writer, traceName string, rep ocs.RunCurves) {
	c := rep.Curves
	p := c.Params
	coll := "collectives left out"
	if rep.Decomposition != "" {
		coll = "collectives decomposed " + rep.Decomposition
	}
	fmt.Fprintf(t, "trace %s, run %d: %d processes, %s messages, %s\n", traceName, rep.Run, rep.Procs, human.Count(int64(rep.Messages)), coll)
	fmt.Fprintf(t, "optical %g Gbit/s per circuit, switching %g ms; electronic %g Gbit/s, %g µs; runtime threshold %s\n",
		p.OpticalBW*8/1e9, p.SwitchLatency*1e3, p.ElecBW*8/1e9, p.ElecLatency*1e6, human.Bytes(p.Threshold))
	fmt.Fprintf(t, "static strategies rank the %d connections of %s\n", rep.Connections, strings.Join(rep.RankedFrom, " + "))
	e := c.Electronic
	fmt.Fprintf(t, "electronic network only: time %s, delay %s (%s messages, %s)\n\n", human.Seconds(e.Time), human.Seconds(e.Delay), human.Count(e.Messages), human.Bytes(e.Bytes))
	fmt.Fprintln(t, "planes\tstrategy\ttime\tdelay\tbytes on circuits\tcircuits\tevictions\tplanes used")
	for j, k := range c.Planes {
		for i, s := range c.Strategies {
			r := c.Results[i][j]
			ev := "-"
			if s == ocs.Runtime {
				ev = human.Count(r.Evictions)
			}
			fmt.Fprintf(t, "%d\t%s\t%s\t%s\t%.1f%%\t%s\t%s\t%d\n", k, s, human.Seconds(r.Time), human.Seconds(r.Delay), 100*r.CircuitFraction,
				human.Count(r.Circuits), ev, r.PlanesUsed)
		}
	}
	pr := rep.Problems
	fmt.Fprintf(t, "\nunmatched\t%s sends (sent, not waited for), %s receives (not waited for)\n", human.Count(pr.UnmatchedSends), human.Count(pr.UnmatchedRecvs))
	for _, x := range []struct {
		what string
		n    int64
	}{{"messages to or from a process outside the run", pr.BadPeer}, {"collectives outside their communicator", pr.OutsideComm},
		{"collectives on a communicator of unknown members (see --unknown-comm-as-world)", pr.UnknownComm},
		{"collectives not decomposed", pr.Undecomposed}, {"collectives whose members disagree", pr.CollectiveMismatch},
		{"collectives some member never reached", pr.IncompleteCollectives}} {
		if x.n > 0 {
			fmt.Fprintf(t, "%s\t%s\n", x.what, human.Count(x.n))
		}
	}
	var broken int64
	for _, rs := range c.Results {
		for _, r := range rs {
			broken = max(broken, r.BrokenWaits)
		}
	}
	if broken > 0 {
		fmt.Fprintf(t, "waits broken to escape a cycle the trace's order allows no other way out of\t%s (at most, per simulation)\n", human.Count(broken))
	}
}

// ocsPlotNames are the files --plot NAME.EXT draws: NAME-time.EXT and
// NAME-delay.EXT.
func ocsPlotNames(path string) []string {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	return []string{base + "-time" + ext, base + "-delay" + ext}
}
