package phase

import (
	"context"
	"reflect"
	"strings"
	"testing"

	eng "github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/format/bbv"
	"github.com/parscope/parscope/trace"
)

// fileRecords returns the BBV records of f as process proc of run run, in
// file order.
func fileRecords(f *bbv.File, run, proc int32) []trace.Record {
	var recs []trace.Record
	for i, v := range f.Vectors {
		for j, b := range v.Blocks {
			recs = append(recs, trace.BBV(run, proc, int32(i), 0, b, int64(v.Counts[j])))
		}
	}
	return recs
}

// feed adds recs to a in batches of size n.
func feed(t *testing.T, a *Accumulator, recs []trace.Record, n int) {
	t.Helper()
	for len(recs) > 0 {
		m := min(n, len(recs))
		if err := a.Add(recs[:m]); err != nil {
			t.Fatal(err)
		}
		recs = recs[m:]
	}
}

// referencePhases is what the accumulator gave when it kept the records:
// the sorted records made into Files by bbv.FromRecords, then Run.
func referencePhases(t *testing.T, name string, recs []trace.Record, p *Params) *Phases {
	t.Helper()
	opts, err := p.Options()
	if err != nil {
		t.Fatal(err)
	}
	streams, err := bbv.FromRecords(context.Background(), name, trace.NewSliceReader(recs), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := &Phases{}
	for _, s := range streams {
		res, err := Run(context.Background(), s.File, opts)
		if err != nil {
			t.Fatal(err)
		}
		out.Streams = append(out.Streams, StreamPhases{Name: s.File.Name, Run: s.Run, Proc: s.Proc, Result: res})
	}
	return out
}

func newAcc(t *testing.T, p *Params) *Accumulator {
	t.Helper()
	a, err := New(&eng.Trace{Name: "t"}, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAccumulatorEqualsRecords checks that projecting while accumulating
// gives the results of the records made into Files, in both modes and
// without projection, with two streams whose batches interleave, and
// with the records split between accumulators (within an interval and
// between two) that are merged.
func TestAccumulatorEqualsRecords(t *testing.T) {
	a0 := loadBB(t, "bzip2_rt_100M.bb.gz")
	b0 := loadBB(t, "phases.bb.gz")
	ra, rb := fileRecords(a0, 0, 0), fileRecords(b0, 0, 1)
	sorted := append(append([]trace.Record{}, ra...), rb...)
	// Interleave the two streams: batches of 1000 records of each in turn.
	var mixed []trace.Record
	for i, j := 0, 0; i < len(ra) || j < len(rb); i, j = i+1000, j+1000 {
		mixed = append(mixed, ra[min(i, len(ra)):min(i+1000, len(ra))]...)
		mixed = append(mixed, rb[min(j, len(rb)):min(j+1000, len(rb))]...)
	}
	noProj := DefaultParams()
	noProj.Dim, noProj.MaxK = "noProject", 4
	compat := DefaultParams()
	compat.Compat, compat.MaxK = true, 10
	def := DefaultParams()
	def.MaxK, def.VLI = 10, true
	for name, p := range map[string]*Params{"compat": compat, "default": def, "noProject": noProj} {
		want := referencePhases(t, "t", sorted, p)
		recs := mixed
		if p == noProj { // small enough for dense matrices: one stream
			want = referencePhases(t, "t", rb, p)
			recs = rb
		}
		a := newAcc(t, p)
		feed(t, a, recs, eng.BatchSize)
		got, err := a.Result()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the accumulator's phases differ from the records'", name)
		}
		// Split between four accumulators: twice within interval 7's
		// entries (the second holding one record), and at the start of
		// interval 20 (of the mixed order).
		within := 0
		for recs[within].Seq != 7 || recs[within+1].Seq != 7 || recs[within+2].Seq != 7 {
			within++
		}
		between := 0
		for recs[between].Seq != 20 {
			between++
		}
		parts := [][]trace.Record{recs[:within+1], recs[within+1 : within+2], recs[within+2 : between], recs[between:]}
		first := newAcc(t, p)
		feed(t, first, parts[0], 97)
		for _, part := range parts[1:] {
			next := newAcc(t, p)
			feed(t, next, part, 97)
			if err := first.Merge(next); err != nil {
				t.Fatal(err)
			}
		}
		got, err = first.Result()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s, merged: the accumulator's phases differ from the records'", name)
		}
	}
}

// TestAccumulatorErrors checks the errors of records that do not make
// basic block vectors.
func TestAccumulatorErrors(t *testing.T) {
	bbvRec := func(proc, seq, block int32, count int64) trace.Record {
		return trace.BBV(0, proc, seq, 0, block, count)
	}
	for _, tc := range []struct {
		name string
		recs []trace.Record
		want string
	}{
		{"backwards", []trace.Record{bbvRec(0, 0, 1, 1), bbvRec(0, 1, 1, 1), bbvRec(0, 0, 2, 1)},
			"bbv: t: run 0 process 0 interval 0: comes after interval 1 (expected intervals in order)"},
		{"gap", []trace.Record{bbvRec(0, 0, 1, 1), bbvRec(0, 2, 1, 1)},
			"bbv: t: run 0 process 0 interval 2: intervals 1 to 1 have no entries (expected consecutive intervals from 0)"},
		{"late start", []trace.Record{bbvRec(0, 3, 1, 1)},
			"bbv: t: run 0 process 0 interval 3: intervals 0 to 2 have no entries (expected consecutive intervals from 0)"},
		{"duplicate", []trace.Record{bbvRec(0, 0, 1, 1), bbvRec(0, 1, 4, 1), bbvRec(0, 1, 4, 2), bbvRec(0, 2, 1, 1)},
			"bbv: t: run 0 process 0 interval 1: block 4 appears twice"},
		{"duplicate in the last interval", []trace.Record{bbvRec(0, 0, 1, 1), bbvRec(0, 1, 4, 1), bbvRec(0, 1, 4, 2)},
			"bbv: t: run 0 process 0 interval 1: block 4 appears twice"},
		{"negative", []trace.Record{bbvRec(0, 0, 1, -1)},
			"bbv: t: run 0 process 0 interval 0: block 1 has negative count -1"},
		{"bad id", []trace.Record{bbvRec(0, 0, 0, 1)},
			"bbv: t: run 0 process 0 interval 0: block id 0 outside 1..16777216"},
		{"zero sum", []trace.Record{bbvRec(0, 0, 1, 1), bbvRec(0, 1, 1, 0), bbvRec(0, 2, 1, 0), bbvRec(0, 3, 1, 1)},
			"t run 0 proc 0: phase: t run 0 proc 0: interval 1: total count is 0; a vector must have a positive finite total to be normalised"},
		{"zero sum in the first interval", []trace.Record{bbvRec(0, 0, 1, 0), bbvRec(0, 1, 1, 0), bbvRec(0, 2, 1, 1)},
			"t run 0 proc 0: phase: t run 0 proc 0: interval 0: total count is 0; a vector must have a positive finite total to be normalised"},
		{"nothing", []trace.Record{trace.State(0, 0, 5, 1)}, "no basic block vectors of the processes selected"},
	} {
		a := newAcc(t, DefaultParams())
		err := a.Add(tc.recs)
		if err == nil {
			_, err = a.Result()
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
		// The records, sorted, give the same error through FromRecords
		// and Run (the old accumulator), except for the backwards
		// interval, which sorting accepted.
		if tc.name == "backwards" || tc.name == "nothing" {
			continue
		}
		ref := refError(tc.recs)
		if ref == nil || ref.Error() != tc.want {
			t.Errorf("%s: the records' error is %v, want %s", tc.name, ref, tc.want)
		}
	}
}

// refError is the error FromRecords and Run give on recs.
func refError(recs []trace.Record) error {
	streams, err := bbv.FromRecords(context.Background(), "t", trace.NewSliceReader(recs), 0)
	if err != nil {
		return err
	}
	for _, s := range streams {
		if _, err := Run(context.Background(), s.File, DefaultOptions()); err != nil {
			return &prefixed{s.File.Name, err}
		}
	}
	return nil
}

type prefixed struct {
	name string
	err  error
}

func (p *prefixed) Error() string { return strings.Join([]string{p.name, p.err.Error()}, ": ") }
