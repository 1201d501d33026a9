package bbv

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// scanAll collects what Scan hands over, copying each vector.
func scanAll(t *testing.T, in string, opts ParseOptions) (*File, error) {
	t.Helper()
	f := &File{Name: "in.bb"}
	dim, err := Scan("in.bb", strings.NewReader(in), opts, func(v Vector, line int) error {
		f.Vectors = append(f.Vectors, Vector{Blocks: slices.Clone(v.Blocks), Counts: slices.Clone(v.Counts)})
		f.Lines = append(f.Lines, line)
		return nil
	})
	f.Dim = dim
	return f, err
}

// TestScanEqualsParse checks that Scan hands over exactly the vectors,
// lines and dimension Parse returns, in both modes, on inputs that
// exercise the quirk mode's held-back vector (whose buffers alternate).
func TestScanEqualsParse(t *testing.T) {
	inputs := []string{
		"T:1:48 :3:24 :4:12\nT:2:5\n# comment\nT:7:1 :1:2 :5:3\n\nT:3:9\n",
		"T:1:1\nT:2:2 :9:4",
		"T:1:1\n# end",
		"T:1:1\nT\nT:2:2\n",
		"T:4:1 :2:2 :3:3 :1:4\nT:5:5\nT:6:6 :1:1\nT:2:2\nT:8:8 :9:9 :10:10\n",
	}
	for _, in := range inputs {
		for _, quirks := range []bool{false, true} {
			opts := ParseOptions{SimPointQuirks: quirks}
			want, werr := parseString(t, in, opts)
			got, gerr := scanAll(t, in, opts)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Errorf("%q quirks=%v: Scan error %v, Parse error %v", in, quirks, gerr, werr)
				continue
			}
			if werr != nil {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q quirks=%v: Scan gave %+v, Parse %+v", in, quirks, got, want)
			}
		}
	}
}

// TestScanRealFile compares ScanFile with ReadFile on the SimPoint sample.
func TestScanRealFile(t *testing.T) {
	path := dataFile(t, "simpoint-3.2/sample/sample.bb")
	for _, quirks := range []bool{false, true} {
		opts := ParseOptions{SimPointQuirks: quirks}
		want, err := ReadFile(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		dim, err := ScanFile(path, opts, func(v Vector, line int) error {
			if !reflect.DeepEqual(v, want.Vectors[i]) || line != want.Lines[i] {
				t.Fatalf("quirks=%v: interval %d: got %v at line %d, want %v at line %d", quirks, i, v, line, want.Vectors[i], want.Lines[i])
			}
			i++
			return nil
		})
		if err != nil || dim != want.Dim || i != len(want.Vectors) {
			t.Fatalf("quirks=%v: ScanFile gave %d vectors of dimension %d, %v; want %d of %d", quirks, i, dim, err, len(want.Vectors), want.Dim)
		}
	}
}

// TestScanStops checks that an error of the callback ends the scan and
// is returned, and that an error of the input is too.
func TestScanStops(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	_, err := Scan("in.bb", strings.NewReader("T:1:1\nT:2:2\nT:3:3\n"), ParseOptions{}, func(Vector, int) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Errorf("got %v after %d calls, want stop after 2", err, calls)
	}
	_, err = Scan("in.bb", strings.NewReader("T:1:1\nT:0:2\n"), ParseOptions{}, func(Vector, int) error { return nil })
	if err == nil || !strings.HasPrefix(err.Error(), "in.bb:2: column 3: block id 0") {
		t.Errorf("bad id: got %v", err)
	}
}
