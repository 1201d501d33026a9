package trace

import "slices"

// Membership is what a process is to the communicator of one of its
// collective records.
type Membership int

const (
	// Member is one of two or more members.
	Member Membership = iota
	// UnknownMembers: the header declares the communicator with members
	// it does not give (Communicators.Known is false).
	UnknownMembers
	// NoMembers: the communicator has no members.
	NoMembers
	// NotMember: the process is not among the members.
	NotMember
	// Alone: the process is the only member, whose collective waits for
	// no one.
	Alone
)

// Membership returns the members of communicator comm as process proc
// sees them (MembersOf) and what proc is to it, for an analysis that
// groups collective records into operations.
func (c *Communicators) Membership(comm, proc int32) ([]int32, Membership) {
	if !c.Known(comm) {
		return nil, UnknownMembers
	}
	m := c.MembersOf(comm, proc)
	switch {
	case len(m) == 0:
		return m, NoMembers
	case !slices.Contains(m, proc):
		return m, NotMember
	case len(m) == 1:
		return m, Alone
	}
	return m, Member
}

// Gathering groups the collective records of a run into operations: the
// k-th collective record of a process on a communicator is its part in
// the k-th operation on that communicator. An operation is open until
// each of its members has taken part. V is what an analysis keeps of an
// operation. The zero Gathering is empty and ready to use.
type Gathering[V any] struct {
	seq  map[[2]int32]int64 // (comm, proc) → parts taken so far
	open map[gatherKey]*gathered[V]
}

// gatherKey identifies an operation: the seq-th on comm.
type gatherKey struct {
	comm int32
	seq  int64
}

// gathered is an open operation.
type gathered[V any] struct {
	v              V
	parts, members int
}

// Join takes the part of process proc in its next operation on
// communicator comm, an operation of members members (as its first part
// says). It returns what the operation keeps, first when this part opened
// it (v is then V's zero value), and complete when it was the last member
// to take part: the operation is then closed.
func (g *Gathering[V]) Join(comm, proc int32, members int) (v *V, first, complete bool) {
	if g.open == nil {
		g.seq, g.open = map[[2]int32]int64{}, map[gatherKey]*gathered[V]{}
	}
	sk := [2]int32{comm, proc}
	k := gatherKey{comm, g.seq[sk]}
	g.seq[sk]++
	op := g.open[k]
	if op == nil {
		op = &gathered[V]{members: members}
		g.open[k] = op
		first = true
	}
	op.parts++
	if op.parts == op.members {
		delete(g.open, k)
		complete = true
	}
	return &op.v, first, complete
}

// Open returns the number of open operations: those some member has not
// taken part in.
func (g *Gathering[V]) Open() int { return len(g.open) }
