package state

import (
	"context"
	"slices"
	"testing"

	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

type seedRow struct {
	T, Dur int64
	X      []int32
	Counts []int
}

func collectRows(t *testing.T, h *trace.Header, recs []trace.Record, opts Options) []seedRow {
	t.Helper()
	var out []seedRow
	err := Reconstruct(context.Background(), h, trace.NewSliceReader(recs), opts, func(r *Row) error {
		// Counts grows as blocks are met: compare without trailing zeros.
		n := len(r.Counts)
		for n > 0 && r.Counts[n-1] == 0 {
			n--
		}
		out = append(out, seedRow{T: r.T, Dur: r.Dur, X: slices.Clone(r.X), Counts: slices.Clone(r.Counts[:n])})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSeed checks that a window reconstructed from its own records, seeded
// with each process's last state before it, gives the rows of the whole
// reconstruction from the window's start on.
func TestSeed(t *testing.T) {
	all, err := trace.ReadAll(&tracetest.Stream{Procs: 5, Limit: 3000})
	if err != nil {
		t.Fatal(err)
	}
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 5}}}
	for s := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: s})
	}
	full := collectRows(t, h, all, Options{})
	for _, from := range []int64{0, 40_000, 40_250, 99_999} {
		seed := make([]int32, 5)
		var tail []trace.Record
		for _, r := range all {
			switch {
			case r.T < from && r.Kind == trace.KindState:
				seed[r.Proc] = r.ID
			case r.T >= from:
				tail = append(tail, r)
			}
		}
		got := collectRows(t, h, tail, Options{Seed: seed, From: from})
		// The rows of the whole reconstruction from `from` on; a row that
		// began before is cut at `from`.
		var want []seedRow
		for i, r := range full {
			if r.T+r.Dur <= from && !(i == len(full)-1 && r.T >= from) {
				continue
			}
			if r.T < from {
				r.Dur -= from - r.T
				r.T = from
			}
			want = append(want, r)
		}
		if len(got) != len(want) {
			t.Fatalf("from %d: %d rows, want %d", from, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.T != w.T || g.Dur != w.Dur || !slices.Equal(g.X, w.X) || !slices.Equal(g.Counts, w.Counts) {
				t.Fatalf("from %d row %d: %+v, want %+v", from, i, g, w)
			}
		}
	}
	// A window [From, To) within the run: its rows are those of the whole
	// reconstruction cut to the window; an empty window is one row.
	for _, w := range [][2]int64{{40_000, 60_000}, {40_250, 60_700}, {40_250, 40_260}} {
		seed := make([]int32, 5)
		var in []trace.Record
		for _, r := range all {
			switch {
			case r.T < w[0] && r.Kind == trace.KindState:
				seed[r.Proc] = r.ID
			case r.T >= w[0] && r.T < w[1]:
				in = append(in, r)
			}
		}
		got := collectRows(t, h, in, Options{Seed: seed, From: w[0], To: w[1]})
		var want []seedRow
		for _, r := range full {
			if r.T+r.Dur <= w[0] || r.T >= w[1] {
				continue
			}
			end := min(r.T+r.Dur, w[1])
			r.T = max(r.T, w[0])
			r.Dur = end - r.T
			want = append(want, r)
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("window %v: %d rows, want %d", w, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.T != w.T || g.Dur != w.Dur || !slices.Equal(g.X, w.X) || !slices.Equal(g.Counts, w.Counts) {
				t.Fatalf("window %v row %d: %+v, want %+v", w, i, g, w)
			}
		}
	}
	if err := Reconstruct(context.Background(), h, trace.NewSliceReader(all), Options{Seed: []int32{1}}, func(*Row) error { return nil }); err == nil {
		t.Fatal("a seed of 1 process for 5 was accepted")
	}
}
