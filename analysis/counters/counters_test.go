package counters

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// handTrace is a run of 0–400 ns: process 0 samples "cycles" at 0, 100,
// 300 (values 1, 3, 8), process 1 at 50 and 350 (2 and 6, then a NaN),
// and process 1 samples counter 7 (no definition) once at 200.
func handTrace() (*engine.Trace, []trace.Record) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}}, Counters: []trace.CounterDef{{ID: 0, Name: "cycles", Unit: "1"}}}
	recs := []trace.Record{
		trace.Counter(0, 0, 0, 0, 1),
		trace.Counter(0, 1, 50, 0, 2),
		trace.Counter(0, 0, 100, 0, 3),
		trace.Counter(0, 1, 200, 7, 10),
		trace.Counter(0, 0, 300, 0, 8),
		trace.Counter(0, 1, 350, 0, 6),
		trace.Counter(0, 1, 360, 0, math.NaN()),
		trace.State(0, 0, 400, 1),
	}
	st := &store.Stats{Records: map[string]int64{"counter": 7, "state": 1}, Runs: []store.RunStats{{Run: 0, Procs: 2, Records: 8, TMin: 0, TMax: 400}}}
	return &engine.Trace{Name: "hand", Header: h, Stats: st}, recs
}

func run(t *testing.T, windows int, parts ...[]trace.Record) *Result {
	t.Helper()
	tr, _ := handTrace()
	var acc *Accumulator
	for _, p := range parts {
		a, err := New(tr, &Params{Windows: windows})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Add(p); err != nil {
			t.Fatal(err)
		}
		if acc == nil {
			acc = a
		} else if err := acc.Merge(a); err != nil {
			t.Fatal(err)
		}
	}
	res, err := acc.Result()
	if err != nil {
		t.Fatal(err)
	}
	return res.(*Result)
}

// TestCountersByHand checks every figure of the hand trace with four
// windows of 100 ns.
func TestCountersByHand(t *testing.T) {
	_, recs := handTrace()
	res := run(t, 4, recs)
	if len(res.Runs) != 1 || res.Runs[0].WindowNS != 100 || res.Runs[0].EndNS != 400 || len(res.Runs[0].Counters) != 2 {
		t.Fatalf("result %+v", res)
	}
	c := res.Runs[0].Counters[0]
	want := Counter{ID: 0, Name: "cycles", Unit: "1", Samples: 5, Procs: 2, Min: 1, Mean: 4, Max: 8, NonFinite: 1,
		ByProcess: []Proc{{Proc: 0, Samples: 3, Min: 1, Mean: 4, Max: 8, Last: 8}, {Proc: 1, Samples: 2, Min: 2, Mean: 4, Max: 6, Last: 6}},
		Series:    []Point{{TNS: 0, Samples: 2, Min: 1, Mean: 1.5, Max: 2}, {TNS: 100, Samples: 1, Min: 3, Mean: 3, Max: 3}, {TNS: 300, Samples: 2, Min: 6, Mean: 7, Max: 8}}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("cycles:\n got %+v\nwant %+v", c, want)
	}
	if u := res.Runs[0].Counters[1]; u.Name != "counter #7" || u.Samples != 1 || u.Procs != 1 || len(u.Series) != 1 || u.Series[0].TNS != 200 {
		t.Errorf("counter 7: %+v", u)
	}
	// No NaN reaches the JSON; lists are never null.
	data, err := json.Marshal(res)
	if err != nil || strings.Contains(string(data), "null") || strings.Contains(string(data), "NaN") {
		t.Errorf("JSON %s (%v)", data, err)
	}
}

// TestCountersMerge checks that two time shards merged give the result
// of one pass.
func TestCountersMerge(t *testing.T) {
	_, recs := handTrace()
	one := run(t, 4, recs)
	two := run(t, 4, recs[:3], recs[3:])
	if !reflect.DeepEqual(one, two) {
		t.Errorf("one pass %+v\nmerged %+v", one, two)
	}
	if _, err := New(&engine.Trace{}, &Params{Windows: 0}); err == nil {
		t.Error("--windows 0 accepted")
	}
}
