package bbv

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// bigBBV returns a strict BBV text of about 6 MB, more than
// ScanFileParts splits, with comments, blank lines and "\r\n" ends.
func bigBBV() []byte {
	rng := rand.New(rand.NewPCG(3, 5))
	var b bytes.Buffer
	b.WriteString("# generated\n")
	for i := 0; b.Len() < 6<<20; i++ {
		b.WriteString("T")
		for j := 0; j < 1+rng.IntN(200); j++ {
			fmt.Fprintf(&b, ":%d:%d ", 1+j*7+rng.IntN(7), 1+rng.IntN(100000))
		}
		switch i % 97 {
		case 0:
			b.WriteString("\r\n")
		case 1:
			b.WriteString("\n\n# a comment\n")
		default:
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// scanParts collects what ScanFileParts hands each part, copying it.
func scanParts(t *testing.T, path string, opts ParseOptions, parts int) (bool, int32, [][]Vector, error) {
	t.Helper()
	got := make([][]Vector, parts)
	var mu sync.Mutex
	split, dim, err := ScanFileParts(context.Background(), path, opts, parts, func(part int, v Vector) error {
		c := Vector{Blocks: slices.Clone(v.Blocks), Counts: slices.Clone(v.Counts)}
		mu.Lock()
		got[part] = append(got[part], c)
		mu.Unlock()
		return nil
	})
	return split, dim, got, err
}

// TestScanFilePartsEqualsScan checks that the parts, joined in order,
// are Scan's intervals and dimension, and that ScanFileParts declines
// what only a reader from the start can read: a line that does not
// parse (anywhere), SimPoint's quirks, a gzipped file.
func TestScanFilePartsEqualsScan(t *testing.T) {
	dir := t.TempDir()
	text := bigBBV()
	path := filepath.Join(dir, "big.bb")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []ParseOptions{{}, {SimPointQuirks: true}} {
		want, err := ReadFile(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, parts := range []int{2, 3, 8} {
			split, dim, got, err := scanParts(t, path, opts, parts)
			if err != nil || !split {
				t.Fatalf("%+v, %d parts: split %v, error %v", opts, parts, split, err)
			}
			var all []Vector
			nonEmpty := 0
			for _, p := range got {
				all = append(all, p...)
				if len(p) > 0 {
					nonEmpty++
				}
			}
			if nonEmpty < 2 {
				t.Fatalf("%+v, %d parts: only %d had intervals", opts, parts, nonEmpty)
			}
			if dim != want.Dim || !reflect.DeepEqual(all, want.Vectors) {
				t.Fatalf("%+v, %d parts: %d intervals of dimension %d, want %d of %d (or they differ)", opts, parts, len(all), dim, len(want.Vectors), want.Dim)
			}
		}
	}

	declined := func(name string, data []byte, opts ParseOptions) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		split, _, _, err := scanParts(t, p, opts, 2)
		if split || err != nil {
			t.Errorf("%s: split %v, error %v; want it declined", name, split, err)
		}
	}
	late := bytes.Clone(text)
	i := bytes.LastIndex(late[:len(late)-10], []byte(":"))
	late[i+1] = 'x' // in the second half
	declined("late-error.bb", late, ParseOptions{})
	early := append([]byte("T:1:1 :1:2\n"), text...) // a duplicate id, in the first part
	declined("early-error.bb", early, ParseOptions{})
	// What makes SimPoint's parser depend on other lines: a T line
	// without pairs ends its input (SimPoint ignores the rest), a last
	// line without a newline is dropped, a line of 1 MiB is an error.
	quirks := ParseOptions{SimPointQuirks: true}
	mid := bytes.Index(text[len(text)/2:], []byte("\nT")) + len(text)/2 + 1
	ended := append(append(bytes.Clone(text[:mid]), "T\n"...), text[mid:]...)
	declined("quirks-end.bb", ended, quirks)
	declined("quirks-no-newline.bb", text[:len(text)-1], quirks)
	long := append(append(bytes.Clone(text[:mid]), bytes.Repeat([]byte("#"), 1<<20)...), text[mid-1:]...)
	declined("quirks-long.bb", long, quirks)
	declined("quirks-bad-id.bb", append([]byte("T:0:5\n"), text...), quirks)
	if split, _, _, err := scanParts(t, filepath.Join(dir, "quirks-long.bb"), ParseOptions{}, 2); !split || err != nil {
		t.Errorf("a long comment line in strict mode: split %v, error %v; want it read in parts", split, err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	declined("big.bb.gz", gz.Bytes(), ParseOptions{})
	declined("small.bb", []byte("T:1:1\nT:2:2\n"), ParseOptions{})

	// An error of fn is returned as it is.
	stop := errors.New("stop")
	split, _, err := ScanFileParts(context.Background(), path, ParseOptions{}, 2, func(part int, v Vector) error {
		if part == 1 {
			return stop
		}
		return nil
	})
	if !split || !errors.Is(err, stop) {
		t.Errorf("fn's error: split %v, error %v", split, err)
	}
}
