package phase

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/bbv"
)

// TestRunFileEqualsRun checks that projecting while reading gives Run's
// result on the parsed file, in both modes and both parser modes, on the
// real data sets.
func TestRunFileEqualsRun(t *testing.T) {
	for _, name := range []string{"bzip2_rt_100M.bb.gz", "phases.bb.gz"} {
		path := dataFile(t, name)
		for _, mode := range []Mode{Compat, Default} {
			for _, vli := range []bool{false, true} {
				popts := bbv.ParseOptions{SimPointQuirks: mode == Compat}
				opts := DefaultOptions()
				opts.Mode, opts.VariableLength, opts.MaxK = mode, vli, 12
				f, err := bbv.ReadFile(path, popts)
				if err != nil {
					t.Fatal(err)
				}
				want, err := Run(context.Background(), f, opts)
				if err != nil {
					t.Fatal(err)
				}
				got, err := RunFile(context.Background(), path, popts, opts)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %v vli=%v: RunFile and Run differ: k %d / %d, BIC %v / %v", name, mode, vli, got.K, want.K,
						got.Evaluated[got.Chosen].BIC, want.Evaluated[want.Chosen].BIC)
				}
			}
		}
	}
}

// TestRunFileErrors checks that RunFile reports the errors Run on the
// parsed file would, in the same order.
func TestRunFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	q := bbv.ParseOptions{SimPointQuirks: true}
	seed1 := DefaultOptions()
	seed1.SeedProj = 1
	noProj := DefaultOptions()
	noProj.Dim = NoProject
	for _, tc := range []struct {
		name, in string
		popts    bbv.ParseOptions
		opts     Options
	}{
		{"empty", "# nothing\n", q, DefaultOptions()},
		{"negative count", "T:1:2\nT:1:-1 :2:1\nT:3:3\n", q, DefaultOptions()},
		{"zero sum", "T:1:2\nT:1:0\n", bbv.ParseOptions{}, DefaultOptions()},
		{"parse error after a bad interval", "T:1:-1\nT:-3:1\n", q, DefaultOptions()},
		{"strict parse error", "T:1:2\nT:1:x\n", bbv.ParseOptions{}, DefaultOptions()},
		{"seed 1", "T:1:2\nT:2:2\n", q, seed1},
		{"seed 1 and a bad interval", "T:1:2\nT:2:-2\n", q, seed1},
		{"no projection, bad interval", "T:1:2\nT:2:-2\n", q, noProj},
	} {
		path := write("in.bb", tc.in)
		var want error
		f, err := bbv.ReadFile(path, tc.popts)
		if err != nil {
			want = err
		} else {
			_, want = Run(context.Background(), f, tc.opts)
		}
		_, got := RunFile(context.Background(), path, tc.popts, tc.opts)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%s: RunFile error %v, want %v", tc.name, got, want)
		}
	}
}

// writeBigBBV writes a strict BBV file of about 6 MB (enough for
// RunFile to read it in parts) whose line line (1-based) is replaced by
// bad when line > 0, and returns its path.
func writeBigBBV(t *testing.T, line int, bad string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 4))
	var b bytes.Buffer
	for n := 1; b.Len() < 6<<20; n++ {
		if n == line {
			b.WriteString(bad + "\n")
			continue
		}
		b.WriteString("T")
		phase := (n / 50) % 4
		for j := 0; j < 150; j++ {
			fmt.Fprintf(&b, ":%d:%d ", 1+phase*200+j, 1+rng.IntN(1000))
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "big.bb")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunFileParts checks RunFile on a file it reads in parts, with the
// strict parser and with SimPoint's: the projected rows, sums and
// dimension are those of one reader, bit for bit, for 2 and 3 parts, and
// so is the result; an error anywhere in
// the file is reported as Run reports it, at its line.
func TestRunFileParts(t *testing.T) {
	path := writeBigBBV(t, 0, "")
	for _, mode := range []Mode{Default, Compat} {
		popts := bbv.ParseOptions{SimPointQuirks: mode == Compat}
		opts := DefaultOptions()
		opts.Mode, opts.MaxK = mode, 6
		one, err := newProjector(&opts)
		if err != nil {
			t.Fatal(err)
		}
		n, err := scanChecked(context.Background(), path, popts, one, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := one.dataset(false)
		for _, workers := range []int{2, 3} {
			o := opts
			o.Workers = workers
			p, err := scanParts(context.Background(), path, popts, &o)
			if err != nil || p == nil {
				t.Fatalf("%v, %d workers: projector %v, error %v; want the file read in parts", mode, workers, p, err)
			}
			got := p.dataset(false)
			if got.n != n || got.inDim != want.inDim || !reflect.DeepEqual(got.sums, want.sums) || !reflect.DeepEqual(got.w, want.w) {
				t.Fatalf("%v, %d workers: %d rows of dimension %d, want %d of %d (or the sums differ)", mode, workers, got.n, got.inDim, n, want.inDim)
			}
			for i := 0; i < n; i++ {
				if !reflect.DeepEqual(got.row(i), want.row(i)) {
					t.Fatalf("%v, %d workers: row %d differs", mode, workers, i)
				}
			}
		}
		f, err := bbv.ReadFile(path, popts)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := Run(context.Background(), f, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 2} {
			o := opts
			o.Workers = workers
			res, err := RunFile(context.Background(), path, popts, o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res, ref) {
				t.Fatalf("%v, %d workers: RunFile differs from Run", mode, workers)
			}
		}
	}

	for _, tc := range []struct {
		line   int
		bad    string
		quirks bool
		msg    string
	}{
		{4000, "T:1:2 :1:3", false, "big.bb:4000:"},  // a parse error near the end (of about 4,400 lines)
		{4100, "T:5:0", false, "big.bb:4100:"},       // an interval that does not check
		{3, "T:1:x", false, "big.bb:3:"},             // in the first part
		{4200, "T:3:1 :4:-1", false, "big.bb:4200:"}, // a negative count
		{4200, "T:3:1 :4:-1", true, "big.bb:4200:"},  // which SimPoint's parser reads
		{4300, "T:0:1", true, "big.bb:4300:"},        // an id SimPoint aborts on
	} {
		path := writeBigBBV(t, tc.line, tc.bad)
		popts := bbv.ParseOptions{SimPointQuirks: tc.quirks}
		opts := DefaultOptions()
		opts.Mode, opts.MaxK = Default, 6
		var want error
		if f, err := bbv.ReadFile(path, popts); err != nil {
			want = err
		} else {
			_, want = Run(context.Background(), f, opts)
		}
		opts.Workers = 2
		_, got := RunFile(context.Background(), path, popts, opts)
		if want == nil || got == nil || got.Error() != want.Error() || !strings.Contains(got.Error(), tc.msg) {
			t.Errorf("%q at line %d (quirks %v): RunFile error %v, want %v (naming %q)", tc.bad, tc.line, tc.quirks, got, want, tc.msg)
		}
	}
}

// TestRowsReleased checks the memory that a run holds as it ends: the
// dataset's last chunk of rows is cut to the rows it holds, cluster drops
// the rows before it finds the hints, and the result still has the hints
// of its labels.
func TestRowsReleased(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxK = 6
	p, err := newProjector(&opts)
	if err != nil {
		t.Fatal(err)
	}
	n := rowsPerChunk + 777
	rng := rand.New(rand.NewPCG(3, 5))
	row := make([]float64, opts.Dim)
	for i := 0; i < n; i++ {
		for j := range row {
			row[j] = float64(i%5) + rng.Float64()/10
		}
		p.addRow(row, 1)
	}
	want := slices.Clone(p.row(n - 1))
	ds := p.dataset(false)
	if len(ds.chunks) != 2 || len(ds.chunks[1]) != 777*opts.Dim {
		t.Fatalf("last chunk: %d chunks, the last of %d values; want 2, %d", len(ds.chunks), len(ds.chunks[len(ds.chunks)-1]), 777*opts.Dim)
	}
	if got := ds.row(n - 1); !slices.Equal(got, want) {
		t.Fatalf("last row %v after the cut, %v before", got, want)
	}
	res, err := cluster(context.Background(), ds, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ds.chunks != nil || ds.x != nil {
		t.Error("cluster kept the rows of its dataset")
	}
	if res.K != 5 {
		t.Errorf("k = %d, want the 5 groups of rows", res.K)
	}
	if h := FindHints(res.Labels); !reflect.DeepEqual(res.Hints, h) || len(h.Runs) < 5 {
		t.Errorf("the result's hints (%d runs) are not those of its labels (%d runs)", len(res.Hints.Runs), len(h.Runs))
	}
}
