package dumpi

import (
	"strings"
	"testing"

	"github.com/parscope/parscope/trace"
)

// someCalls is rank 0 of 2: two non-blocking messages completed by
// Testsome (or Waitsome), then an Exscan of 3 doubles.
func someCalls(fn string) []testCall {
	return []testCall{
		{"MPI_Isend", 100, 200, false, []any{int32(2), uint16(1), int32(1), int32(7), uint16(commWorld), int32(5)}},
		{"MPI_Irecv", 300, 400, false, []any{int32(4), uint16(1), int32(anySource), int32(anyTag), uint16(commWorld), int32(6)}},
		{"MPI_Test", 450, 460, true, append([]any{int32(6), int32(0)}, statusArgs()...)}, // not complete
		{fn, 500, 900, true, append([]any{int32(2), []int32{5, 6}, int32(2), []int32{0, 1}},
			statusArgs([3]int32{8, 0, 7}, [3]int32{16, 1, 9})...)},
		{"MPI_Exscan", 1000, 1500, false, []any{int32(3), uint16(2), uint8(1), uint16(commWorld)}},
	}
}

func TestSomeAndExscan(t *testing.T) {
	sizes := []int32{0, 4, 8}
	for _, fn := range []string{"MPI_Testsome", "MPI_Waitsome"} {
		t.Run(fn, func(t *testing.T) {
			h := &trace.Header{}
			recs, err := decodeRank(buildFile(sizes, someCalls(fn)), 0, 2, 0, h, newCommSet(2), map[int]bool{})
			if err != nil {
				t.Fatal(err)
			}
			want := []trace.Record{
				trace.Enter(0, 0, 100, int32(label("MPI_Isend"))),
				{Kind: trace.KindSend, T: 100, End: 900, Peer: 1, Value: 8, Tag: 7, Comm: commWorld, Seq: 5},
				trace.Exit(0, 0, 200, int32(label("MPI_Isend"))),
				trace.Enter(0, 0, 300, int32(label("MPI_Irecv"))),
				// The status of the completing call resolves the wildcards.
				{Kind: trace.KindRecv, T: 300, End: 900, Peer: 1, Value: 16, Tag: 9, Comm: commWorld, Seq: 6},
				trace.Exit(0, 0, 400, int32(label("MPI_Irecv"))),
				trace.Enter(0, 0, 450, int32(label("MPI_Test"))),
				trace.Exit(0, 0, 460, int32(label("MPI_Test"))),
				trace.Enter(0, 0, 500, int32(label(fn))),
				trace.Exit(0, 0, 900, int32(label(fn))),
				trace.Enter(0, 0, 1000, int32(label("MPI_Exscan"))),
				trace.Coll(0, 0, 1000, 1500, trace.OpExscan, trace.NoPeer, 24, commWorld),
				trace.Exit(0, 0, 1500, int32(label("MPI_Exscan"))),
			}
			if len(recs) != len(want) {
				t.Fatalf("got %d records %v, want %d", len(recs), recs, len(want))
			}
			for i := range want {
				if g, w := recs[i].Canonical(), want[i].Canonical(); g != w {
					t.Errorf("record %d = %v, want %v", i, g, w)
				}
			}
			if len(h.Repairs) != 0 {
				t.Errorf("repairs %v, want none", h.Repairs)
			}
		})
	}
}

// TestUnknownCall checks that a label no DUMPI writer produces
// (MPI_Pcontrol, which libdumpi records as Function_enter/exit) stops the
// decoder with its offset and name, since records carry no length.
func TestUnknownCall(t *testing.T) {
	b := buildFile([]int32{0, 4}, []testCall{
		{"MPI_Barrier", 10, 20, false, []any{uint16(commWorld)}},
		{"MPI_Pcontrol", 30, 40, false, []any{int32(1)}},
	})
	_, err := decodeRank(b, 0, 2, 0, &trace.Header{}, newCommSet(2), map[int]bool{})
	oe, ok := err.(*offsetErr)
	// magic 8, time offsets 8, barrier record 2+1+12+2 = 17: Pcontrol at 33.
	if !ok || oe.off != 33 || !strings.Contains(oe.msg, "MPI_Pcontrol: SST DUMPI never writes") {
		t.Fatalf("error %v, want an offsetErr at byte 33 naming MPI_Pcontrol", err)
	}
}
