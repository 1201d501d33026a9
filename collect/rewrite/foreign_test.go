package rewrite

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/instrument"
	_ "github.com/parscope/parscope/instrument/pst" // instrument.Recover builds recordings
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// readTrace returns the records of a trace, time-merged. A recording that
// a rewritten program left for parscope to build (the default: it does not
// link the store) is built first, as parscope's commands do.
func readTrace(t *testing.T, pst string) []trace.Record {
	t.Helper()
	if instrument.Unbuilt(pst) {
		if _, err := instrument.Recover(pst, instrument.RecoverOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.Open(pst)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := trace.ReadAll(st.Records(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// checkTrace opens a trace written by a rewritten program and checks that
// every send has its receive; it returns the number of messages.
func checkTrace(t *testing.T, pst string) int {
	t.Helper()
	recs := readTrace(t, pst)
	var m trace.Matcher
	n := 0
	m.OnMatch = func(s, r *trace.Record) { n++ }
	for i := range recs {
		m.Add(&recs[i])
	}
	if sends, recvs := m.Unmatched(); len(sends)+len(recvs) != 0 {
		t.Errorf("%s: %d sends and %d receives unmatched", pst, len(sends), len(recvs))
	}
	return n
}

// TestExamplesInstrumented rewrites the example workloads and runs their
// own tests on the rewritten code, in place through a build overlay (they
// import an internal package of this module).
func TestExamplesInstrumented(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []string{"prefix", "masterworker", "philosophers", "amoeba"} {
		t.Run(ex, func(t *testing.T) {
			src := filepath.Join(root, "examples", ex)
			res, err := Package(context.Background(), src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			replace := map[string]string{}
			for _, f := range res.Files {
				p := filepath.Join(tmp, f.Name)
				if err := os.WriteFile(p, f.Src, 0o644); err != nil {
					t.Fatal(err)
				}
				replace[filepath.Join(src, f.Name)] = p
			}
			ov, _ := json.Marshal(map[string]any{"Replace": replace})
			overlay := filepath.Join(tmp, "overlay.json")
			if err := os.WriteFile(overlay, ov, 0o644); err != nil {
				t.Fatal(err)
			}
			pst := filepath.Join(tmp, ex+".pst")
			goCmd(t, root, []string{"PARSCOPE_OUT=" + pst, "PARSCOPE_ENTROPY_FILTER=off"}, "test", "-count=1", "-overlay="+overlay, "./examples/"+ex)
			if n := checkTrace(t, pst); n == 0 {
				t.Errorf("no message recorded")
			}
		})
	}
}

// TestForeignPrograms rewrites concurrent programs nobody here wrote (the
// computer language shootout programs of golang.org/x/exp, a module
// dependency): each must print what the original prints (chameneos-redux's
// counts depend on scheduling: lines without digits are compared, as its
// timing.sh does) and record matched messages.
func TestForeignPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	// go mod download fetches the module (at the version go.mod pins)
	// when it is not in the module cache yet, and says where it is.
	out, err := exec.Command("go", "mod", "download", "-json", "golang.org/x/exp").Output()
	var mod struct{ Dir, Error string }
	if err == nil {
		err = json.Unmarshal(out, &mod)
	}
	if err != nil || mod.Error != "" || mod.Dir == "" {
		t.Fatalf("go mod download golang.org/x/exp: %v %s", err, mod.Error)
	}
	dir := mod.Dir
	tests := []struct {
		prog       string
		args       []string
		noDigits   bool
		wantsTrace bool // false: the program ends with os.Exit, before the trace is written
	}{
		{"threadring", []string{"-n", "2000"}, false, false},
		{"chameneosredux", []string{"600"}, true, true},
		{"fannkuch-parallel", []string{"-n", "7"}, false, true},
		{"spectral-norm-parallel", []string{"-n", "40"}, false, true},
		{"fasta", []string{"-n", "2000"}, false, true},
		{"nbody", []string{"-n", "1000"}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.prog, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, "shootout", tc.prog+".go"))
			if err != nil {
				t.Fatal(err)
			}
			// The programs carry an "ignore" build constraint: blank it,
			// keeping the line numbers.
			text := strings.Replace(strings.Replace(string(src), "//go:build ignore\n", "\n", 1), "// +build ignore\n", "\n", 1)
			orig := t.TempDir()
			if err := os.WriteFile(filepath.Join(orig, "main.go"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(orig, "go.mod"), []byte("module shootout\n\ngo 1.26\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Package(context.Background(), orig, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := runProg(t, orig, tc.args, nil)
			inst := tempModule(t, res, "shootout")
			pst := filepath.Join(t.TempDir(), "run.pst")
			got := runProg(t, inst, tc.args, []string{"PARSCOPE_OUT=" + pst, "PARSCOPE_ENTROPY_FILTER=off"})
			if tc.noDigits {
				want, got = withoutDigits(want), withoutDigits(got)
			}
			if got != want || want == "" {
				t.Errorf("instrumented output:\n%s\noriginal:\n%s", got, want)
			}
			// With recording off (every handle nil) it prints the same
			// output too.
			off := runProg(t, inst, tc.args, []string{"PARSCOPE_OUT=off"})
			if tc.noDigits {
				off = withoutDigits(off)
			}
			if off != want {
				t.Errorf("instrumented output with recording off:\n%s\noriginal:\n%s", off, want)
			}
			if tc.wantsTrace {
				checkTrace(t, pst)
			}
		})
	}
}

func runProg(t *testing.T, dir string, args, env []string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "prog"+exeSuffix())
	goCmd(t, dir, nil, "build", "-o", bin, ".")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running %s: %v\n%s", dir, err, out)
	}
	return string(out)
}

func withoutDigits(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.ContainsAny(l, "0123456789") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
