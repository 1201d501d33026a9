package chrome

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/parscope/parscope/trace"
)

// synthetic returns a VizTracer-like trace of n complete events on 16
// threads: calls nested 4 deep, written when they return (callees first),
// with fractional microsecond timestamps, and an instant every 8 calls.
func synthetic(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"traceEvents": [`)
	for i := range 16 {
		fmt.Fprintf(&b, `{"ph": "M", "pid": 100, "tid": %d, "name": "thread_name", "args": {"name": "worker-%d"}},`+"\n", i, i)
	}
	t := make([]float64, 16)
	for i := 0; i < n; i++ {
		tid := i % 16
		depth := i / 16 % 4
		dur := float64(4-depth) * 1.125
		if i%8 == 0 {
			fmt.Fprintf(&b, `{"pid": 100, "tid": %d, "ts": %.3f, "ph": "i", "cat": "instant", "name": "log %d", "s": "p"},`+"\n", tid, t[tid], i%5)
		} else {
			fmt.Fprintf(&b, `{"pid": 100, "tid": %d, "ts": %.3f, "ph": "X", "cat": "FEE", "dur": %.3f, "name": "fn%d (/src/app.py:%d)"},`+"\n", tid, t[tid]+0.001*float64(depth), dur-0.002*float64(depth), depth, 10*depth)
		}
		if depth == 3 {
			t[tid] += 5
		}
	}
	b.WriteString(`{"ph": "M", "pid": 100, "tid": 0, "name": "process_name", "args": {"name": "MainProcess"}}]}`)
	return b.Bytes()
}

// discard counts records and drops them.
type discard struct {
	h trace.Header
	n int64
}

func (d *discard) Header() *trace.Header  { return &d.h }
func (d *discard) Add(trace.Record) error { d.n++; return nil }

// BenchmarkImport measures the import of a VizTracer-like file held in
// memory (JSON scanning, slice nesting, record output) in records/s.
func BenchmarkImport(b *testing.B) {
	data := synthetic(200_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var recs int64
	for b.Loop() {
		d := &discard{}
		if err := ImportReader(context.Background(), "bench.json", bytes.NewReader(data), 0, d); err != nil {
			b.Fatal(err)
		}
		recs += d.n
	}
	b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
}

func TestSynthetic(t *testing.T) {
	d := &discard{}
	if err := ImportReader(context.Background(), "s.json", bytes.NewReader(synthetic(1600)), 0, d); err != nil {
		t.Fatal(err)
	}
	// 1,400 slices (enter and exit each) and 200 instants.
	if d.n != 3000 || len(d.h.Runs) != 1 || d.h.Runs[0].Procs != 16 || len(d.h.Repairs) != 0 {
		t.Errorf("%d records, runs %+v, repairs %v", d.n, d.h.Runs, d.h.Repairs)
	}
}
