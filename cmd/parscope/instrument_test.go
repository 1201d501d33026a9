package main

import (
	"encoding/json"
	"os"
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
