package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPCACommand(t *testing.T) {
	pst := importAmoeba(t)
	dir := t.TempDir()
	pc1, pc12 := filepath.Join(dir, "pc1.png"), filepath.Join(dir, "pc12.svg")
	out := mustRun(t, "pca", "--json", "--components", "3", "--plot", pc1, "--plot-pc12", pc12, pst)
	var rep pcaReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
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
	// at height √17.
	if lines[0] != "run,state,t,x,y,z" || !strings.HasPrefix(lines[1], "0,0,0,") || !strings.HasSuffix(lines[1], ",4.1231056") {
		t.Fatalf("points start %q", lines[:2])
	}
	if _, err := os.Stat(png); err != nil {
		t.Fatal(err)
	}
	if _, _, code := run(t, "phasespace", pst); code != 2 {
		t.Fatalf("phasespace without outputs: exit %d, want 2", code)
	}
}
