package plot

import (
	"math"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/parscope/parscope/internal/human"
)

// NiceTicks is a gplot.Ticker whose major ticks are the multiples of a
// step of 1, 2 or 5 × 10^k (about six of them), labelled with thousands
// separators (50,000,000) and as many decimals as the step needs. gonum's
// default ticks may step by other values (100, 500, 900 for a step of
// 400) and print large numbers in full without separators.
type NiceTicks struct {
	// Whole keeps the step at 1 or more, for an axis of whole numbers
	// (message counts, bytes): 0, 1, 2, 3 rather than 0, 0.5, ..., 3.
	Whole bool
}

// Ticks implements gplot.Ticker.
func (n NiceTicks) Ticks(min, max float64) []gplot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return []gplot.Tick{{Value: min, Label: TickLabel(min, 1)}}
	}
	step := NiceStep(max-min, 6)
	if n.Whole {
		step = math.Max(step, 1)
	}
	var ts []gplot.Tick
	for k := math.Ceil(min/step - 1e-9); k*step <= max+step*1e-9; k++ {
		v := k * step
		ts = append(ts, gplot.Tick{Value: v, Label: TickLabel(v, step)})
	}
	return ts
}

// NiceStep returns the least step of 1, 2 or 5 × 10^k that splits span
// into at most n parts.
func NiceStep(span float64, n int) float64 {
	raw := span / float64(max(n, 1))
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// TickLabel writes v, a multiple of step, with the decimals step needs
// (trailing zeros dropped) and thousands separators: TickLabel(51895935, 1) is "51,895,935",
// TickLabel(0.30000000000000004, 0.1) is "0.3".
func TickLabel(v, step float64) string {
	dec := 0
	if step > 0 {
		dec = max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return s
	}
	out := human.Count(n)
	if n == 0 && strings.HasPrefix(whole, "-") {
		out = "-" + out
	}
	if frac != "" {
		out += "." + frac
	}
	return out
}

// legendGap is the space between the plot and its legend.
const legendGap = 0.1 * vg.Inch

// Layout splits the canvas dc of p into the area of the plot and, when p
// has a legend, a column at its right for the legend, as wide as its
// longest entry: the legend then never covers the data. The legend's
// column is empty when p has no legend entry.
func Layout(dc draw.Canvas, p *gplot.Plot) (plotArea, legendArea draw.Canvas) {
	r := p.Legend.Rectangle(dc)
	w := r.Max.X - r.Min.X
	if w <= 0 {
		return dc, draw.Crop(dc, dc.Max.X-dc.Min.X, 0, 0, 0)
	}
	w += 2 * legendGap
	plotArea = draw.Crop(dc, 0, -w, 0, 0)
	legendArea = draw.Crop(dc, dc.Max.X-dc.Min.X-w+legendGap, -legendGap, 0, -legendGap)
	return plotArea, legendArea
}

// Draw draws p on dc with its legend in a column at the right of the plot
// (see Layout), NiceTicks on the axes whose ticker is gonum's default, and
// TitleGap between the title and the data when p sets no padding.
func Draw(dc draw.Canvas, p *gplot.Plot) {
	if _, ok := p.X.Tick.Marker.(gplot.DefaultTicks); ok {
		p.X.Tick.Marker = NiceTicks{}
	}
	if _, ok := p.Y.Tick.Marker.(gplot.DefaultTicks); ok {
		p.Y.Tick.Marker = NiceTicks{}
	}
	if p.Title.Padding == 0 {
		p.Title.Padding = TitleGap
	}
	plotArea, legendArea := Layout(dc, p)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = 0, 0
	// The title spans the plot; the legend starts below its height.
	title := vg.Length(0)
	if p.Title.Text != "" {
		title = p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	}
	// The title is centred over the plot, moved left or right as needed
	// to stay on the canvas: a title wider than the plot area (the legend
	// takes the right of the canvas) ran off the canvas's left edge.
	if text := p.Title.Text; text != "" {
		sty := p.Title.TextStyle
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		x := TitleX(dc.Min.X, dc.Max.X, (plotArea.Min.X+plotArea.Max.X)/2, sty.Width(text))
		dc.FillText(sty, vg.Point{X: x, Y: dc.Max.Y + sty.FontExtents().Descent}, text)
		plotArea = draw.Crop(plotArea, 0, 0, 0, -(sty.Rectangle(text).Size().Y + p.Title.Padding))
		p.Title.Text = ""
		defer func() { p.Title.Text = text }()
	}
	entries := p.Legend
	p.Legend = gplot.NewLegend()
	p.Draw(plotArea)
	p.Legend = entries
	if legendArea.Max.X > legendArea.Min.X {
		p.Legend.Draw(draw.Crop(legendArea, 0, 0, 0, -title))
	}
}

// titleInset is the least space between a title and the canvas's edge.
const titleInset = 3 // points

// TitleX returns the x of the centre of a title w wide on a canvas from
// min to max: centre, the middle of the plot area, unless the title would
// then come nearer than titleInset points to an edge of the canvas, in
// which case it is moved inward (and centred on the canvas when it is
// too wide for that).
func TitleX(min, max, centre, w vg.Length) vg.Length {
	in := vg.Points(titleInset)
	if w >= max-min-2*in {
		return (min + max) / 2
	}
	return vg.Length(math.Min(math.Max(float64(centre), float64(min+in+w/2)), float64(max-in-w/2)))
}

// Marker returns the glyph of series i of a scatter plot: a filled circle,
// square or triangle in turn, in the series' category colour, so that
// the legend tells the series apart by shape as well as by colour.
func Marker(i int) draw.GlyphStyle {
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}
	return draw.GlyphStyle{Color: Category(i), Radius: vg.Points(3), Shape: shapes[((i%len(shapes))+len(shapes))%len(shapes)]}
}
