package comm

import (
	"flag"
	"testing"

	"github.com/parscope/parscope/trace"
)

// benchTrace is a halo-exchange-like trace: procs processes, each entering
// a loop and, per iteration, an if in which it sends to its two ring
// neighbours (and receives from them).
func benchTrace(procs, iters int) *trace.Memory {
	m := &trace.Memory{}
	m.H.Runs = []trace.RunInfo{{ID: 0, Procs: int32(procs)}}
	m.H.Regions = []trace.RegionDef{{ID: 0, Kind: trace.RegionLoop, Label: "LOOP", Parent: -1}, {ID: 1, Kind: trace.RegionIf, Label: "IF", Parent: 0}}
	for p := int32(0); p < int32(procs); p++ {
		t := int64(0)
		next := func() int64 { t++; return t }
		m.Records = append(m.Records, trace.Enter(0, p, next(), 0))
		for i := 0; i < iters; i++ {
			m.Records = append(m.Records, trace.Enter(0, p, next(), 1))
			for _, d := range []int32{1, int32(procs) - 1} {
				m.Records = append(m.Records, trace.Send(0, p, next(), t, (p+d)%int32(procs), 4096, int32(d), 0))
			}
			for _, d := range []int32{1, int32(procs) - 1} {
				m.Records = append(m.Records, trace.Recv(0, p, next(), t, (p+int32(procs)-d)%int32(procs), 4096, int32(d), 0))
			}
			m.Records = append(m.Records, trace.Exit(0, p, next(), 1))
		}
		m.Records = append(m.Records, trace.Exit(0, p, next(), 0))
	}
	m.Sort()
	return m
}

// BenchmarkMatrices measures matrices from a trace in messages (sends) per
// second, with and without the receive-side check and working sets.
func BenchmarkMatrices(b *testing.B) {
	m := benchTrace(64, *benchIters)
	sends := 0
	for i := range m.Records {
		if m.Records[i].Kind == trace.KindSend {
			sends++
		}
	}
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"matrices", Options{NoMatch: true}},
		{"matrices+worksets", Options{NoMatch: true, WorkingSets: true}},
		{"matrices+match", Options{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				a, err := New(&m.H, bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				for i := range m.Records {
					if err := a.Add(&m.Records[i]); err != nil {
						b.Fatal(err)
					}
				}
				a.Result()
			}
			b.ReportMetric(float64(sends)*float64(b.N)/b.Elapsed().Seconds(), "messages/s")
			b.ReportMetric(float64(len(m.Records))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

var benchIters = flag.Int("bench-iters", 4000, "iterations per process of the benchmark trace (64 processes, 6 records per iteration)")
