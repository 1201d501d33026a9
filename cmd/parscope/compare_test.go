package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/compare"
	"github.com/parscope/parscope/format/annotated"
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

// writeRing writes the annotated ring exchange of testdata/examples/ring
// on ranks ranks (64 steps, as `go run ./testdata/examples/gen -ring N -o
// DIR` writes it) into dir, one file per rank.
func writeRing(t *testing.T, dir string, ranks int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for r := range ranks {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("ring.%d.trace", r)))
		if err != nil {
			t.Fatal(err)
		}
		if err := annotated.Generate(f, r, ranks, 64); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompareRanks compares the annotated ring on 16 ranks with the same
// program on 64, both folders imported on the fly, as docs/compare.md
// shows: the figures of every rank add up on each side (analysis/compare's
// TestRanks16Against64 has them by hand), regions are matched by name,
// and POP, which needs MPI regions, is missing on both sides. Then a ring
// exchange with its MPI calls as regions (tracetest.MPIRing) on 16 and 64
// ranks: the POP scalability of 64 ranks against 16, 0.25 in strong
// scaling and 1 in weak scaling, and an entropy that shrinks from 1.2e-07
// to 1.8e-33 bits printed as such.
func TestCompareRanks(t *testing.T) {
	dir := t.TempDir()
	r16, r64 := filepath.Join(dir, "ring16"), filepath.Join(dir, "ring64")
	writeRing(t, r16, 16)
	writeRing(t, r64, 64)

	env := compareJSON(t, r16, r64)
	if env.A != (compare.Side{Trace: "ring16"}) || env.B != (compare.Side{Trace: "ring64"}) {
		t.Errorf("sides %+v %+v", env.A, env.B)
	}
	for _, c := range []struct {
		analysis, title, name string
		a, b                  float64
	}{
		{"overview", "run", "procs", 16, 64},
		{"overview", "run", "span_ns", 1_235_800 + 15*1_500, 1_235_800 + 63*1_500},
		{"profile", "exclusive time by region", "IF_101", 16 * 958_800, 64 * 958_800},
		{"profile", "visits by region", "LOOP_100", 16, 64},
		{"waitstates", "wait by pattern", "late_receiver_ns", 15 * 64 * 500, 63 * 64 * 500},
		{"comm", "totals", "pairs", 16, 64},
	} {
		if r := compareRow(t, env.Result, c.analysis, c.title, c.name); r.A != c.a || r.B != c.b || r.Only != "" {
			t.Errorf("%s / %s / %s: %+v, want a %v b %v", c.analysis, c.title, c.name, r, c.a, c.b)
		}
	}
	out := mustRun(t, "compare", r16, r64)
	for _, want := range []string{
		"A: ring16 run 0", "B: ring64 run 0",
		"procs    16       64      +48 (+300.0%)",
		"IF_101    15.34ms  61.36ms  +46.02ms (+300.0%)",
		"late_receiver_ns   480µs  2.016ms  +1.536ms (+320.0%)",
		`pop: in neither: no region of the trace matches --runtime-regions "^P?MPI_"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}

	m16, m64 := filepath.Join(dir, "mpiring16.pst"), filepath.Join(dir, "mpiring64.pst")
	for _, c := range []struct {
		path  string
		ranks int
	}{{m16, 16}, {m64, 64}} {
		h, recs := tracetest.MPIRing(c.ranks, 10)
		storetest.Create(t, c.path, h, recs)
	}
	env = compareJSON(t, m16, m64)
	const title = "scalability (B against A, the reference)"
	for name, want := range map[string][2]float64{
		"computation_scalability_strong": {1, 0.25}, "global_efficiency_strong": {0.375, 0.375 * 0.25},
		"computation_scalability_weak": {1, 1}, "global_efficiency_weak": {0.375, 0.375},
	} {
		if r := compareRow(t, env.Result, "pop", title, name); r.A != want[0] || r.B != want[1] {
			t.Errorf("%s: %+v, want a %v b %v", name, r, want[0], want[1])
		}
	}
	out = mustRun(t, "compare", m16, m64)
	for _, want := range []string{
		"pop: scalability (B against A, the reference)",
		"computation_scalability_strong  1.0000  0.2500  -0.7500 (-75.0%)",
		"computation_scalability_weak    1.0000  1.0000  =",
		// Entropies far below a thousandth of a bit are shown, not
		// rounded to 0.000 bits.
		"comb_entropy           1.212e-07 bits  1.788e-33 bits  -1.212e-07 bits (-100.0%)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
