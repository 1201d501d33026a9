package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/show/plot"
	"github.com/parscope/parscope/trace"
)

// commReport is what `parscope comm` prints of one run.
type commReport struct {
	Trace string
	*comm.Result
	Aggregate bool
	Ranking   comm.Ranking
	// Selection is the matrix of the selected structures (the whole
	// program when none is selected).
	Selection commSelection
	// Sources are the source lines of the selected structures, read from
	// inside the --source-dir directories (none without them).
	Sources []commSource
}

// commSource is the source of one selected structure: its lines from the
// first to the last (at most maxSourceLines), or why they were not read.
type commSource struct {
	Run       int32    `json:"run"`
	Structure string   `json:"structure"`
	File      string   `json:"file"`
	Line      int32    `json:"line"`
	EndLine   int32    `json:"end_line,omitempty"`
	Lines     []string `json:"lines,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// maxSourceLines bounds the lines shown of one structure.
const maxSourceLines = 200

// commSources reads the source lines of the selected nodes' regions from
// inside dirs (report.SourceLines confines them there).
func commSources(h *trace.Header, res *comm.Result, nodes []int, dirs []string) []commSource {
	regions := map[int32]trace.RegionDef{}
	for _, r := range h.Regions {
		regions[r.ID] = r
	}
	var out []commSource
	for _, id := range nodes {
		n := &res.Nodes[id]
		r, ok := regions[n.Region]
		if n.Region < 0 || !ok || r.File == "" || r.Line <= 0 {
			continue
		}
		cs := commSource{Run: res.Run, Structure: res.Path(id), File: r.File, Line: r.Line, EndLine: r.EndLine}
		lines, err := report.SourceLines(dirs, r.File)
		if err != nil {
			cs.Error = err.Error()
			out = append(out, cs)
			continue
		}
		last := max(r.Line, r.EndLine)
		for k := r.Line; k <= last && int(k) <= len(lines) && len(cs.Lines) < maxSourceLines; k++ {
			cs.Lines = append(cs.Lines, lines[k-1])
		}
		if len(cs.Lines) == 0 {
			cs.Error = fmt.Sprintf("%s has %d lines, the structure starts at line %d", r.File, len(lines), r.Line)
		}
		out = append(out, cs)
	}
	return out
}

// commSelection is the matrix of the selected structures of a run.
type commSelection struct {
	Run        int32        `json:"run"`
	Structures []string     `json:"structures"`
	Nodes      []int        `json:"nodes"`
	Matrix     *comm.Matrix `json:"matrix"`
}

// commOutput is what `parscope comm --json` prints: the analysis'
// envelope (what the report's comm section holds), and beside it, when
// asked for, the matrix of the structures --structure selects in each run
// and the source lines of those structures (--source-dir).
type commOutput struct {
	*engine.Envelope
	Selection []commSelection `json:"selection,omitempty"`
	Sources   []commSource    `json:"sources,omitempty"`
}

// maxTableProcs is the largest n whose matrix is printed as a table.
const maxTableProcs = 16

// maxRanked is the number of structures the ranking prints.
const maxRanked = 10

// maxSubPlots is the number of structures drawn beside the whole program.
const maxSubPlots = 3

func init() {
	params := comm.DefaultParams()
	var (
		structures []string
		treeOnly   bool
		aggregate  bool
		runs       string
		plotPath   string
		scale      string
		counts     bool
		asJSON     bool
		force      bool
		sourceDirs []string
	)
	cmd := &cobra.Command{
		Use:   "comm TRACE",
		Short: "Communication per code structure: tree, matrices, degrees, working sets (Jones et al. 2007)",
		Long: `comm ties communication to code structure. It builds the code-structure tree
(regions nested as they were entered; a trace without regions is a single
root, "program") and for every structure the bytes and messages sent inside
it, the communication degree (distinct partners per process, the largest
shown) and the working sets (the pairs used per entry of the structure), for
every run (--runs selects some).

A message belongs to the innermost region open on its sender when it is
posted. Matrices come from the sends; receives are matched against them and
unmatched sides are reported. Collectives are decomposed into point-to-point
messages by --decompose (linear, binomial or ring) over their communicator's
members (all processes when the trace does not list them).

Without --aggregate a structure counts alone; with it, with everything nested
in it. --structure (repeatable; a label, a path like LOOP_100/IF_101, or #id)
selects structures whose summed matrix is printed (as a table for up to 16
processes) and plotted; without it the whole program's matrix is shown and
--plot draws it beside the matrices of its largest loops (Figures 9–11), for
the first run analysed.

--json prints the result in the envelope every face shares (docs/results.md):
every run's tree, rankings and matrices (summed in groups of adjacent
processes above --max-side), as the report holds them.

With --source-dir, the source lines of the selected structures are printed
from the file their region names, looked up inside the directories given
only (no ".." escape, no absolute path or symbolic link leading out: a
trace is untrusted input); without it no source file is read.`,
		Example: `  parscope comm ring.pst
  parscope comm --tree --runs 1 ring.pst
  parscope comm --structure IF_101 --plot if101.png ring.pst
  parscope comm --aggregate --decompose binomial --plot side.svg ring.pst
  parscope comm --json ring.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := withDeprecatedRun(cmd, runs)
			if err != nil {
				return err
			}
			if _, err := params.Options(0); err != nil {
				return usagef("--%v", err)
			}
			if scale != "log" && scale != "linear" {
				return usagef("--scale %q: want log or linear", scale)
			}
			if treeOnly && len(structures) > 0 {
				return usagef("--tree and --structure exclude each other")
			}
			if err := checkSourceDirs(sourceDirs); err != nil {
				return err
			}
			env, s, err := runOne(cmd, args[0], comm.Name, params, runs)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := runsInHeader(args[0], s.Header(), env.Runs); err != nil {
				return err
			}
			rep := env.Result.(*comm.Report)
			if len(rep.Runs) == 0 && !asJSON {
				return fmt.Errorf("%s: no run selected has messages, collectives or regions", args[0])
			}
			var out []commReport
			for _, r := range rep.Runs {
				res := r.Result
				sel := commSelection{Run: res.Run, Structures: structures}
				if len(structures) == 0 {
					sel.Structures, sel.Nodes = []string{comm.RootName}, []int{0}
				}
				for _, name := range structures {
					ids := res.Find(name)
					if len(ids) == 0 {
						return usagef("--structure %q: no such structure in run %d of %s (see --tree)", name, res.Run, args[0])
					}
					sel.Nodes = append(sel.Nodes, ids...)
				}
				if sel.Matrix, err = res.Select(sel.Nodes, aggregate || len(structures) == 0); err != nil {
					return err
				}
				cr := commReport{Trace: args[0], Result: res, Aggregate: aggregate, Ranking: r.RankOwn, Selection: sel}
				if aggregate {
					cr.Ranking = r.RankAggregate
				}
				if len(sourceDirs) > 0 {
					cr.Sources = commSources(s.Header(), res, sel.Nodes, sourceDirs)
				}
				out = append(out, cr)
			}
			if plotPath != "" && len(out) > 0 {
				if err := plotComm(plotPath, force, out[0].Result, out[0].Selection, aggregate, counts, scale == "log"); err != nil {
					return err
				}
			}
			if asJSON {
				o := commOutput{Envelope: env}
				for _, cr := range out {
					if len(structures) > 0 {
						o.Selection = append(o.Selection, cr.Selection)
					}
					o.Sources = append(o.Sources, cr.Sources...)
				}
				return writeJSON(cmd.OutOrStdout(), o)
			}
			for i, cr := range out {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := printComm(cmd.OutOrStdout(), cr, treeOnly); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	if err := engine.BindFlags(fl, params); err != nil {
		panic(err)
	}
	fl.StringArrayVar(&structures, "structure", nil, "select a structure by label, path or #id (repeatable)")
	fl.BoolVar(&treeOnly, "tree", false, "print only the code-structure tree")
	fl.BoolVar(&aggregate, "aggregate", false, "count each structure with everything nested in it")
	fl.StringVar(&runs, "runs", "", "only these runs (e.g. 0,2 or 1-3)")
	addProcFlags(cmd, comm.Name)
	addDeprecatedRun(cmd, "the run to analyse")
	fileOutputFlag(fl, &plotPath, "plot", "", "", "draw the heat map(s) of the first run analysed to this .png or .svg")
	forceFlag(fl, &force)
	fl.StringVar(&scale, "scale", "log", "heat-map scale: log or linear")
	fl.BoolVar(&counts, "counts", false, "plot message counts instead of bytes")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.StringArrayVar(&sourceDirs, "source-dir", nil, "a directory holding the program's source files, to print the lines of the selected structures; only files inside it are read (repeatable; without it no source file is read)")
	addTraceFlags(cmd, "format")
	root.AddCommand(cmd)
}

// plotComm draws the selection, or the whole program beside its largest
// loops (then its largest other structures, up to maxSubPlots in all).
func plotComm(path string, force bool, res *comm.Result, sel commSelection, aggregate, counts, log bool) error {
	unit := "bytes"
	if counts {
		unit = "messages"
	}
	opts := plot.HeatOptions{Unit: unit, Log: log}
	mode := "alone"
	if aggregate {
		mode = "with nested structures"
	}
	if len(sel.Structures) == 1 && sel.Structures[0] == comm.RootName && len(sel.Nodes) == 1 && sel.Nodes[0] == 0 {
		maps := []plot.Heat{{Title: "whole program", Values: sel.Matrix.Values(counts)}}
		rk := res.Rank(aggregate).ByVolume
		var pick []int
		for _, loopsOnly := range []bool{true, false} {
			for _, id := range rk {
				n := &res.Nodes[id]
				if len(pick) < maxSubPlots && (n.Kind == "loop") == loopsOnly && n.Matrix(aggregate).Pairs() > 0 {
					pick = append(pick, id)
				}
			}
		}
		for _, id := range pick {
			n := &res.Nodes[id]
			maps = append(maps, plot.Heat{Title: res.Path(id), Values: n.Matrix(aggregate).Values(counts)})
		}
		opts.Title = fmt.Sprintf("Communication matrices (%s; structures %s)", unit, mode)
		fig, err := plot.HeatMaps(path, maps, opts)
		return writeFigure(path, force, fig, err)
	}
	title := strings.Join(sel.Structures, " + ")
	if aggregate {
		title += " (with nested)"
	}
	fig, err := plot.HeatMap(path, plot.Heat{Title: title, Values: sel.Matrix.Values(counts)}, opts)
	return writeFigure(path, force, fig, err)
}

// maxIndent is the deepest level of the structure tree drawn by
// indentation; deeper structures say their depth, so that a line stays
// short however deep the nesting.
const maxIndent = 32

// treeIndent indents a structure at depth d of the tree.
func treeIndent(d int) string {
	if d <= maxIndent {
		return strings.Repeat("  ", d)
	}
	return strings.Repeat("  ", maxIndent) + "[depth " + strconv.Itoa(d) + "] "
}

func printComm(w io.Writer, rep commReport, treeOnly bool) error {
	res := rep.Result
	t := newTable(w)
	coll := "collectives left out"
	if res.Decomposition != "" {
		coll = "collectives decomposed " + res.Decomposition
	}
	fmt.Fprintf(t, "trace %s, run %d: %d processes, %s\n\n", rep.Trace, res.Run, res.Procs, coll)
	fmt.Fprintln(t, "structure\tkind\tentries\tbytes\tmsgs\tdegree\tagg bytes\tagg msgs\tagg degree\tworking sets")
	// Depth first with an explicit stack: a trace may nest regions a
	// million deep.
	stack := []int{0}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := &res.Nodes[id]
		ws := "-"
		if n.WorkingSets != nil && n.WorkingSets.MaxPairs > 0 {
			w := n.WorkingSets
			ws = fmt.Sprintf("%d windows, %d distinct, %d-%d pairs", w.Windows, w.Distinct, w.MinPairs, w.MaxPairs)
		}
		fmt.Fprintf(t, "%s%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%s\n", treeIndent(n.Depth), n.Name, n.Kind,
			human.Count(n.Entries), human.Bytes(n.Own.Bytes), human.Count(n.Own.Messages), n.Own.Degree,
			human.Bytes(n.Aggregate.Bytes), human.Count(n.Aggregate.Messages), n.Aggregate.Degree, ws)
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
	if treeOnly {
		return t.Flush()
	}
	mode := "alone"
	if rep.Aggregate {
		mode = "aggregate"
	}
	name := res.Path
	fmt.Fprintf(t, "\nranking (%s)\tby volume\t\tby degree\n", mode)
	for i := range rep.Ranking.ByVolume {
		v, d := rep.Ranking.ByVolume[i], rep.Ranking.ByDegree[i]
		sv, sd := res.Nodes[v].Own, res.Nodes[d].Own
		if rep.Aggregate {
			sv, sd = res.Nodes[v].Aggregate, res.Nodes[d].Aggregate
		}
		if i == maxRanked || (sv.Messages == 0 && sd.Messages == 0) {
			fmt.Fprintf(t, "\t(%d more structures)\n", len(rep.Ranking.ByVolume)-i)
			break
		}
		fmt.Fprintf(t, "%d\t%s\t%s\t%s\t%d (mean %.2f)\n", i+1, name(v), human.Bytes(sv.Bytes), name(d), sd.Degree, sd.MeanDegree)
	}
	m := rep.Selection.Matrix
	b, c := m.Totals()
	fmt.Fprintf(t, "\nmatrix of %s: %s in %s messages, %d pairs\n", strings.Join(rep.Selection.Structures, " + "), human.Bytes(b), human.Count(c), m.Pairs())
	if m.N <= maxTableProcs {
		for _, what := range []string{"bytes", "messages"} {
			fmt.Fprintf(t, "%s sent (row: sender, column: receiver)\n", what)
			hdr := "\t"
			for j := 0; j < m.N; j++ {
				hdr += fmt.Sprintf("%d\t", j)
			}
			fmt.Fprintln(t, hdr)
			for i := 0; i < m.N; i++ {
				row := fmt.Sprintf("%d\t", i)
				for j := 0; j < m.N; j++ {
					bb, cc := m.At(i, j)
					v := bb
					if what == "messages" {
						v = cc
					}
					row += human.Count(v) + "\t"
				}
				fmt.Fprintln(t, row)
			}
		}
	}
	for _, src := range rep.Sources {
		where := fmt.Sprintf("%s:%d", src.File, src.Line)
		if src.EndLine > src.Line {
			where += fmt.Sprintf("-%d", src.EndLine)
		}
		if src.Error != "" {
			fmt.Fprintf(t, "\nsource of %s (%s): %s\n", src.Structure, where, src.Error)
			continue
		}
		fmt.Fprintf(t, "\nsource of %s (%s)\n", src.Structure, where)
		for k, l := range src.Lines {
			fmt.Fprintf(t, "%5d  %s\n", int(src.Line)+k, l)
		}
	}
	p := res.Problems
	fmt.Fprintf(t, "\nmatched messages\t%s\n", human.Count(res.Matched))
	fmt.Fprintf(t, "unmatched\t%s sends, %s receives\n", human.Count(p.UnmatchedSends), human.Count(p.UnmatchedRecvs))
	for _, u := range p.Unmatched {
		fmt.Fprintf(t, "  \t%s\n", u)
	}
	for _, x := range []struct {
		what string
		n    int64
	}{{"sends to a process outside the run", p.BadPeer}, {"collectives outside their communicator", p.OutsideComm},
		{"collectives not decomposed", p.Undecomposed}, {"collectives on communicators of unknown members (left out)", p.UnknownComm},
		{"unbalanced region exits", p.UnbalancedExits}, {"regions never closed", p.Unclosed}} {
		if x.n > 0 {
			fmt.Fprintf(t, "%s\t%s\n", x.what, human.Count(x.n))
		}
	}
	return t.Flush()
}
