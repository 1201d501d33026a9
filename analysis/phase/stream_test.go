package phase

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
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
