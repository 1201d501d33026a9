// Package tracecheck reads the traces the example workloads write and
// checks them in their tests, and checks that the probe workers restore
// in place (RestoreInPlace).
package tracecheck

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/instrument"
	_ "github.com/parscope/parscope/instrument/pst" // Close builds the .pst (see package pst)
	"github.com/parscope/parscope/probe"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// Trace is a whole small trace: its header, its time-merged records, and
// each process's records.
type Trace struct {
	Header *trace.Header
	Merged []trace.Record
	Procs  map[int32][]trace.Record
}

// Load reads the .pst at path.
func Load(t testing.TB, path string) *Trace {
	t.Helper()
	h, recs, _ := storetest.Read(t, path)
	tr := &Trace{Header: h, Merged: recs, Procs: map[int32][]trace.Record{}}
	for _, r := range recs {
		tr.Procs[r.Proc] = append(tr.Procs[r.Proc], r)
	}
	return tr
}

// Blocks returns each process's sequence of state (block) ids.
func (tr *Trace) Blocks() map[int32][]int32 {
	out := map[int32][]int32{}
	for p, rs := range tr.Procs {
		for _, r := range rs {
			if r.Kind == trace.KindState {
				out[p] = append(out[p], r.ID)
			}
		}
	}
	return out
}

// CheckMessages fails t unless every send of the merged stream has its
// receive and every receive its send (trace.Matcher), and returns the
// number of matched pairs.
func (tr *Trace) CheckMessages(t testing.TB) int {
	t.Helper()
	var m trace.Matcher
	n := 0
	m.OnMatch = func(s, r *trace.Record) {
		n++
		if s.Value != r.Value {
			t.Errorf("message %v / %v: sizes differ", s, r)
		}
	}
	for i := range tr.Merged {
		m.Add(&tr.Merged[i])
	}
	sends, recvs := m.Unmatched()
	if len(sends) > 0 || len(recvs) > 0 {
		t.Errorf("%d sends and %d receives unmatched (first: %v %v)", len(sends), len(recvs), first(sends), first(recvs))
	}
	return n
}

func first(rs []trace.Record) any {
	if len(rs) == 0 {
		return nil
	}
	return rs[0]
}

// Record runs a workload recording into a new .pst with the given state
// dictionary and loads the trace it wrote.
func Record(t testing.TB, states []trace.StateDef, run func(*instrument.Recorder) error) *Trace {
	t.Helper()
	return RecordOptions(t, instrument.Options{States: states}, run)
}

// RecordOptions is Record with every recording option (dictionaries of
// regions, filters, ...); Path is set to a new .pst in a temporary directory.
func RecordOptions(t testing.TB, opts instrument.Options, run func(*instrument.Recorder) error) *Trace {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.pst")
	opts.Path = path
	rec, err := instrument.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(rec); err != nil {
		rec.Abort()
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return Load(t, path)
}

// RecordRun records run(rec, cfg), a workload's Run, with opts (see
// RecordOptions) and returns the trace it wrote and what run returned.
func RecordRun[C, R any](t testing.TB, opts instrument.Options, run func(*instrument.Recorder, C) (R, error), cfg C) (*Trace, R) {
	t.Helper()
	var res R
	tr := RecordOptions(t, opts, func(rec *instrument.Recorder) (err error) {
		res, err = run(rec, cfg)
		return err
	})
	return tr, res
}

// RestoreInPlace fails t unless a probe worker's Restore decodes into the
// task's own arrays, without allocating new ones, and continues from the
// saved state (probe.RestoreAllocs, snapshotting after steps steps of a
// task newTask makes).
func RestoreInPlace(t testing.TB, newTask func() probe.Task, steps int) {
	t.Helper()
	allocs, err := probe.RestoreAllocs(newTask, steps)
	if err != nil {
		t.Fatal(err)
	}
	// At most the struct header Restore decodes into, which escapes
	// through DecodeState's interface; an array would be one more each.
	if allocs > 1 {
		t.Errorf("Restore: %v allocations, want at most 1", allocs)
	}
}

// Slowdown benchmarks a workload recorded and not recorded (a nil
// recorder); Start and Close stay outside the timing.
func Slowdown(b *testing.B, states []trace.StateDef, run func(*instrument.Recorder) error) {
	for _, recorded := range []bool{false, true} {
		b.Run(fmt.Sprintf("recorded=%v", recorded), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var rec *instrument.Recorder
				if recorded {
					var err error
					rec, err = instrument.Start(instrument.Options{Path: filepath.Join(b.TempDir(), fmt.Sprint(i, ".pst")), States: states})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := run(rec); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				rec.Abort()
				b.StartTimer()
			}
		})
	}
}
