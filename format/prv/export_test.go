package prv

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

// exportMemory exports m (sorted first) to dir/name and returns the .prv path.
func exportMemory(t *testing.T, m *trace.Memory, dir, name string) (string, ExportStats) {
	t.Helper()
	m.Sort()
	out := filepath.Join(dir, name)
	st, err := Export(context.Background(), out, &m.H, m.Reader(), ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, _, _ := Paths(out)
	return p, st
}

// recordSet returns the canonical records sorted by every field.
func recordSet(m *trace.Memory) []trace.Record {
	out := make([]trace.Record, len(m.Records))
	for i, r := range m.Records {
		out[i] = r.Canonical()
	}
	slices.SortFunc(out, func(a, b trace.Record) int {
		if c := trace.Compare(a, b); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Value, b.Value),
			cmp.Compare(a.End, b.End), cmp.Compare(a.Peer, b.Peer), cmp.Compare(a.Tag, b.Tag),
			cmp.Compare(a.Comm, b.Comm), cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Flags, b.Flags))
	})
	return out
}

func diffRecords(t *testing.T, a, b []trace.Record) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%d records, then %d", len(a), len(b))
	}
	bad := 0
	for i := 0; i < min(len(a), len(b)) && bad < 5; i++ {
		if a[i] != b[i] {
			t.Errorf("record %d: %v, then %v", i, a[i], b[i])
			bad++
		}
	}
}

// dicts is the part of a header a round trip must keep.
func dicts(h *trace.Header) string {
	h.SortDicts()
	s := fmt.Sprintf("runs %d procs %d\n", len(h.Runs), h.Runs[0].Procs)
	for _, x := range h.States {
		s += fmt.Sprintf("state %d %q\n", x.ID, x.Name)
	}
	for _, x := range h.Events {
		s += fmt.Sprintf("event %d %q\n", x.ID, x.Name)
	}
	for _, x := range h.Counters {
		s += fmt.Sprintf("counter %d %q\n", x.ID, x.Name)
	}
	for _, x := range h.Regions {
		s += fmt.Sprintf("region %d %v %q\n", x.ID, x.Kind, x.Label)
	}
	for _, x := range h.Comms {
		s += fmt.Sprintf("comm %d %v\n", x.ID, x.Members)
	}
	for _, x := range h.Procs {
		s += fmt.Sprintf("proc %d %q %s.%s.%s node %s\n", x.Proc, x.Name, x.Extra["appl"], x.Extra["task"], x.Extra["thread"], x.Extra["node"])
	}
	return s
}

// TestRoundTrip imports each real trace, exports it, imports the export
// and checks that records and dictionaries are the same; a second export
// must then give the same files byte for byte.
func TestRoundTrip(t *testing.T) {
	for _, file := range []string{"qsort_beo3.prv", "lulesh_7+1_with_uncores_sockets1+2.chop8.prv", "444.namd.prv"} {
		t.Run(file, func(t *testing.T) {
			m1, err := formattest.Import(t, Importer{}, []string{realTrace(t, file)}, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			p1, st := exportMemory(t, m1, dir, "one")
			if st.Unmatched != 0 || st.Skipped != 0 || st.Records != int64(len(m1.Records)) {
				t.Errorf("export stats %+v, want all %d records and none unmatched or skipped", st, len(m1.Records))
			}
			m2, err := formattest.Import(t, Importer{}, []string{p1}, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			diffRecords(t, recordSet(m1), recordSet(m2))
			if d1, d2 := dicts(&m1.H), dicts(&m2.H); d1 != d2 {
				t.Errorf("dictionaries differ:\n--- original\n%s\n--- round trip\n%s", d1, d2)
			}
			for k, v := range m1.H.Meta.Extra {
				if len(k) > 11 && k[:11] == "prv.values." && m2.H.Meta.Extra[k] != v {
					t.Errorf("%s = %s after the round trip, want %s", k, m2.H.Meta.Extra[k], v)
				}
			}
			p2, _ := exportMemory(t, m2, dir, "two.prv")
			for _, ext := range []string{".prv", ".pcf", ".row"} {
				a, _ := os.ReadFile(p1[:len(p1)-4] + ext)
				b, _ := os.ReadFile(p2[:len(p2)-4] + ext)
				if string(a) != string(b) || len(a) == 0 {
					t.Errorf("second export's %s differs from the first (%d and %d bytes)", ext, len(a), len(b))
				}
			}
			leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
			if len(leftovers) != 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
		})
	}
}

// TestExportForeign exports a hand-built trace that did not come from
// Paraver and checks what importing the export gives back.
func TestExportForeign(t *testing.T) {
	m := &trace.Memory{}
	m.H.EnsureRun(0, 2)
	m.H.States = []trace.StateDef{{ID: 1, Name: "Run"}, {ID: 2, Name: "Wait"}}
	m.H.Regions = []trace.RegionDef{{ID: 5, Kind: trace.RegionLoop, Label: "solve", Parent: -1}}
	m.H.Events = []trace.EventDef{{ID: 7, Name: "iter"}}
	m.H.Counters = []trace.CounterDef{{ID: 2, Name: "flops"}}
	m.H.Comms = []trace.CommDef{{ID: 0}}
	m.H.Procs = []trace.ProcInfo{{Proc: 0, Name: "rank 0"}, {Proc: 1, Name: "rank 1"}}
	for _, r := range []trace.Record{
		trace.State(0, 0, 0, 1), trace.State(0, 1, 0, 1),
		trace.Enter(0, 0, 10, 5),
		trace.Recv(0, 1, 15, 28, 0, 64, 3, 0),
		trace.Send(0, 0, 20, 25, 1, 64, 3, 0),
		trace.Exit(0, 0, 30, 5),
		trace.Send(0, 1, 35, 0, 0, 8, 1, 0), // never received
		trace.Event(0, 0, 40, 7, 9),
		trace.Counter(0, 0, 50, 2, 3),
		trace.State(0, 0, 60, 2),
		trace.Coll(0, 0, 70, 80, trace.OpBarrier, trace.NoPeer, 0, 0),
		trace.Coll(0, 1, 70, 80, trace.OpBarrier, trace.NoPeer, 0, 0),
	} {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	p, st := exportMemory(t, m, t.TempDir(), "foreign.prv")
	if st.Unmatched != 1 || st.Records != 12 || st.Lines != 10 {
		t.Errorf("stats %+v, want 12 records, 10 lines (3 states, 1 message), 1 unmatched", st)
	}
	back, err := formattest.Import(t, Importer{}, []string{p}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &trace.Memory{Records: []trace.Record{
		trace.State(0, 0, 0, 1), trace.State(0, 1, 0, 1),
		trace.Enter(0, 0, 10, 2*FunctionRegionScale+6), // user function value 6
		trace.Recv(0, 1, 15, 28, 0, 64, 3, 0),
		trace.Send(0, 0, 20, 25, 1, 64, 3, 0),
		trace.Exit(0, 0, 30, 2*FunctionRegionScale+6),
		trace.Event(0, 0, 40, 7, 9),
		trace.Counter(0, 0, 50, CounterTypeMin+2, 3),
		trace.State(0, 0, 60, 2),
		trace.Coll(0, 0, 70, 0, trace.OpBarrier, trace.NoPeer, 0, 0),
		trace.Coll(0, 1, 70, 0, trace.OpBarrier, trace.NoPeer, 0, 0),
	}}
	diffRecords(t, recordSet(want), recordSet(back))
	ix := trace.NewIndex(&back.H)
	for _, c := range []struct{ got, want string }{
		{ix.StateName(1), "Run"}, {ix.StateName(2), "Wait"}, {ix.EventName(7), "iter"},
		{back.H.Meta.Extra["prv.type.60000019"], "User function"}, {ix.RegionName(2*FunctionRegionScale + 6), "solve"},
		{ix.Counter(CounterTypeMin + 2).Name, "flops"},
		{back.H.Procs[1].Name, "rank 1"}, {back.H.Meta.Extra["prv.values.60000019"], `{"0":"End","6":"solve"}`},
		{back.H.Meta.Extra["prv.duration_ns"], "80"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
