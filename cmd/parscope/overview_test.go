package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/engine"
)

// TestOverviewLyon pins the JSON result of the overview (docs/results.md
// shows it) and checks the text, a selection of runs and a bad --windows.
func TestOverviewLyon(t *testing.T) {
	pst := writeLyonStore(t)
	js := mustRun(t, "overview", "--windows", "16", "--json", pst)
	golden := filepath.Join("testdata", "results", "overview.golden.json")
	if *update {
		os.WriteFile(golden, []byte(js), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || js != string(want) {
		t.Errorf("overview --json differs from %s (%v; run with -update to accept):\n%s", golden, err, js)
	}
	var env struct {
		engine.Envelope
		Result overview.Result `json:"result"`
	}
	if err := json.Unmarshal([]byte(js), &env); err != nil {
		t.Fatal(err)
	}
	r := env.Result
	if env.Analysis != "overview" || len(r.Runs) != 1 || r.Runs[0].Procs != 4 || r.Records["state"] != 29 || len(r.Runs[0].Levels) != 2 {
		t.Fatalf("overview of Lyon: %+v", env)
	}
	text := mustRun(t, "overview", pst)
	for _, want := range []string{"29 state, 1 event", "run  name  procs  records  start  end   span", "0    -     4      30       0s     29ns  29ns"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text does not say %q:\n%s", want, text)
		}
	}
	if _, errOut, code := run(t, "overview", "--windows", "0", pst); code != 2 || !strings.Contains(errOut, "--windows 0") {
		t.Errorf("--windows 0: exit %d, %q", code, errOut)
	}
}

// TestOverviewRuns checks --runs: the envelope names the runs, and the
// result holds those only, with the figures of the whole trace's overview.
func TestOverviewRuns(t *testing.T) {
	pst := importAmoeba(t)
	var all, some struct {
		Runs   []int32         `json:"runs"`
		Result overview.Result `json:"result"`
	}
	json.Unmarshal([]byte(mustRun(t, "overview", "--json", pst)), &all)
	json.Unmarshal([]byte(mustRun(t, "overview", "--json", "--runs", "1-2", pst)), &some)
	if len(all.Result.Runs) != 5 || all.Runs != nil || len(some.Result.Runs) != 2 || len(some.Runs) != 2 {
		t.Fatalf("runs: all %d (%v), 1-2 %d (%v)", len(all.Result.Runs), all.Runs, len(some.Result.Runs), some.Runs)
	}
	for i, r := range some.Result.Runs {
		a, _ := json.Marshal(r)
		b, _ := json.Marshal(all.Result.Runs[i+1])
		if string(a) != string(b) {
			t.Errorf("run %d alone differs:\n%.300s\n%.300s", r.Run, a, b)
		}
	}
	if some.Result.Records["state"] != 2*3400 {
		t.Errorf("runs 1-2: %d state records, want %d", some.Result.Records["state"], 2*3400)
	}
}
