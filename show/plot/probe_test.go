package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/probe"
)

// TestProbeCurve draws a three-point curve as SVG and checks the title and
// both series are there.
func TestProbeCurve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curve.svg")
	pts := []probe.CurvePoint{{K: 1, Bytes: 100, Error: 0.2}, {K: 2, Bytes: 300, Error: 0.05}, {K: 3, Bytes: 400, Error: 0}}
	fig, err := ProbeCurve(path, "matmul", pts)
	if err != nil {
		t.Fatal(err)
	}
	if err := fig.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Prediction quality x probe size: matmul", "prediction quality (100 − |error| %)", "probe size (% of all phases)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the plot has no %q", want)
		}
	}
}
