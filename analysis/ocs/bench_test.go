package ocs

import (
	"context"
	"flag"
	"testing"
)

var benchIters = flag.Int("ocs-bench-iters", 2605, "iterations of the 4×4×4 halo benchmark trace (384 messages each: 2605 give 1,000,320)")

// BenchmarkSimulate measures the simulation of a trace of about a million
// messages (the MG-like 3D halo on 64 processes, one level): messages
// simulated per second, for a static strategy and the runtime one, and the
// building of the workload from the records (matching included).
func BenchmarkSimulate(b *testing.B) {
	m := halo3D(4, 4, 4, *benchIters, 1)
	w, err := Load(context.Background(), &m.H, m.Reader(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	msgs := float64(w.Messages())
	b.Logf("%d records, %d messages", len(m.Records), w.Messages())
	p := DefaultParams()
	for _, bc := range []struct {
		name   string
		s      Strategy
		planes int
	}{{"best-6planes", Best, 6}, {"runtime-6planes", Runtime, 6}, {"electronic", Best, 0}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := w.Simulate(bc.s, bc.planes, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(msgs*float64(b.N)/b.Elapsed().Seconds(), "messages/s")
		})
	}
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(context.Background(), &m.H, m.Reader(), Options{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(msgs*float64(b.N)/b.Elapsed().Seconds(), "messages/s")
		b.ReportMetric(float64(len(m.Records))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}
