package workload

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// TestCommonEntropyFilter: by default an example records through the
// entropy filter (a run of 10 repeats of one state over 7 states keeps
// its first two, Table 4 with K = 100 and threshold 0.1);
// -entropy-filter=false records all 30.
func TestCommonEntropyFilter(t *testing.T) {
	states := make([]trace.StateDef, 7)
	for i := range states {
		states[i] = trace.StateDef{ID: int32(i), Name: string(rune('a' + i))}
	}
	for _, tc := range []struct {
		args  []string
		procs int
		want  int
	}{{nil, 2, 6}, {nil, 0, 6}, {[]string{"-entropy-filter=false"}, 2, 30}} {
		var c Common
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		c.Register(fs)
		pst := filepath.Join(t.TempDir(), "x.pst")
		if err := fs.Parse(append([]string{"-o", pst}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		c.Procs = tc.procs
		rec, err := c.Start(instrument.Options{States: states})
		if err != nil {
			t.Fatal(err)
		}
		p := rec.Process(1)
		for _, s := range []int32{1, 2, 3} {
			for range 10 {
				p.Block(s)
			}
		}
		p.Done()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(pst)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := trace.ReadAll(st.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}}))
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != tc.want {
			t.Errorf("%v, %d processes: %d states recorded, want %d", tc.args, tc.procs, len(recs), tc.want)
		}
	}
}
