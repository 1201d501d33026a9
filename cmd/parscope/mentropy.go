package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/show/plot"
)

func init() {
	params := mentropy.DefaultParams()
	var (
		stream                  string
		runs                    string
		asJSON, asCSV, asSeries bool
		force                   bool
		out, plotPath           string
	)
	cmd := &cobra.Command{
		Use:   "mentropy [TRACE]",
		Short: "Modified entropy of each process's event stream (Özmen 2002)",
		Long: `Mentropy computes, for every event of every process, the modified entropy
H = −K·p_w·x·ln x (nats): a window of the W previous events (--window-events),
a transition table (α when the event repeats the most recent one, β when it
differs, row I by repetition count) and event probabilities give the
probability p_w of the windowed sequence; repeats drive H down and any change
makes a peak.

--variant R (default) is the paper's equations 2–3 (reproduces its Table 4);
W is the "window chain" of its entropy generator tool (reproduces Table 3:
reversed index, H = 0 when the window is full of the repeated event; the
first event's value is implementation-defined). R takes W+1 table rows, W
takes W. The default --alpha and --beta are Table 4's (W = 4, variant R).

Probabilities are uniform over each process's alphabet unless --prob gives a
table (it must sum to 1, or use --normalize) or --learned uses running
frequencies. The stream is the named events (--of events), state entries
(--of states) or region entries (--of regions); --stream gives a literal
stream of space-separated names instead of a trace.

Every event is listed unless --max-points N sums each process's series into
at most N points (the largest and mean H of consecutive events, as the
report does). --phase-threshold T reports phases: a new phase starts where H
rises above T after at least --min-low events at or below it.

The text output summarises each process's series (events, event types, the
least, mean and largest H, and its phases); --series prints every event's
value instead. --json prints the result in the envelope every face shares
(docs/results.md); --json and --csv hold the whole series.`,
		Example: `  parscope mentropy --stream "A B B B B C C C C A" --K 100
  parscope mentropy --variant W --window-events 4 --alpha 0.1,0.3,0.6,0.9 --beta 0.45,0.35,0.2,0.05 \
      --K 100 --prob A=0.2,B=0.4,C=0.4 --stream "A B B B B C C C A"
  parscope mentropy --K 100 --plot mw.png --phase-threshold 0.1 mw.pst
  parscope mentropy --csv -o mw.csv --of states mw.pst`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (stream != "") {
				return usagef("mentropy: give either a TRACE or --stream, not both or neither")
			}
			if asJSON && asCSV {
				return usagef("mentropy: --json and --csv exclude each other")
			}
			if err := checkPlotName("mentropy", plotPath); err != nil {
				return err
			}
			if !(params.K > 0) {
				return usagef("mentropy: --K %v: need a positive constant", params.K)
			}
			if _, _, _, err := params.Config(); err != nil {
				return usagef("%v", err)
			}
			var env *engine.Envelope
			if stream != "" {
				res, err := mentropy.StreamResult(strings.Fields(stream), params)
				if err != nil {
					return err
				}
				env = &engine.Envelope{SchemaVersion: engine.SchemaVersion, Analysis: mentropy.Name, Options: params, Result: res}
			} else {
				e, s, err := runOne(cmd, args[0], mentropy.Name, params, runs)
				if err != nil {
					return err
				}
				s.Close()
				env = e
			}
			res := env.Result.(*mentropy.Result)
			for _, p := range res.Procs {
				if p.Warning != "" {
					progress.Warnf(cmd.ErrOrStderr(), "run %d process %d: %s", p.Run, p.Proc, p.Warning)
				}
			}
			if plotPath != "" {
				if err := plotMentropy(plotPath, force, res); err != nil {
					return err
				}
			}
			write := func(w io.Writer) error {
				switch {
				case asJSON:
					return writeJSON(w, env)
				case asCSV:
					return writeMentropyCSV(w, res)
				}
				if asSeries {
					return printMentropy(w, res)
				}
				return printMentropySummary(w, res)
			}
			if out == "" {
				return write(cmd.OutOrStdout())
			}
			return createOutput(out, force, write)
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	// --window was W before every window's flag said its unit.
	fl.Var(fl.Lookup("window-events").Value, "window", "the same as --window-events")
	fl.MarkDeprecated("window", "use --window-events")
	fl.StringVar(&stream, "stream", "", "a literal stream of space-separated event names instead of a trace")
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, mentropy.Name)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.BoolVar(&asCSV, "csv", false, "print CSV: run, proc, index, t_ns, event, window, i, case, p_w, h (with --max-points: run, proc, index, t_ns, h_max, h_mean)")
	fl.BoolVar(&asSeries, "series", false, "print the value of every event (or point) instead of a summary per process")
	fileOutputFlag(fl, &out, "output", "o", "", "write the output to this file (default stdout)")
	forceFlag(fl, &force)
	fileOutputFlag(fl, &plotPath, "plot", "", "", "plot H (the largest of each point) against the event index, one line per process (.png or .svg)")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// printMentropy prints every process's series: each event with its
// window, row, case and H, or each point with its largest and mean H, then
// its phases.
func printMentropy(w io.Writer, res *mentropy.Result) error {
	tw := newTable(w)
	for _, p := range res.Procs {
		fmt.Fprintf(tw, "run %d process %d: %d events, %d event types\n", p.Run, p.Proc, p.Events, len(p.Alphabet))
		if p.Steps != nil {
			fmt.Fprintln(tw, "index\tt\tevent\twindow\tI\tcase\tH")
			for i, st := range p.Steps {
				fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%d\t%s\t%.6f\n", i, p.TNS[i], st.Event, st.Window, st.I, st.Case, st.H)
			}
		} else {
			fmt.Fprintln(tw, "index\tt\tH max\tH mean")
			for i, x := range p.Index {
				fmt.Fprintf(tw, "%d\t%d\t%.6f\t%.6f\n", x, p.TNS[i], p.HMax[i], p.HMean[i])
			}
		}
		if len(p.Phases) > 0 {
			fmt.Fprintln(tw, "phase\tstart\tend\tdominant\tshare")
			for i, ph := range p.Phases {
				fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%.3f\n", i, ph.Start, ph.End, ph.Dominant, ph.Share)
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// printMentropySummary prints one line per process: its events, event
// types, the least, mean and largest H and the number of phases, then the
// phases of the processes that have them.
func printMentropySummary(w io.Writer, res *mentropy.Result) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "run\tprocess\tevents\tevent types\tH min\tH mean\tH max\tphases")
	for _, p := range res.Procs {
		lo, hi, sum, n := math.Inf(1), math.Inf(-1), 0.0, 0
		for _, st := range p.Steps {
			lo, hi, sum, n = min(lo, st.H), max(hi, st.H), sum+st.H, n+1
		}
		if p.Steps == nil { // points: the largest and the mean of each
			for i := range p.HMax {
				lo, hi = min(lo, p.HMean[i]), max(hi, p.HMax[i])
			}
			for i, x := range p.Index {
				next := p.Events
				if i+1 < len(p.Index) {
					next = p.Index[i+1]
				}
				sum, n = sum+p.HMean[i]*float64(next-x), n+next-x
			}
		}
		if n == 0 {
			fmt.Fprintf(tw, "%d\t%d\t0\t%d\t-\t-\t-\t%d\n", p.Run, p.Proc, len(p.Alphabet), len(p.Phases))
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.6f\t%.6f\t%.6f\t%d\n", p.Run, p.Proc, p.Events, len(p.Alphabet),
			lo, sum/float64(n), hi, len(p.Phases))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range res.Procs {
		if len(p.Phases) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nrun %d process %d: phases\n", p.Run, p.Proc)
		tw = newTable(w)
		fmt.Fprintln(tw, "phase\tstart\tend\tdominant\tshare")
		for i, ph := range p.Phases {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%.3f\n", i, ph.Start, ph.End, ph.Dominant, ph.Share)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// writeMentropyCSV writes a row per event (or per point with --max-points).
func writeMentropyCSV(w io.Writer, res *mentropy.Result) error {
	cw := csv.NewWriter(w)
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	steps := len(res.Procs) == 0 || res.Procs[0].Steps != nil
	if steps {
		_ = cw.Write([]string{"run", "proc", "index", "t_ns", "event", "window", "i", "case", "p_w", "h"})
	} else {
		_ = cw.Write([]string{"run", "proc", "index", "t_ns", "h_max", "h_mean"})
	}
	for _, p := range res.Procs {
		run, proc := strconv.Itoa(int(p.Run)), strconv.Itoa(int(p.Proc))
		if steps {
			for i, st := range p.Steps {
				_ = cw.Write([]string{run, proc, strconv.Itoa(i), strconv.FormatInt(p.TNS[i], 10), st.Event, st.Window,
					strconv.Itoa(int(st.I)), st.Case.String(), f(st.Pw), f(st.H)})
			}
			continue
		}
		for i, x := range p.Index {
			_ = cw.Write([]string{run, proc, strconv.Itoa(x), strconv.FormatInt(p.TNS[i], 10), f(p.HMax[i]), f(p.HMean[i])})
		}
	}
	cw.Flush()
	return cw.Error()
}

// plotMentropy draws H against the event index, one line per process
// (Figures 4–5 of the paper): each point's largest H, so --max-points
// bounds the points drawn.
func plotMentropy(path string, force bool, res *mentropy.Result) error {
	fig, err := plot.Lines(path, "Modified entropy", "event index", "H (nats)", mentropyLines(res))
	return writeFigure(path, force, fig, err)
}

// mentropyLines are the series of a mentropy result as plot lines: each
// point's largest H against its first event.
func mentropyLines(res *mentropy.Result) []plot.Series {
	var lines []plot.Series
	for _, p := range res.Procs {
		l := plot.Series{Name: fmt.Sprintf("run %d proc %d", p.Run, p.Proc)}
		for i, x := range p.Index {
			l.X = append(l.X, float64(x))
			l.Y = append(l.Y, p.HMax[i])
		}
		lines = append(lines, l)
	}
	return lines
}
