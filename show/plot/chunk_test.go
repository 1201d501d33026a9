package plot

import (
	"bytes"
	"image"
	"image/png"
	"math/rand/v2"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TestChunkedLine draws a line that crosses the plot a thousand times
// (PC1 against state number looks so) as one path and in chunks, and
// compares the PNGs pixel by pixel: the chunks may differ only where
// strokes meet or cross (no join, anti-aliasing applied twice), so
// nearly every pixel is the same and next to none is painted in one
// image but white in the other. A segment left out between two chunks
// paints some 200 pixels in one image only.
func TestChunkedLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	s := Series{Name: "run 0"}
	for i := range 1000 {
		s.X = append(s.X, float64(i))
		s.Y = append(s.Y, rng.NormFloat64())
	}
	render := func(add func(p *gplot.Plot, l *plotter.Line)) image.Image {
		p := newPlot("t", "x", "y")
		l, err := plotter.NewLine(xys(s))
		if err != nil {
			t.Fatal(err)
		}
		l.Color = Category(0)
		l.Width = vg.Points(1)
		add(p, l)
		f, err := Render("x.png", Width, Height, func(dc draw.Canvas) error { Draw(dc, p); return nil })
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := f.Write(&b); err != nil {
			t.Fatal(err)
		}
		im, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		return im
	}
	whole := render(func(p *gplot.Plot, l *plotter.Line) { p.Add(l) })
	chunked := render(func(p *gplot.Plot, l *plotter.Line) { p.Add(chunkedLine{l}) })
	white := func(im image.Image, x, y int) bool {
		r, g, b, _ := im.At(x, y).RGBA()
		return r == 0xffff && g == 0xffff && b == 0xffff
	}
	n, differ, oneOnly, painted := 0, 0, 0, 0
	bd := whole.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			n++
			if whole.At(x, y) != chunked.At(x, y) {
				differ++
			}
			if white(whole, x, y) != white(chunked, x, y) {
				oneOnly++
			}
			if !white(whole, x, y) {
				painted++
			}
		}
	}
	t.Logf("%d pixels, %d painted, %d differ, %d painted in one only", n, painted, differ, oneOnly)
	if painted < n/20 || differ > n/200 || oneOnly > 40 {
		t.Errorf("%d pixels, %d painted: %d differ between the whole line and its chunks, %d painted in one only", n, painted, differ, oneOnly)
	}
}
