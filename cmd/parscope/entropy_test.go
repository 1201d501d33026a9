package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
)

func importAmoeba(t *testing.T) string {
	t.Helper()
	pst := filepath.Join(t.TempDir(), "amoeba.pst")
	mustRun(t, "import", "-o", pst, "--dict", filepath.Join(examples, "amoeba_blocks.txt"), filepath.Join(examples, "amoeba.srt"))
	return pst
}

// entropyEnvelope is the envelope of the entropy analysis, decoded.
type entropyEnvelope struct {
	engine.Envelope
	Options entropy.Params `json:"options"`
	Result  entropy.Report `json:"result"`
}

// TestEntropyCommand pins the envelope of the entropy of amoeba's five runs
// (docs/results.md shows it; the measures are those of the command before
// the engine), and checks the subset ranking, the series and the text.
func TestEntropyCommand(t *testing.T) {
	pst := importAmoeba(t)
	out := mustRun(t, "entropy", "--json", pst)
	golden(t, filepath.Join("results", "entropy.golden.json"), "entropy --json", out)
	var env entropyEnvelope
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	rep := env.Result
	if env.Analysis != "entropy" || len(rep.Runs) != 5 || rep.All == nil || rep.Runs[0].P != 17 || rep.Runs[0].N != 13 || rep.All.ClassEntropyMax < 23.5943 || rep.All.ClassEntropyMax > 23.5944 ||
		rep.Runs[0].Rows != 1811 || rep.Runs[0].DistinctClasses != 952 || rep.Series != nil || rep.Subsets != nil {
		t.Fatalf("result %+v", rep)
	}
	// The same again is byte-identical (deterministic sums).
	if again := mustRun(t, "entropy", "--json", pst); again != out {
		t.Fatal("entropy --json is not deterministic")
	}
	// Subsets: windows of 3 over 17 processes, ranked, in the same pass as
	// the measures of every run.
	var sub entropyEnvelope
	json.Unmarshal([]byte(mustRun(t, "entropy", "--json", "--subsets", "3", pst)), &sub)
	if s := sub.Result.Subsets; s == nil || len(s.Results) != 15 || s.Measure != "comb_entropy_distinct" || s.K != 3 || len(sub.Result.Runs) != 5 {
		t.Fatalf("subsets %+v, want 15 of comb_entropy_distinct", s)
	}
	top := sub.Result.Subsets.Results
	for i := 1; i < len(top); i++ {
		if abs(top[i].Score) > abs(top[i-1].Score) {
			t.Fatal("subsets are not ranked by |score|")
		}
	}
	if !slices.Equal(top[0].Procs, []int32{7, 8, 9}) || math.Abs(top[0].Value-1.17245) > 1e-5 || math.Abs(top[0].Score+2.38) > 0.005 {
		t.Errorf("most anomalous window %v: %v, score %v", top[0].Procs, top[0].Value, top[0].Score)
	}
	// Series in 10 ms windows cover each run; --window is --window-ns.
	for _, flag := range []string{"--window-ns", "--window"} {
		var ser entropyEnvelope
		json.Unmarshal([]byte(mustRun(t, "entropy", "--json", flag, "10ms", "--runs", "0", pst)), &ser)
		if s := ser.Result.Series; len(s) != 8 || s[0].Start != 0 || s[7].End != 80_000_000 || ser.Result.WindowNS != 10_000_000 || ser.Options.Window != 10_000_000 || !slices.Equal(ser.Runs, []int32{0}) {
			t.Fatalf("%s: series %+v", flag, ser.Result)
		}
	}
	text := mustRun(t, "entropy", "--window-ns", "10ms", "--subsets", "3", "--runs", "0", pst)
	for _, want := range []string{"0    17  13  1,811   8.82436e-07", "0    70ms   80ms  2.222190", "1     7,8,9               1.17245                       -2.38"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text does not say %q:\n%s", want, text)
		}
	}
	if _, _, code := run(t, "entropy", "--measure", "bogus", pst); code != 2 {
		t.Fatalf("unknown measure: exit %d, want 2", code)
	}
	if _, errOut, code := run(t, "entropy", "--subsets", "3", "--runs", "1", pst); code == 0 || !strings.Contains(errOut, "amoeba.pst: entropy: the subset ranking reads run 0") {
		t.Errorf("subsets without run 0: exit %d, %q", code, errOut)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestStatesCommand checks the CSV export of a partial state and the
// states analysis' envelope and text.
func TestStatesCommand(t *testing.T) {
	pst := importAmoeba(t)
	csvOut := mustRun(t, "states", "--csv", "--runs", "1", "--procs", "4,5,6", pst)
	lines := strings.Split(strings.TrimSpace(csvOut), "\n")
	if lines[0] != "run,t,x4,x5,x6" || lines[1] != "1,0,1,1,1" {
		t.Fatalf("partial states start %q", lines[:2])
	}
	var env struct {
		engine.Envelope
		Result state.Summary `json:"result"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "states", "--json", pst)), &env); err != nil {
		t.Fatal(err)
	}
	sums := env.Result.Runs
	if env.Analysis != "states" || len(sums) != 5 || sums[0].Procs != 17 || sums[0].States != 1811 || sums[0].DistinctClasses != 952 || sums[4].LastNS != 80_140_000 {
		t.Fatalf("summary %+v", sums)
	}
	if tl := sums[0].Timeline; tl == nil || len(tl.Blocks) != 17 || len(tl.Blocks[0]) != state.DefaultTimelineSamples || tl.Blocks[0][0] != 3 || tl.Blocks[0][255] != 13 {
		t.Fatalf("timeline of %d processes", len(tl.Blocks))
	}
	if env.Result.BlockNames[1] == "" {
		t.Errorf("block names %v", env.Result.BlockNames)
	}
	// A partial state of 3 columns: its own classes.
	var part struct {
		Result state.Summary `json:"result"`
	}
	json.Unmarshal([]byte(mustRun(t, "states", "--json", "--runs", "1", "--procs", "4-6", "--timeline-samples", "0", pst)), &part)
	if r := part.Result.Runs; len(r) != 1 || r[0].Procs != 3 || r[0].States != int64(len(lines)-1) || r[0].Timeline != nil {
		t.Fatalf("partial: %+v (the CSV has %d states)", r, len(lines)-1)
	}
	// Lyon's T1, pinned: docs/results.md shows it.
	js := mustRun(t, "states", "--timeline-samples", "8", "--json", writeLyonStore(t))
	golden := filepath.Join("testdata", "results", "states.golden.json")
	if *update {
		os.WriteFile(golden, []byte(js), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || js != string(want) {
		t.Errorf("states --json differs from %s (%v; run with -update to accept):\n%s", golden, err, js)
	}
	text := mustRun(t, "states", pst)
	if !strings.Contains(text, "run  procs  states  distinct classes  first state at  last state at") || !strings.Contains(text, "0    17     1,811   952               0ns             79.11ms") {
		t.Errorf("text:\n%s", text)
	}
}
