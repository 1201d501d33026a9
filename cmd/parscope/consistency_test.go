package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/report"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

// writeMixedStore writes two runs mixing states, regions, messages,
// events and counters (trace/tracetest), the second with processes that
// enter their first state late, after other records.
func writeMixedStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mixed.pst")
	w, err := store.Create(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	h := w.Header()
	for id := range int32(5) {
		h.States = append(h.States, trace.StateDef{ID: id, Name: "s" + strconv.Itoa(int(id))})
	}
	for run := range int32(2) {
		recs, err := trace.ReadAll(&tracetest.Stream{Procs: 6, Limit: 20_000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			r.Run = run
			// Run 1: process 5 records no state before 5 µs.
			if run == 1 && r.Kind == trace.KindState && r.Proc == 5 && r.T < 5000 {
				continue
			}
			if err := w.Add(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// canonical decodes a JSON document and encodes it again (keys sorted,
// numbers as decoded), so that two faces' outputs compare byte for byte.
func canonical(t *testing.T, data []byte) []byte {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v in %.200s", err, data)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOccupancyFacesAgree checks that `parscope occupancy --json` and the
// report's occupancy section (what `analyze` writes and `serve` answers)
// are the same JSON, byte for byte after loading, on traces that mix
// every timed record kind and on real traces, given the options the
// report's envelope names. The report's face is then run with the
// records fed to one face changed, to check that the comparison sees it.
func TestOccupancyFacesAgree(t *testing.T) {
	traces := map[string]string{"mixed": writeMixedStore(t), "amoeba": importAmoeba(t)}
	goPst := filepath.Join(t.TempDir(), "go.pst")
	mustRun(t, "import", "-o", goPst, realTrace(t, "go/annotations.go1.26.trace"))
	traces["go"] = goPst
	otf2 := filepath.Join(t.TempDir(), "otf2.pst")
	mustRun(t, "import", "-o", otf2, realTrace(t, "otf2/ping-pong-otf2"))
	traces["otf2"] = otf2
	ctx := context.Background()
	for name, pst := range traces {
		b, err := report.Build(ctx, pst, report.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.Occupancy == nil {
			if name != "otf2" {
				t.Fatalf("%s: no occupancy section (skipped: %q)", name, b.Skipped["occupancy"])
			}
			// A trace without states: the command says so, naming the trace
			// and the missing kind, with a non-zero exit.
			_, errOut, code := run(t, "occupancy", "--json", pst)
			if code == 0 || !strings.Contains(errOut, "otf2.pst: occupancy needs state records, and the trace has none") {
				t.Errorf("%s: occupancy on a trace without states: exit %d, %q", name, code, errOut)
			}
			continue
		}
		fromReport, err := json.Marshal(b.Occupancy)
		if err != nil {
			t.Fatal(err)
		}
		p := b.Occupancy.Options.(*occupancy.Params)
		args := []string{"occupancy", "--json", "--top", strconv.Itoa(p.Top), "--windows", strconv.Itoa(p.Windows)}
		if p.Start != "" {
			args = append(args, "--start", p.Start)
		}
		fromCLI := mustRun(t, append(args, pst)...)
		a, c := canonical(t, fromReport), canonical(t, []byte(fromCLI))
		if !bytes.Equal(a, c) {
			t.Errorf("%s: the report's occupancy and the command's differ:\nreport  %.400s\ncommand %.400s", name, a, c)
		}
		if !strings.Contains(string(a), `"schema_version":1`) || !strings.Contains(string(a), `"occupancy_ns":`) {
			t.Errorf("%s: not the envelope of schema 1: %.200s", name, a)
		}
		if name != "mixed" {
			continue
		}
		// Feeding the analysis every kind, as `parscope occupancy` did
		// before the engine, changes nothing: it reads only what it needs.
		an, _ := engine.Lookup(occupancy.Name)
		feeds := an.Feeds
		an.Feeds = func(any) []trace.Kind { return trace.Kinds[:len(trace.Kinds)-1] }
		all := runOccupancy(t, pst, p, nil)
		an.Feeds = feeds
		if !bytes.Equal(all, c) {
			t.Errorf("%s: fed every kind, the analysis answers otherwise:\n%.400s\nwant\n%.400s", name, all, c)
		}
		// Mutation: one face loses the state records of one process after
		// 10 µs; the comparison must see it.
		lossy := runOccupancy(t, pst, p, func(r *trace.Record) bool { return !(r.Kind == trace.KindState && r.Proc == 2 && r.T > 10_000) })
		if bytes.Equal(lossy, c) {
			t.Errorf("%s: a face fed fewer state records went unnoticed", name)
		}
	}
}

// lossySource is a store whose records pass through a filter.
type lossySource struct {
	*store.Store
	keep func(*trace.Record) bool
}

func (l lossySource) Records(o store.ReadOptions) trace.Reader {
	return trace.Filter(l.Store.Records(o), l.keep)
}

// runOccupancy runs the occupancy analysis in this process on the records
// of pst that keep keeps (all when nil) and returns its canonical JSON.
func runOccupancy(t *testing.T, pst string, p *occupancy.Params, keep func(*trace.Record) bool) []byte {
	t.Helper()
	s, err := store.Open(pst)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var src engine.Source = s
	if keep != nil {
		src = lossySource{s, keep}
	}
	res, err := engine.Run(context.Background(), src, []engine.Request{{Analysis: occupancy.Name, Options: p}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res.Envelopes[0])
	if err != nil {
		t.Fatal(err)
	}
	return canonical(t, data)
}
