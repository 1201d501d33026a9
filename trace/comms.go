package trace

// Communicators gives the members of the communicators of a run of n
// processes: the members the header declares (a self communicator's
// member is the process using it, see MembersOf; a communicator declared
// without members has none), and every process 0..n−1 for a communicator
// the header does not declare (the world communicator of a trace that
// declares none). A communicator declared with Unknown members has no
// members here and Known reports it. It is not safe for concurrent use.
type Communicators struct {
	n        int
	members  map[int32][]int32
	declared map[int32]bool
	self     map[int32]bool
	unknown  map[int32]bool
	world    []int32
}

// NewCommunicators returns the communicators of h for a run of n processes.
func NewCommunicators(h *Header, n int) *Communicators {
	c := &Communicators{n: n, members: map[int32][]int32{}, declared: map[int32]bool{},
		self: map[int32]bool{}, unknown: map[int32]bool{}}
	for _, d := range h.Comms {
		c.members[d.ID] = d.Members
		c.declared[d.ID] = true
		if d.Self {
			c.self[d.ID] = true
		}
		if d.Unknown && !d.Self && len(d.Members) == 0 {
			c.unknown[d.ID] = true
		}
	}
	return c
}

// Known reports whether the members of communicator comm are known: false
// for a communicator the header declares with Unknown members.
func (c *Communicators) Known(comm int32) bool { return !c.unknown[comm] }

// MembersOf returns the processes of communicator comm as process proc
// sees it: proc alone for a self communicator, Members otherwise.
func (c *Communicators) MembersOf(comm, proc int32) []int32 {
	if c.self[comm] {
		return []int32{proc}
	}
	return c.Members(comm)
}

// Members returns the processes of communicator comm, in rank order:
// none for a communicator declared without members (or with unknown
// ones), all processes for one the header does not declare.
func (c *Communicators) Members(comm int32) []int32 {
	m := c.members[comm]
	if len(m) == 0 && !c.declared[comm] {
		m = make([]int32, c.n)
		for i := range m {
			m[i] = int32(i)
		}
		c.members[comm] = m
	}
	return m
}

// World returns every process of the run, 0..n−1, made once and shared:
// the members of a communicator of unknown members for an analysis told
// to take it for the world.
func (c *Communicators) World() []int32 {
	if len(c.world) != c.n {
		c.world = make([]int32, c.n)
		for i := range c.world {
			c.world[i] = int32(i)
		}
	}
	return c.world
}

// MembersOrWorld returns MembersOf(comm, proc) for a communicator whose
// members are Known; for one whose members are not, World when asWorld,
// else ok false.
func (c *Communicators) MembersOrWorld(comm, proc int32, asWorld bool) (members []int32, ok bool) {
	switch {
	case c.Known(comm):
		return c.MembersOf(comm, proc), true
	case asWorld:
		return c.World(), true
	}
	return nil, false
}
