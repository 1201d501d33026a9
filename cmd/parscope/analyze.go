package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/human"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/show/plot"
	"github.com/parscope/parscope/show/web"
	"github.com/parscope/parscope/store"
)

// reportFlags are the options shared by analyze and serve.
type reportFlags struct {
	sources    []string
	probe      string
	maxPoints  int
	only, skip string
	states     string
}

func (f *reportFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sources, "source-dir", nil, "a directory holding the program's source files, to show the lines of code structures; only files inside it are read (repeatable; without it no source file is read)")
	fl.StringVar(&f.probe, "probe", "", "a probe result (JSON) to show in the probe view")
	addTraceFlags(cmd, "format")
	fl.IntVar(&f.maxPoints, "max-points", report.DefaultMaxPoints, "points kept per run of a series (PCA, phase space, modified entropy)")
	fl.StringVar(&f.only, "procs", "", "analyse only these processes (e.g. 0-15); the others count as absent")
	fl.StringVar(&f.skip, "exclude-procs", "", "leave these processes out of every analysis (counter readers, GPU streams, helper threads); they count as absent")
	fl.StringVar(&f.states, "states-from", string(engine.StatesAuto), engine.StatesFromHelp)
}

// build analyses one trace: a .pst directory, or a trace of a format
// import reads, imported on the fly (see openTrace).
func (f *reportFlags) build(cmd *cobra.Command, path string) (*report.Bundle, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	t, err := openTrace(cmd, path)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return buildReport(cmd.Context(), t.Store, opts)
}

// options returns the report options the flags give, checking them
// (the source directories exist, the lists and values parse, the probe
// result reads).
func (f *reportFlags) options() (report.Options, error) {
	if err := checkSourceDirs(f.sources); err != nil {
		return report.Options{}, err
	}
	opts := report.Options{MaxPoints: f.maxPoints, SourceDirs: f.sources}
	var err error
	if opts.Procs, err = parseIDList(f.only); err != nil {
		return opts, usagef("--procs: %v", err)
	}
	if opts.ExcludeProcs, err = parseIDList(f.skip); err != nil {
		return opts, usagef("--exclude-procs: %v", err)
	}
	if opts.States, err = engine.ParseStatesFrom(f.states); err != nil {
		return opts, usagef("--states-from: %v", err)
	}
	if f.probe != "" {
		p, err := report.ReadProbe(f.probe)
		if err != nil {
			return opts, err
		}
		opts.Probe = p
	}
	return opts, nil
}

// buildReport runs report.FromStore on s, showing which analysis runs on
// a terminal, and with --verbose how long each took.
func buildReport(ctx context.Context, s *store.Store, opts report.Options) (*report.Bundle, error) {
	name := filepath.Base(s.Dir())
	bar := progress.Start("analysing "+name, 0, progress.Steps)
	bar.Live()
	defer bar.Done()
	var last string
	var began time.Time
	opts.Progress = func(step string, done, total int) {
		if last != "" {
			progress.Detailf(os.Stderr, "%s: %s took %s\n", name, last, human.Duration(time.Since(began)))
		}
		last, began = step, time.Now()
		bar.SetTotal(int64(total))
		bar.Set(int64(done))
		if step != "" {
			bar.Describe("analysing " + name + ": " + step)
		}
	}
	return report.FromStore(ctx, s, opts)
}

// analyzeFile is one file written by analyze.
type analyzeFile struct {
	Path string `json:"path"`
	What string `json:"what"`
}

func init() {
	var (
		f      reportFlags
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "analyze TRACE -o DIR",
		Short: "Run every analysis that applies and write a self-contained HTML report",
		Long: `Analyze runs every analysis that applies to what the trace contains, with
sensible defaults: state records give the parallel states, entropy, PCA,
phase space and occupancy; events the modified entropy; messages and regions
the communication per code structure; basic block vectors the program
phases. It writes into DIR:

  index.html       the report: one self-contained file (charts, libraries and
                   data inlined) that opens offline, from file://
  report.json      every result (the bundle the report shows)
  NAME.json        each result on its own (overview, entropy, pca, ...)
  NAME.png, .svg   plots of the results
  .parscope-report a marker: DIR is a report analyze wrote

TRACE is a .pst directory or a trace of a format import knows, a file or an
OTF2 archive directory (it is imported into a temporary .pst, removed
afterwards; --format, --dict, --time-unit and --param as for import). On a
terminal, stderr shows the progress of the import and of the analyses.

The whole report is written into a temporary directory beside DIR, synced
to disk and renamed into place only once it is complete, so an existing
report is replaced in one step and a failure or a crash leaves the old one
as it was. An existing DIR is replaced only when it is a report analyze
wrote (it holds .parscope-report, or index.html and report.json) or is
empty; anything else is refused.

A trace is untrusted input: the source files its code regions name are
read only from inside the directories given with --source-dir (no ".."
escape, no absolute path or symbolic link leading out); without
--source-dir no source file is read and a region keeps its file:line label.

parscope serve shows the same views from a local web server.`,
		Example: `  parscope analyze --dict testdata/examples/amoeba_blocks.txt -o report testdata/examples/amoeba.srt
  parscope analyze -o ring-report --source-dir src/ ring.pst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("analyze: -o DIR is required")
			}
			d, err := atomicfile.CreateDir(out, atomicfile.EmptyDirOr(reportDir))
			if err != nil {
				return err
			}
			defer d.Abort()
			b, err := f.build(cmd, args[0])
			if err != nil {
				return err
			}
			files, err := writeReport(d.Path(), out, b)
			if err != nil {
				return d.Hide(err)
			}
			if err := os.WriteFile(filepath.Join(d.Path(), reportMarker), []byte("a report written by parscope analyze\n"), atomicfile.FileMode); err != nil {
				return fmt.Errorf("writing %s: %w", filepath.Join(out, reportMarker), atomicfile.Cause(err))
			}
			if err := d.Commit(); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"trace": b.Trace, "ran": b.Ran, "skipped": b.Skipped, "seconds": b.Seconds, "files": files})
			}
			w := newTable(cmd.OutOrStdout())
			fmt.Fprintf(w, "trace\t%s\n", b.Trace)
			for _, name := range b.Ran {
				fmt.Fprintf(w, "ran\t%s\t%.3fs\n", name, b.Seconds[name])
			}
			for _, name := range slices.Sorted(maps.Keys(b.Skipped)) {
				fmt.Fprintf(w, "skipped\t%s\t%s\n", name, b.Skipped[name])
			}
			for _, fl := range files {
				fmt.Fprintf(w, "wrote\t%s\t%s\n", fl.Path, fl.What)
			}
			return w.Flush()
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "the directory to write the report into")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was run and written as JSON")
	root.AddCommand(cmd)
}

// reportMarker is the file that marks a directory as a report analyze
// wrote, which a later analyze may replace.
const reportMarker = ".parscope-report"

// reportDir allows replacing path, an existing entry that is not an empty
// directory (atomicfile.EmptyDirOr), only when it is a report analyze
// wrote (with the marker, or, from before the marker, index.html and
// report.json).
func reportDir(path string, fi fs.FileInfo) error {
	if fi.IsDir() {
		if _, err := os.Lstat(filepath.Join(path, reportMarker)); err == nil {
			return nil
		}
		_, e1 := os.Lstat(filepath.Join(path, "index.html"))
		_, e2 := os.Lstat(filepath.Join(path, "report.json"))
		if e1 == nil && e2 == nil {
			return nil
		}
	}
	return fmt.Errorf("%s exists and is not a report parscope analyze wrote (no %s, index.html or report.json in it); refusing to replace it", path, reportMarker)
}

// writeReport writes the report files of b into dir, the temporary
// directory of the report at out: the files listed, and errors, name the
// paths under out.
func writeReport(dir, out string, b *report.Bundle) ([]analyzeFile, error) {
	var files []analyzeFile
	add := func(name, what string, write func(io.Writer) error) error {
		if err := createOutput(filepath.Join(dir, name), false, write); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(out, name), atomicfile.Cause(err))
		}
		files = append(files, analyzeFile{filepath.Join(out, name), what})
		return nil
	}
	if err := add("index.html", "the report (self-contained, opens offline)", func(w io.Writer) error {
		return web.WriteStatic(w, []*report.Bundle{b})
	}); err != nil {
		return nil, err
	}
	if err := add("report.json", "every result", func(w io.Writer) error { return json.NewEncoder(w).Encode(b) }); err != nil {
		return nil, err
	}
	parts := map[string]any{"overview": b.Overview, "states": b.States, "entropy": b.Entropy, "pca": b.PCA, "phasespace": b.PhaseSpace,
		"occupancy": b.Occupancy, "mentropy": b.MEntropy, "comm": b.Comm,
		"profile": b.Profile, "pop": b.POP, "waitstates": b.WaitStates, "critpath": b.CritPath, "counters": b.Counters, "phases": b.Phases, "probe": b.Probe}
	for _, name := range web.Parts {
		v := parts[name]
		if isNil(v) {
			continue
		}
		if err := add(name+".json", name+" result", func(w io.Writer) error { return json.NewEncoder(w).Encode(v) }); err != nil {
			return nil, err
		}
	}
	for _, p := range reportPlots(b) {
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, p.name+ext)
			fig, err := p.draw(path)
			if err := writeFigure(path, false, fig, err); err != nil {
				return nil, fmt.Errorf("plot %s: %w", filepath.Join(out, p.name+ext), atomicfile.Cause(err))
			}
			files = append(files, analyzeFile{filepath.Join(out, p.name+ext), p.what})
		}
	}
	return files, nil
}

func isNil(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case *engine.Envelope:
		return x == nil
	case *report.Comm:
		return x == nil
	case *json.RawMessage:
		return x == nil
	}
	return false
}

// reportPlot is one static plot of a report.
type reportPlot struct {
	name, what string
	draw       func(name string) (*plot.Figure, error)
}

// reportPlots lists the plots of b, drawn with the plotting code the
// analysis commands use.
func reportPlots(b *report.Bundle) []reportPlot {
	var ps []reportPlot
	if p, ok := b.PCAResult(); ok {
		var pc1, pc12 []plot.Series
		for _, r := range p.Runs {
			s1 := plot.Series{Name: fmt.Sprintf("run %d", r.Run)}
			s2 := plot.Series{Name: s1.Name}
			for i, x := range r.Index {
				s1.X = append(s1.X, float64(x))
				s1.Y = append(s1.Y, r.Scores[0][i])
				if len(r.Scores) > 1 {
					s2.X = append(s2.X, r.Scores[0][i])
					s2.Y = append(s2.Y, r.Scores[1][i])
					s2.Size = append(s2.Size, float64(i)/float64(max(len(r.Index)-1, 1)))
				}
			}
			pc1, pc12 = append(pc1, s1), append(pc12, s2)
		}
		ps = append(ps, reportPlot{"pca-pc1", "PC1 against state number", func(path string) (*plot.Figure, error) {
			return plot.Lines(path, fmt.Sprintf("PC1 against state number (%.1f%% of the variance)", 100*p.Components[0].Explained), "state", "PC1", pc1)
		}})
		if len(p.Components) > 1 {
			ps = append(ps, reportPlot{"pca-pc12", "PC1 against PC2", func(path string) (*plot.Figure, error) {
				return plot.Scatter(path, "PC1 against PC2; markers grow with time", "PC1", "PC2", pc12)
			}})
		}
	}
	if s, ok := b.PhaseSpaceResult(); ok {
		var series []plot.Series
		for _, r := range s.Runs {
			sr := plot.Series{Name: fmt.Sprintf("run %d", r.Run)}
			for i, pt := range r.Points {
				sr.X = append(sr.X, pt[0])
				sr.Y = append(sr.Y, pt[2])
				sr.Shade = append(sr.Shade, float64(i)/float64(max(len(r.Points)-1, 1)))
			}
			series = append(series, sr)
		}
		ps = append(ps, reportPlot{"phasespace", "phase space, side view", func(path string) (*plot.Figure, error) {
			return plot.Scatter(path, "phase space, side view at 0°", "horizontal", "vertical (lockstep axis)", series)
		}})
	}
	if e, ok := entropyOf(b); ok && len(e.Series) > 0 {
		var series []plot.Series
		for _, pt := range e.Series {
			if len(series) == 0 || series[len(series)-1].Name != fmt.Sprintf("run %d", pt.Run) {
				series = append(series, plot.Series{Name: fmt.Sprintf("run %d", pt.Run)})
			}
			s := &series[len(series)-1]
			s.X = append(s.X, float64(pt.Start)/1e6)
			s.Y = append(s.Y, pt.Entropy)
		}
		ps = append(ps, reportPlot{"entropy", "histogram entropy over time", func(path string) (*plot.Figure, error) {
			return plot.Lines(path, fmt.Sprintf("histogram entropy per window of %s", human.Nanos(float64(e.WindowNS))), "time (ms)", "bits", series)
		}})
	}
	if occ, ok := occupancyOf(b); ok && len(occ.Runs) > 0 {
		o := occ.Runs[0]
		var series []plot.Series
		for j, m := range o.Modes {
			s := plot.Series{Name: m}
			for w, c := range o.ProcessesPerWindow {
				s.X = append(s.X, (float64(o.BeginNS)+(float64(w)+0.5)*o.WindowNS)/1e6)
				s.Y = append(s.Y, c[j])
			}
			series = append(series, s)
		}
		ps = append(ps, reportPlot{"occupancy", "processes per mode over time", func(path string) (*plot.Figure, error) {
			return plot.Lines(path, fmt.Sprintf("processes per mode over time, run %d", o.Run), "time (ms)", "processes", series)
		}})
	}
	if m, ok := b.MEntropyResult(); ok {
		series := mentropyLines(m)
		ps = append(ps, reportPlot{"mentropy", "modified entropy per process", func(path string) (*plot.Figure, error) {
			return plot.Lines(path, "Modified entropy", "event index", "H (nats)", series)
		}})
	}
	if b.Comm != nil {
		for _, c := range b.Comm.Report().Runs {
			name, title := "comm", "Communication matrices (bytes; structures alone)"
			if len(b.Comm.Report().Runs) > 1 {
				name, title = fmt.Sprintf("comm-run%d", c.Run), fmt.Sprintf("Communication matrices of run %d (bytes; structures alone)", c.Run)
			}
			ps = append(ps, reportPlot{name, "communication matrices", func(path string) (*plot.Figure, error) {
				maps := []plot.Heat{{Title: "whole program", Values: c.Matrices[0].Aggregate.Values(false)}}
				for _, id := range c.RankOwn.ByVolume {
					if len(maps) > maxSubPlots {
						break
					}
					if c.Matrices[id].Own.Pairs() > 0 {
						maps = append(maps, plot.Heat{Title: c.Path(id), Values: c.Matrices[id].Own.Values(false)})
					}
				}
				return plot.HeatMaps(path, maps, plot.HeatOptions{Title: title, Unit: "bytes", Log: true})
			}})
		}
	}
	if ph, ok := phasesOf(b); ok {
		for _, st := range ph.Streams {
			name := "phases"
			if len(ph.Streams) > 1 {
				name = fmt.Sprintf("phases-run%d-proc%d", st.Run, st.Proc)
			}
			ps = append(ps, reportPlot{name, "phases and their weights", func(path string) (*plot.Figure, error) { return plotPhases(path, b.Trace, st.Result) }})
		}
	}
	return ps
}

// phasesOf returns the phases result of b, when it has one.
func phasesOf(b *report.Bundle) (*phase.Phases, bool) {
	if b.Phases == nil {
		return nil, false
	}
	r, ok := b.Phases.Result.(*phase.Phases)
	return r, ok
}

// occupancyOf returns the occupancy result of b, when it has one.
func occupancyOf(b *report.Bundle) (*occupancy.Report, bool) {
	if b.Occupancy == nil {
		return nil, false
	}
	r, ok := b.Occupancy.Result.(*occupancy.Report)
	return r, ok
}

// entropyOf returns the entropy result of b, when it has one.
func entropyOf(b *report.Bundle) (*entropy.Report, bool) {
	if b.Entropy == nil {
		return nil, false
	}
	r, ok := b.Entropy.Result.(*entropy.Report)
	return r, ok
}
