// Command peerreport turns the measurements of scripts/bench-peers into
// a Markdown table of medians and ratios (for docs/performance.md) and,
// for the scaling rows, a CSV and a log-log plot of time against intervals.
//
//	go run ./scripts/peerreport -rows rows.tsv -samples samples.tsv \
//	    -scaling-csv scaling.csv -plot scaling.svg
//
// rows.tsv has one line per table row, tab-separated:
//
//	ID  TITLE  PARSCOPE-SIDE  PEER-SIDE  RECORDS  NOTE
//
// (RECORDS, when not 0, adds records/s of both sides to the note).
// samples.tsv has one line per timed command, tab-separated:
//
//	ID  SIDE  WALL-S  USER-S  SYS-S  MAX-RSS-KB  [more fields, ignored]
//
// with SIDE "a" for parscope and "b" for the peer (the units of /usr/bin/time
// -f '%e %U %S %M'; bench-peers appends /usr/bin/time's own %e %U %S after
// its finer-grained wall and CPU times). Rows whose ID starts with "scaling/" followed
// by a number of intervals also go to the CSV and the plot.
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/parscope/parscope/show/plot"
)

func main() {
	rowsPath := flag.String("rows", "", "rows file (TSV: id, title, parscope side, peer side, records, note)")
	samplesPath := flag.String("samples", "", "samples file (TSV: id, side a|b, wall s, user s, sys s, max RSS KiB)")
	csvPath := flag.String("scaling-csv", "", "write the scaling rows' figures to this CSV")
	plotPath := flag.String("plot", "", "draw the scaling rows' wall time against intervals, log-log, to this .svg or .png")
	flag.Parse()
	if *rowsPath == "" || *samplesPath == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: peerreport -rows FILE -samples FILE [-scaling-csv FILE] [-plot FILE]")
		os.Exit(2)
	}
	if err := run(*rowsPath, *samplesPath, *csvPath, *plotPath, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "peerreport:", err)
		os.Exit(1)
	}
}

// row is one line of the table: parscope (side a) against a peer (side b).
type row struct {
	id, title, a, b, note string
	records               float64
	sides                 [2]side
}

// side holds the measurements of one side of a row.
type side struct {
	wall, cpu []float64
	rssKB     float64
}

func (s side) empty() bool { return len(s.wall) == 0 }

func run(rowsPath, samplesPath, csvPath, plotPath string, out io.Writer) error {
	rows, err := readRows(rowsPath)
	if err != nil {
		return err
	}
	if err := readSamples(samplesPath, rows); err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	table(w, rows)
	if err := w.Flush(); err != nil {
		return err
	}
	var scaling []*row
	for _, r := range rows {
		if n, ok := intervals(r); ok && n > 0 {
			scaling = append(scaling, r)
		}
	}
	if csvPath != "" {
		if err := writeCSV(csvPath, scaling); err != nil {
			return err
		}
	}
	measured := slices.ContainsFunc(scaling, func(r *row) bool { return !r.sides[0].empty() || !r.sides[1].empty() })
	if plotPath != "" && measured {
		return drawScaling(plotPath, scaling)
	}
	return nil
}

func fields(path string, fn func(line int, f []string) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if err := fn(n, strings.Split(sc.Text(), "\t")); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

func readRows(path string) ([]*row, error) {
	var rows []*row
	err := fields(path, func(_ int, f []string) error {
		if len(f) != 6 {
			return fmt.Errorf("%d fields, want 6", len(f))
		}
		rec, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			return err
		}
		rows = append(rows, &row{id: f[0], title: f[1], a: f[2], b: f[3], records: rec, note: f[5]})
		return nil
	})
	return rows, err
}

func readSamples(path string, rows []*row) error {
	byID := map[string]*row{}
	for _, r := range rows {
		byID[r.id] = r
	}
	return fields(path, func(_ int, f []string) error {
		if len(f) < 6 {
			return fmt.Errorf("%d fields, want at least 6", len(f))
		}
		r := byID[f[0]]
		if r == nil {
			return fmt.Errorf("row %q is not in the rows file", f[0])
		}
		i := slices.Index([]string{"a", "b"}, f[1])
		if i < 0 {
			return fmt.Errorf("side %q, want a or b", f[1])
		}
		var v [4]float64
		for j := range v {
			x, err := strconv.ParseFloat(f[2+j], 64)
			if err != nil {
				return err
			}
			v[j] = x
		}
		s := &r.sides[i]
		s.wall = append(s.wall, v[0])
		s.cpu = append(s.cpu, v[1]+v[2])
		s.rssKB = max(s.rssKB, v[3])
		return nil
	})
}

// median returns the median of xs (the mean of the middle two for an even
// count), NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func secs(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case x < 1:
		return fmt.Sprintf("%.3f s", x)
	case x < 10:
		return fmt.Sprintf("%.2f s", x)
	}
	return fmt.Sprintf("%.1f s", x)
}

func mib(kb float64) string {
	if kb == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", kb/1024)
}

// ratio is peer ÷ parscope: above 1 when parscope takes less.
func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || a <= 0 || b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", b/a)
}

func table(w io.Writer, rows []*row) {
	fmt.Fprintln(w, "| row | parscope | peer | wall (parscope / peer) | peer ÷ parscope | CPU user+sys | peer ÷ parscope | max RSS | peer ÷ parscope | runs | notes |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		a, b := r.sides[0], r.sides[1]
		wa, wb, ca, cb := median(a.wall), median(b.wall), median(a.cpu), median(b.cpu)
		note := r.note
		if r.records > 0 && !a.empty() && !b.empty() {
			note = join(note, fmt.Sprintf("%s vs %s records/s", rate(r.records/wa), rate(r.records/wb)))
		}
		ra := a.rssKB
		if a.empty() {
			ra = math.NaN()
		}
		rb := b.rssKB
		if b.empty() {
			rb = math.NaN()
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s / %s | %s | %s / %s | %s | %s / %s | %s | %d / %d | %s |\n",
			r.title, r.a, r.b, secs(wa), secs(wb), ratio(wa, wb), secs(ca), secs(cb), ratio(ca, cb),
			mib(a.rssKB), mib(b.rssKB), ratio(ra, rb), len(a.wall), len(b.wall), note)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Medians over the runs; max RSS is the largest of the runs. A ratio above 1× means parscope took less (time, CPU or memory) than the peer.")
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func rate(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "—"
	case x >= 1e6:
		return fmt.Sprintf("%.2f M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1f k", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// intervals returns the number of intervals of a scaling row.
func intervals(r *row) (int, bool) {
	s, ok := strings.CutPrefix(r.id, "scaling/")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func writeCSV(path string, rows []*row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"intervals", "tool", "runs", "median_wall_s", "median_cpu_s", "max_rss_kib"})
	for _, r := range rows {
		n, _ := intervals(r)
		for i, s := range r.sides {
			if s.empty() {
				continue
			}
			_ = w.Write([]string{strconv.Itoa(n), []string{r.a, r.b}[i], strconv.Itoa(len(s.wall)),
				strconv.FormatFloat(median(s.wall), 'f', 6, 64), strconv.FormatFloat(median(s.cpu), 'f', 3, 64),
				strconv.FormatFloat(s.rssKB, 'f', 0, 64)})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// drawScaling draws the median wall time of both sides against the number
// of intervals on log-log axes, one line with markers per tool.
func drawScaling(path string, rows []*row) error {
	p := gplot.New()
	p.Title.Text = "phases: wall time against intervals (median)"
	p.X.Label.Text = "intervals"
	p.Y.Label.Text = "wall time (s)"
	p.X.Scale, p.Y.Scale = gplot.LogScale{}, gplot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	for i := range 2 {
		var pts plotter.XYs
		for _, r := range rows {
			n, _ := intervals(r)
			// A time of 0.00 s (below /usr/bin/time's resolution) has no
			// place on a log axis: it is drawn at 0.01 s.
			if s := r.sides[i]; !s.empty() {
				pts = append(pts, plotter.XY{X: float64(n), Y: max(median(s.wall), 0.01)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color = plot.Category(i)
		l.Width = vg.Points(1.5)
		sc.GlyphStyle = plot.Marker(i)
		p.Add(l, sc)
		p.Legend.Add([]string{"parscope " + rows[0].a, rows[0].b}[i], l, sc)
	}
	return plot.Save(path, plot.Width, plot.Height, func(dc draw.Canvas) error { plot.Draw(dc, p); return nil })
}

// logTicks labels a log axis at 1, 2 and 5 × 10^k (a short span holds
// few powers of ten, which is all gonum's LogTicks labels), with minor
// ticks at the other integers × 10^k.
type logTicks struct{}

// Ticks implements gplot.Ticker.
func (logTicks) Ticks(lo, hi float64) []gplot.Tick {
	var ticks []gplot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := gplot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
