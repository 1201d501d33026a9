package format

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fileLines returns the lines LineReader gives for data.
func fileLines(t *testing.T, data []byte) []string {
	t.Helper()
	lines, err := readAllLines(t, "in.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// splitLines returns the lines scanLinesParallel gives for path, the
// parts' lines concatenated in part order, and the number of parts that
// had lines.
func splitLines(t *testing.T, path string, parts int) ([]string, int, bool) {
	t.Helper()
	got := make([][]string, parts)
	split, err := scanLinesParallel(context.Background(), path, parts, 0, func(part int, line []byte) error {
		got[part] = append(got[part], string(line))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	used := 0
	for _, g := range got {
		all = append(all, g...)
		if len(g) > 0 {
			used++
		}
	}
	return all, used, split
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The parts, concatenated in order, are exactly LineReader's lines: each
// line once, none cut at a part's border, whatever the line endings, the
// empty lines, the lines longer than the read buffer (256 KiB) that cross
// a border, and a last line without "\n".
func TestScanLinesParallelEqualsLineReader(t *testing.T) {
	var b bytes.Buffer
	for i := 0; i < 200000; i++ {
		switch {
		case i%1000 == 7:
			b.WriteString("\r\n") // an empty line ending in \r\n
		case i%997 == 3:
			b.WriteString("\n")
		case i%50000 == 11:
			b.WriteString(strings.Repeat("x", 300<<10)) // longer than the buffer
			b.WriteString("\n")
		case i%3 == 0:
			fmt.Fprintf(&b, "%d %d %d\r\n", i, i%13, i%64)
		default:
			fmt.Fprintf(&b, "%d %d %d\n", i, i%13, i%64)
		}
	}
	b.WriteString("last line without newline")
	data := b.Bytes()
	path := writeFile(t, data)
	want := fileLines(t, data)
	if len(want) != 200001 {
		t.Fatalf("LineReader gave %d lines, want 200001", len(want))
	}
	for _, parts := range []int{2, 3, 7, 64} {
		got, used, split := splitLines(t, path, parts)
		if !split {
			t.Fatalf("parts=%d: the file was not split", parts)
		}
		if used != parts {
			t.Errorf("parts=%d: %d parts had lines", parts, used)
		}
		if len(got) != len(want) {
			t.Fatalf("parts=%d: %d lines, want %d", parts, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("parts=%d: line %d is %.40q, want %.40q", parts, i+1, got[i], want[i])
			}
		}
	}
}

// A file of one line, or with its only newline at the end, has one part
// however many are asked for; a file ending in "\n" has no empty last line.
func TestScanLinesParallelFewLines(t *testing.T) {
	for _, tc := range []struct {
		data string
		want []string
	}{
		{"one line, no newline", []string{"one line, no newline"}},
		{"one line\n", []string{"one line"}},
		{"a\nb\n", []string{"a", "b"}},
		{"a\nb", []string{"a", "b"}},
		{"\n\n\n", []string{"", "", ""}},
	} {
		path := writeFile(t, []byte(tc.data))
		got, _, split := splitLines(t, path, 4)
		if !split {
			t.Fatalf("%q: not split", tc.data)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("%q: got %q, want %q", tc.data, got, tc.want)
		}
	}
}

// Gzipped files, files under the size and one part are left to the
// caller, with no line visited.
func TestScanLinesParallelDeclines(t *testing.T) {
	plain := bytes.Repeat([]byte("1 2 3\n"), 1000)
	visited := 0
	visit := func(int, []byte) error { visited++; return nil }
	for _, tc := range []struct {
		name    string
		data    []byte
		parts   int
		minSize int64
	}{
		{"gzip", gz(bytes.Repeat([]byte("1 2 3\n"), 1<<20)), 2, 0},
		{"small", plain, 2, int64(len(plain)) + 1},
		{"one part", plain, 1, 0},
	} {
		split, err := scanLinesParallel(context.Background(), writeFile(t, tc.data), tc.parts, tc.minSize, visit)
		if err != nil || split {
			t.Errorf("%s: split %v, err %v; want false, nil", tc.name, split, err)
		}
	}
	if visited != 0 {
		t.Errorf("%d lines visited", visited)
	}
	// ScanLinesParallel itself leaves files under minSplit alone.
	if split, err := ScanLinesParallel(context.Background(), writeFile(t, plain), 2, visit); split || err != nil {
		t.Errorf("small file: split %v, err %v", split, err)
	}
}

// The first error of visit stops every part and is returned as it is;
// a cancelled context stops the scan with its error.
func TestScanLinesParallelErrors(t *testing.T) {
	path := writeFile(t, bytes.Repeat([]byte("10 20 30\n"), 1<<20))
	bad := errors.New("bad line")
	var calls atomic.Int64
	split, err := scanLinesParallel(context.Background(), path, 2, 0, func(part int, line []byte) error {
		if calls.Add(1) == 1000 {
			return bad
		}
		return nil
	})
	if !split || err != bad {
		t.Fatalf("split %v, err %v; want true, %v", split, err, bad)
	}
	if n := calls.Load(); n >= 1<<20 {
		t.Errorf("%d lines visited after the error: the parts did not stop", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	split, err = scanLinesParallel(ctx, path, 2, 0, func(int, []byte) error { return nil })
	if !split || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: split %v, err %v; want true, context.Canceled", split, err)
	}
	if _, err := ScanLinesParallel(context.Background(), filepath.Join(t.TempDir(), "missing"), 2, nil); err == nil {
		t.Error("a missing file gave no error")
	}
}

// FuzzScanLinesParallel checks that the parts of any input, concatenated,
// are LineReader's lines.
func FuzzScanLinesParallel(f *testing.F) {
	f.Add([]byte("1 2 3\n4 5 6\n"), uint8(2))
	f.Add([]byte("a\r\n\r\nb"), uint8(3))
	f.Add([]byte("\n\n\nx"), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, parts uint8) {
		if len(data) < 2 || IsGzip(data) {
			return
		}
		path := writeFile(t, data)
		want := fileLines(t, data)
		got, _, split := splitLines(t, path, int(parts%16)+2)
		if !split {
			t.Fatal("not split")
		}
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("line %d is %q, want %q", i+1, got[i], want[i])
			}
		}
	})
}
