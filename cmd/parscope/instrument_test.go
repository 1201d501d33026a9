package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstrumentCommand(t *testing.T) {
	pkg := filepath.Join("..", "..", "collect", "rewrite", "testdata", "prodcons")
	out := filepath.Join(t.TempDir(), "inst")
	_, stderr, code := run(t, "instrument", "-o", out, pkg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "27 blocks, 4 regions") {
		t.Errorf("stderr %q does not report 27 blocks, 4 regions", stderr)
	}
	for _, f := range []string{"main.go", "parscope_rt.go", "parscope-blocks.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("output lacks %s: %v", f, err)
		}
	}
	js, err := os.ReadFile(filepath.Join(out, "parscope-blocks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dict struct {
		Blocks []struct {
			ID   int32  `json:"id"`
			Kind string `json:"kind"`
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(js, &dict); err != nil {
		t.Fatal(err)
	}
	if n := len(dict.Blocks); n != 27 || dict.Blocks[0].Kind != "start" || dict.Blocks[n-1].Kind != "end" || dict.Blocks[1].File != "main.go" || dict.Blocks[1].Line != 14 {
		t.Errorf("dictionary: %d blocks, first %+v, second %+v", n, dict.Blocks[0], dict.Blocks[1])
	}

	// An existing OUTDIR is refused without --force, and kept.
	_, stderr, code = run(t, "instrument", "-o", out, pkg)
	if code != 2 || !strings.Contains(stderr, "exists") {
		t.Errorf("second run: exit %d, stderr %q; want 2 and a refusal", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(out, "stale"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code = run(t, "instrument", "--force", "-o", out, pkg); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "stale")); !os.IsNotExist(err) {
		t.Errorf("--force kept a file of the old OUTDIR: %v", err)
	}

	// A package that does not type-check: an error naming the place, and
	// no output.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "p.go"), []byte("package p\n\nfunc f() int {\n\treturn \"x\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badOut := filepath.Join(t.TempDir(), "bad")
	_, stderr, code = run(t, "instrument", "-o", badOut, bad)
	if code != 1 || !strings.Contains(stderr, "p.go:4:9") {
		t.Errorf("bad package: exit %d, stderr %q; want 1 and p.go:4:9", code, stderr)
	}
	if _, err := os.Stat(badOut); !os.IsNotExist(err) {
		t.Errorf("bad package left %s: %v", badOut, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(badOut))
	if len(entries) != 0 {
		t.Errorf("bad package left %d entries beside OUTDIR", len(entries))
	}
}

// TestInstrumentRecordBuildSuggest follows a rewritten program from
// instrument to filter suggest, as a user does: the program (rewritten by
// default, without the trace store) leaves its recording in the spill
// directory; the first parscope command given the trace builds it and
// says so; filter suggest measures the recorder's costs on this machine
// unless they are given, and writes the costs it used into the filter
// file.
func TestInstrumentRecordBuildSuggest(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "collect", "rewrite", "testdata", "prodcons")
	dir := filepath.Join(t.TempDir(), "inst")
	if _, stderr, code := run(t, "instrument", "-o", dir, pkg); code != 0 {
		t.Fatalf("instrument: exit %d: %s", code, stderr)
	}
	gomod := "module prodcons\n\ngo 1.26\n\nrequire github.com/parscope/parscope v0.0.0\n\nreplace github.com/parscope/parscope => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "prodcons")
	build := exec.Command("go", "build", "-o", prog, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pst := filepath.Join(t.TempDir(), "run.pst")
	rec := exec.Command(prog)
	rec.Env = append(os.Environ(), "PARSCOPE_OUT="+pst)
	if out, err := rec.CombinedOutput(); err != nil || !strings.Contains(string(out), "total") {
		t.Fatalf("running the rewritten program: %v\n%s", err, out)
	}
	if _, err := os.Stat(pst + ".spill"); err != nil {
		t.Fatalf("the rewritten program left no recording to build: %v", err)
	}
	stdout, stderr, code := run(t, "info", pst)
	if code != 0 || !strings.Contains(stderr, "building "+pst) || !strings.Contains(stdout, "records") {
		t.Fatalf("info on the recording: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(pst + ".spill"); !os.IsNotExist(err) {
		t.Errorf("the spill directory is still there after the build: %v", err)
	}
	filter := filepath.Join(t.TempDir(), "filter.txt")
	_, stderr, code = run(t, "filter", "suggest", "-o", filter, pst)
	if code != 0 || !strings.Contains(stderr, "measured on this machine") {
		t.Fatalf("filter suggest: exit %d: %s", code, stderr)
	}
	text, err := os.ReadFile(filter)
	if err != nil {
		t.Fatal(err)
	}
	var recNs, dropNs float64
	if _, err := fmt.Sscanf(costLine(string(text)), "# costs: %g ns a record, %g ns a dropped event", &recNs, &dropNs); err != nil || !(recNs > 0 && recNs < 1000 && dropNs > 0 && dropNs < 1000) {
		t.Fatalf("the filter file's costs (%v): %q", err, text)
	}
	_, stderr, code = run(t, "filter", "suggest", "--force", "--record-cost", "20", "--drop-cost", "8", "-o", filter, pst)
	if code != 0 || strings.Contains(stderr, "measured") {
		t.Fatalf("filter suggest with the costs given: exit %d: %s", code, stderr)
	}
	if text, _ := os.ReadFile(filter); costLine(string(text)) != "# costs: 20 ns a record, 8 ns a dropped event" {
		t.Errorf("the filter file with the costs given: %q", text)
	}
}

// costLine returns the "# costs:" line of a filter file.
func costLine(text string) string {
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "# costs:") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
