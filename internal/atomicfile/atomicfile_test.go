package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMain doubles as the crashing writer of TestCrash*: with
// ATOMICFILE_CRASH=file:PATH or dir:PATH set, the test binary starts
// writing PATH and dies without committing.
func TestMain(m *testing.M) {
	if v := os.Getenv("ATOMICFILE_CRASH"); v != "" {
		kind, path, _ := strings.Cut(v, ":")
		switch kind {
		case "file":
			f, err := Create(path, RegularFile)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			f.Write([]byte("half of the new content"))
		case "dir":
			d, err := CreateDir(path, anyDir)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.WriteFile(filepath.Join(d.Path(), "a.txt"), []byte("new"), 0o644)
		}
		os.Exit(3) // no Commit, no Abort: as kill -9 leaves it
	}
	os.Exit(m.Run())
}

func anyDir(path string) error { return nil }

// crash runs the test binary as a writer of path that dies before Commit,
// and returns its (now dead) process id.
func crash(t *testing.T, kind, path string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "ATOMICFILE_CRASH="+kind+":"+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("the crashing writer: %v\n%s", err, out)
	}
	return cmd.Process.Pid
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFileReplacesAndSetsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new"), RegularFile); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "new" {
		t.Fatalf("content %q, want new", got)
	}
	// The mode every output gets: what os.WriteFile gives 0644 under the
	// umask of this process.
	ref := filepath.Join(dir, "ref")
	if err := os.WriteFile(ref, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := os.Stat(p)
	b, _ := os.Stat(ref)
	if a.Mode().Perm() != b.Mode().Perm() || a.Mode().Perm()&0o044 == 0 {
		t.Fatalf("mode %v, want %v", a.Mode().Perm(), b.Mode().Perm())
	}
	if names := entries(t, dir); len(names) != 2 {
		t.Fatalf("left %v in the directory, want x.json and ref only", names)
	}
}

func TestReplacePolicies(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "notes.txt"), []byte("important"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(victim, []byte("x"), RegularFile)
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("writing a file over a directory: %v, want a refusal saying it is a directory", err)
	}
	if _, err := CreateDir(victim, EmptyDir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("replacing a directory with files: %v, want a refusal", err)
	}
	if got := read(t, filepath.Join(victim, "notes.txt")); got != "important" {
		t.Fatalf("notes.txt now holds %q", got)
	}
	f := filepath.Join(dir, "f")
	os.WriteFile(f, []byte("keep"), 0o644)
	if err := WriteFile(f, []byte("x"), nil); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("nil Replace over a file: %v, want already exists", err)
	}
	if got := read(t, f); got != "keep" {
		t.Fatalf("f now holds %q", got)
	}
	if names := entries(t, dir); len(names) != 2 {
		t.Fatalf("left %v", names)
	}
}

// TestEmptyDirOr allows an empty directory without asking ours, asks ours
// about anything else that exists, and passes on a missing path's error.
func TestEmptyDirOr(t *testing.T) {
	dir := t.TempDir()
	var asked []string
	policy := EmptyDirOr(func(path string, fi fs.FileInfo) error {
		asked = append(asked, filepath.Base(path))
		if fi.IsDir() {
			return nil
		}
		return errors.New("not ours")
	})
	empty, full, file := filepath.Join(dir, "empty"), filepath.Join(dir, "full"), filepath.Join(dir, "file")
	os.Mkdir(empty, 0o755)
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	os.WriteFile(file, nil, 0o644)
	if err := policy(empty); err != nil || len(asked) != 0 {
		t.Fatalf("empty directory: %v, asked %v", err, asked)
	}
	if err := policy(full); err != nil || len(asked) != 1 {
		t.Fatalf("directory ours allows: %v, asked %v", err, asked)
	}
	if err := policy(file); err == nil || err.Error() != "not ours" {
		t.Fatalf("file ours refuses: %v", err)
	}
	if err := policy(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) || len(asked) != 2 {
		t.Fatalf("missing path: %v, asked %v", err, asked)
	}
}

func TestErrorsNameTheDestination(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "nodir", "x.json")
	err := WriteFile(p, []byte("x"), RegularFile)
	if err == nil {
		t.Fatal("no error writing into a missing directory")
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), p) ||
		!strings.Contains(err.Error(), "no such file or directory") || strings.Contains(err.Error(), tmpMark) {
		t.Fatalf("error %q: want one naming %s and 'no such file or directory', without a temporary name", err, p)
	}
	// A directory output creates its missing parents, as mkdir -p.
	d, err := CreateDir(filepath.Join(dir, "nodir", "out"), nil)
	if err != nil {
		t.Fatalf("CreateDir in a missing directory: %v", err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "nodir", "out")); err != nil || !fi.IsDir() {
		t.Fatalf("CreateDir in a missing directory made %v, %v", fi, err)
	}
}

// TestCause keeps what went wrong and drops the file a path error names;
// other errors pass unchanged.
func TestCause(t *testing.T) {
	wrapped := fmt.Errorf("writing: %w", &fs.PathError{Op: "write", Path: "/d/.x.parscope-tmp-1-2", Err: syscall.ENOSPC})
	if got := Cause(wrapped); got != syscall.ENOSPC {
		t.Errorf("Cause(%v) = %v, want %v", wrapped, got, syscall.ENOSPC)
	}
	plain := errors.New("no plot")
	if got := Cause(plain); got != plain {
		t.Errorf("Cause(%v) = %v, want it unchanged", plain, got)
	}
}

// TestFullDisk fails every write after the first 10 bytes with ENOSPC:
// the existing file is untouched and nothing is left beside it.
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	os.WriteFile(p, []byte("the old report"), 0o644)
	written := 0
	writeHook = func(f *os.File, b []byte) (int, error) {
		if written+len(b) > 10 {
			n, _ := f.Write(b[:10-written])
			written += n
			return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		}
		written += len(b)
		return f.Write(b)
	}
	defer func() { writeHook = func(f *os.File, p []byte) (int, error) { return f.Write(p) } }()
	err := Write(p, RegularFile, func(w *bufio.Writer) error {
		_, err := w.WriteString(strings.Repeat("new report ", 1<<17))
		return err
	})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), tmpMark) {
		t.Fatalf("error %v: want ENOSPC naming %s", err, p)
	}
	if got := read(t, p); got != "the old report" {
		t.Fatalf("the destination holds %q after a failed write", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("left %v", names)
	}
}

// TestCrashFile kills a writer before Commit: the destination keeps its
// content, and the next write to it removes the dead writer's temporary.
func TestCrashFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	os.WriteFile(p, []byte("old"), 0o644)
	pid := crash(t, "file", p)
	names := entries(t, dir)
	if len(names) != 2 || !strings.HasPrefix(names[0], ".out.json"+tmpMark+fmt.Sprint(pid)+"-") {
		t.Fatalf("after the crash: %v, want out.json and the writer's temporary", names)
	}
	if got := read(t, p); got != "old" {
		t.Fatalf("the crash changed the destination to %q", got)
	}
	// A temporary of a running process (this one) is left alone.
	live, err := Create(p, RegularFile)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	if err := WriteFile(p, []byte("new"), RegularFile); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "new" {
		t.Fatalf("content %q, want new", got)
	}
	names = entries(t, dir)
	if len(names) != 2 || !strings.Contains(names[0], tmpMark+fmt.Sprint(os.Getpid())+"-") {
		t.Fatalf("after the next write: %v, want out.json and this process's live temporary only", names)
	}
}

// TestCrashDir kills a writer of a directory before Commit: the old
// directory is untouched, and the next write removes the stale one.
func TestCrashDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report")
	os.Mkdir(p, 0o755)
	os.WriteFile(filepath.Join(p, "a.txt"), []byte("old"), 0o644)
	crash(t, "dir", p)
	if names := entries(t, dir); len(names) != 2 {
		t.Fatalf("after the crash: %v, want report and the writer's temporary", names)
	}
	if got := read(t, filepath.Join(p, "a.txt")); got != "old" {
		t.Fatalf("the crash changed a.txt to %q", got)
	}
	d, err := CreateDir(p, anyDir)
	if err != nil {
		t.Fatal(err)
	}
	if names := entries(t, dir); len(names) != 2 || !strings.Contains(names[0], fmt.Sprint(os.Getpid())) {
		t.Fatalf("the stale temporary is still there: %v", names)
	}
	os.WriteFile(filepath.Join(d.Path(), "b.txt"), []byte("new"), 0o644)
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if names := entries(t, p); len(names) != 1 || names[0] != "b.txt" {
		t.Fatalf("report holds %v, want b.txt only", names)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("left %v beside the report", names)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm()&0o055 != 0o055 {
		t.Fatalf("directory mode %v, want 0755", fi.Mode().Perm())
	}
}

// TestCrashBetweenRenames recreates what a crash between the two renames of
// Dir.Commit leaves (the old directory set aside, the new one not yet in
// place): the next write puts the old one back before it starts.
func TestCrashBetweenRenames(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	pid := crash(t, "dir", p) // leaves .out.parscope-tmp-PID-*
	tmps, _ := filepath.Glob(filepath.Join(dir, ".out"+tmpMark+"*"))
	if len(tmps) != 1 {
		t.Fatalf("temporaries %v", tmps)
	}
	old := filepath.Join(dir, ".out"+oldMark+fmt.Sprint(pid)+"-1")
	os.Mkdir(old, 0o755)
	os.WriteFile(filepath.Join(old, "a.txt"), []byte("previous"), 0o644)
	d, err := CreateDir(p, func(string) error { return errors.New("refused") })
	if err == nil || err.Error() != "refused" {
		t.Fatalf("CreateDir over the restored directory: %v, want the policy's refusal", err)
	}
	if d != nil {
		t.Fatal("a Dir despite the error")
	}
	if got := read(t, filepath.Join(p, "a.txt")); got != "previous" {
		t.Fatalf("restored a.txt holds %q", got)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "out" {
		t.Fatalf("left %v, want out only", names)
	}
}

func TestDirAbortAndCommitTwice(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	d, err := CreateDir(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d.Path(), "a"), []byte("x"), 0o644)
	d.Abort()
	if names := entries(t, dir); len(names) != 0 {
		t.Fatalf("Abort left %v", names)
	}
	d, _ = CreateDir(p, nil)
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err == nil {
		t.Fatal("a second Commit succeeded")
	}
	d.Abort()
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Fatalf("Abort after Commit removed the result: %v", err)
	}
}

// TestDirHide checks that an error about a file written into a Dir's
// temporary directory names the file in the destination, keeps its cause
// for errors.Is and errors.As, and that other errors pass unchanged.
func TestDirHide(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "x.pst")
	d, err := CreateDir(dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	inner := &fs.PathError{Op: "write", Path: filepath.Join(d.Path(), "states.parquet"), Err: syscall.ENOSPC}
	got := d.Hide(fmt.Errorf("writing states: %w", inner))
	want := "writing states: write " + filepath.Join(dst, "states.parquet") + ": no space left on device"
	var pe *fs.PathError
	if got == nil || got.Error() != want || !errors.Is(got, syscall.ENOSPC) || !errors.As(got, &pe) {
		t.Errorf("Hide = %v\nwant %q, with ENOSPC and the *fs.PathError inside", got, want)
	}
	plain := errors.New("bad record")
	if d.Hide(plain) != plain || d.Hide(nil) != nil {
		t.Errorf("Hide changed an error that does not name the temporary directory")
	}
}

// TestWriteFileUnsynced: the unsynced write replaces like WriteFile (the
// new content, the common mode, no temporary left) and follows the same
// replace policy.
func TestWriteFileUnsynced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "header.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileUnsynced(p, []byte("new"), RegularFile); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "new" {
		t.Fatalf("content %q, want new", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != FileMode {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), FileMode)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("left %v in the directory, want header.json only", names)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileUnsynced(sub, []byte("x"), RegularFile); err == nil {
		t.Fatal("replaced a directory")
	}
	if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
		t.Fatalf("the refused destination changed: %v", err)
	}
}
