package plot

import "github.com/parscope/parscope/probe"

// ProbeCurve draws a probe's quality-against-size curve (probe.Curve): the
// prediction quality (100 − |error| %) and the probe's size (% of the probe
// with every phase) against the number of phases kept, heaviest first.
// name chooses the image type as for Render; worker names the worker in
// the title.
func ProbeCurve(name, worker string, pts []probe.CurvePoint) (*Figure, error) {
	full := float64(pts[len(pts)-1].Bytes)
	var q, s Series
	q.Name, s.Name = "prediction quality (100 − |error| %)", "probe size (% of all phases)"
	for _, pt := range pts {
		q.X, q.Y = append(q.X, float64(pt.K)), append(q.Y, 100-100*pt.Error)
		s.X, s.Y = append(s.X, float64(pt.K)), append(s.Y, 100*float64(pt.Bytes)/full)
	}
	return Lines(name, "Prediction quality x probe size: "+worker, "phases kept (heaviest first)", "%", []Series{q, s})
}
