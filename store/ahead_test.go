package store

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestReadAhead reads a store of many row groups with the next group
// decoded ahead, without, and a record at a time, filtered and not, and
// checks that every way returns the same records as the filter selects
// from the input. A reader abandoned half-way, its group decoding ahead,
// must not disturb the store's Close (go test -race runs this too).
func TestReadAhead(t *testing.T) {
	mem, streams := randomTrace(7, 2, 6, 6000, 10)
	var input []trace.Record
	for _, s := range streams {
		input = append(input, s...)
	}
	path := filepath.Join(t.TempDir(), "a.pst")
	writeStore(t, path, Options{GroupRows: 40}, mem.H, input)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if g := len(s.tables[tStates].groups); g < 10 {
		t.Fatalf("%d row groups of states: too few to read ahead", g)
	}
	timed, _ := splitBBV(input)
	all := tableOrder(canonical(timed))
	filtered := ReadOptions{Runs: []int32{1}, Procs: []int32{0, 3, 5}, From: 20000, To: 90000}
	var want []trace.Record
	for _, r := range all {
		if r.Run == 1 && (r.Proc == 0 || r.Proc == 3 || r.Proc == 5) && r.T >= 20000 && r.T < 90000 {
			want = append(want, r)
		}
	}
	if len(want) == 0 {
		t.Fatal("the filter selects nothing")
	}
	oneByOne := func(rd trace.Reader) []trace.Record {
		var out []trace.Record
		buf := make([]trace.Record, 1)
		for {
			n, err := rd.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				return out
			}
		}
	}
	defer func(v int64) { maxAheadRows = v }(maxAheadRows)
	for _, ahead := range []int64{0, 1 << 20} {
		maxAheadRows = ahead
		got, err := trace.ReadAll(s.Records(ReadOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, all) {
			t.Fatalf("ahead %d: %d records, want %d, or not the same", ahead, len(got), len(all))
		}
		got, err = trace.ReadAll(s.Records(filtered))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("ahead %d, filtered: %d records, want %d, or not the same", ahead, len(got), len(want))
		}
		if got := oneByOne(s.Records(filtered)); !slices.Equal(got, want) {
			t.Fatalf("ahead %d, a record at a time: %d records, want %d, or not the same", ahead, len(got), len(want))
		}
	}
	rd := s.Records(ReadOptions{})
	if n, err := rd.Read(make([]trace.Record, 50)); n != 50 || err != nil {
		t.Fatalf("read %d records, err %v", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
