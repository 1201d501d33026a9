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
