package occupancy

import (
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/parscope/parscope/trace"
)

// spilled runs recs through one accumulator of budget, like single, and
// reports whether its table went to temporary files.
func spilled(t *testing.T, modes *Modes, p int, recs []trace.Record, end int64, opts Options, unpacked bool) (*Result, bool) {
	t.Helper()
	acc, err := NewAccumulator(modes, p, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	if unpacked {
		acc.packed, acc.fast, acc.tab = false, false, newTable(false, acc.m, acc.lay, opts.Budget)
	}
	for i := range recs {
		if err := acc.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	went := acc.tab.runs != nil && acc.tab.runs.Written() > 0
	res, err := acc.Result(end)
	if err != nil {
		t.Fatal(err)
	}
	return res, went
}

// TestSpilledEqualsInMemory computes random traces of many distinct
// macrostates with the default budget, which holds them all, and with the
// smallest one, which spills the table every few macrostates (and, past
// spill.MaxRuns runs, merges the runs): in one pass, with string keys, in
// time shards merged (each shard spilling on its own) and through the
// shards' encoding. The results must be equal, the whole table, its top
// rows, the summary, the projections and the work included, and no
// temporary file may be left behind.
func TestSpilledEqualsInMemory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for _, tc := range []struct {
		name    string
		p, m, n int
		late    bool
		ends    bool
		start   string
		shards  int
	}{
		{"every process from the start", 16, 4, 4000, false, false, "", 30},
		{"late starts", 40, 3, 6000, true, false, "B", 25},
		{"late starts absent, ends", 30, 3, 6000, true, true, "", 25},
		{"many modes", 9, 8, 3000, false, true, "", 60},
		{"two-word keys", 64, 13, 5000, false, true, "", 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(3) {
				recs := randomTrace(seed, tc.p, tc.m, tc.n, tc.late, tc.ends)
				end := recs[len(recs)-1].T + 3
				modes := modesOf(tc.m, tc.ends)
				mem := Options{Start: tc.start}
				tiny := Options{Start: tc.start, Budget: 2048}
				want, went := spilled(t, modes, tc.p, recs, end, mem, false)
				if went {
					t.Fatal("the default budget spilled a table of a few thousand macrostates")
				}
				if want.Observed < 200 || len(want.Table) != want.Observed {
					t.Fatalf("seed %d: %d macrostates, a table of %d rows: too few to test spilling", seed, want.Observed, len(want.Table))
				}
				for _, unpacked := range []bool{false, true} {
					got, went := spilled(t, modes, tc.p, recs, end, tiny, unpacked)
					if !went {
						t.Fatalf("seed %d: the smallest budget did not spill", seed)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("seed %d, string keys %v: spilled result differs\n got %+v\nwant %+v", seed, unpacked, got, want)
					}
				}
				rng := rand.New(rand.NewPCG(seed, 3))
				var cuts []int
				for i := 1; i < len(recs); i++ {
					if rng.IntN(len(recs)) < tc.shards {
						cuts = append(cuts, i)
					}
				}
				if got := sharded(t, modes, tc.p, recs, cuts, end, tiny); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d: spilled shards merged differ\n got %+v\nwant %+v", seed, got, want)
				}
				if got := encodedShards(t, modes, tc.p, recs, cuts, end, tiny); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d: spilled shards encoded and merged differ\n got %+v\nwant %+v", seed, got, want)
				}
				checkTopAndStream(t, modes, tc.p, recs, end, tiny, want)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d temporary files left in %s", len(ents), dir)
	}
}

// checkTopAndStream checks, with the budget of opts, that Options.Top keeps
// the rows TopMacros picks from the whole table, that Options.Stream reads
// the whole table back, and that projections, means and work from the
// stream equal those from the whole table.
func checkTopAndStream(t *testing.T, modes *Modes, p int, recs []trace.Record, end int64, opts Options, want *Result) {
	t.Helper()
	for _, top := range []int{1, 7, 50, want.Observed + 5} {
		o := opts
		o.Top = top
		got, _ := spilled(t, modes, p, recs, end, o, false)
		if w := TopMacros(want.Table, top); !reflect.DeepEqual(got.Table, w) {
			t.Fatalf("top %d: %v\nwant %v", top, got.Table, w)
		}
		if got.Observed != want.Observed || !reflect.DeepEqual(got.Histogram, want.Histogram) || !slices.Equal(got.Mean(), want.Mean()) {
			t.Fatalf("top %d: %d macrostates, histogram %v, mean %v; want %d, %v, %v", top, got.Observed, got.Histogram, got.Mean(), want.Observed, want.Histogram, want.Mean())
		}
		if _, err := got.Project([]int{0}); top < want.Observed && err == nil {
			t.Fatalf("top %d: a projection of the top rows only was not refused", top)
		}
	}
	o := opts
	o.Stream, o.Top = true, 3
	got, _ := spilled(t, modes, p, recs, end, o, false)
	defer got.Stream.Close()
	if len(got.Table) != 3 || got.Stream.Len() != want.Observed {
		t.Fatalf("streamed: %d top rows, %d rows streamed; want 3 and %d", len(got.Table), got.Stream.Len(), want.Observed)
	}
	for range 2 {
		all, err := got.Stream.All()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(all, want.Table) {
			t.Fatalf("the stream gives\n%v\nwant\n%v", all, want.Table)
		}
	}
	for _, keep := range [][]int{{0}, {1, 0}, {2, 0, 1}} {
		g, err := got.Project(keep)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := want.Project(keep)
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("projection on %v: %v\nwant %v", keep, g, w)
		}
	}
	rates := Rates{DefaultRate: 0.5, Key(want.Table[0].Counts): 3}
	gw, err1 := got.Work(rates)
	ww, err2 := want.Work(rates)
	if err1 != nil || err2 != nil || gw != ww {
		t.Fatalf("work %v (%v), want %v (%v)", gw, err1, ww, err2)
	}
}

// encodedShards accumulates the shards like sharded, one after another,
// each encoded and decoded before it is merged.
func encodedShards(t *testing.T, modes *Modes, p int, recs []trace.Record, cuts []int, end int64, opts Options) *Result {
	t.Helper()
	bounds := append(append([]int{0}, cuts...), len(recs))
	var merged *Accumulator
	for s := range len(bounds) - 1 {
		t0 := int64(0)
		if s > 0 {
			t0 = recs[bounds[s]].T
		}
		a, err := NewAccumulator(modes, p, t0, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := bounds[s]; i < bounds[s+1]; i++ {
			if err := a.Add(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		data, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		a.tab.close()
		b, err := UnmarshalAccumulator(data, modes)
		if err != nil {
			t.Fatal(err)
		}
		if merged == nil {
			merged = b
		} else if err := merged.Merge(b); err != nil {
			t.Fatal(err)
		}
	}
	res, err := merged.Result(end)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
