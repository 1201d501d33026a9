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

// TestCommonClock: -clock sim records on the simulated clock with the
// model the -sim flags give (blocks 250 ns apart here), -clock wall on
// the measured clock, and another value is refused.
func TestCommonClock(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		clock string
	}{
		{[]string{"-clock", "sim", "-sim-block-ns", "250", "-sim-latency-ns", "7", "-sim-bandwidth", "0.5"}, "simulated"},
		{nil, ""},
	} {
		var c Common
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		c.Register(fs)
		c.RegisterClock(fs)
		pst := filepath.Join(t.TempDir(), "x.pst")
		if err := fs.Parse(append([]string{"-o", pst, "-entropy-filter=false"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		rec, err := c.Start(instrument.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := rec.Process(0)
		for _, s := range []int32{1, 2, 3} {
			p.Block(s)
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
		x := st.Header().Meta.Extra
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if tc.clock == "simulated" {
			if x["clock"] != "simulated" || x["sim_block_ns"] != "250" || x["sim_latency_ns"] != "7" || x["sim_bandwidth_bytes_per_ns"] != "0.5" {
				t.Errorf("%v: metadata %v", tc.args, x)
			}
			if len(recs) != 3 || recs[0].T != 0 || recs[1].T != 250 || recs[2].T != 500 {
				t.Errorf("%v: states %v, want at 0, 250, 500 ns", tc.args, recs)
			}
		} else if x["clock"] == "simulated" || x["start"] == "" {
			t.Errorf("default clock: metadata %v, want a measured clock and a start time", x)
		}
	}
	c := Common{Clock: "lamport"}
	if _, err := c.Start(instrument.Options{Path: filepath.Join(t.TempDir(), "y.pst")}); err == nil {
		t.Error("-clock lamport accepted")
	}
}
