// Package enginetest runs analyses of the engine's registry for the tests
// of the analysis packages (Run, Result) and over a synthetic trace for
// their benchmarks (Records, Bench), as net/http/httptest serves handlers
// for their tests.
package enginetest

import (
	"context"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// Run runs reqs on src in one pass (engine.Run) and fails the test when
// the run fails.
func Run(tb testing.TB, src engine.Source, reqs ...engine.Request) *engine.Results {
	tb.Helper()
	res, err := engine.Run(context.Background(), src, reqs)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// Result runs req alone on src (Run) and returns its result, failing the
// test when the run fails or the result is not a T.
func Result[T any](tb testing.TB, src engine.Source, req engine.Request) T {
	tb.Helper()
	e := Run(tb, src, req).Get(req.Analysis)
	if e == nil {
		tb.Fatalf("no result of %s", req.Analysis)
	}
	r, ok := e.Result.(T)
	if !ok {
		tb.Fatalf("%s returned a %T, want a %T", req.Analysis, e.Result, r)
	}
	return r
}

// RunAccumulator returns a new accumulator of the analysis name, with
// options opts (nil: the defaults), for t, fed the records of run among
// recs in one batch in their order, for the tests of an accumulator's
// Merge: accumulators of different runs merge into what one pass gives.
func RunAccumulator(tb testing.TB, name string, t *engine.Trace, opts any, recs []trace.Record, run int32) engine.Accumulator {
	tb.Helper()
	a, ok := engine.Lookup(name)
	if !ok {
		tb.Fatalf("no analysis %q", name)
	}
	if opts == nil {
		opts = a.Options()
	}
	acc, err := a.New(t, opts)
	if err != nil {
		tb.Fatal(err)
	}
	var batch []trace.Record
	for _, r := range recs {
		if r.Run == run {
			batch = append(batch, r)
		}
	}
	if err := acc.Add(batch); err != nil {
		tb.Fatal(err)
	}
	return acc
}

// Records returns the first n records of a tracetest.Stream of procs
// processes and the Trace an accumulator is made for: its header (from
// tracetest.Header, with relabel applied to it when not nil) and the
// store's figures of those records.
func Records(tb testing.TB, procs int32, n int, relabel func(*trace.Header)) (*engine.Trace, []trace.Record) {
	tb.Helper()
	recs, err := trace.ReadAll(&tracetest.Stream{Procs: procs, Limit: n})
	if err != nil {
		tb.Fatal(err)
	}
	h := tracetest.Header(procs)
	if relabel != nil {
		relabel(h)
	}
	st := &store.Stats{Records: map[string]int64{}, Runs: []store.RunStats{{Run: 0, Procs: procs, Records: int64(len(recs)), TMin: recs[0].T}}}
	for _, r := range recs {
		st.Records[r.Kind.String()]++
		st.Runs[0].TMax = max(st.Runs[0].TMax, r.EndTime())
	}
	return &engine.Trace{Name: "tracetest", Header: h, Stats: st}, recs
}

// Bench times the analysis name with options opts (nil: the defaults)
// over recs, fed in batches of engine.BatchSize as Run feeds it, from a
// new accumulator to its result (in as many passes as it asks for, as an
// engine.Repeater), and reports records of the trace per second.
func Bench(b *testing.B, name string, opts any, t *engine.Trace, recs []trace.Record) {
	a, ok := engine.Lookup(name)
	if !ok {
		b.Fatalf("no analysis %q", name)
	}
	if opts == nil {
		opts = a.Options()
	}
	kinds := map[trace.Kind]bool{}
	for _, k := range a.Kinds(opts) {
		kinds[k] = true
	}
	var fed []trace.Record
	for _, r := range recs {
		if kinds[r.Kind] {
			fed = append(fed, r)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		acc, err := a.New(t, opts)
		if err != nil {
			b.Fatal(err)
		}
		for again := true; again; {
			for i := 0; i < len(fed); i += engine.BatchSize {
				if err := acc.Add(fed[i:min(i+engine.BatchSize, len(fed))]); err != nil {
					b.Fatal(err)
				}
			}
			again = false
			if r, ok := acc.(engine.Repeater); ok {
				if again, err = r.Again(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := acc.Result(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
