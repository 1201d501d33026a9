package rewrite

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/instrument"
)

// TestBuildAtExit rewrites one program twice, by default and with
// BuildAtExit, and runs both recording. The default copy does not link the
// trace store (no parquet-go among the binary's modules) and leaves the
// complete recording in the spill directory, which instrument.Recover
// builds; the other links it and writes the .pst at exit. Both traces hold
// the same records but for their times.
func TestBuildAtExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	run := func(opts Options) (bin, pst string) {
		t.Helper()
		res := rewritePkgOpts(t, "prodcons", opts)
		dir := tempModule(t, res, "prodcons")
		bin = filepath.Join(dir, "prodcons"+exeSuffix())
		goCmd(t, dir, nil, "build", "-o", bin, ".")
		pst = filepath.Join(t.TempDir(), "run.pst")
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "PARSCOPE_OUT="+pst, "PARSCOPE_ENTROPY_FILTER=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("running: %v\n%s", err, out)
		}
		return bin, pst
	}
	modules := func(bin string) string {
		t.Helper()
		out, err := exec.Command("go", "version", "-m", bin).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		return string(out)
	}
	leanBin, lean := run(Options{LeafSize: -1})
	if m := modules(leanBin); strings.Contains(m, "parquet-go") || !strings.Contains(m, "github.com/parscope/parscope") {
		t.Errorf("the default rewrite's binary links the store, or not parscope at all:\n%s", m)
	}
	if _, err := os.Lstat(lean); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the default rewrite wrote %s (%v): it should leave the recording for parscope", lean, err)
	}
	if !instrument.Unbuilt(lean) {
		t.Fatal("the default rewrite left no complete recording to build")
	}
	fullBin, full := run(Options{LeafSize: -1, BuildAtExit: true})
	if m := modules(fullBin); !strings.Contains(m, "parquet-go") {
		t.Errorf("the --build-at-exit binary does not link the store:\n%s", m)
	}
	if _, err := os.Lstat(instrument.SpillDir(full)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the --build-at-exit program left %s (%v)", instrument.SpillDir(full), err)
	}
	// Which goroutine gets which process depends on the scheduler, so
	// the traces are compared as multisets of (kind, id, value).
	records := func(pst string) map[string]int {
		n := map[string]int{}
		for _, r := range readTrace(t, pst) {
			n[fmt.Sprint(r.Kind, r.ID, r.Value)]++
		}
		return n
	}
	a, b := records(lean), records(full)
	if len(a) < 10 || !reflect.DeepEqual(a, b) {
		t.Errorf("the two programs recorded different records:\ndefault       %v\nbuild at exit %v", a, b)
	}
}
