package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/show/plot"
	"github.com/parscope/parscope/trace"
)

// mentropyPoint is one row of a series.
type mentropyPoint struct {
	Index  int     `json:"index"`
	T      int64   `json:"t_ns"`
	Event  string  `json:"event"`
	Window string  `json:"window"`
	I      int32   `json:"i"`
	Case   string  `json:"case"`
	Pw     float64 `json:"p_w"`
	H      float64 `json:"h"`
}

// mentropyProc is one process's series (and phases) in --json.
type mentropyProc struct {
	Run    int32            `json:"run"`
	Proc   int32            `json:"proc"`
	Events []string         `json:"alphabet"`
	Series []mentropyPoint  `json:"series"`
	Phases []mentropy.Phase `json:"phases,omitempty"`
}

// defaultTable is Table 4's transition table (W = 4, docs/paper-oracles.md
// 1.3), as the instrument library defines it (instrument.DefaultEntropyConfig).
var defaultTable = func() [2]string {
	c := instrument.DefaultEntropyConfig()
	join := func(v []float64) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		return strings.Join(s, ",")
	}
	return [2]string{join(c.Alpha), join(c.Beta)}
}()

func init() {
	var (
		window                    int
		alpha, beta, prob, stream string
		k                         float64
		variant, scope, of        string
		learned, normalize        bool
		asJSON, asCSV, asSeries   bool
		out, plotPath             string
		runs, procs               string
		phaseThreshold            float64
		minLow                    int
	)
	cmd := &cobra.Command{
		Use:   "mentropy [TRACE]",
		Short: "Modified entropy of each process's event stream (Özmen 2002)",
		Long: `Mentropy computes, for every event of every process, the modified entropy
H = −K·p_w·x·ln x (nats): a window of the W previous events, a transition
table (α when the event repeats the most recent one, β when it differs, row I
by repetition count) and event probabilities give the probability p_w of the
windowed sequence; repeats drive H down and any change makes a peak.

--variant R (default) is the paper's equations 2–3 (reproduces its Table 4);
W is the "window chain" of its entropy generator tool (reproduces Table 3:
reversed index, H = 0 when the window is full of the repeated event; the
first event's value is implementation-defined). R takes W+1 table rows, W
takes W. Without --alpha/--beta, W = 4 uses Table 4's table.

Probabilities are uniform over each process's alphabet unless --prob gives a
table (it must sum to 1, or use --normalize) or --learned uses running
frequencies. The stream is the named events (--of events), state entries
(--of states) or region entries (--of regions); --stream gives a literal
stream of space-separated names instead of a trace.

--phase-threshold T reports phases: a new phase starts where H rises above T
after at least --min-low events at or below it.

The text output summarises each process's series (events, event types, the
least, mean and largest H, and its phases); --series prints every event's
value instead. --json and --csv always hold the full series.`,
		Example: `  parscope mentropy --stream "A B B B B C C C C A" --K 100
  parscope mentropy --variant W --window 4 --alpha 0.1,0.3,0.6,0.9 --beta 0.45,0.35,0.2,0.05 \
      --K 100 --prob A=0.2,B=0.4,C=0.4 --stream "A B B B B C C C A"
  parscope mentropy --K 100 --plot mw.png --phase-threshold 0.1 mw.pst
  parscope mentropy --csv -o mw.csv --of states mw.pst`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (stream != "") {
				return usagef("mentropy: give either a TRACE.pst or --stream, not both or neither")
			}
			if asJSON && asCSV {
				return usagef("mentropy: --json and --csv exclude each other")
			}
			if plotPath != "" {
				if ext := strings.ToLower(filepath.Ext(plotPath)); ext != ".png" && ext != ".svg" {
					return usagef("mentropy: --plot %s: the file name must end in .png or .svg", plotPath)
				}
			}
			if !(k > 0) {
				return usagef("mentropy: --K %v: need a positive constant", k)
			}
			c := mentropy.Config{Window: window, K: k, Variant: mentropy.Variant(strings.ToUpper(variant)), Scope: mentropy.Scope(scope)}
			if c.Variant != mentropy.VariantR && c.Variant != mentropy.VariantW {
				return usagef("mentropy: unknown variant %q (want R or W)", variant)
			}
			if alpha == "" && beta == "" && window == 4 && c.Variant == mentropy.VariantR {
				alpha, beta = defaultTable[0], defaultTable[1]
			}
			if alpha == "" || beta == "" {
				return usagef("mentropy: --alpha and --beta are needed (W+1 values for variant R, W for W)")
			}
			var err error
			if c.Alpha, err = mentropy.ParseTable(alpha); err != nil {
				return usagef("--alpha: %v", err)
			}
			if c.Beta, err = mentropy.ParseTable(beta); err != nil {
				return usagef("--beta: %v", err)
			}
			if err := c.Validate(); err != nil {
				return usagef("%v", err)
			}
			ps := mentropy.ProbSpec{Normalize: normalize}
			switch {
			case prob != "" && learned:
				return usagef("mentropy: --prob and --learned exclude each other")
			case prob != "":
				ps.Mode = mentropy.Given
				if ps.Table, err = mentropy.ParseProbs(prob); err != nil {
					return usagef("--prob: %v", err)
				}
			case learned:
				ps.Mode = mentropy.Learned
			}
			var series []mentropy.ProcSeries
			if stream != "" {
				s, err := mentropy.FromNames(strings.Fields(stream), c, ps)
				if err != nil {
					return err
				}
				series = []mentropy.ProcSeries{s}
			} else {
				kind, err := mentropy.Of(of).Kind()
				if err != nil {
					return usagef("--of: %v", err)
				}
				sel, err := readSelection(runs, procs)
				if err != nil {
					return err
				}
				sel.Kinds = []trace.Kind{kind}
				st, err := openTrace(cmd, args[0])
				if err != nil {
					return err
				}
				defer st.Close()
				if err := needRecords(st, "mentropy --of "+of, kind); err != nil {
					return err
				}
				h := st.Header()
				if series, err = mentropy.FromTrace(cmd.Context(), h, st.Records(sel), mentropy.Of(of), c, ps); err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
			}
			for _, s := range series {
				if s.Warning != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: run %d process %d: %s\n", s.Run, s.Proc, s.Warning)
				}
			}
			if plotPath != "" {
				if err := plotMentropy(plotPath, series); err != nil {
					return err
				}
			}
			procsOut := make([]mentropyProc, len(series))
			for i := range series {
				procsOut[i] = mentropyOut(&series[i])
				if phaseThreshold > 0 {
					procsOut[i].Phases = mentropy.Phases(&series[i], phaseThreshold, minLow)
				}
			}
			write := func(w io.Writer) error {
				switch {
				case asJSON:
					return writeJSON(w, procsOut)
				case asCSV:
					return writeMentropyCSV(w, procsOut)
				}
				if asSeries {
					return printMentropy(w, procsOut)
				}
				return printMentropySummary(w, procsOut)
			}
			if out == "" {
				return write(cmd.OutOrStdout())
			}
			return createOutput(out, write)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&window, "window", 4, "W, the number of previous events in the window")
	fl.StringVar(&alpha, "alpha", "", "α table, comma-separated (W+1 values for R, W for W)")
	fl.StringVar(&beta, "beta", "", "β table, comma-separated")
	fl.Float64Var(&k, "K", 1, "the constant K")
	fl.StringVar(&prob, "prob", "", "event probabilities NAME=P,... (default: uniform over each process's events)")
	fl.BoolVar(&learned, "learned", false, "use running event frequencies as probabilities")
	fl.BoolVar(&normalize, "normalize", false, "scale a --prob table that does not sum to 1 (with a warning)")
	fl.StringVar(&variant, "variant", "R", "R (equations 2–3) or W (window chain, the paper's Table 3)")
	fl.StringVar(&scope, "scope", "history", "repetition count scope for R: history or window")
	fl.StringVar(&of, "of", "events", "the stream: events, states or regions")
	fl.StringVar(&stream, "stream", "", "a literal stream of space-separated event names instead of a trace")
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	fl.StringVar(&procs, "procs", "", "only these processes (e.g. 0-3)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	fl.BoolVar(&asCSV, "csv", false, "print CSV: run, proc, index, t_ns, event, window, i, case, p_w, h")
	fl.BoolVar(&asSeries, "series", false, "print the value of every event instead of a summary per process")
	fl.StringVarP(&out, "output", "o", "", "write the output to this file (default stdout)")
	fl.StringVar(&plotPath, "plot", "", "plot H against the event index, one line per process (.png or .svg)")
	fl.Float64Var(&phaseThreshold, "phase-threshold", 0, "report phases: H rises above this after a low stretch")
	fl.IntVar(&minLow, "min-low", 3, "with --phase-threshold: events at or below it that make a low stretch")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

func mentropyOut(s *mentropy.ProcSeries) mentropyProc {
	p := mentropyProc{Run: s.Run, Proc: s.Proc, Events: s.Alphabet.Names(), Series: make([]mentropyPoint, len(s.Steps))}
	for i, st := range s.Steps {
		p.Series[i] = mentropyPoint{Index: i, T: s.T[i], Event: s.Alphabet.Names()[s.Events[i]], Window: s.Window(i),
			I: st.I, Case: st.Case.String(), Pw: st.Pw, H: st.H}
	}
	return p
}

func printMentropy(w io.Writer, procs []mentropyProc) error {
	tw := newTable(w)
	for _, p := range procs {
		fmt.Fprintf(tw, "run %d process %d: %d events, %d event types\n", p.Run, p.Proc, len(p.Series), len(p.Events))
		fmt.Fprintln(tw, "index\tt\tevent\twindow\tI\tcase\tH")
		for _, pt := range p.Series {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%d\t%s\t%.6f\n", pt.Index, pt.T, pt.Event, pt.Window, pt.I, pt.Case, pt.H)
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
func printMentropySummary(w io.Writer, procs []mentropyProc) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "run\tprocess\tevents\tevent types\tH min\tH mean\tH max\tphases")
	for _, p := range procs {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, pt := range p.Series {
			lo, hi, sum = min(lo, pt.H), max(hi, pt.H), sum+pt.H
		}
		if len(p.Series) == 0 {
			fmt.Fprintf(tw, "%d\t%d\t0\t%d\t-\t-\t-\t%d\n", p.Run, p.Proc, len(p.Events), len(p.Phases))
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.6f\t%.6f\t%.6f\t%d\n", p.Run, p.Proc, len(p.Series), len(p.Events),
			lo, sum/float64(len(p.Series)), hi, len(p.Phases))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range procs {
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

func writeMentropyCSV(w io.Writer, procs []mentropyProc) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"run", "proc", "index", "t_ns", "event", "window", "i", "case", "p_w", "h"})
	for _, p := range procs {
		for _, pt := range p.Series {
			_ = cw.Write([]string{strconv.Itoa(int(p.Run)), strconv.Itoa(int(p.Proc)), strconv.Itoa(pt.Index),
				strconv.FormatInt(pt.T, 10), pt.Event, pt.Window, strconv.Itoa(int(pt.I)), pt.Case,
				strconv.FormatFloat(pt.Pw, 'g', -1, 64), strconv.FormatFloat(pt.H, 'g', -1, 64)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// plotMentropy draws H against the event index, one line per process
// (Figures 4–5 of the paper), thinned to at most 20,000 points a line.
func plotMentropy(path string, series []mentropy.ProcSeries) error {
	var lines []plot.Series
	for _, s := range series {
		idx := plot.Thin(len(s.Steps), 20000)
		l := plot.Series{Name: fmt.Sprintf("run %d proc %d", s.Run, s.Proc)}
		for _, i := range idx {
			l.X = append(l.X, float64(i))
			l.Y = append(l.Y, s.Steps[i].H)
		}
		lines = append(lines, l)
	}
	return plot.Lines(path, "Modified entropy", "event index", "H (nats)", lines)
}
