package pca

import (
	"context"
	"testing"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/gomez"
	"github.com/parscope/parscope/trace"
)

func TestSwingsByHand(t *testing.T) {
	tests := []struct {
		y    []float64
		prom float64
		want int
	}{
		{nil, 1, 0},
		{[]float64{0, 0, 0}, 1, 0},
		{[]float64{0, 5, 0, 5, 0, 5}, 1, 3},
		{[]float64{5, 0, 5, 0, 5}, 1, 2},            // starts high: two rises
		{[]float64{0, 5, 4.5, 5, 0, 5}, 1, 2},       // the dip of 0.5 is not a swing
		{[]float64{0, 1, 2, 3, 2.5, 3, 4, 0}, 3, 1}, // one climb with a wobble
		{[]float64{0, 5, 0, 5}, 0, 0},               // no prominence: nothing counted
	}
	for _, tc := range tests {
		if got := Swings(tc.y, tc.prom); got != tc.want {
			t.Errorf("Swings(%v, %v) = %d, want %d", tc.y, tc.prom, got, tc.want)
		}
	}
	if p := VShapeProminence(4); p != 3 {
		t.Errorf("VShapeProminence(4) = %v, want 3", p)
	}
}

// TestSwingsCountIterations: on the bundled amoeba-like trace (5 runs of
// 17 processes), PC1 against state number has one V shape per iteration
// of the loop, as Figure 8: the swings of every run equal the number of
// times process 0 enters the loop's first block (2).
func TestSwingsCountIterations(t *testing.T) {
	h, recs := readGomez(t, "../../testdata/examples/amoeba.srt")
	acc := mustAccumulator(t, int(h.Runs[0].Procs), false)
	if err := state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, acc.Add); err != nil {
		t.Fatal(err)
	}
	res, err := acc.Result(1)
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScorer(res)
	series := map[int32][]float64{}
	err = state.Reconstruct(context.Background(), h, trace.NewSliceReader(recs), state.Options{}, func(r *state.Row) error {
		if r.Index == 0 {
			sc.Reset()
		}
		series[r.Run] = append(series[r.Run], sc.Scores(r)[0])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	iters := map[int32]int{}
	for _, r := range recs {
		if r.Kind == trace.KindState && r.Proc == 0 && r.ID == 2 {
			iters[r.Run]++
		}
	}
	if len(series) != 5 {
		t.Fatalf("%d runs, want 5", len(series))
	}
	for run, y := range series {
		if got := Swings(y, VShapeProminence(res.Components[0].Variance)); got != iters[run] || got < 20 {
			t.Errorf("run %d: %d V shapes, want %d (the iterations)", run, got, iters[run])
		}
	}
}

// readGomez imports a gomez trace into memory.
func readGomez(t *testing.T, path string) (*trace.Header, []trace.Record) {
	t.Helper()
	var m trace.Memory
	if err := gomez.Import(context.Background(), []string{path}, format.Options{}, &m); err != nil {
		t.Fatal(err)
	}
	return &m.H, m.Records
}
