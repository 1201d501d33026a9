package occupancy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestEachRowEqualsTrace checks that the streamed macrostate trace is row
// for row the one Options.Trace keeps: on Lyon's T1 (T2's 9 rows) and on
// seeded random traces, with processes starting late in a start mode.
func TestEachRowEqualsTrace(t *testing.T) {
	lyon, _ := lyonRecords()
	cases := []struct {
		name  string
		h     *trace.Header
		recs  []trace.Record
		start string
		rows  int
	}{{"lyon", lyonHeader(), lyon, "", 8}} // Compute ends the run at the last record (28): T2 without its last row
	for seed := range uint64(4) {
		h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 5}}}
		for k := range 4 {
			h.States = append(h.States, trace.StateDef{ID: int32(k), Name: string(rune('A' + k))})
		}
		cases = append(cases, struct {
			name  string
			h     *trace.Header
			recs  []trace.Record
			start string
			rows  int
		}{"random", h, randomTrace(seed, 5, 4, 300, seed%2 == 0, false), "A", -1})
	}
	for _, c := range cases {
		modes := StateModes(c.h)
		want, err := Compute(context.Background(), c.h, trace.NewSliceReader(c.recs), modes, Options{Trace: true, Start: c.start})
		if err != nil {
			t.Fatal(err)
		}
		var got []Row
		res, err := EachRow(context.Background(), c.h, trace.NewSliceReader(c.recs), modes, Options{Start: c.start}, func(r *Row) {
			got = append(got, Row{T: r.T, Dur: r.Dur, Micro: r.Micro, N: r.N, Counts: slices.Clone(r.Counts)})
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.rows >= 0 && len(got) != c.rows {
			t.Errorf("%s: %d rows, want %d", c.name, len(got), c.rows)
		}
		if !slices.EqualFunc(got, want[0].Trace, func(a, b Row) bool {
			return a.T == b.T && a.Dur == b.Dur && a.Micro == b.Micro && a.N == b.N && slices.Equal(a.Counts, b.Counts)
		}) {
			t.Errorf("%s: streamed rows differ from the kept trace:\n%v\nwant\n%v", c.name, got, want[0].Trace)
		}
		if res == nil || res.Rows != int64(len(got)) || res.Trace != nil {
			t.Errorf("%s: result %+v for %d rows", c.name, res, len(got))
		}
	}
	// Two runs at once are refused.
	recs := append(slices.Clone(lyon), trace.State(1, 0, 0, 1))
	h := lyonHeader()
	h.Runs = append(h.Runs, trace.RunInfo{ID: 1, Procs: 1})
	_, err := EachRow(context.Background(), h, trace.NewSliceReader(recs), StateModes(h), Options{}, func(*Row) {})
	if err == nil || !strings.Contains(err.Error(), "read one run at a time") {
		t.Errorf("two runs: %v", err)
	}
}
