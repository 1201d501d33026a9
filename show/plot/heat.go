package plot

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HeatColor maps f in [0, 1] to the heat scale of the matrices of Jones et al. 2007:
// black (0, no traffic) through red and yellow to pale yellow (1, the
// most). The paper's scale ends at white, which vanishes on the white page
// of a figure: this one stops at (255, 255, 102). Values outside [0, 1]
// are clamped.
func HeatColor(f float64) color.RGBA {
	if math.IsNaN(f) || f < 0 {
		f = 0
	}
	f = math.Min(f, 1) * 2.4
	c := func(x float64) uint8 { return uint8(math.Round(255 * math.Min(math.Max(x, 0), 1))) }
	return color.RGBA{c(f), c(f - 1), c(f - 2), 255}
}

// Heat is one matrix to draw: Values[row][col], rows the senders and
// columns the receivers.
type Heat struct {
	Title  string
	Values [][]float64
}

// HeatOptions set the labels and the scale of heat maps.
type HeatOptions struct {
	// Title is drawn above all the panels (optional).
	Title string
	// XLabel, YLabel name the axes (default "receiver", "sender").
	XLabel, YLabel string
	// Unit names the colour bar ("bytes").
	Unit string
	// Log uses a logarithmic scale (log10(1+v)) instead of a linear one.
	Log bool
}

// HeatMap draws one matrix with a colour bar, as an image of the type name
// asks for (see Render).
func HeatMap(name string, h Heat, opts HeatOptions) (*Figure, error) {
	return HeatMaps(name, []Heat{h}, opts)
}

// HeatMaps draws matrices side by side on one shared scale with one colour
// bar, as an image of the type name asks for (see Render): the
// whole-program matrix against those of its subloops, as Figures 9–11 of
// Jones et al. 2007.
func HeatMaps(name string, maps []Heat, opts HeatOptions) (*Figure, error) {
	if len(maps) == 0 {
		return nil, fmt.Errorf("plot %s: no matrices to draw", name)
	}
	if opts.XLabel == "" {
		opts.XLabel = "receiver"
	}
	if opts.YLabel == "" {
		opts.YLabel = "sender"
	}
	scale := func(v float64) float64 {
		if opts.Log {
			return math.Log10(1 + math.Max(v, 0))
		}
		return v
	}
	vmax, whole := 0.0, true
	for _, h := range maps {
		for i, row := range h.Values {
			if len(row) != len(h.Values) {
				return nil, fmt.Errorf("plot %s: matrix %q: row %d has %d values, want %d", name, h.Title, i, len(row), len(h.Values))
			}
			for _, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("plot %s: matrix %q holds %v", name, h.Title, v)
				}
				vmax = math.Max(vmax, scale(v))
				whole = whole && v == math.Trunc(v)
			}
		}
	}
	if vmax == 0 {
		vmax = 1
	}
	cm := &heatColors{max: vmax}
	pal := cm.Palette(256)
	var panels []*gplot.Plot
	for _, h := range maps {
		p := newPlot(h.Title, opts.XLabel, opts.YLabel)
		p.Y.Scale = gplot.InvertedScale{Normalizer: gplot.LinearScale{}}
		p.Y.Tick.Marker = gplot.TickerFunc(intTicks)
		p.X.Tick.Marker = gplot.TickerFunc(intTicks)
		n := len(h.Values)
		if n > 0 {
			hm := plotter.NewHeatMap(grid{h.Values, scale}, pal)
			hm.Min, hm.Max = 0, vmax
			hm.Rasterized = n > 64
			p.Add(hm)
		}
		p.X.Min, p.X.Max = -0.5, float64(n)-0.5
		p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
		panels = append(panels, p)
	}
	bar := heatBar(cm, opts, whole)
	side := 4 * vg.Inch
	barW := 1.3 * vg.Inch
	titleH := vg.Length(0)
	if opts.Title != "" {
		titleH = 0.4 * vg.Inch
	}
	w := side*vg.Length(len(maps)) + barW
	h := side + titleH
	return Render(name, w, h, func(dc draw.Canvas) error {
		if opts.Title != "" {
			sty := panels[0].Title.TextStyle
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
			dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - 0.1*vg.Inch}, opts.Title)
		}
		body := draw.Crop(dc, 0, 0, 0, -titleH)
		for i, p := range panels {
			x0 := body.Min.X + side*vg.Length(i)
			c := body
			c.Min.X, c.Max.X = x0, x0+side
			p.Draw(c)
		}
		c := body
		c.Min.X = body.Max.X - barW
		bar.Draw(draw.Crop(c, 0.2*vg.Inch, -0.3*vg.Inch, 0.45*vg.Inch, -0.3*vg.Inch))
		return nil
	})
}

// heatBar is the colour bar of heat maps on the scale cm, labelled with
// opts.Unit: decades on a log scale; on a linear one round ticks, whole
// numbers only when every value drawn is whole (whole), so that a bar of
// message counts reads 0, 1, 2, 3 and not 0, 0.5, ..., 3.
func heatBar(cm *heatColors, opts HeatOptions, whole bool) *gplot.Plot {
	bar := gplot.New()
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true, Colors: 256})
	bar.HideX()
	bar.Y.Label.Text = opts.Unit
	bar.Y.Tick.Marker = NiceTicks{Whole: whole}
	if opts.Log {
		bar.Y.Label.Text += " (log scale)"
		bar.Y.Tick.Marker = gplot.TickerFunc(func(min, max float64) []gplot.Tick {
			var ts []gplot.Tick
			for e := 0.0; e <= max+1e-9; e++ {
				ts = append(ts, gplot.Tick{Value: math.Log10(1 + math.Pow(10, e)), Label: humanValue(math.Pow(10, e))})
			}
			if len(ts) > 8 { // keep every other decade
				var kept []gplot.Tick
				for i, t := range ts {
					if i%2 == 0 {
						kept = append(kept, t)
					}
				}
				ts = kept
			}
			return ts
		})
	}
	return bar
}

// intTicks labels whole numbers only, about ten of them.
func intTicks(min, max float64) []gplot.Tick {
	lo, hi := int(math.Ceil(min)), int(math.Floor(max))
	step := max1((hi - lo + 1) / 8)
	var ts []gplot.Tick
	for v := lo; v <= hi; v++ {
		if (v-lo)%step == 0 {
			ts = append(ts, gplot.Tick{Value: float64(v), Label: strconv.Itoa(v)})
		}
	}
	return ts
}

func max1(x int) int {
	if x < 1 {
		return 1
	}
	return x
}

// humanValue writes 1, 10, 100, 1K, 10K, ... 1G.
func humanValue(v float64) string {
	for _, u := range []struct {
		div float64
		s   string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "K"}} {
		if v >= u.div {
			return strconv.FormatFloat(v/u.div, 'g', 3, 64) + u.s
		}
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// grid adapts a square matrix to plotter.GridXYZ: column c is the
// receiver (x), row r the sender (y).
type grid struct {
	v     [][]float64
	scale func(float64) float64
}

func (g grid) Dims() (c, r int)   { return len(g.v), len(g.v) }
func (g grid) Z(c, r int) float64 { return g.scale(g.v[r][c]) }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

// heatColors is the heat scale as a palette.ColorMap over [0, max].
type heatColors struct{ min, max float64 }

func (h *heatColors) At(v float64) (color.Color, error) {
	if h.max <= h.min {
		return HeatColor(0), nil
	}
	return HeatColor((v - h.min) / (h.max - h.min)), nil
}
func (h *heatColors) Max() float64       { return h.max }
func (h *heatColors) SetMax(v float64)   { h.max = v }
func (h *heatColors) Min() float64       { return h.min }
func (h *heatColors) SetMin(v float64)   { h.min = v }
func (h *heatColors) Alpha() float64     { return 1 }
func (h *heatColors) SetAlpha(_ float64) {}
func (h *heatColors) Palette(n int) palette.Palette {
	cs := make([]color.Color, n)
	for i := range cs {
		cs[i] = HeatColor(float64(i) / float64(max1(n-1)))
	}
	return heatPalette(cs)
}

type heatPalette []color.Color

func (p heatPalette) Colors() []color.Color { return p }
