package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// regionStore writes a trace of regions without state records: process 0
// sends before its first region and records an event after its last;
// process 1 closes "main" before the MPI_Send opened inside it.
func regionStore(t *testing.T) *store.Store {
	t.Helper()
	h := &trace.Header{}
	h.Regions = []trace.RegionDef{
		{ID: 1, Kind: trace.RegionFunction, Label: "main", Parent: -1},
		{ID: 2, Kind: trace.RegionCall, Label: "MPI_Send", Parent: -1},
		{ID: 3, Kind: trace.RegionLoop, Label: "compute", Parent: 1},
		{ID: 4, Kind: trace.RegionFunction, Label: "never entered", Parent: -1},
	}
	h.Events = []trace.EventDef{{ID: 0, Name: "done"}}
	recs := []trace.Record{
		trace.Send(0, 0, 0, 1, 1, 8, 0, 0),
		trace.Enter(0, 1, 5, 1),
		trace.Enter(0, 0, 10, 1),
		trace.Enter(0, 1, 15, 2),
		trace.Enter(0, 0, 20, 3),
		trace.Exit(0, 1, 25, 1),
		trace.Enter(0, 0, 30, 2),
		trace.Exit(0, 1, 35, 2),
		trace.Exit(0, 0, 40, 2),
		trace.Exit(0, 0, 50, 3),
		trace.Exit(0, 0, 60, 1),
		trace.Event(0, 0, 70, 0, 1),
	}
	return storetest.New(t, "regions.pst", h, recs)
}

// plain hides the store's ProcSpans, as a source that cannot give them.
type plain struct{ s *store.Store }

func (p plain) Dir() string                              { return p.s.Dir() }
func (p plain) Manifest() *store.Manifest                { return p.s.Manifest() }
func (p plain) Records(o store.ReadOptions) trace.Reader { return p.s.Records(o) }
func (p plain) BBV(o store.ReadOptions) trace.Reader     { return p.s.BBV(o) }

// describe writes records as "t/proc kind name" lines, states by name.
func describe(t *testing.T, src engine.Source, kinds []trace.Kind) string {
	t.Helper()
	recs, err := trace.ReadAll(src.Records(store.ReadOptions{Kinds: kinds}))
	if err != nil {
		t.Fatal(err)
	}
	h := src.Manifest().Header
	var lines []string
	for _, r := range recs {
		s := fmt.Sprintf("%d/%d %s", r.T, r.Proc, r.Kind)
		if r.Kind == trace.KindState {
			i := slices.IndexFunc(h.States, func(d trace.StateDef) bool { return d.ID == r.ID })
			if i < 0 {
				t.Fatalf("state %d is not in the dictionary %v", r.ID, h.States)
			}
			s += " " + h.States[i].Name
			if h.States[i].Absent {
				s += " (absent)"
			}
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

func TestStatesFromRegions(t *testing.T) {
	s := regionStore(t)
	for _, src := range []engine.Source{s, plain{s}} {
		d, from, err := engine.WithStates(src, engine.StatesAuto)
		if err != nil {
			t.Fatal(err)
		}
		if from != engine.StatesRegions {
			t.Fatalf("auto on a trace of regions picked %q, want regions", from)
		}
		var names []string
		for _, st := range d.Manifest().Header.States {
			names = append(names, st.Name)
		}
		if got, want := strings.Join(names, ", "), "outside any region, main, MPI_Send, compute, ended"; got != want {
			t.Errorf("dictionary %q, want %q (the regions entered, in dictionary order)", got, want)
		}
		got := describe(t, d, []trace.Kind{trace.KindState})
		want := `0/0 state outside any region
5/1 state main
10/0 state main
15/1 state MPI_Send
20/0 state compute
30/0 state MPI_Send
35/1 state ended (absent)
40/0 state compute
50/0 state main
60/0 state outside any region
70/0 state ended (absent)`
		if got != want {
			t.Errorf("states from regions:\n%s\nwant\n%s", got, want)
		}
		// With the other kinds: one time-merged stream, a process's state
		// before its other records at the same time.
		got = describe(t, d, nil)
		want = `0/0 state outside any region
0/0 send
5/1 state main
5/1 enter
10/0 state main
10/0 enter
15/1 state MPI_Send
15/1 enter
20/0 state compute
20/0 enter
25/1 exit
30/0 state MPI_Send
30/0 enter
35/1 state ended (absent)
35/1 exit
40/0 state compute
40/0 exit
50/0 state main
50/0 exit
60/0 state outside any region
60/0 exit
70/0 state ended (absent)
70/0 event`
		if got != want {
			t.Errorf("all kinds:\n%s\nwant\n%s", got, want)
		}
	}
}

func TestStatesFromMPI(t *testing.T) {
	d, from, err := engine.WithStates(regionStore(t), engine.StatesMPI)
	if err != nil || from != engine.StatesMPI {
		t.Fatalf("WithStates: %v, %q", err, from)
	}
	got := describe(t, d, []trace.Kind{trace.KindState, trace.KindSend})
	want := `0/0 state computation
0/0 send
5/1 state computation
15/1 state MPI
30/0 state MPI
35/1 state ended (absent)
40/0 state computation
70/0 state ended (absent)`
	if got != want {
		t.Errorf("states from MPI calls:\n%s\nwant\n%s", got, want)
	}
}

func TestRunDerivesStates(t *testing.T) {
	s := regionStore(t)
	res, err := engine.Run(context.Background(), s, []engine.Request{
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"state"}}},
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"send"}}, States: engine.StatesRegions},
	})
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Envelopes[0]; e.StatesFrom != engine.StatesRegions || e.Result.(*countResult).Records["state"] != 11 {
		t.Errorf("states analysis: from %q, %v; want regions and 11 state records", e.StatesFrom, e.Result)
	}
	if e := res.Envelopes[1]; e.StatesFrom != "" {
		t.Errorf("an analysis that reads no states says its states came from %q", e.StatesFrom)
	}
	res, err = engine.Run(context.Background(), s, []engine.Request{
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"state"}}, States: engine.StatesMPI},
	})
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Envelopes[0]; e.StatesFrom != engine.StatesMPI || e.Result.(*countResult).Records["state"] != 7 {
		t.Errorf("mpi: from %q, %v; want mpi and 7 state records", e.StatesFrom, e.Result)
	}
	_, err = engine.Run(context.Background(), s, []engine.Request{
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"state"}}, States: engine.StatesMPI},
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"state"}}, States: engine.StatesRegions},
	})
	if err == nil || !strings.Contains(err.Error(), "states from mpi and from regions") {
		t.Errorf("two sources of states in one run: %v", err)
	}
	_, err = engine.Run(context.Background(), s, []engine.Request{
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"state"}}, States: "blocks"},
	})
	if err == nil || !strings.Contains(err.Error(), `states from "blocks": want one of auto, recorded, regions, mpi`) {
		t.Errorf("unknown source: %v", err)
	}
}

func TestStatesRecordedStay(t *testing.T) {
	s, _ := writeStore(t)
	d, from, err := engine.WithStates(s, engine.StatesAuto)
	if err != nil || from != engine.StatesRecorded || d != engine.Source(s) {
		t.Fatalf("a trace with state records: %v, %q, same source %v", err, from, d == engine.Source(s))
	}
	if _, _, err := engine.WithStates(regionStoreless(t), engine.StatesRegions); err == nil || !strings.Contains(err.Error(), "need region records") {
		t.Errorf("regions asked of a trace without any: %v", err)
	}
}

// regionStoreless writes a trace of state records only.
func regionStoreless(t *testing.T) *store.Store {
	t.Helper()
	h := &trace.Header{States: []trace.StateDef{{ID: 0, Name: "a"}}}
	return storetest.New(t, "states.pst", h, []trace.Record{trace.State(0, 0, 0, 0)})
}

func init() {
	engine.Register(&engine.Analysis{Name: "test-recorded", Doc: "counts records as recorded", Recorded: true,
		Feeds:   func(any) []trace.Kind { return []trace.Kind{trace.KindState, trace.KindEnter} },
		Options: func() any { return &struct{}{} },
		New: func(*engine.Trace, any) (engine.Accumulator, error) {
			return &counter{scale: 1, res: countResult{Records: map[string]int64{}}}, nil
		}})
}

// An analysis that reads the trace as recorded is fed its state records,
// never the derived ones, in the pass that derives states for the others.
func TestRecordedBesideDerived(t *testing.T) {
	s, want := writeStore(t)
	res, err := engine.Run(context.Background(), s, []engine.Request{
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"state"}}, States: engine.StatesMPI},
		{Analysis: "test-recorded"},
	})
	if err != nil {
		t.Fatal(err)
	}
	derived, recorded := res.Envelopes[0], res.Envelopes[1]
	if got := recorded.Result.(*countResult).Records; got["state"] != want["state"] || got["enter"] != want["enter"] {
		t.Errorf("the recorded analysis counted %v, want %d states and %d enters", got, want["state"], want["enter"])
	}
	if recorded.StatesFrom != "" || derived.StatesFrom != engine.StatesMPI {
		t.Errorf("states from %q and %q, want mpi and none", derived.StatesFrom, recorded.StatesFrom)
	}
	// Every derived state changes its process's state: at most one per
	// region record and two per process, and some.
	n := derived.Result.(*countResult).Records["state"]
	if n == 0 || n == want["state"] || n > want["enter"]+want["exit"]+2*8 {
		t.Errorf("%d derived states (recorded %d, %d region records)", n, want["state"], want["enter"]+want["exit"])
	}
}

func TestCheck(t *testing.T) {
	s := regionStore(t)
	tr := engine.TraceOf(s)
	states := &countOptions{Scale: 1, Kinds: []string{"state"}}
	if err := engine.Check(tr, engine.Request{Analysis: "test-count", Options: states}); err != nil {
		t.Errorf("states derived from the regions: %v", err)
	}
	var miss *engine.MissingError
	if err := engine.Check(tr, engine.Request{Analysis: "test-count", Options: states, States: engine.StatesRecorded}); !errors.As(err, &miss) {
		t.Errorf("recorded states of a trace of regions: %v, want a MissingError", err)
	}
	if err := engine.Check(tr, engine.Request{Analysis: "no-such"}); err == nil || !strings.Contains(err.Error(), `unknown analysis "no-such"`) {
		t.Errorf("unknown analysis: %v", err)
	}
}

// part is one process of a store, as a distributed pipeline's shard
// reads it.
type part struct {
	*store.Store
	proc int32
}

func (p part) Records(o store.ReadOptions) trace.Reader {
	o.Procs = []int32{p.proc}
	return p.Store.Records(o)
}
func (p part) ProcSpans() []store.ProcSpan {
	var out []store.ProcSpan
	for _, sp := range p.Store.ProcSpans() {
		if sp.Proc == p.proc {
			out = append(out, sp)
		}
	}
	return out
}
func (p part) Whole() engine.Source { return p.Store }

// A part's states are those of its process in the whole trace, numbered
// by the whole trace's dictionary.
func TestStatesOfAPart(t *testing.T) {
	s := regionStore(t)
	d, _, err := engine.WithStates(part{s, 1}, engine.StatesRegions)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.Manifest().Header.States); n != 5 {
		t.Errorf("the part's dictionary has %d states, want the whole trace's 5", n)
	}
	got := describe(t, d, []trace.Kind{trace.KindState})
	if want := "5/1 state main\n15/1 state MPI_Send\n35/1 state ended (absent)"; got != want {
		t.Errorf("states of process 1:\n%s\nwant\n%s", got, want)
	}
}

// TestResolveOf: "" is regions on a trace with region entries and states
// on one without; an explicit choice stays; anything else is refused.
func TestResolveOf(t *testing.T) {
	withRegions := &engine.Trace{Stats: &store.Stats{Records: map[string]int64{trace.KindEnter.String(): 3, trace.KindState.String(): 5}}}
	statesOnly := &engine.Trace{Stats: &store.Stats{Records: map[string]int64{trace.KindState.String(): 5}}}
	for _, c := range []struct {
		t        *engine.Trace
		of, want string
	}{
		{withRegions, "", "regions"}, {statesOnly, "", "states"},
		{withRegions, "states", "states"}, {statesOnly, "regions", "regions"},
	} {
		if got, err := engine.ResolveOf(c.t, c.of); err != nil || got != c.want {
			t.Errorf("ResolveOf(%q) = %q, %v; want %q", c.of, got, err, c.want)
		}
	}
	if _, err := engine.ResolveOf(statesOnly, "calls"); err == nil || !strings.Contains(err.Error(), `of "calls": want regions or states`) {
		t.Errorf("ResolveOf(calls): %v", err)
	}
}
