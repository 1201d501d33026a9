package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/internal/needtool"
)

// mpirunJSON is the part of `mpirun --json` the tests read.
type mpirunJSON struct {
	Output, Impl, Shim string
	ExitCode           int `json:"exit_code"`
	Ranks              int
	Sends, Matched     int64
	AnySource          int64 `json:"any_source"`
	AnySourceResolved  int64 `json:"any_source_resolved"`
	Files              []struct {
		Rank     int32
		Complete bool
	}
}

// mpiLib is an MPI implementation: its compiler wrapper and launcher, and
// the Debian packages that provide them.
type mpiLib struct{ devPkg, cc, runPkg, run string }

var (
	mpichLib   = mpiLib{"libmpich-dev", "mpicc.mpich", "mpich", "mpirun.mpich"}
	openMPILib = mpiLib{"libopenmpi-dev", "mpicc.openmpi", "openmpi-bin", "mpirun.openmpi"}
)

// mpiProgram compiles one of collect/mpi's test programs with MPICH.
func mpiProgram(t *testing.T, name string) (exe, launcher string) {
	return mpiProgramWith(t, mpichLib, name)
}

// mpiProgramWith compiles one of collect/mpi's test programs with lib.
func mpiProgramWith(t *testing.T, lib mpiLib, name string) (exe, launcher string) {
	t.Helper()
	cc := needtool.Path(t, lib.devPkg, lib.cc)
	launcher = needtool.Path(t, lib.runPkg, lib.run)
	exe = filepath.Join(t.TempDir(), name)
	src := filepath.Join("..", "..", "collect", "mpi", "testdata", name+".c")
	out, err := exec.Command(cc, "-g", "-O1", "-Wno-stringop-overflow", "-I", "../../collect/mpi/include", "-o", exe, src).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", src, err, out)
	}
	return exe, launcher
}

// knownBytes and knownCount are known.c's whole-program matrix, its
// collectives decomposed linearly (known.c lists every message).
var (
	knownBytes = []int64{0, 300, 80, 16, 80, 0, 680, 176, 16, 0, 0, 900, 1200, 64, 0, 0}
	knownCount = []int64{0, 4, 3, 2, 2, 0, 4, 4, 2, 0, 0, 3, 4, 2, 0, 0}
)

// TestMPIRun records collect/mpi's known.c on 4 MPICH ranks through the
// CLI (building the shim into a fresh cache) and checks the merged trace's
// whole-program matrix through `comm`.
func TestMPIRun(t *testing.T) {
	exe, launcher := mpiProgram(t, "known")
	dir := t.TempDir()
	pst := filepath.Join(dir, "known.pst")
	cache := filepath.Join(dir, "cache")
	var rep mpirunJSON
	out := mustRun(t, "mpirun", "--json", "-o", pst, "--cache", cache, "--", launcher, "-np", "4", exe)
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Impl != "mpich" || rep.ExitCode != 0 || rep.Ranks != 4 || rep.Sends != 17 || rep.Matched != 17 ||
		rep.AnySource != 5 || rep.AnySourceResolved != 5 || len(rep.Files) != 4 || !strings.HasPrefix(rep.Shim, cache) {
		t.Fatalf("report %+v", rep)
	}
	r := commRun(t, pst)
	if !slices.Equal(r.Selection.Matrix.Bytes, knownBytes) || !slices.Equal(r.Selection.Matrix.Count, knownCount) {
		t.Errorf("matrix bytes %v count %v", r.Selection.Matrix.Bytes, r.Selection.Matrix.Count)
	}
	// A second run reuses the cached shim and refuses to overwrite.
	if _, errOut, code := run(t, "mpirun", "-o", pst, "--cache", cache, "--", launcher, "-np", "4", exe); code == 0 ||
		!strings.Contains(errOut, "exists") {
		t.Errorf("overwrite: exit %d, %s", code, errOut)
	}
	text := mustRun(t, "mpirun", "--force", "-o", pst, "--cache", cache, "--", launcher, "-np", "4", exe)
	for _, want := range []string{"MPI", "mpich", "ranks", "4 (4 files)", "17 sends, 17 receives, 17 matched", "5 resolved"} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Errorf("cache holds %d builds, want 1", len(entries))
	}
}

// TestMPIRunOpenMPI records known.c on 4 Open MPI ranks with the plain
// launcher command, as a user types it: parscope must detect Open MPI,
// build the shim with its wrapper, and let it run as root and
// oversubscribed (what this machine needs) with the shim's variables
// passed to the ranks.
func TestMPIRunOpenMPI(t *testing.T) {
	exe, launcher := mpiProgramWith(t, openMPILib, "known")
	dir := t.TempDir()
	pst := filepath.Join(dir, "known.pst")
	var rep mpirunJSON
	out := mustRun(t, "mpirun", "--json", "-o", pst, "--cache", filepath.Join(dir, "cache"), "--", launcher, "-np", "4", exe)
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Impl != "openmpi" || rep.ExitCode != 0 || rep.Ranks != 4 || rep.Sends != 17 || rep.Matched != 17 ||
		rep.AnySource != 5 || rep.AnySourceResolved != 5 || len(rep.Files) != 4 {
		t.Fatalf("report %+v", rep)
	}
	r := commRun(t, pst)
	if !slices.Equal(r.Selection.Matrix.Bytes, knownBytes) || !slices.Equal(r.Selection.Matrix.Count, knownCount) {
		t.Errorf("matrix bytes %v count %v", r.Selection.Matrix.Bytes, r.Selection.Matrix.Count)
	}
}

// TestMPIRunKilledRank: a rank SIGKILLs itself; parscope still writes the
// trace from the partial files and exits non-zero, as the command did.
func TestMPIRunKilledRank(t *testing.T) {
	exe, launcher := mpiProgram(t, "die")
	dir := t.TempDir()
	pst := filepath.Join(dir, "die.pst")
	raw := filepath.Join(dir, "raw")
	out, errOut, code := run(t, "mpirun", "--json", "--buffer", "256", "--raw", raw, "-o", pst,
		"--cache", filepath.Join(dir, "cache"), "--", launcher, "-np", "4", exe)
	if code != 1 || !strings.Contains(errOut, "exited with status") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var rep mpirunJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.ExitCode == 0 || len(rep.Files) == 0 || rep.Sends < 17 {
		t.Errorf("report %+v", rep)
	}
	for _, f := range rep.Files {
		if f.Complete {
			t.Errorf("rank %d complete", f.Rank)
		}
	}
	mustRun(t, "info", pst)
	// The kept rank files merge again on their own.
	again := filepath.Join(dir, "again.pst")
	if _, errOut, code := run(t, "mpirun", "-o", again, "--merge", raw); code != 0 {
		t.Errorf("--merge: exit %d: %s", code, errOut)
	}
}

func TestMPIRunUsage(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"mpirun", "--", "true"}, 2, "-o OUT.pst is required"},
		{[]string{"mpirun", "-o", filepath.Join(empty, "x.pst")}, 2, "no command to run"},
		{[]string{"mpirun", "-o", filepath.Join(empty, "x.pst"), "--call-sites", "some", "--", "true"}, 2, "want auto, on or off"},
		{[]string{"mpirun", "-o", filepath.Join(empty, "x.pst"), "--merge", empty}, 1, "no rank files in"},
		{[]string{"mpirun", "-o", filepath.Join(empty, "x.pst"), "--impl", "lam", "--", "true"}, 2, "want mpich or openmpi"},
	} {
		_, errOut, code := run(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d, %q", c.args, code, errOut, c.code, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(empty, "x.pst")); err == nil {
		t.Error("a failed command left x.pst")
	}
	h := mustRun(t, "mpirun", "--header")
	if !strings.Contains(h, "#define parscope_region_begin(name)") {
		t.Errorf("--header printed\n%s", h)
	}
}
