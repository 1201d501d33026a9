package web

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

var overviewRecords = flag.Int("overview-records", 2_000_000, "records of the generated trace of BenchmarkOverview")

// generatedTrace writes a tracetest stream of n records over 16 processes
// (states, regions, messages, events, counters) into a .pst.
func generatedTrace(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "gen.pst")
	w, err := store.Create(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	h := w.Header()
	h.Meta.ClockResolution = 1
	h.EnsureRun(0, 16)
	for i := int32(0); i < 5; i++ {
		h.States = append(h.States, trace.StateDef{ID: i, Name: fmt.Sprintf("state %d", i)})
	}
	for i := int32(0); i < 3; i++ {
		h.Regions = append(h.Regions, trace.RegionDef{ID: i, Kind: trace.RegionLoop, Label: fmt.Sprintf("loop %d", i), File: "gen.c", Line: 10 * i, Parent: -1})
	}
	h.Events = []trace.EventDef{{ID: 1, Name: "tick"}}
	h.Counters = []trace.CounterDef{{ID: 0, Name: "work"}}
	src := &tracetest.Stream{Procs: 16, Limit: n}
	buf := make([]trace.Record, 4096)
	for {
		k, err := src.Read(buf)
		for _, r := range buf[:k] {
			if err := w.Add(r); err != nil {
				b.Fatal(err)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOverview analyses a generated trace (once, untimed) and then
// measures what the browser asks for when it opens the overview: the
// trace list, and the overview windows of the whole run and of a zoom.
// The answers come from the pre-aggregated levels, so their cost does not
// grow with the records (-overview-records sets how many).
func BenchmarkOverview(b *testing.B) {
	n := *overviewRecords
	path := generatedTrace(b, n)
	start := time.Now()
	bundle, err := report.Build(context.Background(), path, report.Options{})
	if err != nil {
		b.Fatal(err)
	}
	analysis := time.Since(start)
	srv, err := NewServer([]*report.Bundle{bundle})
	if err != nil {
		b.Fatal(err)
	}
	end := bundle.Runs[0].EndNS
	targets := []string{"/api/traces", "/api/traces/0/overview?run=0&max=256",
		fmt.Sprintf("/api/traces/0/overview?run=0&from=%d&to=%d&max=256", end/3, end/3+end/50)}
	b.ResetTimer()
	for range b.N {
		for _, target := range targets {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, request(http.MethodGet, target, nil))
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", target, rec.Code, rec.Body)
			}
		}
	}
	b.ReportMetric(float64(n), "records")
	b.ReportMetric(analysis.Seconds(), "analysis-s")
}
