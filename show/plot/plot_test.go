package plot

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"slices"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestNiceTicks checks that the ticks are the multiples of one step of 1,
// 2 or 5 × 10^k inside the range, labelled with separators: gonum's
// default ticks of [78, 953] step by 400 (100, 500, 900).
func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []string
	}{
		{78, 953, []string{"200", "400", "600", "800"}},
		{0.1545, 78.03, []string{"20", "40", "60"}},
		{0, 51895935, []string{"0", "10,000,000", "20,000,000", "30,000,000", "40,000,000", "50,000,000"}},
		{-0.03, 0.0421, []string{"-0.02", "0", "0.02", "0.04"}},
		{3.863, 4.9, []string{"4", "4.2", "4.4", "4.6", "4.8"}},
	} {
		ts := NiceTicks{}.Ticks(c.min, c.max)
		var got []string
		for _, tk := range ts {
			got = append(got, tk.Label)
		}
		if len(got) != len(c.want) {
			t.Errorf("[%g, %g]: ticks %q, want %q", c.min, c.max, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("[%g, %g]: ticks %q, want %q", c.min, c.max, got, c.want)
				break
			}
		}
		step := ts[1].Value - ts[0].Value
		m := step / math.Pow(10, math.Floor(math.Log10(step)))
		if math.Abs(m-1) > 1e-9 && math.Abs(m-2) > 1e-9 && math.Abs(m-5) > 1e-9 {
			t.Errorf("[%g, %g]: step %g is not 1, 2 or 5 × 10^k", c.min, c.max, step)
		}
		for _, tk := range ts {
			if tk.Value < c.min || tk.Value > c.max {
				t.Errorf("[%g, %g]: tick %g outside the range", c.min, c.max, tk.Value)
			}
		}
	}
	// gonum's own ticks, for the record: not round steps.
	var def []float64
	for _, tk := range (gplot.DefaultTicks{}).Ticks(78, 953) {
		if tk.Label != "" {
			def = append(def, tk.Value)
		}
	}
	if len(def) == 3 && def[1]-def[0] == 400 {
		t.Logf("gonum's default ticks of [78, 953]: %v", def)
	}
}

// TestTickLabel checks the thousands separators and decimals of labels.
func TestTickLabel(t *testing.T) {
	for _, c := range []struct {
		v, step float64
		want    string
	}{
		{51895935, 1, "51,895,935"}, {-1234567, 1000, "-1,234,567"}, {0.30000000000000004, 0.1, "0.3"},
		{-0.0000001, 0.5, "0"}, {1500.25, 0.05, "1,500.25"}, {-0.5, 0.5, "-0.5"}, {999, 1, "999"},
	} {
		if got := TickLabel(c.v, c.step); got != c.want {
			t.Errorf("TickLabel(%g, %g) = %q, want %q", c.v, c.step, got, c.want)
		}
	}
}

// TestLegendBesideData checks that the legend's column lies right of the
// plot's area: it never covers the data (the occupancy figure's legend of
// 13 modes covered its curves).
func TestLegendBesideData(t *testing.T) {
	p := newPlot("processes per mode over time", "time (ms)", "processes")
	for i, name := range []string{"init", "loop start", "broadcast simplex array", "done"} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(i)}, {X: 1, Y: 16}})
		if err != nil {
			t.Fatal(err)
		}
		p.Add(l)
		p.Legend.Add(name, l)
	}
	dc := draw.New(vgimg.New(Width, Height))
	plotArea, legendArea := Layout(dc, p)
	lr := p.Legend.Rectangle(legendArea)
	if plotArea.Max.X > legendArea.Min.X {
		t.Errorf("plot area ends at %v, right of the legend's start %v", plotArea.Max.X, legendArea.Min.X)
	}
	if w := lr.Max.X - lr.Min.X; legendArea.Max.X-legendArea.Min.X < w {
		t.Errorf("legend column %v wide, its entries %v", legendArea.Max.X-legendArea.Min.X, w)
	}
	if plotArea.Max.X-plotArea.Min.X < Width/2 {
		t.Errorf("plot area %v wide of %v", plotArea.Max.X-plotArea.Min.X, Width)
	}
	// Without entries the plot takes the whole width.
	if a, _ := Layout(dc, newPlot("", "", "")); a.Max.X != dc.Max.X {
		t.Errorf("no legend: plot area ends at %v, want %v", a.Max.X, dc.Max.X)
	}
}

// TestMarkersDistinct checks that the scatter series get filled markers
// that differ by shape or colour, in the legend as in the plot.
func TestMarkersDistinct(t *testing.T) {
	seen := map[[2]any]int{}
	for i := range 6 {
		g := Marker(i)
		switch g.Shape.(type) {
		case draw.CircleGlyph, draw.BoxGlyph, draw.PyramidGlyph:
		default:
			t.Errorf("series %d: marker %T is not a filled shape", i, g.Shape)
		}
		k := [2]any{g.Color, g.Shape}
		if j, ok := seen[k]; ok {
			t.Errorf("series %d and %d share the marker %v", j, i, k)
		}
		seen[k] = i
	}
	if Marker(0).Shape == Marker(1).Shape {
		t.Errorf("series 0 and 1 share the shape %T", Marker(0).Shape)
	}
	// The legend thumbnail is drawn from the scatter's GlyphStyle.
	fig, err := Scatter("s.png", "", "x", "y", []Series{{Name: "run 0", X: []float64{0, 1}, Y: []float64{0, 1}, Size: []float64{0, 1}},
		{Name: "run 1", X: []float64{0, 1}, Y: []float64{1, 0}, Size: []float64{0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// Both colours appear in the legend column (the right 15%).
	b := img.Bounds()
	found := map[color.RGBA]bool{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Max.X - b.Dx()*15/100; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}
			for i := range 2 {
				if c == Category(i) {
					found[c] = true
				}
			}
		}
	}
	if len(found) != 2 {
		t.Errorf("legend column holds the colours %v, want both series' %v and %v", found, Category(0), Category(1))
	}
}

// TestHeatMaxNotWhite checks that the largest value of a heat map is not
// drawn white, the colour of the figure's background.
func TestHeatMaxNotWhite(t *testing.T) {
	if c := HeatColor(1); c == (color.RGBA{255, 255, 255, 255}) {
		t.Errorf("HeatColor(1) = %v, white", c)
	}
	if c0, c1 := HeatColor(0.99), HeatColor(1); c0 == c1 {
		t.Errorf("HeatColor(0.99) = HeatColor(1) = %v", c1)
	}
}

// TestHeatBarWholeTicks checks the colour bar of a heat map of message
// counts from 0 to 3: its ticks are the whole numbers 0 to 3, not 0, 0.5,
// ..., 3 (no half message); a bar of fractions keeps its finer ticks.
func TestHeatBarWholeTicks(t *testing.T) {
	labels := func(whole bool) []string {
		bar := heatBar(&heatColors{max: 3}, HeatOptions{Unit: "messages"}, whole)
		var out []string
		for _, tk := range bar.Y.Tick.Marker.Ticks(0, 3) {
			out = append(out, tk.Label)
		}
		return out
	}
	if got, want := labels(true), []string{"0", "1", "2", "3"}; !slices.Equal(got, want) {
		t.Errorf("whole counts: ticks %q, want %q", got, want)
	}
	if got := labels(false); len(got) <= 4 {
		t.Errorf("fractions: ticks %q, want a step below 1", got)
	}
	if got := (NiceTicks{Whole: true}).Ticks(0, 1_000_000); got[1].Label != "200,000" {
		t.Errorf("whole ticks of [0, 1,000,000]: %v", got)
	}
}

// TestTitleGap checks that a plot's title keeps a gap above the data area,
// which gonum leaves at 0: the largest markers of a scatter at the top of
// the data touched the title's letters.
func TestTitleGap(t *testing.T) {
	if p := newPlot("PC1 against PC2", "PC1", "PC2"); p.Title.Padding < vg.Points(4) {
		t.Errorf("title padding %v, want at least 4 pt", p.Title.Padding)
	}
	// A plot made with gonum's New and drawn by Draw gets the gap too.
	p := gplot.New()
	p.Title.Text = "processes per mode over time"
	Draw(draw.New(vgimg.New(Width, Height)), p)
	if p.Title.Padding < vg.Points(4) {
		t.Errorf("Draw: title padding %v, want at least 4 pt", p.Title.Padding)
	}
}

// TestTitleOnCanvas checks where a title goes: centred over the plot area
// when it fits, moved inward when centring it there would cross the
// canvas's edge (a long title over a plot narrowed by its legend column
// started left of the canvas) to 3 points inside it, centred on the canvas
// when wider than that.
func TestTitleOnCanvas(t *testing.T) {
	for _, c := range []struct{ min, max, centre, w, want vg.Length }{
		{0, 100, 40, 20, 40},
		{0, 100, 40, 80, 43},
		{0, 100, 95, 20, 87},
		{0, 100, 40, 120, 50},
	} {
		if got := TitleX(c.min, c.max, c.centre, c.w); got != c.want {
			t.Errorf("TitleX(%v, %v, %v, %v) = %v, want %v", c.min, c.max, c.centre, c.w, got, c.want)
		}
	}
	// Drawn: a title wider than the plot area leaves the canvas's first
	// column white.
	p := newPlot("mg27.pst run 0: average message delay", "planes", "delay")
	l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	p.Legend.Add("electronic only", l)
	img := vgimg.New(Width, Height)
	dc := draw.New(img)
	plotArea, _ := Layout(dc, p)
	for p.Title.TextStyle.Width(p.Title.Text) < plotArea.Max.X-plotArea.Min.X+Width/20 {
		p.Title.Text += " and more"
	}
	if p.Title.TextStyle.Width(p.Title.Text) >= Width {
		t.Fatalf("title %q wider than the canvas", p.Title.Text)
	}
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	Draw(dc, p)
	if p.Title.Text == "" {
		t.Error("Draw cleared the title")
	}
	im := img.Image()
	for y := range 30 {
		if r, g, b, _ := im.At(0, y).RGBA(); r < 0xc000 || g < 0xc000 || b < 0xc000 {
			t.Fatalf("pixel (0, %d) is dark: the title runs off the canvas", y)
		}
	}
}
