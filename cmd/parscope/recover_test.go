package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecover kills a recording program after a flush point and rebuilds
// the trace with parscope recover: exactly the flushed records come back.
func TestRecover(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "main.go")
	src := `package main

import (
	"os"

	"github.com/parscope/parscope/instrument"
)

func main() {
	rec, err := instrument.Start(instrument.Options{Path: os.Args[1]})
	if err != nil {
		panic(err)
	}
	p := rec.Process(0)
	for i := 0; i < 100; i++ {
		p.Block(int32(i % 7))
	}
	p.Flush()
	for i := 0; i < 50; i++ {
		p.Block(99) // after the flush point: lost
	}
	os.Exit(3)
}
`
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pst := filepath.Join(dir, "crash.pst")
	exe := filepath.Join(dir, "crasher")
	if out, err := exec.Command("go", "build", "-o", exe, prog).CombinedOutput(); err != nil {
		t.Fatalf("building the recording program: %v\n%s", err, out)
	}
	if out, err := exec.Command(exe, pst).CombinedOutput(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("the recording program: %v\n%s", err, out)
	}
	if _, err := os.Stat(pst); !os.IsNotExist(err) {
		t.Fatal("the dead program left a .pst")
	}
	mustRun(t, "recover", pst)
	var info infoReport
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", pst)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Records["state"] != 100 || info.StatesUsed != 7 {
		t.Fatalf("recovered %d states using %d blocks, want 100 and 7", info.Records["state"], info.StatesUsed)
	}
	if _, _, code := run(t, "recover", filepath.Join(dir, "none.pst")); code != 1 {
		t.Fatalf("recover without a spill: exit %d, want 1", code)
	}
}
