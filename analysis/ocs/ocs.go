// Package ocs plans and simulates an optical circuit switched (OCS)
// interconnect for a traced message-passing program, as in sections 5–6 of
// Jones et al. (2007): every node is linked to a number of optical switch
// planes, each of which can connect every node to at most one other node
// (a plane is a partial permutation), and to a slow electronic packet
// network that carries everything no circuit carries.
//
// Circuits are either assigned before the run from a ranking of the
// program's point-to-point connections (Assign: best = by volume, worst =
// by reversed volume, indexed = by destination index), or set up while the
// program runs (the runtime strategy: a message of at least a threshold
// size requests a circuit, the least frequently used circuit is replaced
// when no plane has room, and the switching latency is paid on every set-up).
//
// Simulate replays a Workload — the messages of a trace with each process's
// order and dependencies, built by Load or a Builder from the trace with
// analysis/comm, trace.Matcher and trace.Decompose — on such a network and
// returns the completion time and the average message delay; Sweep gives
// the curves of the paper's Figures 12 and 13 (time and delay against the
// number of planes, one line per strategy). The model is documented on
// Simulate and in docs/optical-switch.md.
package ocs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/parscope/parscope/analysis/comm"
)

// Strategy is how circuits are established.
type Strategy uint8

// Strategies. Best, Worst and Indexed assign circuits before the run from a
// ranking of the connections; Runtime sets them up as messages ask.
const (
	// Best ranks connections by volume (bytes, then messages), largest first.
	Best Strategy = iota
	// Worst is Best reversed: smallest volume first (the paper's lower bound).
	Worst
	// Indexed ranks connections by destination index, then source index.
	Indexed
	// Runtime establishes circuits on demand for messages of at least
	// Params.Threshold bytes, replacing the least frequently used circuit.
	Runtime
)

// Strategies lists every strategy in the order the paper's figures draw them.
var Strategies = []Strategy{Best, Worst, Indexed, Runtime}

var strategyNames = [...]string{"best", "worst", "indexed", "runtime"}

// String returns "best", "worst", "indexed" or "runtime".
func (s Strategy) String() string {
	if int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return fmt.Sprintf("strategy(%d)", s)
}

// MarshalText writes the strategy's name (JSON uses it).
func (s Strategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText is the inverse of MarshalText.
func (s *Strategy) UnmarshalText(b []byte) error {
	v, err := ParseStrategy(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// ParseStrategy is the inverse of String (case-insensitive).
func ParseStrategy(name string) (Strategy, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, s := range strategyNames {
		if n == s {
			return Strategy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown strategy %q (want best, worst, indexed or runtime)", name)
}

// Static reports whether the strategy assigns circuits before the run.
func (s Strategy) Static() bool { return s == Best || s == Worst || s == Indexed }

// Connection is a directed point-to-point connection of the program and the
// traffic it carries over the whole trace (or the structure it was taken
// from).
type Connection struct {
	Src      int32 `json:"src"`
	Dst      int32 `json:"dst"`
	Bytes    int64 `json:"bytes"`
	Messages int64 `json:"messages"`
}

// Connections lists the connections of a communication matrix: the pairs
// src ≠ dst that carried at least one message, in (src, dst) order.
func Connections(m *comm.Matrix) []Connection {
	var out []Connection
	for s := 0; s < m.N; s++ {
		for d := 0; d < m.N; d++ {
			if b, c := m.At(s, d); c > 0 && s != d {
				out = append(out, Connection{Src: int32(s), Dst: int32(d), Bytes: b, Messages: c})
			}
		}
	}
	return out
}

// byVolume orders connections by bytes, then messages, largest first, ties by
// (src, dst).
func byVolume(a, b Connection) int {
	if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Messages, a.Messages); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Src, b.Src); c != 0 {
		return c
	}
	return cmp.Compare(a.Dst, b.Dst)
}

// Rank returns the connections in the order a static strategy applies them
// to the planes: Best by volume, Worst in exactly the reverse of Best's
// order, Indexed by destination index then source index. It does not change
// conns.
func Rank(conns []Connection, s Strategy) ([]Connection, error) {
	out := slices.Clone(conns)
	switch s {
	case Best:
		slices.SortFunc(out, byVolume)
	case Worst:
		slices.SortFunc(out, byVolume)
		slices.Reverse(out)
	case Indexed:
		slices.SortFunc(out, func(a, b Connection) int {
			if c := cmp.Compare(a.Dst, b.Dst); c != 0 {
				return c
			}
			return cmp.Compare(a.Src, b.Src)
		})
	default:
		return nil, fmt.Errorf("ocs: strategy %v has no ranking (it sets circuits up at run time)", s)
	}
	return out, nil
}

// Assignment is a static assignment of ranked connections to switch planes.
type Assignment struct {
	// Procs is the number of nodes; Planes the number of planes available.
	Procs  int `json:"procs"`
	Planes int `json:"planes"`
	// Ranked are the connections in ranking order; Plane[i] is the plane
	// (0-based) of Ranked[i], or -1 when its traffic uses the electronic
	// network.
	Ranked []Connection `json:"ranked"`
	Plane  []int        `json:"plane"`
	// Used is the number of planes that hold at least one circuit.
	Used int `json:"used"`
}

// Assign places ranked connections of an n-node system on planes switch
// planes, as the paper's simulator does: plane 0 is filled first by walking
// the ranking and establishing every connection that does not conflict with
// a circuit already on the plane (a node has at most one outgoing and one
// incoming circuit per plane; a conflicting connection is skipped and the
// next one tried), then plane 1 with the connections still unplaced, and so
// on. Connections left when the planes are used up go to the electronic
// network. Each connection gets at most one circuit.
func Assign(n int, ranked []Connection, planes int) (*Assignment, error) {
	if n <= 0 || planes < 0 {
		return nil, fmt.Errorf("ocs: assigning %d planes for %d nodes", planes, n)
	}
	a := &Assignment{Procs: n, Planes: planes, Ranked: ranked, Plane: make([]int, len(ranked))}
	for i, c := range ranked {
		if c.Src < 0 || int(c.Src) >= n || c.Dst < 0 || int(c.Dst) >= n || c.Src == c.Dst {
			return nil, fmt.Errorf("ocs: connection %d→%d is not between two different nodes of %d", c.Src, c.Dst, n)
		}
		a.Plane[i] = -1
	}
	left := len(ranked)
	out, in := make([]bool, n), make([]bool, n)
	for k := 0; k < planes && left > 0; k++ {
		clear(out)
		clear(in)
		for i, c := range ranked {
			if a.Plane[i] >= 0 || out[c.Src] || in[c.Dst] {
				continue
			}
			a.Plane[i] = k
			out[c.Src], in[c.Dst] = true, true
			left--
		}
		a.Used = k + 1
	}
	return a, nil
}

// PlaneOf returns the plane of the circuit from src to dst, or -1.
func (a *Assignment) PlaneOf(src, dst int32) int {
	for i, c := range a.Ranked {
		if c.Src == src && c.Dst == dst {
			return a.Plane[i]
		}
	}
	return -1
}

// Circuits returns the connections on each plane, in ranking order.
func (a *Assignment) Circuits() [][]Connection {
	out := make([][]Connection, a.Used)
	for i, k := range a.Plane {
		if k >= 0 {
			out[k] = append(out[k], a.Ranked[i])
		}
	}
	return out
}

// PlanesNeeded returns the number of planes Assign uses to give every
// connection of ranked a circuit.
func PlanesNeeded(n int, ranked []Connection) (int, error) {
	a, err := Assign(n, ranked, len(ranked))
	if err != nil {
		return 0, err
	}
	return a.Used, nil
}
