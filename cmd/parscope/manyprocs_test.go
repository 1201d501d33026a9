package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runLimited runs parscope under a memory limit: GOMEMLIMIT, and without
// the race detector (whose shadow memory needs terabytes of address space)
// an address-space limit of 4 GB with ulimit -v. A P×P matrix of the
// 1,000,001 processes the trace used to have (8 TB) cannot be allocated.
func runLimited(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	script := `exec "$0" "$@"`
	if !raceEnabled {
		script = `ulimit -v 4000000 && ` + script
	}
	cmd := exec.Command("sh", append([]string{"-c", script, bin}, args...)...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT=512MiB")
	return runCmd(t, cmd)
}

// TestPidOneMillion: a 3-line trace of pid 1,000,000 imports as one process
// labelled with its pid, and info, pca and analyze answer under a memory
// limit instead of dying out of memory.
func TestPidOneMillion(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "pid1m.txt")
	if err := os.WriteFile(txt, []byte("0 1 1000000\n10 2 1000000\n20 1 1000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pst := filepath.Join(dir, "pid1m.pst")
	if _, errOut, code := runLimited(t, "import", "--format", "gomez", "-o", pst, txt); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	out, errOut, code := runLimited(t, "info", "--json", pst)
	if code != 0 {
		t.Fatalf("info: exit %d\n%s", code, errOut)
	}
	var info struct {
		Runs []struct {
			Procs int `json:"procs"`
		} `json:"runs"`
		Procs []struct {
			Proc  int               `json:"proc"`
			Name  string            `json:"name"`
			Extra map[string]string `json:"extra"`
		} `json:"procs"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	if len(info.Runs) != 1 || info.Runs[0].Procs != 1 || len(info.Procs) != 1 || info.Procs[0].Name != "pid 1000000" || info.Procs[0].Extra["pid"] != "1000000" {
		t.Fatalf("info: %s\nwant one run of one process named pid 1000000", out)
	}
	if out, _, _ := runLimited(t, "info", pst); !strings.Contains(out, "process 0 of run 0  pid 1000000") {
		t.Errorf("info does not show the pid:\n%s", out)
	}

	out, errOut, code = runLimited(t, "pca", "--json", pst)
	if code != 0 {
		t.Fatalf("pca: exit %d\n%s", code, errOut)
	}
	// The engine's envelope: the components are its result.
	var env struct {
		Result struct {
			Procs int   `json:"procs"`
			Rows  int64 `json:"rows"`
		} `json:"result"`
	}
	res := &env.Result
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	if res.Procs != 1 || res.Rows != 3 {
		t.Errorf("pca: %d processes, %d states; want 1 and 3", res.Procs, res.Rows)
	}

	// analyze straight from the text file (imported on the fly).
	rep := filepath.Join(dir, "report")
	if _, errOut, code := runLimited(t, "analyze", "-o", rep, txt); code != 0 {
		t.Fatalf("analyze: exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(filepath.Join(rep, "pca.json"))
	if err != nil {
		t.Fatal(err)
	}
	res.Procs, res.Rows = 0, 0
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	if res.Procs != 1 || res.Rows != 3 {
		t.Errorf("analyze's pca.json: %d processes, %d states; want 1 and 3", res.Procs, res.Rows)
	}
}
