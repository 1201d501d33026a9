package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/show/plot"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// occupancyRun is what `parscope occupancy --json` prints for one run.
type occupancyRun struct {
	Run         int32    `json:"run"`
	Procs       int      `json:"procs"`
	Modes       []string `json:"modes"`
	Begin       int64    `json:"begin_ns"`
	End         int64    `json:"end_ns"`
	Records     int64    `json:"records"`
	Microstates int64    `json:"microstates"`
	MacroRows   int64    `json:"macrostate_rows"`
	Possible    string   `json:"possible_macrostates"`
	Observed    int      `json:"observed_macrostates"`
	// Compression is records in : occupancy table rows out.
	Compression float64 `json:"compression"`
	// Table holds the --top macrostates with the largest occupancy, in
	// order of first appearance; TableOmitted counts the rows left out.
	// With --all it is every row, written as they are read from the
	// result rather than built in memory first.
	Table        []occupancyMacro  `json:"table,omitempty"`
	TableOmitted int               `json:"table_omitted,omitempty"`
	Projection   *occupancyProject `json:"projection,omitempty"`
	Mean         []occupancyMean   `json:"mean,omitempty"`
	// Work is Σ occupancy (s) × rate over the table the --rates file
	// applies to (WorkOf: "table" or "projection").
	Work   *float64 `json:"work,omitempty"`
	WorkOf string   `json:"work_of,omitempty"`
}

type occupancyMacro struct {
	Counts    []int32 `json:"counts"`
	Occupancy int64   `json:"occupancy_ns"`
}

type occupancyProject struct {
	Modes []string         `json:"modes"`
	Index []int            `json:"mode_indices"`
	Table []occupancyMacro `json:"table"`
}

type occupancyMean struct {
	Mode   string  `json:"mode"`
	Global float64 `json:"global_ns"`
	Local  float64 `json:"local_ns"`
	// Counters is the mean of the instrument library's occupancy counters
	// (with --counters).
	Counters *float64 `json:"counters_ns,omitempty"`
	Share    float64  `json:"share"`
}

func init() {
	var (
		runs, modesFile, project, start string
		ratesFile                       string
		mean, asJSON, counters, all     bool
		top                             int
		plotPath, barsPath              string
	)
	cmd := &cobra.Command{
		Use:   "occupancy TRACE.pst",
		Short: "State occupancies: macrostates, occupancy tables, mean node occupancy (Lyon 1990)",
		Long: `Occupancy puts every process of a run, at any time, in one of m modes (its
states, or groups of states given by --modes) and reports, per run, Lyon's
tables: the occupancy table (T3: the time spent with each combination of
counts of processes per mode, in order of first appearance), with --project
its projection on some modes (T4), and with --mean the mean node occupancy of
each mode (T5), computed from the table and from per-process counters (they
agree). It also reports the number of possible macrostates C(p+m-1, p), how
many were observed, and the compression from records to table rows.

The table shows the --top macrostates of largest occupancy (20 by default),
still in order of first appearance, and says how many rows it left out;
--all writes every row (with --json, one row at a time as it is read from
the result, never the whole table encoded at once).

--rates reads a rate table r(.) (lines "C1,...,Ck RATE", the counts of a
macrostate and its rate; "* RATE" for every macrostate not listed) and prints
the total work Σ occupancy × rate, occupancy in seconds, as the r(.) columns
of Lyon's tables: k is the number of modes for the occupancy table, or the
number of projected modes (--project) for the projection (r_j of T4).

The --modes file has lines "STATE MODE" (a state id or name, then a mode
name; "*" for every other state); every state of the trace must be mapped.
A process has no mode before its first state record: --start names the mode
it is in then, otherwise that is an error. --counters also averages the
occupancy counters an instrumented program wrote (instrument
Options.Occupancy: counters "occupancy <state>"), the local collection that
needs no global state.

--plot draws the processes per mode over time as stacked areas (the
"mountain range") and --bars the occupancy histogram of each mode (fraction
of the time with k processes in it), for the first selected run.`,
		Example: `  parscope occupancy --mean amoeba.pst
  parscope occupancy --modes ipsc.modes --project U,R --json ring.pst
  parscope occupancy --start undetermined --plot mountains.png --bars bars.svg go.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sel, err := readSelection(runs, "")
			if err != nil {
				return err
			}
			s, err := store.Open(args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			h := s.Header()
			modes := occupancy.StateModes(h)
			if modesFile != "" {
				f, err := regular.Open(modesFile)
				if err != nil {
					return err
				}
				modes, err = occupancy.ParseModes(f, modesFile, h)
				f.Close()
				if err != nil {
					return err
				}
			}
			if len(modes.Names) == 0 {
				return fmt.Errorf("%s: the trace defines no states (give --modes)", args[0])
			}
			var keep []int
			if project != "" {
				for _, name := range strings.Split(project, ",") {
					k := modeIndex(modes.Names, strings.TrimSpace(name))
					if k < 0 {
						return usagef("--project: %q is neither a mode nor A1..A%d (modes: %s)", name, len(modes.Names), strings.Join(modes.Names, ", "))
					}
					keep = append(keep, k)
				}
			}
			var rates occupancy.Rates
			ratesOn := "table"
			if ratesFile != "" {
				f, err := regular.Open(ratesFile)
				if err != nil {
					return err
				}
				var k int
				rates, k, err = occupancy.ParseRates(f, ratesFile)
				f.Close()
				if err != nil {
					return err
				}
				switch {
				case k == 0 || k == len(modes.Names):
				case keep != nil && k == len(keep):
					ratesOn = "projection"
				default:
					return fmt.Errorf("%s: macrostates of %d counts, expected %d (the modes %s) or, with --project, the number of projected modes", ratesFile, k, len(modes.Names), strings.Join(modes.Names, ", "))
				}
			}
			opts := occupancy.Options{Start: start}
			results, err := occupancy.Compute(cmd.Context(), h, s.Records(sel), modes, opts)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if len(results) == 0 {
				return fmt.Errorf("%s: no records to analyse", args[0])
			}
			if all {
				top = 0
			}
			var reps []occupancyRun
			for _, res := range results {
				rep, err := occupancyReport(res.Run, res, keep, mean || counters, top)
				if err != nil {
					return err
				}
				if rates != nil {
					rows := res.Table
					if ratesOn == "projection" {
						rows, _ = res.Project(keep)
					}
					w, err := occupancy.WorkOf(rows, rates)
					if err != nil {
						return fmt.Errorf("%s: run %d: %w", ratesFile, res.Run, err)
					}
					rep.Work, rep.WorkOf = &w, ratesOn
				}
				reps = append(reps, rep)
			}
			if counters {
				cs, err := occupancy.ReadCounters(cmd.Context(), h, s.Records(store.ReadOptions{Runs: sel.Runs, Kinds: []trace.Kind{trace.KindCounter}}), modes)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				for _, c := range cs {
					for i := range reps {
						if reps[i].Run != c.Run {
							continue
						}
						for j, v := range c.Mean() {
							reps[i].Mean[j].Counters = &v
						}
					}
				}
			}
			if plotPath != "" {
				// A second pass streams the macrostate trace of the run
				// drawn and keeps only the rows drawn.
				one := sel
				one.Runs = []int32{results[0].Run}
				idx := plot.Thin(int(results[0].Rows), maxPlotRows)
				var rows []occupancy.Row
				i := 0
				if _, err := occupancy.EachRow(cmd.Context(), h, s.Records(one), modes, opts, func(row *occupancy.Row) {
					if len(rows) < len(idx) && idx[len(rows)] == i {
						r := *row
						r.Counts = slices.Clone(row.Counts)
						rows = append(rows, r)
					}
					i++
				}); err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				if err := plotMountains(plotPath, reps[0].Run, results[0], rows); err != nil {
					return err
				}
			}
			if barsPath != "" {
				if err := plotOccupancyBars(barsPath, reps[0].Run, results[0]); err != nil {
					return err
				}
			}
			if asJSON {
				if top <= 0 {
					return writeOccupancyJSON(cmd.OutOrStdout(), reps, results)
				}
				return writeJSON(cmd.OutOrStdout(), reps)
			}
			return printOccupancy(cmd.OutOrStdout(), reps, results, top)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	fl.StringVar(&modesFile, "modes", "", "a file mapping states to modes (lines \"STATE MODE\")")
	fl.StringVar(&project, "project", "", "also project the table on these modes (e.g. U,R)")
	fl.StringVar(&start, "start", "", "the mode processes are in before their first state")
	fl.StringVar(&ratesFile, "rates", "", "a rate table r(macrostate) (lines \"C1,...,Ck RATE\", \"* RATE\"): print the work Σ occupancy × rate")
	fl.BoolVar(&mean, "mean", false, "also print the mean node occupancy of each mode")
	fl.BoolVar(&counters, "counters", false, "also average the instrument library's occupancy counters (implies --mean)")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.IntVar(&top, "top", 20, "print the table rows of the largest occupancy, at most this many per run (0: all)")
	fl.BoolVar(&all, "all", false, "print every row of the occupancy table, in order of first appearance (as --top 0)")
	fl.StringVar(&plotPath, "plot", "", "draw the processes per mode over time (stacked) to this .png or .svg")
	fl.StringVar(&barsPath, "bars", "", "draw the occupancy histogram of each mode to this .png or .svg")
	root.AddCommand(cmd)
}

func macros(in []occupancy.Macro) []occupancyMacro {
	out := make([]occupancyMacro, len(in))
	for i, m := range in {
		out[i] = occupancyMacro{Counts: m.Counts, Occupancy: m.Occupancy}
	}
	return out
}

// topMacros returns the at most n rows of table with the largest
// occupancy (ties to the earlier row), in table order (first appearance).
func topMacros(table []occupancy.Macro, n int) []occupancy.Macro {
	if n >= len(table) {
		return table
	}
	idx := make([]int, len(table))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(table[y].Occupancy, table[x].Occupancy) })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]occupancy.Macro, n)
	for i, j := range idx {
		out[i] = table[j]
	}
	return out
}

// occupancyReport summarises one run's result, with the top rows of its
// occupancy table by occupancy; top <= 0 leaves the table to be streamed
// from res (writeOccupancyJSON, printOccupancy).
func occupancyReport(run int32, res *occupancy.Result, keep []int, mean bool, top int) (occupancyRun, error) {
	rep := occupancyRun{Run: run, Procs: res.Procs, Modes: res.Modes, Begin: res.Begin, End: res.End,
		Records: res.Records, Microstates: res.Microstates, MacroRows: res.Rows,
		Possible: res.Possible().String(), Observed: len(res.Table)}
	if top > 0 {
		rep.Table = macros(topMacros(res.Table, top))
		rep.TableOmitted = len(res.Table) - len(rep.Table)
	}
	if len(res.Table) > 0 {
		rep.Compression = float64(res.Records) / float64(len(res.Table))
	}
	if keep != nil {
		p, err := res.Project(keep)
		if err != nil {
			return rep, err
		}
		pr := &occupancyProject{Table: macros(p), Index: keep}
		for _, k := range keep {
			pr.Modes = append(pr.Modes, res.Modes[k])
		}
		rep.Projection = pr
	}
	if mean {
		g, l := res.Mean(), res.LocalMean()
		total := float64(res.End - res.Begin)
		for j, name := range res.Modes {
			m := occupancyMean{Mode: name, Global: g[j], Local: l[j]}
			if total > 0 {
				m.Share = g[j] / total
			}
			rep.Mean = append(rep.Mean, m)
		}
	}
	return rep, nil
}

// writeOccupancyJSON writes reps as writeJSON does, with each run's whole
// occupancy table written row by row from its result: the table is never
// copied nor encoded as one value.
func writeOccupancyJSON(w io.Writer, reps []occupancyRun, results []*occupancy.Result) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("[\n")
	for i, rep := range reps {
		head, err := json.MarshalIndent(rep, "  ", "  ")
		if err != nil {
			return err
		}
		// head is {"run": ..., ...}: the table goes first, then the rest.
		bw.WriteString("  {\n    \"table\": [")
		for j, m := range results[i].Table {
			if j > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n      ")
			row, err := json.Marshal(occupancyMacro{Counts: m.Counts, Occupancy: m.Occupancy})
			if err != nil {
				return err
			}
			bw.Write(row)
		}
		bw.WriteString("\n    ],")
		bw.Write(head[1:])
		if i+1 < len(reps) {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

func printOccupancy(w io.Writer, reps []occupancyRun, results []*occupancy.Result, top int) error {
	for i, r := range reps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "run %d: %d processes, %d modes (%s), %s\n", r.Run, r.Procs, len(r.Modes), strings.Join(r.Modes, ", "), fmtNS(r.End-r.Begin))
		fmt.Fprintf(w, "records %s -> microstates %s -> macrostate rows %s -> occupancy table %d rows (compression %.1f:1)\n",
			human.Count(r.Records), human.Count(r.Microstates), human.Count(r.MacroRows), r.Observed, r.Compression)
		fmt.Fprintf(w, "macrostates: %d observed of %s possible (C(p+m-1, p))\n\n", r.Observed, r.Possible)
		cols := columnNames(r.Modes)
		if !slices.Equal(cols, r.Modes) {
			for j, name := range r.Modes {
				fmt.Fprintf(w, "%s = %s\n", cols[j], name)
			}
		}
		if top > 0 {
			fmt.Fprintln(w, "occupancy table (T3)")
			if r.TableOmitted > 0 {
				fmt.Fprintf(w, "the %d rows of the largest occupancy, in order of first appearance; %d more rows (--all prints all)\n", len(r.Table), r.TableOmitted)
			}
			if err := printMacros(w, cols, macroRows(r.Table), r.End-r.Begin); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(w, "occupancy table (T3)")
			if err := printMacros(w, cols, slices.Values(results[i].Table), r.End-r.Begin); err != nil {
				return err
			}
		}
		if r.Projection != nil {
			fmt.Fprintf(w, "\nprojection on %s (T4)\n", strings.Join(r.Projection.Modes, ", "))
			var pcols []string
			for _, k := range r.Projection.Index {
				pcols = append(pcols, cols[k])
			}
			if err := printMacros(w, pcols, macroRows(r.Projection.Table), r.End-r.Begin); err != nil {
				return err
			}
		}
		if r.Work != nil {
			fmt.Fprintf(w, "\nwork Σ occupancy (s) × rate over the %s: %s\n", map[string]string{"table": "occupancy table", "projection": "projection"}[r.WorkOf], strconv.FormatFloat(*r.Work, 'g', 6, 64))
		}
		if r.Mean != nil {
			fmt.Fprintln(w, "\nmean node occupancy (T5)")
			tw := newTable(w)
			withCounters := r.Mean[0].Counters != nil
			fmt.Fprint(tw, "mode\tfrom table\tfrom local counters\t")
			if withCounters {
				fmt.Fprint(tw, "from instrument counters\t")
			}
			fmt.Fprintln(tw, "share")
			for _, m := range r.Mean {
				fmt.Fprintf(tw, "%s\t%s\t%s\t", m.Mode, human.Nanos(m.Global), human.Nanos(m.Local))
				if m.Counters != nil {
					fmt.Fprintf(tw, "%s\t", human.Nanos(*m.Counters))
				} else if withCounters {
					fmt.Fprint(tw, "-\t")
				}
				fmt.Fprintf(tw, "%.1f%%\n", 100*m.Share)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// modeIndex finds a mode by name, or by its column name A1..Am.
func modeIndex(modes []string, name string) int {
	if k := slices.Index(modes, name); k >= 0 {
		return k
	}
	if rest, ok := strings.CutPrefix(name, "A"); ok {
		if k, err := strconv.Atoi(rest); err == nil && k >= 1 && k <= len(modes) {
			return k - 1
		}
	}
	return -1
}

// columnNames returns the mode names as table columns, or A1..Am when a
// name is too long for a column.
func columnNames(modes []string) []string {
	for _, name := range modes {
		if len(name) > 12 || strings.ContainsAny(name, " \t") {
			out := make([]string, len(modes))
			for j := range out {
				out[j] = "A" + strconv.Itoa(j+1)
			}
			return out
		}
	}
	return modes
}

// macroRows lists rows as occupancy table rows.
func macroRows(rows []occupancyMacro) iter.Seq[occupancy.Macro] {
	return func(yield func(occupancy.Macro) bool) {
		for _, m := range rows {
			if !yield(occupancy.Macro{Counts: m.Counts, Occupancy: m.Occupancy}) {
				return
			}
		}
	}
}

// printMacrosBlock is the number of rows aligned together: the aligned
// text of a whole table is never held at once.
const printMacrosBlock = 4096

func printMacros(w io.Writer, modes []string, rows iter.Seq[occupancy.Macro], total int64) error {
	tw := newTable(w)
	fmt.Fprintln(tw, strings.Join(modes, "\t")+"\toccupancy\tshare")
	n := 0
	for m := range rows {
		for _, c := range m.Counts {
			fmt.Fprintf(tw, "%d\t", c)
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(m.Occupancy) / float64(total)
		}
		fmt.Fprintf(tw, "%s\t%.2f%%\n", fmtNS(m.Occupancy), share)
		if n++; n%printMacrosBlock == 0 {
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	return tw.Flush()
}

// maxPlotRows bounds the macrostate rows drawn in the mountain range.
const maxPlotRows = 4000

// plotMountains draws the number of processes in each mode over time as
// stacked areas: mode 0 at the bottom. rows are the macrostate rows drawn
// (at most maxPlotRows of the run's, thinned evenly).
func plotMountains(path string, run int32, res *occupancy.Result, rows []occupancy.Row) error {
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("processes per mode over time, run %d", run)
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "processes"
	p.Y.Min, p.Y.Max = 0, float64(res.Procs)
	p.Legend.Top = true
	m := len(res.Modes)
	// Draw the cumulative counts from the top mode down, each filled to the
	// axis, so the lower modes cover the upper ones.
	for j := m - 1; j >= 0; j-- {
		var xy plotter.XYs
		for n, row := range rows {
			var y float64
			for k := 0; k <= j; k++ {
				y += float64(row.Counts[k])
			}
			// A thinned row lasts until the next row drawn, so the steps
			// stay contiguous.
			end := row.T + row.Dur
			if n+1 < len(rows) {
				end = rows[n+1].T
			}
			t0, t1 := float64(row.T)/1e9, float64(end)/1e9
			xy = append(xy, plotter.XY{X: t0, Y: y}, plotter.XY{X: t1, Y: y})
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		l.Color = plot.Category(j)
		l.FillColor = plot.Category(j)
		l.Width = 0
		p.Add(l)
		p.Legend.Add(res.Modes[j], l)
	}
	return plot.Save(path, plot.Width, plot.Height, func(dc draw.Canvas) error { p.Draw(dc); return nil })
}

// plotOccupancyBars draws, for each mode, the fraction of the run's time
// spent with k processes in it (the projection of the table on the mode).
func plotOccupancyBars(path string, run int32, res *occupancy.Result) error {
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("occupancy histograms, run %d", run)
	p.X.Label.Text = "processes in the mode"
	p.Y.Label.Text = "fraction of time"
	p.Legend.Top = true
	total := float64(res.End - res.Begin)
	m := len(res.Modes)
	width := vg.Points(math.Max(1, 300/float64((res.Procs+1)*m)))
	for j := range m {
		proj, err := res.Project([]int{j})
		if err != nil {
			return err
		}
		vals := make(plotter.Values, res.Procs+1)
		for _, e := range proj {
			if total > 0 {
				vals[e.Counts[0]] = float64(e.Occupancy) / total
			}
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		b.Color = plot.Category(j)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(j)-float64(m-1)/2) * width
		p.Add(b)
		p.Legend.Add(res.Modes[j], b)
	}
	return plot.Save(path, plot.Width, plot.Height, func(dc draw.Canvas) error { p.Draw(dc); return nil })
}
