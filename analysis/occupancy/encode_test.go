package occupancy

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/parscope/parscope/trace"
)

// encodeTrace is a run of 6 processes among 3 states whose process 5
// enters its first state late (so shards begin with processes of unknown
// mode), with non-state records between; now and then a process enters
// state 3, marked Absent (it ends, until its next state).
func encodeTrace() (*trace.Header, []trace.Record) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 6}}}
	for s := range int32(3) {
		h.States = append(h.States, trace.StateDef{ID: s})
	}
	h.States = append(h.States, trace.StateDef{ID: 3, Absent: true})
	rng := rand.New(rand.NewPCG(5, 9))
	var recs []trace.Record
	for i := range 3000 {
		t := int64(i/3) * 100
		p := int32(rng.IntN(5))
		if i > 2000 {
			p = int32(rng.IntN(6))
		}
		st := int32(rng.IntN(3))
		if i%50 == 25 {
			st = 3
		}
		recs = append(recs, trace.State(0, p, t, st))
		if i%7 == 0 {
			recs = append(recs, trace.Event(0, p, t, 1, int64(i)))
		}
	}
	return h, recs
}

// TestEncodeMerge checks that time shards encoded, decoded and merged give
// the result of one pass, with and without the T2 trace, and that corrupt
// data is refused.
func TestEncodeMerge(t *testing.T) {
	h, recs := encodeTrace()
	modes := StateModes(h)
	for _, opts := range []Options{{Start: "state 0"}, {Start: "state 0", Trace: true}, {}, {Trace: true}} {
		if opts.Start != "" && modes.Index(opts.Start) < 0 {
			opts.Start = modes.Names[0]
		}
		want, err := Compute(context.Background(), h, trace.NewSliceReader(recs), modes, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Shards of 500 records, each beginning at its first record.
		var merged *Accumulator
		for lo := 0; lo < len(recs); {
			hi := min(lo+500, len(recs))
			for hi < len(recs) && recs[hi].T == recs[hi-1].T {
				hi++
			}
			a, err := NewAccumulator(modes, 6, recs[lo].T, opts)
			if lo == 0 {
				a, err = NewAccumulator(modes, 6, 0, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := lo; i < hi; i++ {
				if err := a.Add(&recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			data, err := a.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			b, err := UnmarshalAccumulator(data, modes)
			if err != nil {
				t.Fatal(err)
			}
			if merged == nil {
				merged = b
			} else if err := merged.Merge(b); err != nil {
				t.Fatal(err)
			}
			// Encoding the merged accumulator must not change it either.
			if data, err = merged.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
			if merged, err = UnmarshalAccumulator(data, modes); err != nil {
				t.Fatal(err)
			}
			lo = hi
		}
		got, err := merged.Result(0)
		if err != nil {
			t.Fatal(err)
		}
		got.Run = want[0].Run
		wj, _ := json.Marshal(want[0])
		gj, _ := json.Marshal(got)
		if string(wj) != string(gj) {
			t.Fatalf("trace %v: merged shards give\n%.600s\nwant\n%.600s", opts.Trace, gj, wj)
		}
	}
	a, _ := NewAccumulator(modes, 6, 0, Options{})
	data, _ := a.MarshalBinary()
	if _, err := UnmarshalAccumulator(data[:len(data)/2], modes); err == nil {
		t.Fatal("a truncated accumulator was decoded")
	}
	two := &Modes{Names: []string{"a"}}
	if _, err := UnmarshalAccumulator(data, two); err == nil {
		t.Fatal("an accumulator of 3 modes was decoded for 1 mode")
	}
}

// TestMergeStateless checks that a time shard without state records (only
// events) merges without splitting the microstate that goes on through it.
func TestMergeStateless(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}}, States: []trace.StateDef{{ID: 0}, {ID: 1}}}
	recs := []trace.Record{
		trace.State(0, 0, 0, 0), trace.State(0, 1, 0, 1), trace.State(0, 0, 500, 1),
		trace.Event(0, 0, 1200, 1, 0), trace.Event(0, 1, 1500, 1, 0),
		trace.State(0, 1, 2300, 0), trace.State(0, 0, 2600, 0),
	}
	modes := StateModes(h)
	want, err := Compute(context.Background(), h, trace.NewSliceReader(recs), modes, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var merged *Accumulator
	for _, sh := range []struct {
		t0     int64
		lo, hi int
	}{{0, 0, 3}, {1000, 3, 5}, {2300, 5, 7}} {
		a, err := NewAccumulator(modes, 2, sh.t0, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := sh.lo; i < sh.hi; i++ {
			if err := a.Add(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if merged == nil {
			merged = a
		} else if err := merged.Merge(a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := merged.Result(0)
	if err != nil {
		t.Fatal(err)
	}
	wj, _ := json.Marshal(want[0])
	gj, _ := json.Marshal(got)
	if string(wj) != string(gj) {
		t.Fatalf("with a stateless shard:\n%s\nwant\n%s", gj, wj)
	}
}
