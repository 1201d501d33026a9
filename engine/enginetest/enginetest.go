// Package enginetest runs an analysis of the engine's registry over a
// synthetic trace, for the benchmarks of the analysis packages, as
// net/http/httptest serves handlers for their tests.
package enginetest

import (
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

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
// new accumulator to its result, and reports records per second.
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
		for i := 0; i < len(fed); i += engine.BatchSize {
			if err := acc.Add(fed[i:min(i+engine.BatchSize, len(fed))]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := acc.Result(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
