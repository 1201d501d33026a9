package tracetest

import (
	"slices"
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestFrom checks that a stream beginning at step k is the tail of the
// stream beginning at 0.
func TestFrom(t *testing.T) {
	all, err := trace.ReadAll(&Stream{Procs: 4, Limit: 4000})
	if err != nil {
		t.Fatal(err)
	}
	// Steps 0..9 hold 4·4 records each, plus 2·4 at step 0: 168 records.
	tail, err := trace.ReadAll(&Stream{Procs: 4, Limit: 4000 - 168, From: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != 4000-168 {
		t.Fatalf("%d records from step 10, want %d", len(tail), 4000-168)
	}
	for i := range tail {
		if tail[i] != all[168+i] {
			t.Fatalf("record %d from step 10 is %v, want %v", i, tail[i], all[168+i])
		}
	}
	if tail[0].T != 10_000 {
		t.Fatalf("first record at %d ns, want 10000", tail[0].T)
	}
}

// TestMPIRing checks the ring's records: per rank, main's enter and exit
// and 13 records a step, in time order, each rank receiving from its left
// neighbour, each receive completing after the send it matches.
func TestMPIRing(t *testing.T) {
	h, recs := MPIRing(4, 3)
	if h.Runs[0].Procs != 4 || len(h.Regions) != 6 || len(recs) != 4*(2+13*3) {
		t.Fatalf("%d processes, %d regions, %d records", h.Runs[0].Procs, len(h.Regions), len(recs))
	}
	if !slices.IsSortedFunc(recs, trace.Compare) {
		t.Error("records not in time order")
	}
	sends := map[[2]int32][]int64{}
	for _, r := range recs {
		if r.Kind == trace.KindSend {
			sends[[2]int32{r.Proc, r.Peer}] = append(sends[[2]int32{r.Proc, r.Peer}], r.T)
		}
	}
	n := 0
	for _, r := range recs {
		if r.Kind != trace.KindRecv {
			continue
		}
		k := [2]int32{r.Peer, r.Proc}
		if r.Peer != (r.Proc+3)%4 || len(sends[k]) == 0 || sends[k][0] >= r.End {
			t.Fatalf("receive %v: sends %v", r, sends[k])
		}
		sends[k] = sends[k][1:]
		n++
	}
	if n != 12 {
		t.Errorf("%d receives, want 12", n)
	}
}

// TestRandomStates checks that the random trace is as documented: Limit
// records, record i at i ns, processes and states in range, the same for
// a seed and different for another, and nearly every macrostate new.
func TestRandomStates(t *testing.T) {
	g := &RandomStates{Procs: 8, States: 4, Limit: 5000, Seed: 3}
	recs, err := trace.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5000 || len(g.Header().States) != 4 || g.Header().Runs[0].Procs != 8 {
		t.Fatalf("%d records, header %+v", len(recs), g.Header())
	}
	counts := make([]int, 4)
	mode := []int32{-1, -1, -1, -1, -1, -1, -1, -1}
	seen := map[[4]int]bool{}
	for i, r := range recs {
		if r.Kind != trace.KindState || r.T != int64(i) || r.Proc < 0 || r.Proc >= 8 || r.ID < 0 || r.ID >= 4 {
			t.Fatalf("record %d: %v", i, r)
		}
		if mode[r.Proc] >= 0 {
			counts[mode[r.Proc]]--
		}
		mode[r.Proc] = r.ID
		counts[r.ID]++
		seen[[4]int(counts)] = true
	}
	if len(seen) < 100 {
		t.Errorf("%d distinct macrostates in 5000 records", len(seen))
	}
	again, _ := trace.ReadAll(&RandomStates{Procs: 8, States: 4, Limit: 5000, Seed: 3})
	other, _ := trace.ReadAll(&RandomStates{Procs: 8, States: 4, Limit: 5000, Seed: 4})
	same := 0
	for i := range recs {
		if again[i] != recs[i] {
			t.Fatalf("record %d differs for the same seed", i)
		}
		if other[i] == recs[i] {
			same++
		}
	}
	if same > 1000 {
		t.Errorf("another seed repeats %d of 5000 records", same)
	}
}
