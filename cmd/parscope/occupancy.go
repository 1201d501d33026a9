package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/show/plot"
)

func init() {
	params := occupancy.DefaultParams()
	var (
		runs               string
		mean, asJSON, all  bool
		force              bool
		asCSV              bool
		plotPath, barsPath string
		out                string
	)
	cmd := &cobra.Command{
		Use:   "occupancy TRACE",
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
--all (or --top 0) keeps every row: the whole table streams from the
analysis to the output row by row, in memory bounded by a budget (the
table of a random trace can hold a row per record; past the budget it is
sorted in temporary files, see docs/occupancy.md). --json prints the result
in the JSON envelope every face of parscope shares (schema_version,
analysis, trace, options, result; see docs/results.md); --csv writes the
occupancy table as CSV (run, one column per mode, occupancy_ns), and -o
writes to a file.

--rates reads a rate table r(.) (lines "C1,...,Ck RATE", the counts of a
macrostate and its rate; "* RATE" for every macrostate not listed) and prints
the total work Σ occupancy × rate, occupancy in seconds, as the r(.) columns
of Lyon's tables: k is the number of modes for the occupancy table, or the
number of projected modes (--project) for the projection (r_j of T4).

The --modes file has lines "STATE MODE" (a state id or name, then a mode
name; "*" for every other state); every state of the trace must be mapped.
A process exists from its first state record until it enters a state the
trace marks absent (a Go goroutine's not-exist: it ended); before and after
it is in no mode, and a macrostate counts the processes that exist (its
counts then sum to fewer than p; absent_ns is that time summed over the
processes). An absent state is no mode. --start instead puts processes in a
mode before their first state record. --counters also averages the
occupancy counters an instrumented program wrote (instrument
Options.Occupancy: counters "occupancy <state>"), the local collection that
needs no global state.

The result also holds, per run, the occupancy histogram of each mode (the
fraction of the time with k processes in it) and the mean number of
processes in each mode over --windows time windows. --plot draws the latter
as stacked areas (the "mountain range") and --bars the histograms, for the
first run analysed.`,
		Example: `  parscope occupancy --mean amoeba.pst
  parscope occupancy --modes ipsc.modes --project U,R --json ring.pst
  parscope occupancy --plot mountains.png --bars bars.svg go.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sel, err := parseIDList(runs)
			if err != nil {
				return usagef("--runs: %v", err)
			}
			if all {
				params.Top = 0
			}
			if plotPath != "" && params.Windows == 0 {
				return usagef("--plot draws the processes-per-mode series: give --windows > 0")
			}
			if asJSON && asCSV {
				return usagef("--json and --csv: choose one")
			}
			env, s, err := runSelected(cmd, args[0], occupancy.Name, params, sel)
			if err != nil {
				return err
			}
			defer s.Close()
			rep := env.Result.(*occupancy.Report)
			defer rep.Close()
			if plotPath != "" {
				if err := plotMountains(plotPath, force, &rep.Runs[0]); err != nil {
					return err
				}
			}
			if barsPath != "" {
				if err := plotOccupancyBars(barsPath, force, &rep.Runs[0]); err != nil {
					return err
				}
			}
			write := func(w io.Writer) error {
				switch {
				case asJSON:
					return writeOccupancyJSON(w, env, rep)
				case asCSV:
					return writeOccupancyCSV(w, rep)
				}
				return printOccupancy(w, rep, mean || params.Counters, params.Top)
			}
			if out == "" || out == "-" {
				bw := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
				if err := write(bw); err != nil {
					return err
				}
				return bw.Flush()
			}
			return createOutput(out, force, write)
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, occupancy.Name)
	fl.BoolVar(&mean, "mean", false, "also print the mean node occupancy of each mode (--json always holds it)")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.BoolVar(&asCSV, "csv", false, "write the occupancy table as CSV: run, one column per mode, occupancy_ns (the --top rows, every row with --all)")
	fileOutputFlag(fl, &out, "output", "o", "", "write the output to this file (default stdout)")
	addTraceFlags(cmd, "format")
	fl.BoolVar(&all, "all", false, "keep every row of the occupancy table, in order of first appearance (as --top 0)")
	fileOutputFlag(fl, &plotPath, "plot", "", "", "draw the processes per mode over time (stacked, from --windows windows) to this .png or .svg")
	fileOutputFlag(fl, &barsPath, "bars", "", "", "draw the occupancy histogram of each mode to this .png or .svg")
	forceFlag(fl, &force)
	root.AddCommand(cmd)
}

func printOccupancy(w io.Writer, rep *occupancy.Report, mean bool, top int) error {
	for i, r := range rep.Runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "run %d: %d processes, %d modes (%s), %s\n", r.Run, r.Procs, len(r.Modes), strings.Join(r.Modes, ", "), human.Nanos(float64(r.EndNS-r.BeginNS)))
		fmt.Fprintf(w, "state records %s -> microstates %s -> macrostate rows %s -> occupancy table %s rows (compression %.1f:1)\n",
			human.Count(r.StateRecords), human.Count(r.Microstates), human.Count(r.MacrostateRows), human.Count(int64(r.ObservedMacrostates)), r.Compression)
		if r.AbsentNS > 0 {
			// Processes that do not exist for a while are in no mode.
			fmt.Fprintf(w, "macrostates: %s observed of %s possible (C(p+m, p): processes are absent for a while)\n", human.Count(int64(r.ObservedMacrostates)), human.Digits(r.PossibleMacrostates))
			fmt.Fprintf(w, "absent (before a process's first state, or after it ended; in no mode): %s per process on average, %.1f%%\n\n",
				human.Nanos(float64(r.AbsentNS)/float64(r.Procs)), 100*float64(r.AbsentNS)/float64(r.Procs)/float64(max(r.EndNS-r.BeginNS, 1)))
		} else {
			fmt.Fprintf(w, "macrostates: %s observed of %s possible (C(p+m-1, p))\n\n", human.Count(int64(r.ObservedMacrostates)), human.Digits(r.PossibleMacrostates))
		}
		cols := columnNames(r.Modes)
		if !slices.Equal(cols, r.Modes) {
			for j, name := range r.Modes {
				fmt.Fprintf(w, "%s = %s\n", cols[j], name)
			}
		}
		fmt.Fprintln(w, "occupancy table (T3)")
		if r.TableOmitted > 0 {
			fmt.Fprintf(w, "the %d rows of the largest occupancy, in order of first appearance; %d more rows (--all prints all)\n", len(r.Table), r.TableOmitted)
		}
		if err := printMacros(w, cols, r.EachRow, r.EndNS-r.BeginNS); err != nil {
			return err
		}
		if r.Projection != nil {
			fmt.Fprintf(w, "\nprojection on %s (T4)\n", strings.Join(r.Projection.Modes, ", "))
			var pcols []string
			for _, k := range r.Projection.ModeIndices {
				pcols = append(pcols, cols[k])
			}
			if err := printMacros(w, pcols, eachMacro(r.Projection.Table), r.EndNS-r.BeginNS); err != nil {
				return err
			}
		}
		if r.Work != nil {
			fmt.Fprintf(w, "\nwork Σ occupancy (s) × rate over the %s: %s\n", map[string]string{"table": "occupancy table", "projection": "projection"}[r.WorkOf], strconv.FormatFloat(*r.Work, 'g', 6, 64))
		}
		if mean {
			fmt.Fprintln(w, "\nmean node occupancy (T5)")
			tw := newTable(w)
			withCounters := r.Mean[0].CountersNS != nil
			fmt.Fprint(tw, "mode\tfrom table\tfrom local counters\t")
			if withCounters {
				fmt.Fprint(tw, "from instrument counters\t")
			}
			fmt.Fprintln(tw, "share")
			for _, m := range r.Mean {
				fmt.Fprintf(tw, "%s\t%s\t%s\t", m.Mode, human.Nanos(m.GlobalNS), human.Nanos(m.LocalNS))
				if m.CountersNS != nil {
					fmt.Fprintf(tw, "%s\t", human.Nanos(*m.CountersNS))
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

// printMacrosBlock is the number of rows aligned together: the aligned
// text of a whole table is never held at once.
const printMacrosBlock = 4096

// eachMacro calls fn with every row of rows: printMacros' source for a
// table held in memory.
func eachMacro(rows []occupancy.Macro) func(fn func(occupancy.Macro) error) error {
	return func(fn func(occupancy.Macro) error) error {
		for _, m := range rows {
			if err := fn(m); err != nil {
				return err
			}
		}
		return nil
	}
}

// printMacros prints the rows each gives as an aligned table.
func printMacros(w io.Writer, modes []string, each func(fn func(occupancy.Macro) error) error, total int64) error {
	tw := newTable(w)
	fmt.Fprintln(tw, strings.Join(modes, "\t")+"\toccupancy\tshare")
	n := 0
	err := each(func(m occupancy.Macro) error {
		for _, c := range m.Counts {
			fmt.Fprintf(tw, "%d\t", c)
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(m.Occupancy) / float64(total)
		}
		fmt.Fprintf(tw, "%s\t%.2f%%\n", human.Nanos(float64(m.Occupancy)), share)
		if n++; n%printMacrosBlock == 0 {
			return tw.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Flush()
}

// writeOccupancyCSV writes the occupancy table of every run: run, the
// count of each mode (columns named by the modes), occupancy_ns. Runs of
// different modes (a --modes file applies to all) share the header of
// the first.
func writeOccupancyCSV(w io.Writer, rep *occupancy.Report) error {
	cw := csv.NewWriter(w)
	var rec []string
	for i, r := range rep.Runs {
		if i == 0 {
			rec = append(append(rec[:0], "run"), r.Modes...)
			if err := cw.Write(append(rec, "occupancy_ns")); err != nil {
				return err
			}
		}
		run := strconv.Itoa(int(r.Run))
		err := r.EachRow(func(m occupancy.Macro) error {
			rec = append(rec[:0], run)
			for _, c := range m.Counts {
				rec = append(rec, strconv.Itoa(int(c)))
			}
			return cw.Write(append(rec, strconv.FormatInt(m.Occupancy, 10)))
		})
		if err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// tableMark is the occupancy of the row writeOccupancyJSON puts in place
// of run i's streamed table (tableMark+i), which no table holds (an
// occupancy is never negative).
const tableMark = math.MinInt64

// writeOccupancyJSON writes the envelope as writeJSON does, the whole
// table of a run that streams it (--all) written row by row from the
// stream, so that it is never held in memory: the envelope is encoded
// with a marker row in place of each such table, and the marker's array
// replaced by the rows, indented as the encoder indents them.
func writeOccupancyJSON(w io.Writer, env *engine.Envelope, rep *occupancy.Report) error {
	cp := *rep
	cp.Runs = slices.Clone(rep.Runs)
	var streamed []int
	for i := range cp.Runs {
		if cp.Runs[i].Streamed() {
			cp.Runs[i] = cp.Runs[i].WithTable([]occupancy.Macro{{Occupancy: tableMark + int64(len(streamed))}})
			streamed = append(streamed, i)
		}
	}
	if streamed == nil {
		return writeJSON(w, env)
	}
	e := *env
	e.Result = &cp
	var buf bytes.Buffer
	if err := writeJSON(&buf, &e); err != nil {
		return err
	}
	doc := buf.Bytes()
	for k, i := range streamed {
		mark := []byte(`"occupancy_ns": ` + strconv.FormatInt(tableMark+int64(k), 10) + "\n")
		at := bytes.Index(doc, mark)
		open := bytes.LastIndexByte(doc[:max(at, 0)], '[')
		end := bytes.IndexByte(doc[max(at, 0):], ']')
		if at < 0 || open < 0 || end < 0 {
			return fmt.Errorf("occupancy: internal error: the table of run %d is not where the JSON envelope has it", rep.Runs[i].Run)
		}
		end += at
		indent := string(doc[bytes.LastIndexByte(doc[:open], '\n')+1 : open])
		indent = indent[:len(indent)-len(strings.TrimLeft(indent, " "))]
		if _, err := w.Write(doc[:open]); err != nil {
			return err
		}
		if err := writeRowsJSON(w, &rep.Runs[i], indent); err != nil {
			return err
		}
		doc = doc[end+1:]
	}
	_, err := w.Write(doc)
	return err
}

// writeRowsJSON writes the rows of r's table as a JSON array whose lines
// are indented after indent, as encoding/json indents them at that depth.
func writeRowsJSON(w io.Writer, r *occupancy.RunReport, indent string) error {
	n := 0
	err := r.EachRow(func(m occupancy.Macro) error {
		b, err := json.MarshalIndent(m, indent+"  ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n"
		if n == 0 {
			sep = "[\n"
		}
		n++
		if _, err := io.WriteString(w, sep+indent+"  "); err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	end := "\n" + indent + "]"
	if n == 0 {
		end = "null" // as encoding/json writes the nil Table of no rows
	}
	_, err = io.WriteString(w, end)
	return err
}

// plotMountains draws the processes in each mode over time as stacked
// areas, mode 0 at the bottom, from the result's processes-per-window
// series.
func plotMountains(path string, force bool, r *occupancy.RunReport) error {
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("processes per mode over time, run %d", r.Run)
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "processes"
	p.Y.Min, p.Y.Max = 0, mountainsTop(r)
	p.Y.Tick.Marker = plot.NiceTicks{Whole: true} // processes: 0, 1, 2, not 0.5
	p.Legend.Top = true
	// Draw the cumulative counts from the top mode down, each filled to the
	// axis, so the lower modes cover the upper ones.
	for j := len(r.Modes) - 1; j >= 0; j-- {
		var xy plotter.XYs
		for w, counts := range r.ProcessesPerWindow {
			var y float64
			for k := 0; k <= j; k++ {
				y += counts[k]
			}
			t0 := (float64(r.BeginNS) + float64(w)*r.WindowNS) / 1e9
			xy = append(xy, plotter.XY{X: t0, Y: y}, plotter.XY{X: t0 + r.WindowNS/1e9, Y: y})
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
		p.Legend.Add(r.Modes[j], l)
	}
	fig, err := plot.Render(path, plot.Width, plot.Height, func(dc draw.Canvas) error { plot.Draw(dc, p); return nil })
	return writeFigure(path, force, fig, err)
}

// mountainsTop is the top of the processes axis of plotMountains: the
// most processes that exist at once in a window (at least 1), not the
// run's process count, which includes the processes left out (--procs,
// --exclude-procs) and those not yet created or ended, so that the axis
// does not run far above the data (8 ranks of 20 processes drawn against
// an axis up to 20).
func mountainsTop(r *occupancy.RunReport) float64 {
	top := 1.0
	for _, counts := range r.ProcessesPerWindow {
		var n float64
		for _, c := range counts {
			n += c
		}
		top = math.Max(top, n)
	}
	return math.Ceil(top - 1e-9)
}

// plotOccupancyBars draws, for each mode, the fraction of the run's time
// spent with k processes in it (the result's histogram).
func plotOccupancyBars(path string, force bool, r *occupancy.RunReport) error {
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("occupancy histograms, run %d", r.Run)
	p.X.Label.Text = "processes in the mode"
	p.Y.Label.Text = "fraction of time"
	p.Legend.Top = true
	m := len(r.Modes)
	width := vg.Points(math.Max(1, 300/float64((r.Procs+1)*m)))
	for j := range m {
		b, err := plotter.NewBarChart(plotter.Values(r.Histogram[j]), width)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		b.Color = plot.Category(j)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(j)-float64(m-1)/2) * width
		p.Add(b)
		p.Legend.Add(r.Modes[j], b)
	}
	fig, err := plot.Render(path, plot.Width, plot.Height, func(dc draw.Canvas) error { plot.Draw(dc, p); return nil })
	return writeFigure(path, force, fig, err)
}
