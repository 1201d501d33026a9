package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cutParaver writes, in a temporary folder it returns, cut.prv: a Paraver
// trace whose records end before the end time its header declares, which
// the importer repairs with a warning.
func cutParaver(t *testing.T) (dir, prv string) {
	t.Helper()
	dir = t.TempDir()
	prv = filepath.Join(dir, "cut.prv")
	content := "#Paraver (x):1000_ns:1:1:2(1:1,1:1)\n1:1:1:1:1:0:400:1\n1:1:1:2:1:0:500:1\n"
	if err := os.WriteFile(prv, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, prv
}

// TestImportWarnsCutParaver checks that importing a .prv that stops before
// the end time of its header prints a warning naming the file, and that
// info shows it and counts the repair.
func TestImportWarnsCutParaver(t *testing.T) {
	dir, prv := cutParaver(t)
	pst := filepath.Join(dir, "cut.pst")
	_, errOut, code := run(t, "import", "-o", pst, prv)
	want := "warning: " + prv + ": the records end at 500 ns, before the end time the header declares (1000 ns)"
	if code != 0 || !strings.Contains(errOut, want) {
		t.Fatalf("import: exit %d, stderr:\n%s\nwant %q", code, errOut, want)
	}
	out := mustRun(t, "info", pst)
	if !strings.Contains(out, "prv-ends-before-header-end 1") || !strings.Contains(out, "the file may be cut short after line 3") {
		t.Errorf("info does not show the warning and the repair:\n%s", out)
	}
}

// TestWarningsUnderQuiet checks the rule of --quiet: it silences notes,
// never a warning that data was lost or repaired. Importing a cut .prv
// with -q, or reading it on the fly, prints the warning, once, and nothing
// else; and no command writes a warning but through progress.Warnf, which
// follows the rule.
func TestWarningsUnderQuiet(t *testing.T) {
	dir, prv := cutParaver(t)
	want := "warning: " + prv + ": the records end at 500 ns, before the end time the header declares (1000 ns): the file may be cut short after line 3\n"
	for _, args := range [][]string{
		{"-q", "import", "-o", filepath.Join(dir, "cut.pst"), prv},
		{"-q", "info", prv},
		{"info", prv},
	} {
		_, errOut, code := run(t, args...)
		if code != 0 || errOut != want {
			t.Errorf("parscope %s: exit %d, stderr %q, want %q", strings.Join(args, " "), code, errOut, want)
		}
	}
	// Every warning goes through progress.Warnf.
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) < 20 {
		t.Fatalf("%d source files: %v", len(files), err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"warning: `) || strings.Contains(string(b), `"warning:`) {
			t.Errorf("%s writes a warning itself; use progress.Warnf, which --quiet does not silence", f)
		}
	}
}
