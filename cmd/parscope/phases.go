package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/bbv"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	figure "github.com/parscope/parscope/show/plot"
)

// phasesFlags are the options of the phases command the engine's
// phase.Params do not hold: what to write, and where.
type phasesFlags struct {
	params                     *phase.Params
	saveSimpoints, saveWeights string
	saveLabels, plotPath       string
	jsonOut, force             bool
	runs                       string
}

func init() {
	fl := phasesFlags{params: phase.DefaultParams()}
	cmd := &cobra.Command{
		Use:   "phases INPUT [--simpoint-compat] [--maxk 30] [--k LIST] [--dim 15] [--seed N] ...",
		Short: "Find program phases and simulation points from basic block vectors",
		Long: `phases clusters the basic block vectors of INPUT, a .bb/.bb.gz file (valgrind
exp-bbv, SimPoint) or a .pst trace with BBV records (one analysis per
process; select with --runs/--procs), and reports the chosen number of
phases k, its BIC, and per phase its weight, representative interval
(simulation point), distance, size and within-phase variance, with hints
on the execution: the end of the initialisation, the period of the cyclic
part and the intervals of each phase.

By default it uses parscope's engine (k-means++ restarts in parallel,
Lloyd with Hamerly's bounds, the chosen k refined with Hartigan's moves);
phases of fewer than --min-phase-size intervals do not count when it
chooses k, so k does not grow to isolate stray transition intervals. With
--simpoint-compat it reproduces SimPoint 3.2 exactly, and the --save-*
files are byte-identical to SimPoint's -saveSimpoints, -saveSimpointWeights
and -saveLabels (plus the .lpt files of --coverage below 1).

--plot writes a PNG or SVG (by extension): the phase of every interval as
a colour strip along the execution, and the phase weights as bars.`,
		Example: `  parscope phases --simpoint-compat --save-simpoints x.simpoints --save-weights x.weights run.bb.gz
  parscope phases --plot phases.png --json gzip.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPhases(cmd, args[0], &fl) },
	}
	f := cmd.Flags()
	if err := engine.BindFlags(f, fl.params); err != nil {
		panic(err)
	}
	fileOutputFlag(f, &fl.saveSimpoints, "save-simpoints", "", "", "write the simulation points (SimPoint .simpoints)")
	fileOutputFlag(f, &fl.saveWeights, "save-weights", "", "", "write the phase weights (SimPoint .weights)")
	addTraceFlags(cmd, "format")
	fileOutputFlag(f, &fl.saveLabels, "save-labels", "", "", "write each interval's phase and distance (SimPoint .labels)")
	fileOutputFlag(f, &fl.plotPath, "plot", "", "", "write a plot of the phases (.png or .svg)")
	forceFlag(f, &fl.force)
	f.BoolVar(&fl.jsonOut, "json", false, "print the full results as JSON")
	f.StringVar(&fl.runs, "runs", "", "with a trace: only these runs (e.g. 0 or 0-3)")
	addProcFlags(cmd, phase.Name)
	root.AddCommand(cmd)
}

// phasesGCPercent is the GC percentage of the phases command, unless the
// environment sets GOGC.
const phasesGCPercent = 25

// isBBVFile reports whether phases reads the file at path as a .bb file
// itself: unless the import flags f or import's detection name another
// format, in which case the file is a trace to import.
func isBBVFile(path string, f *importFlags) bool {
	if f != nil && f.formatName != "" {
		return f.formatName == "bbv"
	}
	imp, err := format.Detect(path)
	return err != nil || imp.Name() == "bbv"
}

// runPhases analyses INPUT: a .bb file (one stream, clustered directly;
// compat mode parses it as SimPoint does), or a .pst directory or another
// trace openTrace imports, through the engine (one stream per process).
// Both give the engine's envelope of a phase.Phases.
func runPhases(cmd *cobra.Command, input string, fl *phasesFlags) error {
	opts, err := fl.params.Options()
	if err != nil {
		return usagef("%v", err)
	}
	if os.Getenv("GOGC") == "" {
		// The projected rows and the k-means states are pointer-free
		// arrays, cheap to collect, and the clustering allocates a few
		// per trial: with the default GOGC=100 the heap grows to twice
		// what is live. 25 keeps the peak near the live data for no
		// measurable time (docs/performance.md, phases memory).
		defer debug.SetGCPercent(debug.SetGCPercent(phasesGCPercent))
	}
	if err := checkPlotName("phases", fl.plotPath); err != nil {
		return err
	}
	start := time.Now()
	what := "phases: " + filepath.Base(input)
	bar := progress.Start(what, 0, progress.Steps)
	bar.Live()
	defer bar.Done()
	if bar != nil {
		// The intervals read of the trace's (of a file's: unknown), then
		// the k-means trials of the most the k search runs.
		stage := ""
		fl.params.Progress = func(s string, done, total int64) {
			bar.SetTotal(total)
			if s != stage {
				stage = s
				bar.Set(done)
				bar.Describe(what + ": " + s)
				return
			}
			bar.Set(done)
		}
		defer func() { fl.params.Progress = nil }()
		opts.Progress = fl.params.Progress
	}
	st, err := os.Stat(input)
	if err != nil {
		return err
	}
	var env *engine.Envelope
	if !st.IsDir() && isBBVFile(input, traceImports[cmd]) {
		if fl.runs != "" || len(fl.params.Procs) > 0 {
			return usagef("phases: --runs and --procs apply to a .pst or another trace, not to a .bb file")
		}
		// Projected as read: the vectors are never all in memory.
		res, err := phase.RunFile(cmd.Context(), input, bbv.ParseOptions{SimPointQuirks: fl.params.Compat}, opts)
		if err != nil {
			return err
		}
		env = &engine.Envelope{SchemaVersion: engine.SchemaVersion, Analysis: phase.Name, Trace: filepath.Base(input), Options: fl.params,
			Result: &phase.Phases{Streams: []phase.StreamPhases{{Name: input, Result: res}}}}
	} else {
		var s *openedTrace
		env, s, err = runOne(cmd, input, phase.Name, fl.params, fl.runs)
		if err != nil {
			return err
		}
		s.Close()
	}
	ph := env.Result.(*phase.Phases)
	saving := fl.saveSimpoints != "" || fl.saveWeights != "" || fl.saveLabels != "" || fl.plotPath != ""
	if saving && len(ph.Streams) > 1 {
		return usagef("phases: %s has %d BBV streams; --save-* and --plot need one (select it with --runs/--procs)", input, len(ph.Streams))
	}
	bar.Done() // before anything is written: a --save-* file may be stdout
	progress.Detailf(os.Stderr, "phases: %d streams clustered in %s\n", len(ph.Streams), human.Duration(time.Since(start)))
	if saving {
		res := ph.Streams[0].Result
		if err := savePhaseFiles(res, fl); err != nil {
			return err
		}
		if fl.plotPath != "" {
			fig, err := plotPhases(fl.plotPath, filepath.Base(input), res)
			if err := writeFigure(fl.plotPath, fl.force, fig, err); err != nil {
				return fmt.Errorf("phases: --plot: %w", err)
			}
		}
	}
	if fl.jsonOut {
		return writeJSON(cmd.OutOrStdout(), env)
	}
	for i, a := range ph.Streams {
		if i > 0 {
			fmt.Fprintln(cmd.OutOrStdout())
		}
		printPhases(cmd.OutOrStdout(), a)
	}
	return nil
}

// savePhaseFiles writes the SimPoint-format files asked for; with a
// coverage below 1 also the selection's ".lpt" files, as SimPoint does.
func savePhaseFiles(res *phase.Result, fl *phasesFlags) error {
	type file struct {
		path  string
		write func(io.Writer) error
	}
	var files []file
	if fl.saveSimpoints != "" {
		files = append(files, file{fl.saveSimpoints, res.WriteSimpoints})
		if res.Coverage != nil {
			files = append(files, file{fl.saveSimpoints + res.Coverage.Suffix(), res.Coverage.WriteSimpoints})
		}
	}
	if fl.saveWeights != "" {
		files = append(files, file{fl.saveWeights, res.WriteWeights})
		if res.Coverage != nil {
			files = append(files, file{fl.saveWeights + res.Coverage.Suffix(), res.Coverage.WriteWeights})
		}
	}
	if fl.saveLabels != "" {
		files = append(files, file{fl.saveLabels, res.WriteLabels})
	}
	// The coverage files' names are made from the flags': check them all
	// before writing any.
	for _, f := range files {
		if err := checkFileOutputs(fl.force, f.path); err != nil {
			return fmt.Errorf("phases: %w", err)
		}
	}
	for _, f := range files {
		if err := createOutput(f.path, fl.force, f.write); err != nil {
			return fmt.Errorf("phases: %w", err)
		}
		if f.path != "-" {
			if err := os.Chmod(f.path, 0o644); err != nil {
				return fmt.Errorf("phases: %w", err)
			}
		}
	}
	return nil
}

// printPhases prints the phases of one stream as text.
func printPhases(w io.Writer, a phase.StreamPhases) {
	res := a.Result
	ev := res.Evaluated[res.Chosen]
	fmt.Fprintf(w, "%s: %d intervals, %d blocks, %s mode, %d dimensions\n",
		a.Name, res.Intervals, res.InputDim, res.Mode, res.Dim)
	var ks []string
	guarded := false
	for _, e := range res.Evaluated {
		k := fmt.Sprintf("%d:%s", e.K, phase.FormatG(float64(e.BIC)))
		if e.GuardedBIC != nil && *e.GuardedBIC != e.BIC {
			k += fmt.Sprintf("(%s)", phase.FormatG(float64(*e.GuardedBIC)))
			guarded = true
		}
		ks = append(ks, k)
	}
	fmt.Fprintf(w, "k evaluated (k:BIC): %s\n", strings.Join(ks, " "))
	if guarded {
		fmt.Fprintln(w, "(in brackets: the BIC with the phases below the minimum size dissolved, which chooses k)")
	}
	fmt.Fprintf(w, "chosen k = %d, BIC %s (threshold %g), %d non-empty phases\n\n",
		res.K, phase.FormatG(float64(ev.BIC)), res.Threshold, len(res.Phases))
	t := newTable(w)
	fmt.Fprintln(t, "phase\tweight\trepresentative\tdistance\tsize\tvariance\tfirst\truns")
	for _, p := range res.Phases {
		runs := res.Hints.PhaseRuns[p.ID]
		first := -1
		if len(runs) > 0 {
			first = res.Hints.Runs[runs[0]].Start
		}
		fmt.Fprintf(t, "%d\t%.4f\t%d\t%s\t%d\t%s\t%d\t%d\n", p.ID, p.Weight, p.Representative,
			phase.FormatG(p.Distance), p.Size, phase.FormatG(p.Variance), first, len(runs))
	}
	t.Flush()
	h := res.Hints
	if h.InitEnd > 0 {
		fmt.Fprintf(w, "\ninitialisation: intervals 0-%d (%d intervals)\n", h.InitEnd-1, h.InitEnd)
	} else {
		fmt.Fprintln(w, "\ninitialisation: none told apart")
	}
	if h.Period > 0 {
		var cyc []string
		for _, c := range h.Cycle {
			cyc = append(cyc, strconv.Itoa(c))
		}
		fmt.Fprintf(w, "cyclic part: period %d intervals from interval %d (labels match %.0f%%), phases %s\n",
			h.Period, h.InitEnd, 100*h.PeriodMatch, strings.Join(cyc, " → "))
	} else {
		fmt.Fprintln(w, "cyclic part: no period found")
	}
	fmt.Fprintln(w, "intervals per phase:")
	for _, p := range res.Phases {
		var parts []string
		for i, r := range h.PhaseRuns[p.ID] {
			if i == 8 {
				parts = append(parts, fmt.Sprintf("… (%d runs)", len(h.PhaseRuns[p.ID])))
				break
			}
			run := h.Runs[r]
			if run.End-run.Start == 1 {
				parts = append(parts, strconv.Itoa(run.Start))
			} else {
				parts = append(parts, fmt.Sprintf("%d-%d", run.Start, run.End-1))
			}
		}
		fmt.Fprintf(w, "  %d: %s\n", p.ID, strings.Join(parts, ", "))
	}
}

// labelStrip is a plotter that draws each run of intervals as a rectangle
// in its phase's colour, from y = 0 to 1.
type labelStrip struct{ runs []phase.Stretch }

func (s labelStrip) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, r := range s.runs {
		x0, x1 := trX(float64(r.Start)), trX(float64(r.End))
		y0, y1 := trY(0), trY(1)
		c.FillPolygon(figure.Category(r.Phase), []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
}

func (s labelStrip) DataRange() (xmin, xmax, ymin, ymax float64) {
	if len(s.runs) == 0 {
		return 0, 1, 0, 1
	}
	return 0, float64(s.runs[len(s.runs)-1].End), 0, 1
}

// phasesTitle is the title of the phase plot: the input's name, the
// phases and intervals (with thousands separators), and the hints.
func phasesTitle(name string, res *phase.Result) string {
	h := res.Hints
	title := fmt.Sprintf("%s: %d phases over %s intervals", name, len(res.Phases), human.Count(int64(res.Intervals)))
	if h.Period > 0 && h.Period < res.Intervals {
		init := "no initialisation told apart"
		if h.InitEnd > 0 {
			init = fmt.Sprintf("initialisation 0-%s", human.Count(int64(h.InitEnd-1)))
		}
		title += fmt.Sprintf(" (%s, period %s)", init, human.Count(int64(h.Period)))
	}
	return title
}

// plotPhases draws the phase plot of res for path (PNG or SVG by
// extension, see figure.Render).
func plotPhases(path, name string, res *phase.Result) (*figure.Figure, error) {
	h := res.Hints
	strip := plot.New()
	strip.Title.Text = phasesTitle(name, res)
	strip.X.Label.Text = "interval"
	strip.X.Tick.Marker = figure.NiceTicks{Whole: true}
	strip.HideY()
	strip.Add(labelStrip{runs: h.Runs})
	if h.InitEnd > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: float64(h.InitEnd), Y: -0.1}, {X: float64(h.InitEnd), Y: 1.1}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Black
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		strip.Add(l)
	}

	bars := plot.New()
	bars.Title.Text = "phase weights"
	bars.Y.Label.Text = "weight"
	bars.X.Label.Text = "phase"
	bars.Y.Min = 0
	bars.Y.Tick.Marker = figure.NiceTicks{}
	var names []string
	for i, p := range res.Phases {
		b, err := plotter.NewBarChart(plotter.Values{p.Weight}, vg.Points(max(4, 300/float64(len(res.Phases)+1))))
		if err != nil {
			return nil, err
		}
		b.XMin = float64(i)
		b.Color = figure.Category(p.ID)
		b.LineStyle.Width = 0
		bars.Add(b)
		names = append(names, strconv.Itoa(p.ID))
	}
	bars.NominalX(names...)

	const width, height = 8 * vg.Inch, 4.5 * vg.Inch
	// The strip on the top 58%, the bars below.
	return figure.Render(path, width, height, func(dc draw.Canvas) error {
		figure.Draw(draw.Crop(dc, 0, 0, height*0.58, 0), strip)
		figure.Draw(draw.Crop(dc, 0, 0, 0, -height*0.44), bars)
		return nil
	})
}
