package trace

import (
	"slices"
	"testing"
)

func TestCommunicators(t *testing.T) {
	h := &Header{Comms: []CommDef{{ID: 3, Members: []int32{2, 0}}}}
	c := NewCommunicators(h, 4)
	if got := c.Members(3); !slices.Equal(got, []int32{2, 0}) {
		t.Errorf("declared communicator: %v, want [2 0]", got)
	}
	if got := c.Members(0); !slices.Equal(got, []int32{0, 1, 2, 3}) {
		t.Errorf("undeclared communicator: %v, want [0 1 2 3]", got)
	}
}

// TestSelfCommunicator checks that a self communicator's member is the
// process using it, never every process.
func TestSelfCommunicator(t *testing.T) {
	h := &Header{Comms: []CommDef{{ID: 7, Self: true}, {ID: 8, Members: []int32{2, 0}}}}
	c := NewCommunicators(h, 4)
	if m := c.MembersOf(7, 3); len(m) != 1 || m[0] != 3 {
		t.Errorf("self communicator as process 3: %v, want [3]", m)
	}
	if m := c.MembersOf(8, 3); len(m) != 2 || m[0] != 2 || m[1] != 0 {
		t.Errorf("communicator 8: %v, want [2 0]", m)
	}
}

// TestEmptyAndUnknownCommunicators checks that a communicator declared
// without members is empty and one of unknown members is reported as
// such, neither ever meaning every process.
func TestEmptyAndUnknownCommunicators(t *testing.T) {
	h := &Header{Comms: []CommDef{{ID: 0}, {ID: 5, Unknown: true}, {ID: 6, Members: []int32{1}}}}
	c := NewCommunicators(h, 4)
	if m := c.Members(0); len(m) != 0 || !c.Known(0) {
		t.Errorf("declared empty communicator: %v (known %v), want no members, known", m, c.Known(0))
	}
	if m := c.MembersOf(5, 2); len(m) != 0 || c.Known(5) {
		t.Errorf("unknown communicator: %v (known %v), want no members, not known", m, c.Known(5))
	}
	if m := c.Members(6); !slices.Equal(m, []int32{1}) || !c.Known(6) {
		t.Errorf("communicator 6: %v, want [1]", m)
	}
	if m := c.Members(9); !slices.Equal(m, []int32{0, 1, 2, 3}) || !c.Known(9) {
		t.Errorf("undeclared communicator: %v, want every process", m)
	}
}

// TestMembersOrWorld checks that a communicator of unknown members is the
// world only when asked, and that a known one keeps its members.
func TestMembersOrWorld(t *testing.T) {
	h := &Header{Comms: []CommDef{{ID: 5, Unknown: true}, {ID: 6, Members: []int32{1}}}}
	c := NewCommunicators(h, 3)
	if m, ok := c.MembersOrWorld(5, 2, false); ok || m != nil {
		t.Errorf("unknown communicator, not as world: %v %v, want none", m, ok)
	}
	if m, ok := c.MembersOrWorld(5, 2, true); !ok || !slices.Equal(m, []int32{0, 1, 2}) {
		t.Errorf("unknown communicator as world: %v %v, want every process", m, ok)
	}
	if m, ok := c.MembersOrWorld(6, 1, true); !ok || !slices.Equal(m, []int32{1}) {
		t.Errorf("communicator 6: %v %v, want [1]", m, ok)
	}
}
