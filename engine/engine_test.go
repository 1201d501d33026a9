package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// countOptions are the options of the test analysis "test-count".
type countOptions struct {
	Scale int64    `json:"scale" flag:"scale" help:"multiply every count by this"`
	Label string   `json:"label" flag:"label" help:"a label"`
	Kinds []string `json:"kinds" flag:"kinds" help:"kinds counted"`
	Fast  bool     `json:"fast" flag:"fast" help:"a switch"`
	Ratio float64  `json:"ratio" flag:"ratio" help:"a ratio"`
}

// countResult is what "test-count" returns.
type countResult struct {
	Records map[string]int64 `json:"records"`
	Runs    []int32          `json:"runs"`
}

// counter counts records per kind and remembers the runs it saw.
type counter struct {
	scale int64
	res   countResult
}

func (c *counter) Add(batch []trace.Record) error {
	for i := range batch {
		c.res.Records[batch[i].Kind.String()] += c.scale
		if n := len(c.res.Runs); n == 0 || c.res.Runs[n-1] != batch[i].Run {
			c.res.Runs = append(c.res.Runs, batch[i].Run)
		}
	}
	return nil
}

func (c *counter) Merge(o engine.Accumulator) error {
	b := o.(*counter)
	for k, v := range b.res.Records {
		c.res.Records[k] += v
	}
	c.res.Runs = append(c.res.Runs, b.res.Runs...)
	return nil
}

func (c *counter) Result() (any, error) { return &c.res, nil }

// twice counts the state records in two passes, the second needing the
// first's total (as a ranking needs the totals of a first pass).
type twice struct {
	pass        int
	first, also int64
}

func (w *twice) Add(batch []trace.Record) error {
	if w.pass == 0 {
		w.first += int64(len(batch))
	} else {
		w.also += int64(len(batch))
	}
	return nil
}
func (w *twice) Merge(engine.Accumulator) error { return errors.New("not mergeable") }
func (w *twice) Again() (bool, error)           { w.pass++; return w.pass == 1, nil }
func (w *twice) Result() (any, error) {
	if w.first != w.also {
		return nil, errors.New("the passes disagree")
	}
	return map[string]int64{"states": w.first, "passes": int64(w.pass)}, nil
}

// failing fails on its first batch, with err or "broken record".
type failing struct {
	counter
	err error
}

func (f *failing) Add([]trace.Record) error {
	if f.err != nil {
		return f.err
	}
	return errors.New("broken record")
}

// errNamed is the error of test-named, which names its analysis itself.
var errNamed = fmt.Errorf("test-named: run 0 process 3: %w", errors.New("test-named: K = 0: need a positive constant"))

func init() {
	engine.Register(&engine.Analysis{Name: "test-count", Doc: "counts records",
		Needs: []trace.Kind{trace.KindState},
		Feeds: func(o any) []trace.Kind {
			var ks []trace.Kind
			for _, name := range o.(*countOptions).Kinds {
				for _, k := range trace.Kinds {
					if k.String() == name {
						ks = append(ks, k)
					}
				}
			}
			return ks
		},
		Options: func() any { return &countOptions{Scale: 1, Kinds: []string{"state", "send"}, Ratio: 0.5} },
		New: func(t *engine.Trace, o any) (engine.Accumulator, error) {
			return &counter{scale: o.(*countOptions).Scale, res: countResult{Records: map[string]int64{}}}, nil
		},
	})
	engine.Register(&engine.Analysis{Name: "test-twice", Doc: "two passes", Needs: []trace.Kind{trace.KindState},
		Options: func() any { return &struct{}{} },
		New:     func(*engine.Trace, any) (engine.Accumulator, error) { return &twice{}, nil }})
	engine.Register(&engine.Analysis{Name: "test-bbv", Doc: "needs basic block vectors", Needs: []trace.Kind{trace.KindBBV},
		Options: func() any { return &struct{}{} },
		New: func(*engine.Trace, any) (engine.Accumulator, error) {
			return &counter{scale: 1, res: countResult{Records: map[string]int64{}}}, nil
		}})
	engine.Register(&engine.Analysis{Name: "test-fail", Doc: "fails", Needs: []trace.Kind{trace.KindState},
		Options: func() any { return &struct{}{} },
		New:     func(*engine.Trace, any) (engine.Accumulator, error) { return &failing{}, nil }})
	engine.Register(&engine.Analysis{Name: "test-named", Doc: "fails naming itself", Needs: []trace.Kind{trace.KindState},
		Options: func() any { return &struct{}{} },
		New:     func(*engine.Trace, any) (engine.Accumulator, error) { return &failing{err: errNamed}, nil }})
	engine.Register(&engine.Analysis{Name: "test-small", Doc: "at most Max processes per run", Needs: []trace.Kind{trace.KindState},
		Options: func() any { return &smallOptions{Max: 3} },
		Limit: func(t *engine.Trace, req engine.Request, o any) error {
			if run, n := t.LargestRun(req.Runs); n > o.(*smallOptions).Max {
				return fmt.Errorf("run %d has %d processes, more than %d", run, n, o.(*smallOptions).Max)
			}
			return nil
		},
		New: func(*engine.Trace, any) (engine.Accumulator, error) {
			return &counter{scale: 1, res: countResult{Records: map[string]int64{}}}, nil
		}})
}

// smallOptions are the options of "test-small", which refuses runs of
// more than Max processes.
type smallOptions struct {
	Max int `json:"max"`
}

// countingSource counts the readers opened on a store.
type countingSource struct {
	*store.Store
	reads int
}

func (c *countingSource) Records(o store.ReadOptions) trace.Reader {
	c.reads++
	return c.Store.Records(o)
}

// writeStore writes two runs of generated records (states, regions,
// messages, events and counters) to a store.
func writeStore(t *testing.T) (*store.Store, map[string]int64) {
	t.Helper()
	h := &trace.Header{}
	for id := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: id, Name: "s" + string(rune('a'+id))})
	}
	want := map[string]int64{}
	var all []trace.Record
	for run := range int32(2) {
		recs, err := trace.ReadAll(&tracetest.Stream{Procs: 4, Limit: 30_000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			r.Run = run
			all = append(all, r)
			want[r.Kind.String()]++
		}
	}
	return storetest.New(t, "gen.pst", h, all), want
}

func TestRunReadsOnce(t *testing.T) {
	s, want := writeStore(t)
	src := &countingSource{Store: s}
	reqs := []engine.Request{
		{Analysis: "test-count"},
		{Analysis: "test-count", Options: &countOptions{Scale: 2, Kinds: []string{"event", "counter", "state"}}},
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"send", "recv", "enter", "exit"}}, Runs: []int32{1}},
	}
	res, err := engine.Run(context.Background(), src, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if src.reads != 1 || res.Passes != 1 {
		t.Fatalf("%d readers opened, %d passes for three analyses: want one of each", src.reads, res.Passes)
	}
	if len(res.Envelopes) != 3 {
		t.Fatalf("%d results", len(res.Envelopes))
	}
	got := func(i int) *countResult { return res.Envelopes[i].Result.(*countResult) }
	check := func(i int, kind string, n int64) {
		t.Helper()
		if g := got(i).Records[kind]; g != n {
			t.Errorf("request %d: %d %s records, want %d", i, g, kind, n)
		}
	}
	check(0, "state", want["state"])
	check(0, "send", want["send"])
	check(0, "event", 0)
	check(1, "event", 2*want["event"])
	check(1, "counter", 2*want["counter"])
	check(1, "state", 2*want["state"])
	check(1, "send", 0)
	check(2, "send", want["send"]/2)
	check(2, "exit", want["exit"]/2)
	check(2, "state", 0)
	if r := got(2).Runs; len(r) != 1 || r[0] != 1 {
		t.Errorf("request 2 of run 1 saw runs %v", r)
	}
	if r := got(0).Runs; len(r) != 2 {
		t.Errorf("request 0 saw runs %v, want 0 and 1", r)
	}
	// The envelope: schema version, names, options with their defaults.
	data, err := json.Marshal(res.Envelopes[0])
	if err != nil {
		t.Fatal(err)
	}
	const head = `{"schema_version":1,"analysis":"test-count","trace":"gen.pst","states_from":"recorded","options":{"scale":1,"label":"","kinds":["state","send"],"fast":false,"ratio":0.5},"result":{"records":{`
	if !strings.HasPrefix(string(data), head) {
		t.Errorf("envelope %s\nwant it to begin %s", data, head)
	}
	if data, _ := json.Marshal(res.Envelopes[2]); !strings.Contains(string(data), `"runs":[1],`) {
		t.Errorf("envelope of run 1 does not name it: %s", data)
	}
}

func TestRunSecondPass(t *testing.T) {
	s, want := writeStore(t)
	src := &countingSource{Store: s}
	res, err := engine.Run(context.Background(), src, []engine.Request{{Analysis: "test-twice"}, {Analysis: "test-count"}})
	if err != nil {
		t.Fatal(err)
	}
	if src.reads != 2 || res.Passes != 2 {
		t.Fatalf("%d readers, %d passes, want 2 and 2", src.reads, res.Passes)
	}
	if g := res.Get("test-twice").Result.(map[string]int64); g["states"] != want["state"] || g["passes"] != 2 {
		t.Errorf("two passes: %v, want %d states", g, want["state"])
	}
	// The analysis of one pass was fed once, not again in the second.
	if g := res.Get("test-count").Result.(*countResult).Records["state"]; g != want["state"] {
		t.Errorf("one-pass analysis counted %d states, want %d", g, want["state"])
	}
}

func TestRunErrors(t *testing.T) {
	s, _ := writeStore(t)
	ctx := context.Background()
	_, err := engine.Run(ctx, s, []engine.Request{{Analysis: "test-count"}, {Analysis: "test-bbv"}})
	var miss *engine.MissingError
	if !errors.As(err, &miss) || err.Error() != "gen.pst: test-bbv needs bbv records, and the trace has none" {
		t.Errorf("missing kinds: %v", err)
	}
	if _, err := engine.Run(ctx, s, []engine.Request{{Analysis: "nope"}}); err == nil || !strings.Contains(err.Error(), `unknown analysis "nope"`) {
		t.Errorf("unknown analysis: %v", err)
	}
	if _, err := engine.Run(ctx, s, []engine.Request{{Analysis: "test-count", Options: &struct{}{}}}); err == nil || !strings.Contains(err.Error(), "options of type") {
		t.Errorf("options of the wrong type: %v", err)
	}
	for _, reqs := range [][]engine.Request{{{Analysis: "test-fail"}}, {{Analysis: "test-count"}, {Analysis: "test-fail"}}} {
		if _, err := engine.Run(ctx, s, reqs); err == nil || err.Error() != "gen.pst: test-fail: broken record" {
			t.Errorf("%d analyses, one failing: %v", len(reqs), err)
		}
	}
	// An error that already names its analysis names it once.
	if _, err := engine.Run(ctx, s, []engine.Request{{Analysis: "test-named"}}); !errors.Is(err, errNamed) ||
		err.Error() != "gen.pst: test-named: run 0 process 3: K = 0: need a positive constant" {
		t.Errorf("error naming its analysis: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := engine.Run(cctx, s, []engine.Request{{Analysis: "test-count"}, {Analysis: "test-twice"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRunLimit checks that an analysis' Limit refuses a trace larger than
// it handles with a *LimitError, before reading a record, for the runs
// selected and the options given, and that Check does too.
func TestRunLimit(t *testing.T) {
	h := &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 2}, {ID: 1, Procs: 5}}}
	s := storetest.New(t, "two.pst", h, []trace.Record{trace.State(0, 0, 0, 1), trace.State(1, 4, 0, 1)})
	src := &countingSource{Store: s}
	_, err := engine.Run(context.Background(), src, []engine.Request{{Analysis: "test-count"}, {Analysis: "test-small"}})
	var lim *engine.LimitError
	if !errors.As(err, &lim) || lim.Trace != "two.pst" || lim.Analysis != "test-small" || lim.Reason() != "run 1 has 5 processes, more than 3" ||
		err.Error() != "two.pst: test-small cannot analyse this trace: run 1 has 5 processes, more than 3" {
		t.Errorf("a run too large: %v", err)
	}
	if src.reads != 0 {
		t.Errorf("the refused request read the records %d times", src.reads)
	}
	if err := engine.Check(engine.TraceOf(s), engine.Request{Analysis: "test-small"}); !errors.As(err, &lim) {
		t.Errorf("Check: %v", err)
	}
	// Within the limits: the small run alone, or a larger bound.
	for _, c := range []struct {
		req    engine.Request
		states int64
	}{{engine.Request{Analysis: "test-small", Runs: []int32{0}}, 1}, {engine.Request{Analysis: "test-small", Options: &smallOptions{Max: 5}}, 2}} {
		res, err := engine.Run(context.Background(), s, []engine.Request{c.req})
		if err != nil {
			t.Fatalf("%+v: %v", c.req, err)
		}
		if got := res.Envelopes[0].Result.(*countResult).Records["state"]; got != c.states {
			t.Errorf("%+v: %d state records, want %d", c.req, got, c.states)
		}
	}
	tr := engine.TraceOf(s)
	if run, n := tr.LargestRun(nil); run != 1 || n != 5 {
		t.Errorf("LargestRun(nil) = %d, %d; want 1, 5", run, n)
	}
	if run, n := tr.LargestRun([]int32{0, 7}); run != 0 || n != 2 {
		t.Errorf("LargestRun(0, 7) = %d, %d; want 0, 2", run, n)
	}
}

func TestRegistry(t *testing.T) {
	a, ok := engine.Lookup("test-count")
	if !ok || a.Doc != "counts records" {
		t.Fatalf("lookup: %v %v", a, ok)
	}
	var names []string
	for _, a := range engine.All() {
		names = append(names, a.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "test-bbv,test-count,test-fail,test-named,test-recorded,test-small,test-twice") {
		t.Errorf("All: %v, want them by name", names)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	engine.Register(&engine.Analysis{Name: "test-count", Options: a.Options, New: a.New})
}

func TestBindFlags(t *testing.T) {
	a, _ := engine.Lookup("test-count")
	opts := a.Options().(*countOptions)
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	if err := engine.BindFlags(fs, opts); err != nil {
		t.Fatal(err)
	}
	if f := fs.Lookup("ratio"); f == nil || f.DefValue != "0.5" || f.Usage != "a ratio" {
		t.Fatalf("flag ratio: %+v", f)
	}
	if err := fs.Parse([]string{"--scale", "3", "--label", "x y", "--kinds", "event,counter", "--fast"}); err != nil {
		t.Fatal(err)
	}
	want := countOptions{Scale: 3, Label: "x y", Kinds: []string{"event", "counter"}, Fast: true, Ratio: 0.5}
	if opts.Scale != want.Scale || opts.Label != want.Label || strings.Join(opts.Kinds, ",") != "event,counter" || !opts.Fast || opts.Ratio != 0.5 {
		t.Errorf("parsed %+v, want %+v", *opts, want)
	}
	if err := engine.BindFlags(fs, countOptions{}); err == nil {
		t.Error("binding a struct value, not a pointer: no error")
	}
	bad := &struct {
		C complex128 `flag:"c"`
	}{}
	if err := engine.BindFlags(pflag.NewFlagSet("y", pflag.ContinueOnError), bad); err == nil {
		t.Error("a complex flag: no error")
	}
	// An embedded struct's fields are flags too; lists of ids take ranges,
	// durations a bare number of nanoseconds.
	type Inner struct {
		Procs []int32 `flag:"procs"`
	}
	more := &struct {
		Inner
		Window time.Duration `flag:"window-ns"`
	}{Inner: Inner{Procs: []int32{1}}, Window: time.Second}
	fs = pflag.NewFlagSet("z", pflag.ContinueOnError)
	if err := engine.BindFlags(fs, more); err != nil {
		t.Fatal(err)
	}
	if f := fs.Lookup("procs"); f == nil || f.DefValue != "1" || fs.Lookup("window-ns").DefValue != "1s" {
		t.Fatalf("defaults: %+v", f)
	}
	if err := fs.Parse([]string{"--procs", "4,6-8", "--window-ns", "2500"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(more.Procs, []int32{4, 6, 7, 8}) || more.Window != 2500 {
		t.Errorf("parsed %v and %v", more.Procs, more.Window)
	}
	if err := fs.Parse([]string{"--window-ns", "1.5ms"}); err != nil || more.Window != 1500*time.Microsecond {
		t.Errorf("1.5ms: %v, %v", more.Window, err)
	}
	for _, bad := range [][]string{{"--procs", "3-1"}, {"--procs", "-2"}, {"--window-ns", "soon"}} {
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestRunBBVBatches checks that the batches of the BBV table go to the
// analyses fed BBV records only, whole when they take every run and
// filtered by run otherwise, in the same pass as the timed records.
func TestRunBBVBatches(t *testing.T) {
	var recs []trace.Record
	for run := range int32(2) {
		for seq := range int32(5000) {
			recs = append(recs, trace.Record{Kind: trace.KindState, Run: run, T: int64(seq)},
				trace.Record{Kind: trace.KindBBV, Run: run, Seq: seq, ID: 1, Value: 2})
		}
	}
	s := storetest.New(t, "bbv.pst", &trace.Header{States: []trace.StateDef{{ID: 0, Name: "a"}}}, recs)
	res, err := engine.Run(context.Background(), s, []engine.Request{
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: []string{"state"}}},
		{Analysis: "test-bbv"},
		{Analysis: "test-bbv", Runs: []int32{1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []map[string]int64{{"state": 10000}, {"bbv": 10000}, {"bbv": 5000}} {
		got := res.Envelopes[i].Result.(*countResult).Records
		if len(got) != len(want) || got["state"] != want["state"] || got["bbv"] != want["bbv"] {
			t.Errorf("request %d: %v, want %v", i, got, want)
		}
	}
	if runs := res.Envelopes[2].Result.(*countResult).Runs; len(runs) != 1 || runs[0] != 1 {
		t.Errorf("runs 1 fed runs %v", runs)
	}
}

// stagedCount is a staged accumulator: it counts the records its stage
// hands it, and, with passes > 1, asks for more passes.
type stagedCount struct {
	key     string
	passes  int
	pass    int
	n       []int64
	stages  *int
	readers *[]int
}

func (s *stagedCount) Add([]trace.Record) error       { return errors.New("fed the records, not the stage") }
func (s *stagedCount) Merge(engine.Accumulator) error { return errors.New("not mergeable") }
func (s *stagedCount) StageKey() string               { return s.key }
func (s *stagedCount) Again() (bool, error) {
	s.pass++
	return s.pass < s.passes, nil
}
func (s *stagedCount) Result() (any, error) { return s.n, nil }
func (s *stagedCount) NewStage(accs []engine.Accumulator) (engine.Stage, error) {
	*s.stages++
	*s.readers = append(*s.readers, len(accs))
	st := &countStage{}
	for _, a := range accs {
		st.accs = append(st.accs, a.(*stagedCount))
	}
	return st, nil
}

// countStage adds the size of each batch to the count of the pass of every
// reader, and ends the pass with a -1.
type countStage struct{ accs []*stagedCount }

func (c *countStage) Add(batch []trace.Record) error {
	for _, a := range c.accs {
		if len(a.n) == 0 || a.n[len(a.n)-1] < 0 {
			a.n = append(a.n, 0)
		}
		a.n[len(a.n)-1] += int64(len(batch))
	}
	return nil
}

func (c *countStage) End() error {
	for _, a := range c.accs {
		a.n = append(a.n, -1)
	}
	return nil
}

// TestStages checks that the staged accumulators of equal key, runs and
// kinds share one stage per pass, fed every batch once and ended after the
// pass, that other keys or runs get stages of their own, and that an
// accumulator asking for another pass gets a stage of its own in it.
func TestStages(t *testing.T) {
	s, want := writeStore(t)
	var stages int
	var readers []int
	engine.Register(&engine.Analysis{Name: "test-staged", Doc: "staged", Needs: []trace.Kind{trace.KindState},
		Options: func() any { return &countOptions{} },
		New: func(_ *engine.Trace, o any) (engine.Accumulator, error) {
			p := o.(*countOptions)
			return &stagedCount{key: p.Label, passes: int(p.Scale), stages: &stages, readers: &readers}, nil
		}})
	src := &countingSource{Store: s}
	res, err := engine.Run(context.Background(), src, []engine.Request{
		{Analysis: "test-staged", Options: &countOptions{Label: "a", Scale: 1}},
		{Analysis: "test-staged", Options: &countOptions{Label: "a", Scale: 2}},
		{Analysis: "test-staged", Options: &countOptions{Label: "b", Scale: 1}},
		{Analysis: "test-staged", Options: &countOptions{Label: "a", Scale: 1}, Runs: []int32{1}},
		{Analysis: "test-count"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Pass 1: stages a (two readers), b, a of run 1; pass 2: a (one reader).
	if res.Passes != 2 || src.reads != 2 || stages != 4 || !slices.Equal(readers, []int{2, 1, 1, 1}) && !slices.Equal(readers, []int{1, 2, 1, 1}) && !slices.Equal(readers, []int{1, 1, 2, 1}) {
		t.Fatalf("%d passes, %d reads, %d stages of %v readers", res.Passes, src.reads, stages, readers)
	}
	n := want["state"]
	for i, w := range [][]int64{{n, -1}, {n, -1, n, -1}, {n, -1}, {n / 2, -1}} {
		if got := res.Envelopes[i].Result.([]int64); !slices.Equal(got, w) {
			t.Errorf("request %d: %v, want %v", i, got, w)
		}
	}
}

// TestRunSelectsProcesses checks that a request's Procs and ExcludeProcs
// keep the other processes' records from its analysis, in the same pass as
// a request without a selection, and that the envelope names them.
func TestRunSelectsProcesses(t *testing.T) {
	s, _ := writeStore(t)
	all, err := trace.ReadAll(s.Records(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	states := map[int32]int64{}
	var total int64
	for _, r := range all {
		if r.Kind == trace.KindState {
			states[r.Proc]++
			total++
		}
	}
	if len(states) < 3 || states[0] == 0 || states[1] == 0 {
		t.Fatalf("the generated trace has states on %d processes", len(states))
	}
	src := &countingSource{Store: s}
	res, err := engine.Run(context.Background(), src, []engine.Request{
		{Analysis: "test-count"},
		{Analysis: "test-count", ExcludeProcs: []int32{0}},
		{Analysis: "test-count", Procs: []int32{0, 1}},
		{Analysis: "test-count", Procs: []int32{0, 1}, ExcludeProcs: []int32{1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if src.reads != 1 {
		t.Errorf("%d reads for four selections, want one", src.reads)
	}
	for i, want := range []int64{total, total - states[0], states[0] + states[1], states[0]} {
		if got := res.Envelopes[i].Result.(*countResult).Records["state"]; got != want {
			t.Errorf("request %d: %d state records, want %d", i, got, want)
		}
	}
	data, _ := json.Marshal(res.Envelopes[3])
	if !strings.Contains(string(data), `"procs":[0,1],"exclude_procs":[1],`) {
		t.Errorf("envelope does not name the selection: %s", data)
	}
	if data, _ := json.Marshal(res.Envelopes[0]); strings.Contains(string(data), "procs") {
		t.Errorf("envelope without a selection names one: %s", data)
	}
}

// TestRunSharedFilter: requests that take the same records of each batch
// (the same kinds, runs and processes) are fed one filtered copy between
// them; each must still see exactly its records, beside requests that
// filter otherwise and one that takes everything.
func TestRunSharedFilter(t *testing.T) {
	s, want := writeStore(t)
	all, err := trace.ReadAll(s.Records(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var states01 int64
	for _, r := range all {
		if r.Kind == trace.KindState && (r.Proc == 0 || r.Proc == 1) {
			states01++
		}
	}
	mpi := []string{"send", "recv", "enter", "exit"}
	src := &countingSource{Store: s}
	res, err := engine.Run(context.Background(), src, []engine.Request{
		{Analysis: "test-count", Options: &countOptions{Scale: 1, Kinds: mpi}, Runs: []int32{1}},
		{Analysis: "test-count"},
		{Analysis: "test-count", Options: &countOptions{Scale: 3, Kinds: mpi}, Runs: []int32{1}},
		{Analysis: "test-count", Procs: []int32{0, 1}},
		{Analysis: "test-count", Options: &countOptions{Scale: 2, Kinds: mpi}, Runs: []int32{1}},
		{Analysis: "test-count", Procs: []int32{0, 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if src.reads != 1 {
		t.Fatalf("%d reads, want one", src.reads)
	}
	got := func(i int, kind string) int64 { return res.Envelopes[i].Result.(*countResult).Records[kind] }
	for i, scale := range map[int]int64{0: 1, 2: 3, 4: 2} {
		for _, k := range mpi {
			if g, w := got(i, k), scale*want[k]/2; g != w {
				t.Errorf("request %d: %d %s records, want %d", i, g, k, w)
			}
		}
		if g := got(i, "state"); g != 0 {
			t.Errorf("request %d: %d state records, want none", i, g)
		}
	}
	if g := got(1, "state"); g != want["state"] {
		t.Errorf("request 1: %d state records, want %d", g, want["state"])
	}
	for _, i := range []int{3, 5} {
		if g := got(i, "state"); g != states01 {
			t.Errorf("request %d: %d state records of processes 0 and 1, want %d", i, g, states01)
		}
	}
}
