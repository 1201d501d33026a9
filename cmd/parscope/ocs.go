package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/ocs"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/show/plot"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// ocsReport is what `parscope ocs --json` prints.
type ocsReport struct {
	Trace    string `json:"trace"`
	Run      int32  `json:"run"`
	Procs    int    `json:"procs"`
	Messages int    `json:"messages"`
	// Decomposition is how collectives became messages ("" when left out).
	Decomposition string `json:"decomposition,omitempty"`
	// RankedFrom names the structures whose matrix the static strategies
	// rank ("program" for the whole trace).
	RankedFrom  []string     `json:"ranked_from"`
	Connections int          `json:"connections"`
	Curves      *ocs.Curves  `json:"curves"`
	Problems    ocs.Problems `json:"problems"`
	Plots       []string     `json:"plots,omitempty"`
}

func init() {
	var (
		planesFlag string
		rankFlag   string
		threshold  int64
		opticalBW  float64
		switchMS   float64
		elecBW     float64
		elecLatUS  float64
		decompose  string
		noColl     bool
		unknownAll bool
		structures []string
		run        int32
		plotPath   string
		asJSON     bool
	)
	def := ocs.DefaultParams()
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

--plot out.png draws Figures 12–13: out-time.png (completion time) and
out-delay.png (average message delay) against planes, one line per strategy
(.svg works too).`,
		Example: `  parscope ocs mg.pst
  parscope ocs --planes 1-11 --ranking best,worst,indexed,runtime --plot mg.png mg.pst
  parscope ocs --optical-bw 100 --switch-ms 10 --elec-bw 10 --threshold 65536 --json mg.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseIDList(planesFlag)
			if err != nil || len(ids) == 0 {
				return usagef("--planes %q: want numbers and ranges such as 1-11 (%v)", planesFlag, err)
			}
			var planes []int
			for _, k := range ids {
				if k > 1024 {
					return usagef("--planes: %d planes is more than 1024", k)
				}
				planes = append(planes, int(k))
			}
			var strategies []ocs.Strategy
			for _, name := range strings.Split(rankFlag, ",") {
				s, err := ocs.ParseStrategy(name)
				if err != nil {
					return usagef("--ranking: %v", err)
				}
				strategies = append(strategies, s)
			}
			p := ocs.Params{OpticalBW: opticalBW * 1e9 / 8, SwitchLatency: switchMS * 1e-3, ElecBW: elecBW * 1e9 / 8,
				ElecLatency: elecLatUS * 1e-6, Threshold: threshold}
			if err := p.Validate(); err != nil {
				return usagef("%v", err)
			}
			alg, err := trace.ParseDecomposition(decompose)
			if err != nil {
				return usagef("--decompose: %v", err)
			}
			if plotPath != "" {
				if ext := strings.ToLower(filepath.Ext(plotPath)); ext != ".png" && ext != ".svg" {
					return usagef("--plot %s: want a .png or .svg file", plotPath)
				}
			}
			s, err := openTrace(cmd, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			if err := needRecords(s, "ocs", trace.KindSend, trace.KindCollective); err != nil {
				return err
			}
			rd := s.Records(store.ReadOptions{Runs: []int32{run}, Kinds: []trace.Kind{trace.KindSend, trace.KindRecv,
				trace.KindCollective, trace.KindEnter, trace.KindExit, trace.KindEvent, trace.KindState}})
			w, err := ocs.Load(cmd.Context(), s.Header(), rd, ocs.Options{Run: run, Decompose: alg, NoCollectives: noColl,
				UnknownCommAsWorld: unknownAll})
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			rep := ocsReport{Trace: args[0], Run: run, Procs: w.Procs, Messages: w.Messages(), Decomposition: w.Comm.Decomposition,
				RankedFrom: []string{comm.RootName}, Problems: w.Problems}
			conns := w.ProgramConnections()
			if len(structures) > 0 {
				var nodes []int
				for _, name := range structures {
					found := w.Comm.Find(name)
					if len(found) == 0 {
						return usagef("--structure %q: no such structure in %s (see parscope comm --tree)", name, args[0])
					}
					nodes = append(nodes, found...)
				}
				m, err := w.Comm.Select(nodes, true)
				if err != nil {
					return err
				}
				conns, rep.RankedFrom = ocs.Connections(m), structures
			}
			rep.Connections = len(conns)
			if rep.Curves, err = w.SweepConnections(cmd.Context(), conns, planes, strategies, p); err != nil {
				return err
			}
			if plotPath != "" {
				if rep.Plots, err = plotOCS(plotPath, rep); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return printOCS(cmd.OutOrStdout(), rep)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&planesFlag, "planes", "1-11", "numbers of optical planes to simulate (list and ranges)")
	fl.StringVar(&rankFlag, "ranking", "best,worst,indexed,runtime", "strategies: best, worst, indexed, runtime (comma-separated)")
	fl.Int64Var(&threshold, "threshold", def.Threshold, "runtime strategy: smallest message (bytes) that requests a circuit")
	fl.Float64Var(&opticalBW, "optical-bw", def.OpticalBW*8/1e9, "bandwidth of one optical circuit, Gbit/s")
	fl.Float64Var(&switchMS, "switch-ms", def.SwitchLatency*1e3, "circuit switching (set-up) latency, milliseconds")
	fl.Float64Var(&elecBW, "elec-bw", def.ElecBW*8/1e9, "bandwidth of a node's electronic link, Gbit/s")
	fl.Float64Var(&elecLatUS, "elec-lat", def.ElecLatency*1e6, "electronic network latency per message, microseconds")
	fl.StringVar(&decompose, "decompose", "linear", "how collectives become messages: linear, binomial or ring")
	fl.BoolVar(&noColl, "no-collectives", false, "leave collectives out (their time counts as compute)")
	fl.BoolVar(&unknownAll, "unknown-comm-as-world", false, "decompose collectives on communicators of unknown members over every process (else they are reported and left out)")
	fl.StringArrayVar(&structures, "structure", nil, "rank the connections of this structure (label, path or #id; repeatable) instead of the whole program's")
	fl.Int32Var(&run, "run", 0, "the run to simulate")
	fl.StringVar(&plotPath, "plot", "", "draw the curves to NAME-time and NAME-delay (.png or .svg)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// plotOCS draws the completion time and the delay against planes, one line
// per strategy and a flat line for the electronic network alone.
func plotOCS(path string, rep ocsReport) ([]string, error) {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	c := rep.Curves
	var out []string
	for _, fig := range []struct {
		suffix, title, ylabel string
		value                 func(r ocs.Result) float64
	}{
		{"-time", "completion time", "time (ms)", func(r ocs.Result) float64 { return r.Time * 1e3 }},
		{"-delay", "average message delay", "delay (µs)", func(r ocs.Result) float64 { return r.Delay * 1e6 }},
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
		name := base + fig.suffix + ext
		title := fmt.Sprintf("%s: %s, %d processes (optical circuit switch, Jones et al. 2007)", filepath.Base(rep.Trace), fig.title, rep.Procs)
		if err := plot.Lines(name, title, "optical switch planes", fig.ylabel, series); err != nil {
			return out, err
		}
		out = append(out, name)
	}
	return out, nil
}

func printOCS(w io.Writer, rep ocsReport) error {
	t := newTable(w)
	c := rep.Curves
	p := c.Params
	coll := "collectives left out"
	if rep.Decomposition != "" {
		coll = "collectives decomposed " + rep.Decomposition
	}
	fmt.Fprintf(t, "trace %s, run %d: %d processes, %s messages, %s\n", rep.Trace, rep.Run, rep.Procs, human.Count(int64(rep.Messages)), coll)
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
	for _, f := range rep.Plots {
		fmt.Fprintf(t, "plot\t%s\n", f)
	}
	return t.Flush()
}
