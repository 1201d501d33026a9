package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/instrument"
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

// TestRecoverDamagedSpill flips one bit in the sixth chunk of a spill file
// of 40 chunks: recover brings back the other 39, names the damaged byte
// range, keeps the spill directory and exits with status 1.
func TestRecoverDamagedSpill(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.pst")
	rec, err := instrument.Start(instrument.Options{Path: live, BufferRecords: 50, MemoryLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := rec.Process(0)
	for i := 0; i < 2000; i++ {
		p.Block(int32(i % 5))
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	pst := filepath.Join(dir, "crash.pst")
	spill := instrument.SpillDir(pst)
	if err := os.Mkdir(spill, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"records.bin", "header.json"} {
		b, err := os.ReadFile(filepath.Join(instrument.SpillDir(live), name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "records.bin" {
			const chunk = 16 + 50*32 // header and 50 entries of 32 bytes
			if len(b) != 40*chunk {
				t.Fatalf("the spill file has %d bytes, want 40 chunks of %d", len(b), chunk)
			}
			b[5*chunk+100] ^= 1
		}
		if err := os.WriteFile(filepath.Join(spill, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec.Abort()
	_, errOut, code := run(t, "recover", pst)
	if code != 1 || !strings.Contains(errOut, "skipped damaged bytes 8080 to 9696 (1.6 KiB) of "+filepath.Join(spill, "records.bin")) ||
		!strings.Contains(errOut, "1,950 records in 39 intact chunks") {
		t.Fatalf("recover: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(spill, "records.bin")); err != nil {
		t.Fatalf("the spill file is gone: %v", err)
	}
	var info infoReport
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", pst)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Records["state"] != 1950 {
		t.Fatalf("the trace holds %d states, want 1950", info.Records["state"])
	}
}

// TestBuildLaterOnFirstRead records with PARSCOPE_BUILD=later: the first
// command given the trace builds it (saying so), with every record, and
// removes the spill; recover names a complete recording "built".
func TestBuildLaterOnFirstRead(t *testing.T) {
	dir := t.TempDir()
	record := func(path string) {
		t.Helper()
		t.Setenv("PARSCOPE_BUILD", "later")
		rec, err := instrument.Start(instrument.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < 2; p++ {
			for i := 0; i < 300; i++ {
				rec.Process(p).Block(int32(i % 5))
			}
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		os.Unsetenv("PARSCOPE_BUILD")
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("PARSCOPE_BUILD=later built %s at Close", path)
		}
	}
	pst := filepath.Join(dir, "later.pst")
	record(pst)
	out, errOut, code := run(t, "info", "--json", pst)
	if code != 0 {
		t.Fatalf("info: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "building "+pst+" from the recording the program left in "+instrument.SpillDir(pst)) {
		t.Errorf("info did not say it built the trace: %q", errOut)
	}
	var info infoReport
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	if info.Records["state"] != 600 || info.StatesUsed != 5 {
		t.Fatalf("built %d states using %d blocks, want 600 and 5", info.Records["state"], info.StatesUsed)
	}
	if _, err := os.Stat(instrument.SpillDir(pst)); !os.IsNotExist(err) {
		t.Fatalf("the spill directory is still there: %v", err)
	}
	if _, errOut, _ := run(t, "info", pst); strings.Contains(errOut, "building") {
		t.Errorf("the second read built the trace again: %q", errOut)
	}
	other := filepath.Join(dir, "other.pst")
	record(other)
	if _, errOut, code := run(t, "recover", other); code != 0 || !strings.Contains(errOut, "built "+other+": 600 records") {
		t.Fatalf("recover of a complete recording: exit %d, %q", code, errOut)
	}
}
