package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/compare"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace/tracetest"
)

// writeCompareTrace writes tracetest.ComputeThenSend(cs...) to a store at
// path: two processes under main, process 0 computing c ns and process 1
// c/2, then process 0 sending 100 bytes to process 1; one run per c.
func writeCompareTrace(t *testing.T, path string, cs ...int64) {
	t.Helper()
	h, recs := tracetest.ComputeThenSend(cs...)
	storetest.Create(t, path, h, recs)
}

// compareJSON runs parscope compare --json and returns its envelope.
func compareJSON(t *testing.T, args ...string) compare.Envelope {
	t.Helper()
	var env compare.Envelope
	out := mustRun(t, append([]string{"compare", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if env.SchemaVersion != 1 || env.Analysis != "compare" || env.Result == nil {
		t.Fatalf("envelope %+v", env)
	}
	return env
}

// compareRow returns a row of a comparison.
func compareRow(t *testing.T, r *compare.Result, analysis, title, name string) compare.Row {
	t.Helper()
	for _, s := range r.Sections {
		for _, tb := range s.Tables {
			for _, row := range tb.Rows {
				if s.Analysis == analysis && tb.Title == title && row.Name == name {
					return row
				}
			}
		}
	}
	t.Fatalf("no row %s / %s / %s", analysis, title, name)
	return compare.Row{}
}

// TestCompare compares a trace with one whose compute region takes twice
// as long, two runs of one trace, and a trace with itself.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	before, after, runs := filepath.Join(dir, "before.pst"), filepath.Join(dir, "after.pst"), filepath.Join(dir, "runs.pst")
	writeCompareTrace(t, before, 100)
	writeCompareTrace(t, after, 200)
	writeCompareTrace(t, runs, 100, 300)

	env := compareJSON(t, before, after)
	if env.A != (compare.Side{Trace: "before.pst"}) || env.B != (compare.Side{Trace: "after.pst"}) {
		t.Errorf("sides %+v %+v", env.A, env.B)
	}
	if r := compareRow(t, env.Result, "profile", "exclusive time by region", "compute"); r.A != 150 || r.B != 300 || r.Diff != 150 || *r.DiffPct != 100 {
		t.Errorf("compute %+v", r)
	}
	if r := compareRow(t, env.Result, "critpath", "path", "length_ns"); r.A != 120 || r.B != 220 {
		t.Errorf("path %+v", r)
	}
	if r := compareRow(t, env.Result, "waitstates", "wait by pattern", "late_sender_ns"); r.A != 50 || r.B != 100 {
		t.Errorf("late sender %+v", r)
	}

	out := mustRun(t, "compare", before, after)
	for _, want := range []string{
		"A: before.pst run 0", "B: after.pst run 0",
		"profile: exclusive time by region",
		"compute", "150ns", "300ns", "+150ns (+100.0%)",
		"span_ns", "+100ns (+83.3%)",
		"in neither: the trace has no counter records",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}

	// One trace: run 0 against run 1 by default.
	env = compareJSON(t, runs)
	if env.A.Run != 0 || env.B.Run != 1 {
		t.Errorf("runs %+v %+v", env.A, env.B)
	}
	if r := compareRow(t, env.Result, "profile", "exclusive time by region", "compute"); r.A != 150 || r.B != 450 {
		t.Errorf("runs compute %+v", r)
	}

	// A trace with itself, given twice: nothing changes.
	env = compareJSON(t, runs, runs, "--run-b", "0")
	for _, s := range env.Result.Sections {
		for _, tb := range s.Tables {
			for _, r := range tb.Rows {
				if r.Diff != 0 || r.DiffPct == nil || *r.DiffPct != 0 {
					t.Errorf("%s / %s: %+v", s.Analysis, tb.Title, r)
				}
			}
		}
	}

	if _, errOut, code := run(t, "compare", runs, "--run-b", "7"); code != 1 || !strings.Contains(errOut, "no run 7") {
		t.Errorf("run 7: exit %d, %s", code, errOut)
	}
	if _, _, code := run(t, "compare", runs, "--run-a", "-1"); code != 2 {
		t.Errorf("run -1: exit %d", code)
	}
	if _, _, code := run(t, "compare"); code != 2 {
		t.Errorf("no trace: exit %d", code)
	}
}
