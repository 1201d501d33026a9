package bbv

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/realdata"
)

// dataFile returns the path of a real BBV file of testdata/real/bbv,
// failing the test when it is missing.
func dataFile(t testing.TB, rel string) string {
	t.Helper()
	return realdata.Path(t, "bbv/"+rel)
}

func parseString(t *testing.T, s string, opts ParseOptions) (*File, error) {
	t.Helper()
	return Parse("in.bb", strings.NewReader(s), opts)
}

func TestSampleFile(t *testing.T) {
	path := dataFile(t, "simpoint-3.2/sample/sample.bb")
	for _, quirks := range []bool{false, true} {
		f, err := ReadFile(path, ParseOptions{SimPointQuirks: quirks})
		if err != nil {
			t.Fatalf("quirks=%v: %v", quirks, err)
		}
		if len(f.Vectors) != 500 || f.Dim != 50 {
			t.Fatalf("quirks=%v: got %d×%d, want 500×50", quirks, len(f.Vectors), f.Dim)
		}
		for i, v := range f.Vectors {
			if s := v.Sum(); s != 1000 {
				t.Fatalf("vector %d sums to %g, want 1000", i, s)
			}
			if f.Lines[i] != i+1 {
				t.Fatalf("vector %d comes from line %d, want %d", i, f.Lines[i], i+1)
			}
		}
		// First line: "T:1:48 :3:24 :4:12 ..."
		v0 := f.Vectors[0]
		if v0.Blocks[0] != 1 || v0.Counts[0] != 48 || v0.Blocks[1] != 3 || v0.Counts[1] != 24 {
			t.Errorf("first pairs = %v %v, want [1 3 ...] [48 24 ...]", v0.Blocks[:2], v0.Counts[:2])
		}
	}
}

// TestRealFiles checks the two valgrind exp-bbv files against the table
// of testdata/real/bbv/README.md.
func TestRealFiles(t *testing.T) {
	for _, tc := range []struct {
		file           string
		intervals      int
		dim            int32
		size           float64
		avgNNZ, maxLen int
	}{
		{"bzip2_rt_100M.bb.gz", 260, 4235, 100000000, 199, 31037},
		{"phases.bb.gz", 1315, 2497, 10000000, 28, 23941},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := dataFile(t, tc.file)
			strict, err := ReadFile(path, ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(strict.Vectors) != tc.intervals || strict.Dim != tc.dim {
				t.Fatalf("got %d intervals, dim %d; want %d, %d", len(strict.Vectors), strict.Dim, tc.intervals, tc.dim)
			}
			for i, v := range strict.Vectors {
				if s := v.Sum(); s != tc.size && s != tc.size+1 {
					t.Errorf("interval %d (line %d) sums to %.0f, want %.0f or %.0f", i, strict.Lines[i], s, tc.size, tc.size+1)
				}
			}
			if got := (strict.NNZ() + tc.intervals/2) / tc.intervals; got != tc.avgNNZ {
				t.Errorf("average nonzeros per line = %d, want %d", got, tc.avgNNZ)
			}
			quirks, err := ReadFile(path, ParseOptions{SimPointQuirks: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(strict, quirks) {
				t.Error("strict and SimPoint-quirk parses differ on a well-formed file")
			}
		})
	}
}

func TestGzipEqualsPlain(t *testing.T) {
	path := dataFile(t, "simpoint-3.2/sample/sample.bb")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := formattest.Gzip(t, raw)
	a, err := Parse("x", bytes.NewReader(raw), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("x", bytes.NewReader(gz), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("gzipped and plain parses differ")
	}
	// A truncated gzip stream is a located error, not a short file.
	_, err = Parse("x.gz", bytes.NewReader(gz[:len(gz)/2]), ParseOptions{})
	var fe *format.Error
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "truncated or corrupt gzip") {
		t.Fatalf("truncated gzip: got %v, want a format.Error about a truncated stream", err)
	}
}

func TestStrict(t *testing.T) {
	_, err := parseString(t, "# header\n\nT:3:10   :1:5\tT\n", ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "in.bb:3: column 15:") {
		t.Fatalf("got %v, want an error at in.bb:3 column 15", err)
	}
	f, err := parseString(t, "# header\n\nT:3:10   :1:5   \nT:2:1.5e3:7:0\n\n# Thread 1\n#   Total intervals: 2\n", ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := &File{Name: "in.bb", Dim: 7, Lines: []int{3, 4}, Vectors: []Vector{
		{Blocks: []int32{3, 1}, Counts: []float64{10, 5}},
		{Blocks: []int32{2, 7}, Counts: []float64{1500, 0}},
	}}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v, want %+v", f, want)
	}
	// A final line without a newline is a line like any other.
	f, err = parseString(t, "T:1:1\nT:2:2", ParseOptions{})
	if err != nil || len(f.Vectors) != 2 {
		t.Fatalf("unterminated last line: got %v, %v; want 2 vectors", f, err)
	}
	// An empty input has no vectors and no error.
	f, err = parseString(t, "", ParseOptions{})
	if err != nil || len(f.Vectors) != 0 || f.Dim != 0 {
		t.Fatalf("empty input: got %+v, %v", f, err)
	}
}

func TestStrictErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"T:1:1\nT\n", "in.bb:2: T line with no :block:count pairs"},
		{"T:1:1\nT   \n", "in.bb:2: T line with no :block:count pairs"},
		{"T:1:1\nT:0:5\n", "in.bb:2: column 3: block id 0: ids are 1-based"},
		{"T:1:-5\n", "in.bb:1: column 5: negative count"},
		{"T:1:5 :2:\n", "in.bb:1: column 10: expected a count"},
		{"T:1:5 :x:3\n", "in.bb:1: column 8: expected a block id"},
		{"T:1:5 2:3\n", "in.bb:1: column 7: expected ':' before a block id"},
		{"T 1:5\n", "in.bb:1: column 3: expected ':' before a block id"},
		{"T:1 5\n", "in.bb:1: column 4: expected ':' after block id 1"},
		{"T:1:5x\n", "in.bb:1: column 6: expected a blank or ':' after the count of block 1"},
		{"T:1:5 :1:6\n", "in.bb:1: column 8: block id 1 appears twice"},
		{"T:1:1e999\n", "in.bb:1: column 5: bad count \"1e999\""},
		{"T:1:1.2.3\n", "in.bb:1: column 5: bad count \"1.2.3\""},
		{"T:1:+3\n", "in.bb:1: column 5: expected a count"},
		{"T:99999999999999999999:1\n", "in.bb:1: column 3: block id 99999999999999999999 exceeds the limit 16777216"},
		{"\n\nT:16777217:1\n", "in.bb:3: column 3: block id 16777217 exceeds the limit"},
	} {
		_, err := parseString(t, tc.in, ParseOptions{})
		var fe *format.Error
		if !errors.As(err, &fe) {
			t.Errorf("%q: got %v, want a *format.Error", tc.in, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got  %v\n want %s...", tc.in, err, tc.want)
		}
	}
}

func TestMaxDim(t *testing.T) {
	_, err := parseString(t, "T:11:1\n", ParseOptions{MaxDim: 10})
	if err == nil || !strings.Contains(err.Error(), "exceeds the limit 10") {
		t.Fatalf("got %v", err)
	}
	_, err = parseString(t, "T:11:1\n", ParseOptions{MaxDim: 10, SimPointQuirks: true})
	if err == nil || !strings.Contains(err.Error(), "exceeds the limit 10") {
		t.Fatalf("quirks: got %v", err)
	}
	f, err := parseString(t, "T:2147483647:1\n", ParseOptions{MaxDim: 1<<31 - 1})
	if err != nil || f.Dim != 1<<31-1 {
		t.Fatalf("largest id: got %v, %v", f, err)
	}
}

func TestQuirks(t *testing.T) {
	q := ParseOptions{SimPointQuirks: true}
	for _, tc := range []struct {
		name, in string
		want     []Vector
	}{
		{"empty T line ends the input", "T:1:1\nT\nT:2:2\n", []Vector{{[]int32{1}, []float64{1}}}},
		{"T line with only junk ends the input", "T:1:1\nT:x:y\nT:2:2\n", []Vector{{[]int32{1}, []float64{1}}}},
		{"final line without newline is dropped", "T:1:1\nT:2:2", []Vector{{[]int32{1}, []float64{1}}}},
		{"but not a final non-T line", "T:1:1\n# end", []Vector{{[]int32{1}, []float64{1}}}},
		{"separators are not checked", "T x 12 y 3.5 ;4;-1\n", []Vector{{[]int32{12, 4}, []float64{3.5, -1}}}},
		{"a bad pair ends the line", "T:1:2 :3:x :4:5\n", []Vector{{[]int32{1}, []float64{2}}}},
		{"doubles with exponents", "T:1:1e3 :2:.5 :3:7.\n", []Vector{{[]int32{1, 2, 3}, []float64{1000, 0.5, 7}}}},
		{"int overflow fails the extraction", "T:1:2 :2147483648:1\n", []Vector{{[]int32{1}, []float64{2}}}},
		{"incomplete exponent fails the extraction", "T:1:2 :2:1e\n", []Vector{{[]int32{1}, []float64{2}}}},
		{"duplicates kept", "T:1:2 :1:3\n\n", []Vector{{[]int32{1, 1}, []float64{2, 3}}}},
		{"CRLF", "T:1:2\r\nT:2:3\r\n", []Vector{{[]int32{1}, []float64{2}}, {[]int32{2}, []float64{3}}}},
	} {
		f, err := parseString(t, tc.in, q)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(f.Vectors, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, f.Vectors, tc.want)
		}
	}
	// Ids below 1 are fatal in SimPoint too.
	_, err := parseString(t, "T:1:1\nT:-3:1\n", q)
	if err == nil || !strings.HasPrefix(err.Error(), "in.bb:2: column 3: block id -3") {
		t.Errorf("negative id: got %v", err)
	}
	// A line SimPoint cannot hold in its buffer.
	long := "T:1:1" + strings.Repeat(" ", simPointMaxLine) + "\n"
	if _, err := parseString(t, long, q); err == nil || !strings.Contains(err.Error(), "too long for SimPoint") {
		t.Errorf("1 MiB line: got %v", err)
	}
	if f, err := parseString(t, long, ParseOptions{}); err != nil || len(f.Vectors) != 1 {
		t.Errorf("1 MiB line, strict: got %v", err)
	}
}

// TestUnterminatedSample reproduces the test in docs/simpoint-3.2.md §1: removing
// the last newline of sample.bb gives 499 vectors instead of 500.
func TestUnterminatedSample(t *testing.T) {
	raw, err := os.ReadFile(dataFile(t, "simpoint-3.2/sample/sample.bb"))
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.TrimSuffix(raw, []byte("\n"))
	f, err := Parse("x", bytes.NewReader(raw), ParseOptions{SimPointQuirks: true})
	if err != nil || len(f.Vectors) != 499 || f.Dim != 50 {
		t.Fatalf("got %v vectors, %v", len(f.Vectors), err)
	}
	f, err = Parse("x", bytes.NewReader(raw), ParseOptions{})
	if err != nil || len(f.Vectors) != 500 {
		t.Fatalf("strict: got %v vectors, %v", len(f.Vectors), err)
	}
}

func TestLongLines(t *testing.T) {
	// 40000 pairs make a line of about 400 KB, beyond bufio.Scanner's
	// default limit and LineReader's buffer.
	var b strings.Builder
	for round := 0; round < 2; round++ {
		b.WriteString("T")
		for i := 1; i <= 40000; i++ {
			b.WriteString("   :")
			b.WriteString(itoa(i))
			b.WriteString(":")
			b.WriteString(itoa(i % 97))
		}
		b.WriteString("\n")
	}
	if b.Len() < 2*200_000 {
		t.Fatalf("test line too short: %d", b.Len())
	}
	for _, q := range []bool{false, true} {
		f, err := parseString(t, b.String(), ParseOptions{SimPointQuirks: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Vectors) != 2 || f.Dim != 40000 || len(f.Vectors[1].Blocks) != 40000 || f.Vectors[1].Counts[39999] != 40000%97 {
			t.Fatalf("quirks=%v: got %d vectors, dim %d", q, len(f.Vectors), f.Dim)
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for ; i > 0; i /= 10 {
		n--
		b[n] = byte('0' + i%10)
	}
	return string(b[n:])
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadErrors(t *testing.T) {
	_, err := Parse("broken", io.MultiReader(strings.NewReader("T:1:1\n"), errReader{}), ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.HasPrefix(err.Error(), "broken:2:") {
		t.Fatalf("got %v", err)
	}
	if _, err := ReadFile("does/not/exist.bb", ParseOptions{}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: got %v", err)
	}
}

func BenchmarkParse(b *testing.B) {
	path := dataFile(b, "phases.bb.gz")
	zr, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer zr.Close()
	gr, err := gzip.NewReader(zr)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(gr)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []bool{false, true} {
		name := "strict"
		if q {
			name = "quirks"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Parse("phases.bb", bytes.NewReader(raw), ParseOptions{SimPointQuirks: q}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("gzip", func(b *testing.B) {
		gz, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(raw))) // uncompressed bytes per second
		for b.Loop() {
			if _, err := Parse("phases.bb.gz", bytes.NewReader(gz), ParseOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
