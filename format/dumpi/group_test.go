package dumpi

import (
	"slices"
	"testing"

	"github.com/parscope/parscope/trace"
)

// groupTrace is rank r of a 4-rank program as sst-macro's Blue Gene/P
// traces have it, laid out as libdumpi's dumpi_write_* functions write
// each call: MPI_Get_processor_name, then MPI_Comm_group of the world,
// MPI_Group_incl of ranks 2 and 3 (handle 4 → 5), MPI_Comm_create of the
// new communicator (handle 4; COMM_NULL on ranks 0 and 1), a Bcast of 3
// ints from communicator rank 1 on it, and a Barrier on MPI_COMM_SELF.
func groupTrace(r int32) []testCall {
	newcomm := uint16(4)
	if r < 2 {
		newcomm = commNull
	}
	calls := []testCall{
		{"MPI_Get_processor_name", 1, 2, false, []any{uint32(3), uint8('b'), uint8('g'), uint8('p'), int32(3)}},
		{"MPI_Comm_group", 3, 4, false, []any{uint16(commWorld), uint16(4)}},
		{"MPI_Group_incl", 5, 6, false, []any{uint16(4), int32(2), []int32{2, 3}, uint16(5)}},
		{"MPI_Comm_create", 7, 8, false, []any{uint16(commWorld), uint16(5), newcomm}},
	}
	if r >= 2 {
		calls = append(calls, testCall{"MPI_Bcast", 10, 20, false, []any{int32(3), uint16(1), int32(1), uint16(4)}})
	}
	return append(calls, testCall{"MPI_Barrier", 30, 40, false, []any{uint16(commSelf)}})
}

// TestCommGroupCreate checks that the communicator built by Comm_group,
// Group_incl and Comm_create has ranks 2 and 3 as members on both ranks
// (one id whatever each rank's handle), that its Bcast's root is world
// rank 3, and that MPI_COMM_SELF is each rank alone, never everyone.
func TestCommGroupCreate(t *testing.T) {
	h := &trace.Header{}
	cs := newCommSet(4)
	var bcast, barriers []trace.Record
	for r := int32(0); r < 4; r++ {
		b := setVersion(buildFile([]int32{0, 4}, groupTrace(r)), 8, 1, 0) // a 2019 DUMPI
		recs, err := decodeRank(b, r, 4, 0, h, cs, map[int]bool{})
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		for _, x := range recs {
			switch {
			case x.Kind == trace.KindCollective && x.ID == int32(trace.OpBcast):
				bcast = append(bcast, x)
			case x.Kind == trace.KindCollective && x.ID == int32(trace.OpBarrier):
				barriers = append(barriers, x)
			}
		}
	}
	defs := cs.sorted()
	byID := map[int32][]int32{}
	for _, d := range defs {
		byID[d.ID] = d.Members
	}
	if len(bcast) != 2 || bcast[0].Comm != bcast[1].Comm {
		t.Fatalf("bcasts %+v: want 2 on one communicator", bcast)
	}
	if m := byID[bcast[0].Comm]; !slices.Equal(m, []int32{2, 3}) {
		t.Errorf("bcast communicator members %v, want [2 3]", m)
	}
	for _, x := range bcast {
		if x.Peer != 3 || x.Value != 12 {
			t.Errorf("bcast of rank %d: root %d, %d B; want root 3, 12 B", x.Proc, x.Peer, x.Value)
		}
	}
	if len(barriers) != 4 {
		t.Fatalf("%d self barriers, want 4", len(barriers))
	}
	for _, x := range barriers {
		if m := byID[x.Comm]; !slices.Equal(m, []int32{x.Proc}) {
			t.Errorf("rank %d's MPI_COMM_SELF has members %v, want [%d]", x.Proc, m, x.Proc)
		}
	}
	if cs.unknown != 0 {
		t.Errorf("%d communicators of unknown members, want 0", cs.unknown)
	}
}
