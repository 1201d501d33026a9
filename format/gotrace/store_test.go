package gotrace

import (
	"slices"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// TestStoreRoundTrip imports a real trace into a .pst store and reads it
// back: the store holds the same records and dictionaries as an import
// into memory.
func TestStoreRoundTrip(t *testing.T) {
	path := realFile(t, "test-encoding-json.go1.25.trace")
	mem := importFile(t, nil, path)
	st := formattest.ImportStore(t, Importer{}, []string{path}, format.Options{}, nil)
	got, err := trace.ReadAll(st.Records(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	mem.Sort()
	if len(got) != len(mem.Records) {
		t.Fatalf("the store holds %d records, the import made %d", len(got), len(mem.Records))
	}
	key := func(r trace.Record) string { return r.String() }
	a, b := make([]string, len(got)), make([]string, len(got))
	for i := range got {
		a[i], b[i] = key(got[i]), key(mem.Records[i])
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Error("the store's records differ from the import's")
	}
	h := st.Header()
	if h.Runs[0].Procs != 624 || len(h.Procs) != 624 || len(h.Events) != len(mem.H.Events) || len(h.States) != 6 {
		t.Errorf("store header: %d procs, %d proc infos, %d events, %d states", h.Runs[0].Procs, len(h.Procs), len(h.Events), len(h.States))
	}
}
