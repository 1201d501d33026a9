package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/trace"
)

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mustHold fails unless the file at path holds want.
func mustHold(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Fatalf("%s holds %q (%v), want %q", path, b, err, want)
	}
}

// deadPID returns the id of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// TestForceReplacesOnlyOurOutputs: --force and the outputs of every
// command never delete a directory of other things, and never write over
// an input of the same command.
func TestForceReplacesOnlyOurOutputs(t *testing.T) {
	dir := t.TempDir()
	srt := filepath.Join(dir, "am.srt")
	copyFile(t, filepath.Join(examples, "amoeba.srt"), srt)
	orig, _ := os.ReadFile(srt)
	victim := filepath.Join(dir, "victim")
	os.Mkdir(victim, 0o755)
	notes := filepath.Join(victim, "notes.txt")
	os.WriteFile(notes, []byte("important\n"), 0o644)

	// import --force -o victim: a directory that is not a .pst.
	_, errOut, code := run(t, "import", "--force", "-o", victim, srt)
	if code != 1 || !strings.Contains(errOut, victim+" exists and is not a .pst") {
		t.Fatalf("import --force -o victim: exit %d\n%s", code, errOut)
	}
	mustHold(t, notes, "important\n")

	// import --force -o am.srt am.srt: its own input, by path and through
	// a symbolic link.
	link := filepath.Join(dir, "link.pst")
	if err := os.Symlink(srt, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{srt, link} {
		_, errOut, code := run(t, "import", "--force", "-o", out, srt)
		if code != 2 || !strings.Contains(errOut, "-o "+out+" would overwrite the input "+srt) {
			t.Fatalf("import --force -o %s %s: exit %d\n%s", out, srt, code, errOut)
		}
		mustHold(t, srt, string(orig))
	}

	// export -o a file inside the input .pst.
	pst := filepath.Join(dir, "am.pst")
	mustRun(t, "import", "-o", pst, srt)
	manifest := filepath.Join(pst, "manifest.json")
	before, _ := os.ReadFile(manifest)
	_, errOut, code = run(t, "export", "--format", "chrome", "-o", manifest, pst)
	if code != 2 || !strings.Contains(errOut, "would overwrite the input") {
		t.Fatalf("export -o into the input: exit %d\n%s", code, errOut)
	}
	mustHold(t, manifest, string(before))

	// analyze, export csv and a plot into the victim directory.
	for _, args := range [][]string{
		{"analyze", "-o", victim, pst},
		{"export", "--format", "csv", "-o", victim, pst},
		{"export", "--format", "chrome", "-o", victim, pst},
		{"pca", "--plot", victim, pst},
	} {
		_, errOut, code := run(t, args...)
		if code != 1 || !strings.Contains(errOut, victim) || !strings.Contains(errOut, "refusing to replace") {
			t.Fatalf("parscope %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		mustHold(t, notes, "important\n")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Fatalf("left %d entries in the directory, want am.srt, am.pst, link.pst and victim", len(ents))
	}

	// --force does replace a .pst.
	mustRun(t, "import", "--force", "-o", pst, "--dict", filepath.Join(examples, "amoeba_blocks.txt"), srt)
}

// TestAnalyzeReplacesWholeReport: a report is written as a whole beside
// the destination and renamed in; a second analyze replaces it (it is
// marked as ours), leaves no file of the first behind, and removes what a
// killed analyze left.
func TestAnalyzeReplacesWholeReport(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report")
	ring := importRing(t)
	mustRun(t, "analyze", "-o", out, ring)
	mustHold(t, filepath.Join(out, reportMarker), "a report written by parscope analyze\n")
	if _, err := os.Stat(filepath.Join(out, "comm.json")); err != nil {
		t.Fatalf("the ring report has no comm.json: %v", err)
	}
	// What a kill -9 during analyze leaves: a half-written temporary.
	stale := filepath.Join(dir, ".report.parscope-tmp-"+strconv.Itoa(deadPID(t))+"-42")
	os.Mkdir(stale, 0o755)
	os.WriteFile(filepath.Join(stale, "index.html"), nil, 0o644)

	mustRun(t, "analyze", "--dict", filepath.Join(examples, "amoeba_blocks.txt"), "-o", out, filepath.Join(examples, "amoeba.srt"))
	if _, err := os.Stat(filepath.Join(out, "comm.json")); !os.IsNotExist(err) {
		t.Fatalf("comm.json of the first report is still there beside the second: %v", err)
	}
	var b struct{ Trace string }
	readJSONFile(t, filepath.Join(out, "report.json"), &b)
	if b.Trace != "amoeba.srt" {
		t.Fatalf("report.json is of %q", b.Trace)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("beside the report: %v, want nothing", names)
	}
	fi, err := os.Stat(filepath.Join(out, "index.html"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("index.html: %v %v", fi, err)
	}
}

// TestOutputErrorsNameTheUserPath: a file output in a missing directory is
// named as the user gave it, never by a temporary name; exports get the
// same permissions as every output.
func TestOutputErrorsNameTheUserPath(t *testing.T) {
	dir := t.TempDir()
	pst := importAmoeba(t)
	for _, args := range [][]string{
		{"export", "--format", "chrome", "-o", filepath.Join(dir, "nodir", "x.json"), pst},
		{"export", "--format", "prv", "-o", filepath.Join(dir, "nodir", "x"), pst},
		{"phasespace", "--csv", filepath.Join(dir, "nodir", "x.csv"), pst},
	} {
		_, errOut, code := run(t, args...)
		want := filepath.Join(dir, "nodir") + string(filepath.Separator)
		if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, ": no such file or directory") || strings.Contains(errOut, "parscope-tmp") {
			t.Fatalf("parscope %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	csvDir := filepath.Join(dir, "sub", "csv") // a directory output creates its parents
	mustRun(t, "export", "--format", "csv", "-o", csvDir, pst)
	mustRun(t, "export", "--format", "csv", "-o", csvDir, pst) // replaces its own tables
	chrome := filepath.Join(dir, "x.json")
	mustRun(t, "export", "--format", "chrome", "-o", chrome, pst)
	for _, p := range []string{filepath.Join(csvDir, "states.csv"), chrome} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Fatalf("%s: %v %v, want mode 0644", p, fi, err)
		}
	}
	if fi, err := os.Stat(csvDir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("%s: %v %v, want mode 0755", csvDir, fi, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("left %d entries, want sub and x.json", len(ents))
	}
}

// addOnly is a trace.Writer that can neither take batches nor start again.
type addOnly struct{ m trace.Memory }

func (a *addOnly) Header() *trace.Header    { return a.m.Header() }
func (a *addOnly) Add(r trace.Record) error { return a.m.Add(r) }

// TestProgressWriter: the progress wrapper of the import passes records,
// batches and a reset on to the writer it wraps, and refuses a reset the
// writer cannot do.
func TestProgressWriter(t *testing.T) {
	mem := &trace.Memory{}
	p := withProgress(mem, "importing")
	defer p.done()
	recs := []trace.Record{trace.State(0, 0, 10, 1), trace.State(0, 1, 10, 2), trace.State(0, 0, 20, 3), trace.State(0, 1, 30, 1)}
	if err := p.Add(recs[0]); err != nil {
		t.Fatal(err)
	}
	if n, err := p.AddBatch(recs[1:]); n != 3 || err != nil {
		t.Fatalf("AddBatch: %d, %v; want 3, nil", n, err)
	}
	if !slices.Equal(mem.Records, recs) {
		t.Fatalf("the wrapped writer holds %v, want %v", mem.Records, recs)
	}
	// A record out of order stops the batch where the writer refused it.
	if n, err := p.AddBatch([]trace.Record{trace.State(0, 0, 40, 1), trace.State(0, 0, 5, 1)}); n != 1 || err == nil {
		t.Fatalf("AddBatch of an out-of-order pair: %d, %v; want 1 and an error", n, err)
	}
	if err := p.Reset(); err != nil || len(mem.Records) != 0 {
		t.Fatalf("Reset: %v, %d records left; want nil and 0", err, len(mem.Records))
	}
	a := &addOnly{}
	q := withProgress(a, "importing")
	defer q.done()
	if n, err := q.AddBatch(recs); n != 4 || err != nil || len(a.m.Records) != 4 {
		t.Fatalf("AddBatch through Add: %d, %v, %d records; want 4, nil, 4", n, err, len(a.m.Records))
	}
	if err := q.Reset(); !errors.Is(err, errors.ErrUnsupported) || len(a.m.Records) != 4 {
		t.Fatalf("Reset of a writer that cannot: %v, %d records; want ErrUnsupported and 4", err, len(a.m.Records))
	}
}
