package engine_test

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// runParts runs req over src in parts (engine.Restrict of runs and procs),
// merging the parts' accumulators in order, and returns the envelope.
func runParts(t *testing.T, src engine.Source, req engine.Request, parts [][2][]int32) *engine.Envelope {
	t.Helper()
	ctx := context.Background()
	p, err := engine.Prepare(src, req)
	if err != nil {
		t.Fatal(err)
	}
	var merged engine.Accumulator
	for _, pt := range parts {
		acc, err := p.New()
		if err != nil {
			t.Fatal(err)
		}
		for again := true; again; {
			if err := p.Feed(ctx, engine.Restrict(src, pt[0], pt[1]), acc); err != nil {
				t.Fatal(err)
			}
			if again, err = p.Again(acc); err != nil {
				t.Fatal(err)
			}
		}
		if merged == nil {
			merged = acc
		} else if err := merged.Merge(acc); err != nil {
			t.Fatal(err)
		}
	}
	env, err := p.Result(merged)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestParts checks that a request run in parts (by run, by process),
// merged, gives Run's envelope: the same records fed, the same
// selection, the same source of states, derived per part with the whole
// trace's dictionary.
func TestParts(t *testing.T) {
	s, _ := writeStore(t)
	regions := regionStore(t)
	for _, c := range []struct {
		name  string
		src   engine.Source
		req   engine.Request
		parts [][2][]int32
	}{
		{"runs", s, engine.Request{Analysis: "test-count"}, [][2][]int32{{{0}, nil}, {{1}, nil}}},
		{"procs", s, engine.Request{Analysis: "test-count", ExcludeProcs: []int32{2}},
			[][2][]int32{{{0}, {0, 1}}, {{0}, {2, 3}}, {{1}, {0}}, {{1}, {1, 2, 3}}}},
		{"selected runs", s, engine.Request{Analysis: "test-count", Runs: []int32{1}, Options: &countOptions{Scale: 2, Kinds: []string{"state", "event"}}},
			[][2][]int32{{{0}, nil}, {{1}, nil}}},
		{"derived", regions, engine.Request{Analysis: "test-count", States: engine.StatesMPI}, [][2][]int32{{nil, {0}}, {nil, {1}}}},
		{"derived by regions", plain{regions}, engine.Request{Analysis: "test-count"}, [][2][]int32{{nil, {1}}, {nil, {0}}}},
		{"two passes", s, engine.Request{Analysis: "test-twice"}, [][2][]int32{{nil, nil}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := engine.Run(context.Background(), c.src, []engine.Request{c.req})
			if err != nil {
				t.Fatal(err)
			}
			want := res.Envelopes[0]
			got := runParts(t, c.src, c.req, c.parts)
			if w, g := want.Result, got.Result; c.req.Analysis == "test-count" {
				wr, gr := w.(*countResult), g.(*countResult)
				if !maps.Equal(wr.Records, gr.Records) {
					t.Errorf("parts fed %v, Run %v", gr.Records, wr.Records)
				}
				wr.Runs, gr.Runs = nil, nil
			}
			var a, b bytes.Buffer
			if err := engine.WriteJSON(&a, want); err != nil {
				t.Fatal(err)
			}
			if err := engine.WriteJSON(&b, got); err != nil {
				t.Fatal(err)
			}
			if a.String() != b.String() {
				t.Errorf("envelope in parts\n%s\nwant Run's\n%s", &b, &a)
			}
		})
	}
}

// TestPrepareRefuses checks that Prepare refuses what Run refuses before
// it reads a record, naming the trace.
func TestPrepareRefuses(t *testing.T) {
	s, _ := writeStore(t)
	if _, err := engine.Prepare(s, engine.Request{Analysis: "test-bbv"}); err == nil || !strings.Contains(err.Error(), "gen.pst: test-bbv needs bbv records") {
		t.Errorf("a trace without BBV: %v", err)
	}
	if _, err := engine.Prepare(s, engine.Request{Analysis: "nope"}); err == nil || !strings.Contains(err.Error(), "unknown analysis") {
		t.Errorf("an unknown analysis: %v", err)
	}
	if _, err := engine.Prepare(regionStore(t), engine.Request{Analysis: "test-count", States: engine.StatesRecorded}); err == nil {
		t.Error("recorded states of a trace without any accepted")
	}
}

// TestRestrict checks a part's records: the runs and processes both the
// part and the read select, none when they select none in common.
func TestRestrict(t *testing.T) {
	s, _ := writeStore(t)
	count := func(src engine.Source, runs []int32) map[[2]int32]int {
		recs, err := trace.ReadAll(src.Records(store.ReadOptions{Runs: runs}))
		if err != nil {
			t.Fatal(err)
		}
		n := map[[2]int32]int{}
		for _, r := range recs {
			n[[2]int32{r.Run, r.Proc}]++
		}
		return n
	}
	all := count(s, nil)
	got := count(engine.Restrict(s, []int32{1}, []int32{2, 3}), nil)
	if len(got) != 2 || got[[2]int32{1, 2}] != all[[2]int32{1, 2}] || got[[2]int32{1, 3}] != all[[2]int32{1, 3}] {
		t.Errorf("run 1, processes 2 and 3: %v", got)
	}
	if got := count(engine.Restrict(s, []int32{1}, nil), []int32{0}); len(got) != 0 {
		t.Errorf("run 0 of the part of run 1: %v", got)
	}
	if sp, ok := engine.Restrict(s, []int32{0}, []int32{1}).(engine.Spanner); !ok || len(sp.ProcSpans()) != 1 {
		t.Errorf("the part of one process of a store spans %v", sp)
	}
	if _, ok := engine.Restrict(plain{s}, nil, nil).(engine.Spanner); ok {
		t.Error("the part of a source without spans claims them")
	}
}

// TestPartsReadRegionsOnce checks that the parts of a request whose
// states are derived from regions take the dictionary Prepare made: the
// trace's region entries are read once, not once per part.
func TestPartsReadRegionsOnce(t *testing.T) {
	src := &countingSource{Store: regionStore(t)}
	req := engine.Request{Analysis: "test-count", States: engine.StatesRegions}
	p, err := engine.Prepare(src, req)
	if err != nil {
		t.Fatal(err)
	}
	if src.reads != 1 {
		t.Fatalf("Prepare read %d times, want once (the region entries)", src.reads)
	}
	for _, proc := range []int32{0, 1} {
		acc, err := p.New()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Feed(context.Background(), engine.Restrict(src, nil, []int32{proc}), acc); err != nil {
			t.Fatal(err)
		}
	}
	if src.reads != 3 {
		t.Errorf("Prepare and two parts read %d times, want 3 (the entries once, a pass per part)", src.reads)
	}
}
