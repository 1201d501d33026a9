package report

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// importWith imports inputs with the importer named name and params.
func importWith(t *testing.T, name string, params map[string]string, inputs ...string) string {
	t.Helper()
	imp, err := format.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name+".pst")
	w, err := store.Create(out, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := imp.Import(context.Background(), inputs, format.Options{Params: params}, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGoTraceAbsent builds the report of a Go runtime trace in which
// goroutines come and go (stress.go1.26: 37 goroutines, 10 Ps; goroutines
// 17 to 30 are created after 419 ms, most end before the trace does;
// 31 to 36, forcegchelper and the like, existed before the trace and the
// reader reaches their status only at 423 ms). A goroutine exists from its
// first record (the trace's start for one that existed before it) until it
// ends (not-exist): before and after it is in no state, so that the occupancy never has more
// goroutines running than there are Ps, the state timeline shows nothing
// for goroutines not yet created, and the states, their counts and the
// occupancy table agree. (A goroutine used to sit in state 0, running,
// before its first record: 22 goroutines ran at once.)
func TestGoTraceAbsent(t *testing.T) {
	src := realdata.Path(t, "traces/go/stress.go1.26.trace")
	path := importWith(t, "gotrace", map[string]string{}, src)
	byP := importWith(t, "gotrace", map[string]string{"by": "p"}, src)
	sp, err := store.Open(byP)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(sp.Header().Runs[0].Procs)
	sp.Close()
	if ps != 10 {
		t.Fatalf("%d Ps, want 10", ps)
	}

	b, err := Build(context.Background(), path, Options{MaxPoints: 500})
	if err != nil {
		t.Fatal(err)
	}
	s := storetest.Open(t, path)
	h := s.Header()
	recs, err := trace.ReadAll(s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}}))
	if err != nil {
		t.Fatal(err)
	}
	const notExist = 4
	first := map[int32]int64{}
	for _, r := range recs {
		if _, ok := first[r.Proc]; !ok {
			first[r.Proc] = r.T
		}
	}
	for p := int32(17); p <= 30; p++ {
		if first[p] < 419_000_000 {
			t.Fatalf("goroutine %d first appears at %d ns, before 419 ms", p, first[p])
		}
	}
	for p := int32(31); p <= 36; p++ {
		if first[p] != 0 {
			t.Fatalf("goroutine %d, alive before the trace, first appears at %d ns, not at its start", p, first[p])
		}
	}

	// The occupancy: at no time more goroutines running than Ps, and
	// not-exist is no mode.
	occ := occRuns(t, b)[0]
	if slices.Contains(occ.Modes, "not-exist") || len(occ.Modes) != 5 || occ.StartMode != "" {
		t.Errorf("modes %v, start mode %q", occ.Modes, occ.StartMode)
	}
	running := slices.Index(occ.Modes, "running")
	full, _ := storeOccupancy(t, path, occupancy.Options{})
	most := int32(0)
	for _, table := range [][]occupancy.Macro{occ.Table, full[0].Table} {
		for _, m := range table {
			if int(m.Counts[running]) > ps {
				t.Errorf("%d goroutines running at once for %d ns, with %d Ps", m.Counts[running], m.Occupancy, ps)
			}
			most = max(most, m.Counts[running])
		}
	}
	if most < 2 {
		t.Errorf("at most %d goroutines running at once", most)
	}
	for w, row := range occ.ProcessesPerWindow {
		if row[running] > float64(ps)+1e-9 {
			t.Errorf("window %d: %.2f goroutines running", w, row[running])
		}
	}
	// p·T = Σ_j mean_j·p + absent time.
	var inModes float64
	for _, m := range occ.Mean {
		inModes += m.GlobalNS * float64(occ.Procs)
	}
	if total := float64(occ.Procs) * float64(occ.EndNS-occ.BeginNS); occ.AbsentNS <= 0 || math.Abs(inModes+float64(occ.AbsentNS)-total) > 1e-6*total {
		t.Errorf("%.0f ns in modes and %d absent, want %.0f in all", inModes, occ.AbsentNS, total)
	}

	// The state rows: goroutines absent before their first record and
	// after they end; the block counts of each row are the occupancy's
	// macrostate, for as long.
	absent := h.AbsentStates()
	if !absent[notExist] || len(absent) != 1 {
		t.Fatalf("absent states %v", absent)
	}
	byCounts := map[string]int64{}
	last := map[int32]int32{}
	next := 0
	var lastKey string
	var lastT int64
	err = state.Reconstruct(context.Background(), h, s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}}), state.Options{}, func(r *state.Row) error {
		for ; next < len(recs) && recs[next].T <= r.T; next++ {
			last[recs[next].Proc] = recs[next].ID
		}
		c := make([]int32, len(occ.Modes))
		for p, x := range r.X {
			id, seen := last[int32(p)]
			want := id
			if !seen || id == notExist {
				want = state.Absent
			}
			if x != want {
				t.Fatalf("goroutine %d at %d ns: block %d, want %d", p, r.T, x, want)
			}
			if p >= 17 && p <= 30 && r.T < 419_000_000 && x != state.Absent {
				t.Fatalf("goroutine %d is in block %d at %d ns, before it exists", p, x, r.T)
			}
			if x != state.Absent {
				c[slices.Index(occ.Modes, h.States[slices.IndexFunc(h.States, func(d trace.StateDef) bool { return d.ID == x })].Name)]++
			}
		}
		lastKey, lastT = occupancy.Key(c), r.T
		byCounts[lastKey] += r.Dur
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The occupancy runs from 0 (no goroutine before the first record)
	// to the run's end; the last state row has no duration.
	byCounts[occupancy.Key(make([]int32, len(occ.Modes)))] += first[0]
	byCounts[lastKey] += full[0].End - lastT
	// A state that lasts no time (the last, when the run ends with it) is
	// no macrostate.
	for k, d := range byCounts {
		if d == 0 {
			delete(byCounts, k)
		}
	}
	if len(byCounts) != len(full[0].Table) {
		for k, d := range byCounts {
			if !slices.ContainsFunc(full[0].Table, func(m occupancy.Macro) bool { return occupancy.Key(m.Counts) == k }) {
				t.Errorf("state counts (%s) for %d ns are no macrostate", k, d)
			}
		}
		t.Errorf("%d distinct state counts, %d macrostates", len(byCounts), len(full[0].Table))
	}
	for _, m := range full[0].Table {
		if got := byCounts[occupancy.Key(m.Counts)]; got != m.Occupancy {
			t.Errorf("macrostate (%s): %d ns in the states, %d in the occupancy table", occupancy.Key(m.Counts), got, m.Occupancy)
		}
	}

	// The timeline: nothing for a goroutine before it exists.
	st := b.States.Result.(*state.Summary).Runs[0]
	tl := st.Timeline
	for p := 17; p <= 36; p++ {
		seen := false
		for w := range tl.Blocks[p] {
			at := tl.BeginNS + int64((float64(w)+0.5)*tl.WidthNS)
			if at < first[int32(p)] && tl.Blocks[p][w] != state.Absent {
				t.Errorf("timeline: goroutine %d in block %d at %d ns, before its first record at %d", p, tl.Blocks[p][w], at, first[int32(p)])
			}
			seen = seen || tl.Blocks[p][w] != state.Absent
		}
		if p <= 28 && !seen {
			t.Errorf("timeline: goroutine %d never shown", p)
		}
	}

	// Entropy: N is the five states a goroutine that exists can be in.
	er := b.Entropy.Result.(*entropy.Report).Runs[0]
	if er.N != 5 || er.P != 37 || er.Rows != st.States || math.IsNaN(er.CombEntropy) || er.ClassEntropyMax <= 0 {
		t.Errorf("entropy: N %d, P %d, %d rows (%d states), comb %v", er.N, er.P, er.Rows, st.States, er.CombEntropy)
	}
	// PCA: an absent goroutine's coordinate is state.Absent (-1); 33 to 36
	// existed before the trace and wait (state 2) from its start to its
	// end (they used to be absent until the trace's last microseconds).
	pr := b.PCA.Result.(*pca.Report)
	const waiting = 2
	for p := 33; p <= 36; p++ {
		if math.Abs(pr.Mean[p]-waiting) > 0.01 {
			t.Errorf("pca: goroutine %d has mean %v, want about %d (waiting)", p, pr.Mean[p], waiting)
		}
	}
}

// TestGoTestTraceRunningAtMostPs: in `go test -trace` of encoding/json
// (624 goroutines, most short-lived, GOMAXPROCS 10) at most 10 goroutines
// run at once once goroutines exist only between creation and end (about
// 400 did when those not yet created or ended counted as running).
func TestGoTestTraceRunningAtMostPs(t *testing.T) {
	path := importWith(t, "gotrace", map[string]string{}, realdata.Path(t, "traces/go/test-encoding-json.go1.25.trace"))
	res, modes := storeOccupancy(t, path, occupancy.Options{})
	running := modes.Index("running")
	most := int32(0)
	var present int32
	for _, m := range res[0].Table {
		most = max(most, m.Counts[running])
		var n int32
		for _, c := range m.Counts {
			n += c
		}
		present = max(present, n)
	}
	if res[0].Procs != 624 || most > 10 || most < 2 || present >= 624 {
		t.Errorf("%d goroutines, at most %d running and %d existing at once; want at most 10 running (GOMAXPROCS)", res[0].Procs, most, present)
	}
}
