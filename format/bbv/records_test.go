package bbv

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// TestFromRecordsRoundTrip imports real files into a .pst store and checks
// that the records read back give exactly the vectors the parser builds.
func TestFromRecordsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := dataFile(t, "phases.bb.gz")
	b := formattest.WriteFile(t, dir, "bb.out.7", "T:3:10   :1:5\nT:2:1\n# trailer\n")
	s := formattest.ImportStore(t, Importer{}, []string{b, a}, format.Options{}, func(h *trace.Header) { h.Meta.ClockResolution = 1 })
	streams, err := FromRecords(context.Background(), "x.pst", s.BBV(store.ReadOptions{}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(streams) != 2 {
		t.Fatalf("%d streams, want 2", len(streams))
	}
	// bb.out.7 has the smaller key: process 0.
	for i, path := range []string{b, a} {
		want, err := ReadFile(path, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := streams[i]
		if got.Run != 0 || got.Proc != int32(i) || got.File.Dim != want.Dim || !reflect.DeepEqual(got.File.Vectors, want.Vectors) {
			t.Errorf("process %d: run %d proc %d dim %d, %d vectors; want proc %d dim %d, %d vectors (equal: %v)", i,
				got.Run, got.Proc, got.File.Dim, len(got.File.Vectors), i, want.Dim, len(want.Vectors),
				reflect.DeepEqual(got.File.Vectors, want.Vectors))
		}
		if wantName := "x.pst run 0 proc " + string(rune('0'+i)); got.File.Name != wantName {
			t.Errorf("name %q, want %q", got.File.Name, wantName)
		}
	}
	// A selection of one process.
	one, err := FromRecords(context.Background(), "x.pst", s.BBV(store.ReadOptions{Procs: []int32{0}}), 0)
	if err != nil || len(one) != 1 || len(one[0].File.Vectors) != 2 || one[0].File.Vectors[0].Blocks[0] != 3 {
		t.Fatalf("selection: %v %+v", err, one)
	}
}

func TestFromRecordsErrors(t *testing.T) {
	bbvRec := trace.BBV
	for _, tc := range []struct {
		name string
		recs []trace.Record
		want string
	}{
		{"gap", []trace.Record{bbvRec(0, 0, 0, 0, 1, 5), bbvRec(0, 0, 2, 0, 1, 5)}, "run 0 process 0 interval 2: intervals 1 to 1 have no entries"},
		{"late start", []trace.Record{bbvRec(0, 1, 3, 0, 1, 5)}, "process 1 interval 3: intervals 0 to 2 have no entries"},
		{"backwards", []trace.Record{bbvRec(0, 0, 0, 0, 1, 5), bbvRec(0, 0, 1, 0, 1, 5), bbvRec(0, 0, 0, 0, 2, 5)}, "interval 0: comes after interval 1"},
		{"id 0", []trace.Record{bbvRec(0, 0, 0, 0, 0, 5)}, "block id 0 outside 1..100"},
		{"huge id", []trace.Record{bbvRec(0, 0, 0, 0, 101, 5)}, "block id 101 outside 1..100"},
		{"negative", []trace.Record{bbvRec(0, 0, 0, 0, 1, -5)}, "block 1 has negative count -5"},
		{"duplicate", []trace.Record{bbvRec(0, 0, 0, 0, 1, 5), bbvRec(0, 0, 0, 0, 1, 5)}, "block 1 appears twice"},
		{"interleaved", []trace.Record{bbvRec(0, 0, 0, 0, 1, 5), bbvRec(0, 1, 0, 0, 1, 5), bbvRec(0, 0, 1, 0, 1, 5)}, "run 0 process 0 are not contiguous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromRecords(context.Background(), "t.pst", trace.NewSliceReader(tc.recs), 100)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bbv: t.pst: ") {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Other kinds are skipped; a duplicate block in a later interval is fine.
	recs := []trace.Record{trace.State(0, 0, 5, 1), bbvRec(0, 0, 0, 0, 4, 5), bbvRec(0, 0, 1, 0, 4, 6)}
	got, err := FromRecords(context.Background(), "t.pst", trace.NewSliceReader(recs), 0)
	if err != nil || len(got) != 1 || len(got[0].File.Vectors) != 2 || got[0].File.Dim != 4 || got[0].File.Vectors[1].Counts[0] != 6 {
		t.Fatalf("got %v %+v", err, got)
	}
}
