package occupancy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// Modes maps state ids to modes (the A_j of Lyon's tables): either every
// state of a trace's dictionary is a mode of its own, or a mapping file
// groups states into modes (e.g. the iPSC node states I, S, R, U). A
// state the trace marks Absent (trace.StateDef.Absent) is no mode: a
// process that enters it does not exist, and counts in no mode, until its
// next state record.
type Modes struct {
	// Names are the mode names, in mode-index order.
	Names  []string
	of     map[int32]int
	other  int            // mode of unlisted states ("*" line), -1 when none
	absent map[int32]bool // states marked Absent
}

// StateModes makes every state of h's dictionary a mode of its own, in
// state-id order, named by the state's name (or "state ID" when unnamed),
// but the states marked Absent.
func StateModes(h *trace.Header) *Modes {
	defs := slices.Clone(h.States)
	slices.SortFunc(defs, func(a, b trace.StateDef) int { return int(a.ID) - int(b.ID) })
	m := &Modes{of: map[int32]int{}, other: -1, absent: h.AbsentStates()}
	for _, d := range defs {
		if _, dup := m.of[d.ID]; dup || d.Absent {
			continue
		}
		m.of[d.ID] = len(m.Names)
		m.Names = append(m.Names, stateName(d))
	}
	return m
}

func stateName(d trace.StateDef) string {
	if d.Name != "" {
		return d.Name
	}
	return "state " + strconv.Itoa(int(d.ID))
}

// ParseModes reads a mapping file from r (name is used in errors). Each
// non-blank line not starting with '#' is "STATE MODE": STATE is a state id
// or a state name of h's dictionary, or "*" for every state not listed;
// MODE is a mode name. Modes are numbered in order of first appearance.
// Every state of h's dictionary must be mapped (directly or by "*"); the
// error names the states that are not. States marked Absent are no mode:
// "*" does not cover them, and a line that names one is an error.
func ParseModes(r io.Reader, name string, h *trace.Header) (*Modes, error) {
	lr, err := format.NewLineReader(name, r)
	if err != nil {
		return nil, err
	}
	byName := map[string]int32{}
	for _, d := range h.States {
		if d.Name != "" {
			byName[d.Name] = d.ID
		}
	}
	m := &Modes{of: map[int32]int{}, other: -1, absent: h.AbsentStates()}
	index := map[string]int{}
	modeOf := func(s string) int {
		k, ok := index[s]
		if !ok {
			k = len(m.Names)
			index[s] = k
			m.Names = append(m.Names, s)
		}
		return k
	}
	err = eachLine(lr, func(line []byte) error {
		f := strings.Fields(string(line))
		if len(f) != 2 {
			return lr.Errorf("expected \"STATE MODE\" (a state id or name, then a mode name), got %d fields", len(f))
		}
		if f[0] == "*" {
			if m.other >= 0 {
				return lr.Errorf("a second \"*\" line")
			}
			m.other = modeOf(f[1])
			return nil
		}
		id, ok := byName[f[0]]
		if !ok {
			v, err := strconv.ParseInt(f[0], 10, 32)
			if err != nil {
				return lr.Errorf("state %q is neither a state id nor a state name of the trace", format.Excerpt([]byte(f[0])))
			}
			id = int32(v)
		}
		if m.absent[id] {
			return lr.Errorf("state %s says the process does not exist (the trace marks it absent): it is in no mode", format.Excerpt([]byte(f[0])))
		}
		if prev, dup := m.of[id]; dup {
			return lr.Errorf("state %s is mapped twice (to %s and %s)", format.Excerpt([]byte(f[0])), format.Excerpt([]byte(m.Names[prev])), format.Excerpt([]byte(f[1])))
		}
		m.of[id] = modeOf(f[1])
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(m.Names) == 0 {
		return nil, &format.Error{File: name, Offset: -1, Msg: "the mapping has no modes"}
	}
	if err := m.Check(h); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// Check reports the states of h's dictionary that m maps to no mode.
func (m *Modes) Check(h *trace.Header) error {
	if m.other >= 0 {
		return nil
	}
	var missing []string
	for _, d := range h.States {
		if _, ok := m.of[d.ID]; !ok && !d.Absent {
			missing = append(missing, fmt.Sprintf("%d (%s)", d.ID, stateName(d)))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the mapping misses %d state(s): %s", len(missing), strings.Join(missing, ", "))
	}
	return nil
}

// Mode returns the mode index of state id, and false when it has none
// (a state marked Absent has none).
func (m *Modes) Mode(id int32) (int, bool) {
	if k, ok := m.of[id]; ok {
		return k, true
	}
	if m.other >= 0 && !m.absent[id] {
		return m.other, true
	}
	return 0, false
}

// Absent reports whether entering state id makes a process absent (the
// trace marks the state Absent).
func (m *Modes) Absent(id int32) bool { return m.absent[id] }

// Index returns the index of the mode named name, or -1.
func (m *Modes) Index(name string) int { return slices.Index(m.Names, name) }

// eachLine calls fn with every line of lr that is not blank and does not
// begin with '#', trimmed of spaces.
func eachLine(lr *format.LineReader, fn func(line []byte) error) error {
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if err := fn(line); err != nil {
			return err
		}
	}
}

// modeTable looks up the mode of a state id for a record: a slice for the
// small ids, in which traces number their states, and Modes for others.
type modeTable struct {
	modes *Modes
	small []int32 // id -> mode, absentMode, or unknownMode for "ask modes"
}

func newModeTable(modes *Modes) modeTable {
	t := modeTable{modes: modes}
	set := func(id, k int32) {
		if id >= 0 && id < 1<<12 {
			for int(id) >= len(t.small) {
				t.small = append(t.small, unknownMode)
			}
			t.small[id] = k
		}
	}
	for id, k := range modes.of {
		set(id, int32(k))
	}
	for id := range modes.absent {
		set(id, absentMode)
	}
	return t
}

// mode returns the mode of state id, absentMode for a state marked
// Absent, and false for a state mapped to no mode.
func (t *modeTable) mode(id int32) (int32, bool) {
	if uint(id) < uint(len(t.small)) && t.small[id] != unknownMode {
		return t.small[id], true
	}
	if t.modes.Absent(id) {
		return absentMode, true
	}
	m, ok := t.modes.Mode(id)
	return int32(m), ok
}
