package dumpi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/trace"
)

// DUMPI's handles of the predefined communicators and groups. Other
// handles are numbered by each rank on its own, so the same number on two
// ranks need not be the same communicator.
const (
	commNull   = 1
	commSelf   = 3
	groupEmpty = 2
)

// Global ids of the communicators the importer declares: MPI_COMM_WORLD
// keeps DUMPI's id 2; a communicator whose members are known gets an id
// from knownBase up, one per distinct member list, whichever rank and
// handle it came from; a handle whose members the trace does not tell
// keeps unknownBase + its handle, as every rank numbers it.
const (
	unknownBase = 1 << 16
	knownBase   = 1 << 17
)

// commSet assigns the global communicator ids of a trace, shared by its
// ranks.
type commSet struct {
	procs   int32
	ids     map[string]int32 // member list → id
	defs    map[int32]trace.CommDef
	unknown int // handles of unknown members that were used
}

func newCommSet(procs int32) *commSet {
	return &commSet{procs: procs, ids: map[string]int32{}, defs: map[int32]trace.CommDef{}}
}

// known returns the id of the communicator of these members (world ranks
// in rank order of the communicator).
func (cs *commSet) known(members []int32) int32 {
	var k strings.Builder
	for _, m := range members {
		k.WriteString(strconv.Itoa(int(m)))
		k.WriteByte(',')
	}
	if id, ok := cs.ids[k.String()]; ok {
		return id
	}
	id := knownBase + int32(len(cs.ids))
	cs.ids[k.String()] = id
	name := fmt.Sprintf("communicator of %d ranks", len(members))
	if len(members) == 1 {
		name = fmt.Sprintf("rank %d alone (MPI_COMM_SELF or a one-rank communicator)", members[0])
	}
	cs.defs[id] = trace.CommDef{ID: id, Name: name, Members: slices.Clone(members)}
	return id
}

// world declares MPI_COMM_WORLD.
func (cs *commSet) world() int32 {
	if _, ok := cs.defs[commWorld]; !ok {
		def := trace.CommDef{ID: commWorld, Name: "MPI_COMM_WORLD"}
		for p := range cs.procs {
			def.Members = append(def.Members, p)
		}
		cs.defs[commWorld] = def
	}
	return commWorld
}

// unknownHandle declares a handle whose members the trace does not give.
func (cs *commSet) unknownHandle(h uint16) int32 {
	id := unknownBase + int32(h)
	if _, ok := cs.defs[id]; !ok {
		cs.unknown++
		cs.defs[id] = trace.CommDef{ID: id, Name: fmt.Sprintf("DUMPI communicator %d (members unknown)", h), Unknown: true}
	}
	return id
}

// sorted returns the declared communicators in id order.
func (cs *commSet) sorted() []trace.CommDef {
	out := make([]trace.CommDef, 0, len(cs.defs))
	for _, d := range cs.defs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b trace.CommDef) int { return int(a.ID - b.ID) })
	return out
}

// comm returns the global id of the rank's communicator handle c.
func (rd *rankDecoder) comm(c uint16) int32 {
	switch c {
	case commWorld:
		return rd.cs.world()
	case commSelf:
		return rd.cs.known([]int32{rd.rank})
	}
	if m, ok := rd.commMembers[c]; ok {
		return rd.cs.known(m)
	}
	return rd.cs.unknownHandle(c)
}

// members returns the world ranks of the rank's communicator handle c in
// communicator rank order, or false when the trace does not tell them.
func (rd *rankDecoder) members(c uint16) ([]int32, bool) {
	switch c {
	case commWorld:
		return rd.cs.defs[rd.cs.world()].Members, true
	case commSelf:
		return []int32{rd.rank}, true
	}
	m, ok := rd.commMembers[c]
	return m, ok
}

// rootPeer translates the root of a collective on handle c (a rank of the
// communicator) into a process; NoPeer when there is no root or the
// communicator's members are unknown.
func (rd *rankDecoder) rootPeer(root int32, c uint16) int32 {
	m, ok := rd.members(c)
	if root < 0 || !ok || int(root) >= len(m) {
		return trace.NoPeer
	}
	return m[root]
}

// group returns the world ranks of group handle g.
func (rd *rankDecoder) group(g uint16) ([]int32, bool) {
	if g == groupEmpty {
		return nil, true
	}
	m, ok := rd.groups[g]
	return m, ok
}

// setGroup records the members of group handle g, or forgets them.
func (rd *rankDecoder) setGroup(g uint16, m []int32, ok bool) {
	if ok {
		rd.groups[g] = m
	} else {
		delete(rd.groups, g)
	}
}

// setComm records the members of communicator handle c, or forgets them.
func (rd *rankDecoder) setComm(c uint16, m []int32, ok bool) {
	if c == commNull || c == commWorld || c == commSelf {
		return
	}
	if ok && len(m) > 0 {
		rd.commMembers[c] = m
	} else {
		delete(rd.commMembers, c)
	}
}

// pick returns the members of m at the given ranks, false when a rank is
// out of range.
func pick(m []int32, ranks []int32) ([]int32, bool) {
	out := make([]int32, 0, len(ranks))
	for _, r := range ranks {
		if r < 0 || int(r) >= len(m) {
			return nil, false
		}
		out = append(out, m[r])
	}
	return out, true
}

// ranges expands MPI_Group_range_incl triplets (first, last, stride).
func ranges(tri [][]int32, n int) ([]int32, bool) {
	var out []int32
	for _, t := range tri {
		if len(t) != 3 || t[2] == 0 {
			return nil, false
		}
		for r := t[0]; (t[2] > 0 && r <= t[1]) || (t[2] < 0 && r >= t[1]); r += t[2] {
			if r < 0 || int(r) >= n || len(out) > n {
				return nil, false
			}
			out = append(out, r)
		}
	}
	return out, true
}

// groupCall decodes the calls that build groups and communicators whose
// members one rank's file tells, and returns false for any other call.
// MPI_Comm_split, the topology constructors and intercommunicators need
// every rank's arguments, so their communicators keep unknown members.
func (rd *rankDecoder) groupCall(name string) bool {
	d := rd.d
	switch name {
	case "MPI_Comm_group":
		var a commGroupArgs
		d.readCommGroup(&a)
		m, ok := rd.members(a.comm)
		rd.setGroup(a.group, m, ok)
	case "MPI_Group_incl", "MPI_Group_excl":
		var a groupInclArgs // the same layout for both
		d.readGroupIncl(&a)
		m, ok := rd.group(a.group)
		var out []int32
		if ok && name == "MPI_Group_incl" {
			out, ok = pick(m, a.ranks)
		} else if ok {
			for i, p := range m {
				if !slices.Contains(a.ranks, int32(i)) {
					out = append(out, p)
				}
			}
		}
		rd.setGroup(a.newgroup, out, ok)
	case "MPI_Group_range_incl", "MPI_Group_range_excl":
		var a groupRangeInclArgs // the same layout for both
		d.readGroupRangeIncl(&a)
		m, ok := rd.group(a.group)
		var out []int32
		if ok {
			var rs []int32
			if rs, ok = ranges(a.ranges, len(m)); ok && name == "MPI_Group_range_incl" {
				out, ok = pick(m, rs)
			} else if ok {
				for i, p := range m {
					if !slices.Contains(rs, int32(i)) {
						out = append(out, p)
					}
				}
			}
		}
		rd.setGroup(a.newgroup, out, ok)
	case "MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference":
		var a groupUnionArgs // the same layout for all three
		d.readGroupUnion(&a)
		g1, ok1 := rd.group(a.group1)
		g2, ok2 := rd.group(a.group2)
		var out []int32
		switch name {
		case "MPI_Group_union":
			out = slices.Clone(g1)
			for _, p := range g2 {
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		case "MPI_Group_intersection":
			for _, p := range g1 {
				if slices.Contains(g2, p) {
					out = append(out, p)
				}
			}
		default:
			for _, p := range g1 {
				if !slices.Contains(g2, p) {
					out = append(out, p)
				}
			}
		}
		rd.setGroup(a.newgroup, out, ok1 && ok2)
	case "MPI_Group_free":
		var a groupFreeArgs
		d.readGroupFree(&a)
		delete(rd.groups, a.group)
	case "MPI_Comm_create":
		var a commCreateArgs
		d.readCommCreate(&a)
		m, ok := rd.group(a.group)
		rd.setComm(a.newcomm, m, ok && slices.Contains(m, rd.rank))
		rd.comm(a.oldcomm)
	case "MPI_Comm_dup":
		var a commDupArgs
		d.readCommDup(&a)
		m, ok := rd.members(a.oldcomm)
		rd.setComm(a.newcomm, m, ok)
	case "MPI_Comm_split":
		var a commSplitArgs
		d.readCommSplit(&a)
		rd.setComm(a.newcomm, nil, false)
	case "MPI_Comm_free":
		var a commFreeArgs
		d.readCommFree(&a)
		rd.setComm(a.comm, nil, false)
	case "MPI_Comm_size", "MPI_Comm_rank":
		var a commSizeArgs // the same layout for both
		d.readCommSize(&a)
	default:
		return false
	}
	return true
}
