// Package plot draws parscope's static figures (PNG or SVG, chosen by the
// file extension) with gonum/plot: line plots of series, scatter plots
// with marker sizes, and a shared categorical palette. It only draws what
// the analyses computed.
package plot

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/parscope/parscope/internal/atomicfile"
)

// Size is the default figure size.
const (
	Width  = 8 * vg.Inch
	Height = 5 * vg.Inch
)

// TitleGap is the space between a plot's title and its data area.
const TitleGap = 6 * vg.Millimeter / 2

// Figure is a drawn figure, to be written as the image type Render chose
// for it.
type Figure struct {
	canvas vg.CanvasWriterTo
}

// Write writes the figure to w (a PNG or an SVG document).
func (f *Figure) Write(w io.Writer) error {
	_, err := f.canvas.WriteTo(w)
	return err
}

// Render draws a figure of the given size with fn, to be written as SVG
// when name ends in .svg and as PNG when it ends in .png or has no
// extension; name chooses the type and names the figure in errors. The
// caller writes it where it wants (see Figure.Write), so that it decides
// what may be replaced there.
func Render(name string, w, h vg.Length, fn func(dc draw.Canvas) error) (*Figure, error) {
	var canvas vg.CanvasWriterTo
	switch strings.ToLower(filepath.Ext(name)) {
	case ".svg":
		canvas = vgsvg.New(w, h)
	case ".png", "":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))}
	default:
		return nil, fmt.Errorf("plot %s: unknown image type %q (want .png or .svg)", name, filepath.Ext(name))
	}
	dc := draw.New(canvas)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if err := fn(dc); err != nil {
		return nil, err
	}
	return &Figure{canvas: canvas}, nil
}

// WriteFile writes the figure to path atomically (see package
// atomicfile): a failure or a crash leaves no partial file, and only a
// regular file is replaced, whatever it holds. Tools that redraw their own
// figures use it; parscope's commands decide what they may replace.
func (f *Figure) WriteFile(path string) error {
	return atomicfile.Write(path, atomicfile.RegularFile, func(w *bufio.Writer) error { return f.Write(w) })
}

// Save draws a figure with Render and writes it to path with WriteFile.
func Save(path string, w, h vg.Length, fn func(dc draw.Canvas) error) error {
	f, err := Render(path, w, h, fn)
	if err != nil {
		return err
	}
	return f.WriteFile(path)
}

// Category returns the i-th colour of a categorical palette (the ten
// "tab10" colours, then hues spread by the golden angle).
func Category(i int) color.RGBA {
	base := []color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255},
	}
	if i >= 0 && i < len(base) {
		return base[i]
	}
	h := math.Mod(float64(i)*137.508, 360) / 60
	x := uint8(200 * (1 - math.Abs(math.Mod(h, 2)-1)))
	switch int(h) {
	case 0:
		return color.RGBA{200, x, 40, 255}
	case 1:
		return color.RGBA{x, 200, 40, 255}
	case 2:
		return color.RGBA{40, 200, x, 255}
	case 3:
		return color.RGBA{40, x, 200, 255}
	case 4:
		return color.RGBA{x, 40, 200, 255}
	}
	return color.RGBA{200, 40, x, 255}
}

// Shade mixes c with white: f = 0 gives a pale tint, f = 1 the colour
// itself. Plots use it for time (early pale, late full).
func Shade(c color.RGBA, f float64) color.RGBA {
	f = 0.25 + 0.75*math.Max(0, math.Min(1, f))
	mix := func(v uint8) uint8 { return uint8(255 - f*(255-float64(v))) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 255}
}

// Series is one named set of points. Size (optional) gives each point's
// relative marker size in [0, 1]; Shade (optional) its time in [0, 1].
type Series struct {
	Name        string
	X, Y        []float64
	Size, Shade []float64
}

// Lines draws each series as a line in its category colour, as an image
// of the type name asks for (see Render).
func Lines(name, title, xlabel, ylabel string, series []Series) (*Figure, error) {
	p := newPlot(title, xlabel, ylabel)
	raster := !strings.EqualFold(filepath.Ext(name), ".svg")
	for i, s := range series {
		l, err := plotter.NewLine(xys(s))
		if err != nil {
			return nil, err
		}
		l.Color = Category(i)
		l.Width = vg.Points(1)
		if raster {
			p.Add(chunkedLine{l})
		} else {
			p.Add(l)
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, l)
		}
	}
	return Render(name, Width, Height, func(dc draw.Canvas) error { Draw(dc, p); return nil })
}

// Scatter draws each series as filled points of its own shape and
// category colour (Marker), sized by Size and shaded by Shade when given,
// as an image of the type name asks for (see Render).
func Scatter(name, title, xlabel, ylabel string, series []Series) (*Figure, error) {
	p := newPlot(title, xlabel, ylabel)
	for i, s := range series {
		sc, err := plotter.NewScatter(xys(s))
		if err != nil {
			return nil, err
		}
		c := Category(i)
		ss := s
		// The legend's thumbnail is GlyphStyle: the series' marker, not
		// gonum's default hollow circle.
		sc.GlyphStyle = Marker(i)
		sc.GlyphStyleFunc = func(j int) draw.GlyphStyle {
			g := Marker(i)
			g.Radius = vg.Points(2)
			if ss.Size != nil {
				g.Radius = vg.Points(1 + 4*ss.Size[j])
			}
			if ss.Shade != nil {
				g.Color = Shade(c, ss.Shade[j])
			}
			return g
		}
		p.Add(sc)
		if s.Name != "" {
			p.Legend.Add(s.Name, sc)
		}
	}
	return Render(name, Width, Height, func(dc draw.Canvas) error { Draw(dc, p); return nil })
}

func newPlot(title, xlabel, ylabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	// gonum puts the title right on the data area: a marker at the top of
	// the data touches its letters.
	p.Title.Padding = TitleGap
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.X.Tick.Marker = NiceTicks{}
	p.Y.Tick.Marker = NiceTicks{}
	return p
}

// rasterChunk is the most segments of a line stroked as one path on a
// raster canvas.
const rasterChunk = 64

// chunkedLine strokes a line in paths of at most rasterChunk segments.
// The rasterizer behind PNG output keeps a path's cells in a list per
// pixel row and searches it for each new cell, so a line that crosses
// the plot many times (PC1 of 2,000 states) took time quadratic in its
// length: 1.5 s for 2,000 points, 5 s for 4,000. Strokes of a few
// segments each draw the same pixels, but at the vertices where two
// strokes meet, which they draw without a join.
type chunkedLine struct{ *plotter.Line }

// Plot implements plot.Plotter.
func (l chunkedLine) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	ps := make([]vg.Point, len(l.XYs))
	for i, xy := range l.XYs {
		ps[i] = vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
	}
	var lines [][]vg.Point
	for _, line := range c.ClipLinesXY(ps) {
		for len(line) > rasterChunk+1 {
			lines = append(lines, line[:rasterChunk+1])
			line = line[rasterChunk:]
		}
		lines = append(lines, line)
	}
	c.StrokeLines(l.LineStyle, lines...)
}

func xys(s Series) plotter.XYs {
	pts := make(plotter.XYs, len(s.X))
	for i := range s.X {
		pts[i] = plotter.XY{X: s.X[i], Y: s.Y[i]}
	}
	return pts
}
