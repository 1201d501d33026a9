package storetest

import (
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// TestNew: the store holds the header and the records given, under the
// name given.
func TestNew(t *testing.T) {
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: 2}},
		States: []trace.StateDef{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}}}
	recs := []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 1, 5, 1), trace.State(0, 0, 10, 1)}
	s := New(t, "two.pst", h, recs)
	if got := filepath.Base(s.Dir()); got != "two.pst" {
		t.Errorf("store %s, want two.pst", got)
	}
	if got := s.Header(); len(got.States) != 2 || got.States[1].Name != "b" || len(got.Runs) != 1 || got.Runs[0].Procs != 2 {
		t.Errorf("header %+v", got)
	}
	back, err := trace.ReadAll(s.Records(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(recs) {
		t.Fatalf("%d records read back, want %d", len(back), len(recs))
	}
	for i := range recs {
		if back[i].T != recs[i].T || back[i].Proc != recs[i].Proc || back[i].ID != recs[i].ID {
			t.Errorf("record %d: %v, want %v", i, back[i], recs[i])
		}
	}
}

// TestCreateEmpty: with no header and no records, Create still writes a
// store that opens.
func TestCreateEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.pst")
	Create(t, path, nil, nil)
	if n := Open(t, path).Manifest().Stats.Records["state"]; n != 0 {
		t.Errorf("%d state records", n)
	}
}

// TestCopy: a copy opens as the original, and holds the same files.
func TestCopy(t *testing.T) {
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: 1}},
		States: []trace.StateDef{{ID: 0, Name: "a"}}}
	s := New(t, "one.pst", h, []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 0, 7, 0)})
	to := filepath.Join(t.TempDir(), "copy.pst")
	Copy(t, s.Dir(), to)
	c := Open(t, to)
	back, err := trace.ReadAll(c.Records(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[1].T != 7 || c.Header().States[0].Name != "a" {
		t.Fatalf("the copy holds %v, header %+v", back, c.Header())
	}
	from, _ := filepath.Glob(filepath.Join(s.Dir(), "*"))
	copied, _ := filepath.Glob(filepath.Join(to, "*"))
	if len(from) == 0 || len(copied) != len(from) {
		t.Fatalf("%d files copied of %d", len(copied), len(from))
	}
}

// TestCreateFrom: a store written from a reader holds its records.
func TestCreateFrom(t *testing.T) {
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: 3}},
		States: []trace.StateDef{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}}}
	var recs []trace.Record
	for i := range int64(10000) {
		recs = append(recs, trace.State(0, int32(i%3), i, int32(i/7%2)))
	}
	path := filepath.Join(t.TempDir(), "from.pst")
	CreateFrom(t, path, h, trace.NewSliceReader(recs))
	back, err := trace.ReadAll(Open(t, path).Records(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(recs) {
		t.Fatalf("%d records read back, want %d", len(back), len(recs))
	}
	for i := range recs {
		if back[i].T != recs[i].T || back[i].Proc != recs[i].Proc || back[i].ID != recs[i].ID {
			t.Fatalf("record %d: %v, want %v", i, back[i], recs[i])
		}
	}
}
