package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportWarnsCutParaver checks that importing a .prv that stops before
// the end time of its header prints a warning naming the file, and that
// info shows it and counts the repair.
func TestImportWarnsCutParaver(t *testing.T) {
	dir := t.TempDir()
	prv := filepath.Join(dir, "cut.prv")
	content := "#Paraver (x):1000_ns:1:1:2(1:1,1:1)\n1:1:1:1:1:0:400:1\n1:1:1:2:1:0:500:1\n"
	if err := os.WriteFile(prv, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
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
