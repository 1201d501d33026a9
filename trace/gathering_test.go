package trace

import (
	"slices"
	"testing"
)

// TestMembership checks what a process is to communicators of unknown
// members, of none, of others, of itself alone and of several.
func TestMembership(t *testing.T) {
	h := &Header{Comms: []CommDef{{ID: 1, Unknown: true}, {ID: 2}, {ID: 3, Members: []int32{0, 1}}, {ID: 4, Self: true}}}
	c := NewCommunicators(h, 3)
	for _, tc := range []struct {
		comm, proc int32
		want       Membership
		members    []int32
	}{
		{1, 0, UnknownMembers, nil},
		{2, 0, NoMembers, nil},
		{3, 2, NotMember, []int32{0, 1}},
		{4, 2, Alone, []int32{2}},
		{3, 1, Member, []int32{0, 1}},
		{9, 1, Member, []int32{0, 1, 2}},
	} {
		m, got := c.Membership(tc.comm, tc.proc)
		if got != tc.want || !slices.Equal(m, tc.members) {
			t.Errorf("communicator %d, process %d: %v %v, want %v %v", tc.comm, tc.proc, m, got, tc.members, tc.want)
		}
	}
}

// TestGathering checks that the k-th parts of each process on a
// communicator make one operation, opened by the first and closed by the
// last, and that an operation some member misses stays open.
func TestGathering(t *testing.T) {
	var g Gathering[[]int32]
	type step struct {
		comm, proc      int32
		first, complete bool
	}
	for i, s := range []step{
		{0, 0, true, false}, {0, 0, true, false}, // two operations on comm 0
		{5, 1, true, false}, // one on comm 5
		{0, 1, false, true}, {0, 1, false, true},
	} {
		v, first, complete := g.Join(s.comm, s.proc, 2)
		*v = append(*v, s.proc)
		if first != s.first || complete != s.complete {
			t.Errorf("part %d: first %v complete %v, want %v %v", i, first, complete, s.first, s.complete)
		}
		if complete && !slices.Equal(*v, []int32{0, 1}) {
			t.Errorf("part %d: operation of %v, want [0 1]", i, *v)
		}
	}
	if g.Open() != 1 {
		t.Errorf("%d open operations, want 1 (comm 5)", g.Open())
	}
}
