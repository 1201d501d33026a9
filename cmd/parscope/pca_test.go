package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phasespace"
)

func TestPCACommand(t *testing.T) {
	pst := importAmoeba(t)
	dir := t.TempDir()
	pc1, pc12 := filepath.Join(dir, "pc1.png"), filepath.Join(dir, "pc12.svg")
	out := mustRun(t, "pca", "--json", "--components", "3", "--plot", pc1, "--plot-pc12", pc12, pst)
	var env struct {
		Result pca.Report `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	rep := env.Result
	if rep.Procs != 17 || len(rep.Components) != 3 || len(rep.Runs) != 5 {
		t.Fatalf("report: %d procs, %d components, %d runs", rep.Procs, len(rep.Components), len(rep.Runs))
	}
	// The bundled trace's loop runs 22 times in every run (process 0
	// enters block 2 22 times): 22 V shapes, as Figure 8 has 20 for 20.
	for _, r := range rep.Runs {
		if r.VShapes != 22 {
			t.Errorf("run %d: %d V shapes, want 22", r.Run, r.VShapes)
		}
	}
	// Every run keeps at most max_points scores, the first and last state
	// among them.
	for _, r := range rep.Runs {
		if n := len(r.Index); n != pca.DefaultMaxPoints && int64(n) != r.States || r.Index[0] != 0 || r.Index[n-1] != r.States-1 || len(r.Scores) != 3 || len(r.Scores[2]) != n {
			t.Errorf("run %d: %d states, %d kept (%v…), %d score series", r.Run, r.States, n, r.Index[:min(n, 3)], len(r.Scores))
		}
	}
	if !(rep.Components[0].Explained >= rep.Components[1].Explained && rep.Components[1].Explained >= rep.Components[2].Explained && rep.Components[0].Explained > 0) {
		t.Fatalf("components not in decreasing order: %+v", rep.Components)
	}
	png, err := os.ReadFile(pc1)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) < 5000 {
		t.Fatalf("PC1 plot: %d bytes, %v", len(png), err)
	}
	svg, err := os.ReadFile(pc12)
	if err != nil || !strings.Contains(string(svg), "<svg") {
		t.Fatalf("PC1-PC2 plot: %v", err)
	}
}

func TestPhaseSpaceCommand(t *testing.T) {
	pst := importAmoeba(t)
	dir := t.TempDir()
	csvPath, png := filepath.Join(dir, "ps.csv"), filepath.Join(dir, "ps.png")
	mustRun(t, "phasespace", "--runs", "0", "--csv", csvPath, "--plot", png, pst)
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	// The first state has every process in block 1: on the vertical axis
	// at height √17. The CSV has every state of run 0.
	if lines[0] != "run,state,t,x,y,z" || !strings.HasPrefix(lines[1], "0,0,0,") || !strings.HasSuffix(lines[1], ",4.1231056") || len(lines) != 1+1811 {
		t.Fatalf("%d points start %q", len(lines)-1, lines[:2])
	}
	if _, err := os.Stat(png); err != nil {
		t.Fatal(err)
	}
	// The result keeps --max-points of them, the first and last included.
	var env struct {
		Result phasespace.Report `json:"result"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "phasespace", "--runs", "0", "--max-points", "100", "--json", pst)), &env); err != nil {
		t.Fatal(err)
	}
	r := env.Result.Runs
	if len(r) != 1 || r[0].States != 1811 || len(r[0].Points) != 100 || r[0].Index[99] != 1810 || math.Abs(r[0].Points[0][2]-math.Sqrt(17)) > 1e-12 {
		t.Fatalf("result %+v", r)
	}
	text := mustRun(t, "phasespace", "--runs", "0", "--max-points", "100", pst)
	if !strings.Contains(text, "largest distance from the lockstep axis (elevation diagonal)") || !strings.Contains(text, "0    17     1,811   100") {
		t.Errorf("text:\n%s", text)
	}
	if _, _, code := run(t, "phasespace", "--elevation", "sideways", pst); code != 2 {
		t.Fatalf("phasespace --elevation sideways: exit %d, want 2", code)
	}
}

// TestPCAGolden pins `parscope pca --json` on Lyon's T1 (docs/results.md
// shows it) and checks that the text is the result's.
func TestPCAGolden(t *testing.T) {
	pst := writeLyonStore(t)
	js := mustRun(t, "pca", "--max-points", "4", "--json", pst)
	golden := filepath.Join("testdata", "results", "pca.golden.json")
	if *update {
		os.WriteFile(golden, []byte(js), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || js != string(want) {
		t.Errorf("pca --json differs from %s (%v; run with -update to accept):\n%s", golden, err, js)
	}
	var env struct {
		Result pca.Report `json:"result"`
	}
	if err := json.Unmarshal([]byte(js), &env); err != nil {
		t.Fatal(err)
	}
	r := env.Result.Runs[0]
	text := mustRun(t, "pca", "--max-points", "4", pst)
	want := fmt.Sprintf("%d    %d      %d\n", r.Run, r.States, r.VShapes)
	if !strings.Contains(text, "(exact method)") || !strings.Contains(text, fmt.Sprintf("PC1 V shapes (rises of %.4g)", env.Result.VShapeProminence)) || !strings.Contains(text, want) {
		t.Errorf("text lacks %q:\n%s", want, text)
	}
}

// TestPhaseSpaceGolden pins `parscope phasespace --json` on Lyon's T1
// (docs/results.md shows it).
func TestPhaseSpaceGolden(t *testing.T) {
	js := mustRun(t, "phasespace", "--max-points", "3", "--json", writeLyonStore(t))
	golden := filepath.Join("testdata", "results", "phasespace.golden.json")
	if *update {
		os.WriteFile(golden, []byte(js), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || js != string(want) {
		t.Errorf("phasespace --json differs from %s (%v; run with -update to accept):\n%s", golden, err, js)
	}
}
