package gomez

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

// TestRenumberPids checks the dense renumbering of sparse pids: three lines
// of pid 1,000,000 are one process labelled with its pid, and pids 3, 70
// and 1,000,000 over two runs and two files are processes 0, 1 and 2 in
// pid order, each run labelled.
func TestRenumberPids(t *testing.T) {
	one := formattest.WriteFile(t, "", "one.txt", "0 1 1000000\n10 2 1000000\n20 1 1000000\n")
	m, err := formattest.Import(t, Importer{}, []string{one}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header().Runs; len(got) != 1 || got[0].Procs != 1 {
		t.Fatalf("runs = %+v, want one run of 1 process", got)
	}
	want := []trace.ProcInfo{{Run: 0, Proc: 0, Name: "pid 1000000", Extra: map[string]string{"pid": "1000000"}}}
	if got := m.Header().Procs; !reflect.DeepEqual(got, want) {
		t.Errorf("procs = %+v, want %+v", got, want)
	}
	for _, r := range m.Records {
		if r.Proc != 0 {
			t.Fatalf("record %+v: process %d, want 0", r, r.Proc)
		}
	}

	a := formattest.WriteFile(t, "", "a.txt", "0 1 70\n5 2 3\n9 1 70\n0 4 3\n")
	b := formattest.WriteFile(t, "", "b.txt", "1 1 1000000\n2 1 1000000\n")
	m, err = formattest.Import(t, Importer{}, []string{a, b}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header().Runs; len(got) != 2 || got[0].Procs != 3 || got[1].Procs != 1 {
		t.Fatalf("runs = %+v, want 3 processes in run 0 and 1 (pid 3) in run 1", got)
	}
	var names []string
	for _, p := range m.Header().Procs {
		names = append(names, p.Name)
	}
	if want := []string{"pid 3", "pid 70", "pid 1000000", "pid 3"}; !reflect.DeepEqual(names, want) {
		t.Errorf("process names %q, want %q", names, want)
	}
	var got [][2]int32 // run, proc of each record in file order
	for _, r := range m.Records {
		got = append(got, [2]int32{r.Run, r.Proc})
	}
	if want := [][2]int32{{0, 1}, {0, 0}, {0, 1}, {1, 0}, {0, 2}, {0, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("records (run, process) = %v, want %v", got, want)
	}
}

// TestDensePidsKept checks that pids already 0..P-1 are neither renumbered
// nor labelled.
func TestDensePidsKept(t *testing.T) {
	p := formattest.WriteFile(t, "", "dense.txt", "0 1 2\n1 1 0\n2 1 1\n")
	m, err := formattest.Import(t, Importer{}, []string{p}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Header().Procs) != 0 || m.Header().Runs[0].Procs != 3 {
		t.Fatalf("procs %+v, runs %+v: want no labels and 3 processes", m.Header().Procs, m.Header().Runs)
	}
	for i, want := range []int32{2, 0, 1} {
		if m.Records[i].Proc != want {
			t.Errorf("record %d: process %d, want %d", i, m.Records[i].Proc, want)
		}
	}
}

// TestRenumberPidsLargeFile checks the pid scan of a file large enough to
// be read in parts on several cores: the sparse pids of a 6 MB file get
// the same numbers and labels as when the same lines are gzipped, which
// are read from the start by one reader. The pids that appear only near
// the end of the file or only once, in its middle, must not be missed.
func TestRenumberPidsLargeFile(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var b strings.Builder
	pids := []int{17, 4000, 250000, 999999}
	n := 0
	for b.Len() < 6<<20 {
		fmt.Fprintf(&b, "%d %d %d\n", n, n%11, pids[n%3]) // 999999 not yet
		if n == 200000 {
			b.WriteString("# a comment\n200000.5 3 31337\n") // once, mid-file
		}
		n++
	}
	fmt.Fprintf(&b, "%d 5 %d\n", n, pids[3])
	text := b.String()
	plain := formattest.WriteFile(t, "", "big.txt", text)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(text))
	zw.Close()
	zipped := formattest.WriteFile(t, "", "big.txt.gz", zb.String())
	if split, err := format.ScanLinesParallel(context.Background(), plain, 4, func(int, []byte) error { return nil }); err != nil || !split {
		t.Fatalf("the plain file is not read in parts (split %v, err %v): the test does not test the parallel scan", split, err)
	}
	var got [2]*trace.Memory
	for i, path := range []string{plain, zipped} {
		m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = m
	}
	var names []string
	for _, p := range got[0].Header().Procs {
		names = append(names, p.Name)
	}
	if want := []string{"pid 17", "pid 4000", "pid 31337", "pid 250000", "pid 999999"}; !reflect.DeepEqual(names, want) {
		t.Errorf("process names %q, want %q", names, want)
	}
	if !reflect.DeepEqual(got[0].Header().Procs, got[1].Header().Procs) || !reflect.DeepEqual(got[0].Header().Runs, got[1].Header().Runs) {
		t.Errorf("plain and gzipped headers differ: %+v %+v / %+v %+v", got[0].Header().Runs, got[0].Header().Procs, got[1].Header().Runs, got[1].Header().Procs)
	}
	if len(got[0].Records) != n+2 || !reflect.DeepEqual(got[0].Records, got[1].Records) {
		t.Errorf("%d and %d records, want %d and the same", len(got[0].Records), len(got[1].Records), n+2)
	}
	if last := got[0].Records[len(got[0].Records)-1]; last.Proc != 4 {
		t.Errorf("last record's process %d, want 4 (pid 999999)", last.Proc)
	}
}

// resets is a trace.Memory that counts its resets.
type resets struct {
	trace.Memory
	n int
}

func (r *resets) Reset() error {
	r.n++
	return r.Memory.Reset()
}

// noReset hides the Memory's Reset: the import reads the pids first.
type noReset struct{ trace.Writer }

// TestGuessedPids checks the import that takes the pids to be 0..P-1
// without reading them first, into a writer that can start again: it
// gives the records, header and errors of the import that reads them
// first, starting again (once) exactly when the pids are not 0..P-1 or
// show a gap at a check, which it makes every ctxEvery lines.
func TestGuessedPids(t *testing.T) {
	lines := func(n int, pid func(i int) int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%d %d %d\n", i, i%5+1, pid(i))
		}
		return b.String()
	}
	big := 3*ctxEvery + 100
	tests := []struct {
		name   string
		files  []string
		resets int
		err    string
	}{
		{"dense", []string{lines(big, func(i int) int { return i % 64 })}, 0, ""},
		{"sparse from the start", []string{lines(big, func(i int) int { return 17 + 4000*(i%3) })}, 1, ""},
		{"a gap only at the end", []string{lines(big, func(i int) int { return i % 64 }) + fmt.Sprintf("%d 1 70\n", big)}, 1, ""},
		{"a gap that closes after a check", []string{lines(ctxEvery+10, func(i int) int { return 2 * (i % 2) }) + lines(10, func(int) int { return 1 })}, 1, ""},
		{"a gap that closes before a check", []string{lines(100, func(i int) int { return 2 * (i % 2) }) + lines(10, func(int) int { return 1 })}, 0, ""},
		{"small and sparse", []string{"0 1 5\n1 1 9\n"}, 1, ""},
		{"dense over two files", []string{"0 1 0\n1 1 1\n", "0 1 2\n1 1 2\n"}, 0, ""},
		{"sparse over two files", []string{"0 1 0\n1 1 1\n", "0 1 3\n"}, 1, ""},
		{"a bad line before the first check", []string{"0 1 5\n1 1 x\n" + lines(big, func(int) int { return 5 })}, 0, "2: expected an integer pid"},
		{"a bad line after a gap was seen", []string{lines(big, func(i int) int { return 7 * (i % 2) }) + "x 1 1\n"}, 1, ":196709: expected a non-negative number"},
	}
	for _, tc := range tests {
		var paths []string
		for i, text := range tc.files {
			paths = append(paths, formattest.WriteFile(t, "", fmt.Sprintf("%d.txt", i), text))
		}
		guessed := &resets{}
		gerr := Import(context.Background(), paths, format.Options{}, guessed)
		scanned := &trace.Memory{}
		serr := Import(context.Background(), paths, format.Options{}, noReset{scanned})
		if fmt.Sprint(gerr) != fmt.Sprint(serr) {
			t.Errorf("%s: error %v, with the pids read first %v", tc.name, gerr, serr)
		}
		if tc.err != "" && (gerr == nil || !strings.Contains(gerr.Error(), tc.err)) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, gerr, tc.err)
		}
		if guessed.n != tc.resets {
			t.Errorf("%s: %d resets, want %d", tc.name, guessed.n, tc.resets)
		}
		if gerr != nil {
			continue
		}
		if !reflect.DeepEqual(guessed.Records, scanned.Records) {
			t.Errorf("%s: %d records, with the pids read first %d, or they differ", tc.name, len(guessed.Records), len(scanned.Records))
		}
		if !reflect.DeepEqual(guessed.H, scanned.H) {
			t.Errorf("%s: header %+v, with the pids read first %+v", tc.name, guessed.H, scanned.H)
		}
	}
}

// TestFirstErrorFirst checks that a bad line is reported ahead of a read
// error after it (a corrupt gzip stream later in the file, an input after
// it that cannot be opened), whether the import reads the pids first or
// guesses them: the pid scan stops at the read error and leaves the order
// of errors to the import proper.
func TestFirstErrorFirst(t *testing.T) {
	var text strings.Builder
	text.WriteString("0 1 0\n1 x 1\n")
	for i := range 50_000 {
		fmt.Fprintf(&text, "%d %d %d\n", i+2, i%9, i%4)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(text.String()))
	zw.Close()
	cut := zb.Bytes()[:zb.Len()/2] // a stream cut in its middle
	dir := t.TempDir()
	corrupt := formattest.WriteFile(t, dir, "cut.txt.gz", string(cut))
	bad := formattest.WriteFile(t, dir, "bad.txt", "0 1 0\n1 x 1\n")
	missing := dir + "/missing.txt"
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{corrupt}, corrupt + ":2: expected an integer block"},
		{[]string{bad, missing}, bad + ":2: expected an integer block"},
	} {
		for _, w := range []trace.Writer{&trace.Memory{}, noReset{&trace.Memory{}}} {
			err := Import(context.Background(), tc.paths, format.Options{}, w)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("%v into %T: error %v, want %q", tc.paths, w, err, tc.want)
			}
		}
	}
	// The read error alone is still reported, by both.
	good := formattest.WriteFile(t, dir, "good.txt", "0 1 0\n")
	for _, w := range []trace.Writer{&trace.Memory{}, noReset{&trace.Memory{}}} {
		err := Import(context.Background(), []string{good, missing}, format.Options{}, w)
		if err == nil || !strings.Contains(err.Error(), "missing.txt") {
			t.Errorf("a missing second input into %T: error %v", w, err)
		}
	}
}
