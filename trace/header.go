package trace

import (
	"fmt"
	"sort"
	"strings"
)

// Header holds everything about a trace that is not a record: metadata, the
// runs of the ensemble, the dictionaries that give record ids their names,
// and the repairs an importer made. It is small and held in memory.
type Header struct {
	Meta     Meta             `json:"meta"`
	Runs     []RunInfo        `json:"runs"`
	States   []StateDef       `json:"states,omitempty"`
	Regions  []RegionDef      `json:"regions,omitempty"`
	Events   []EventDef       `json:"events,omitempty"`
	Counters []CounterDef     `json:"counters,omitempty"`
	Comms    []CommDef        `json:"comms,omitempty"`
	Procs    []ProcInfo       `json:"procs,omitempty"`
	Repairs  map[string]int64 `json:"repairs,omitempty"`
}

// Meta is the trace's metadata.
type Meta struct {
	// ClockResolution is the resolution of the source clock in nanoseconds
	// (1000 for microsecond timestamps, 10000 for the 10 µs of Gomez, Cai & Schubert 2017).
	ClockResolution int64 `json:"clock_resolution_ns"`
	// Source names the format the trace was imported from ("gomez", "annotated", ...).
	Source string `json:"source,omitempty"`
	// Inputs are the files it was imported from.
	Inputs      []string `json:"inputs,omitempty"`
	Program     string   `json:"program,omitempty"`
	CommandLine []string `json:"command_line,omitempty"`
	Host        string   `json:"host,omitempty"`
	// Extra holds free key/value metadata.
	Extra map[string]string `json:"extra,omitempty"`
}

// RunInfo describes one run of the ensemble. Runs are numbered 0..len(Runs)-1.
type RunInfo struct {
	ID    int32             `json:"id"`
	Name  string            `json:"name,omitempty"`
	Procs int32             `json:"procs"`
	Extra map[string]string `json:"extra,omitempty"`
}

// ProcInfo optionally names a process of a run (a rank, a goroutine, a
// Paraver task/thread) and carries per-process metadata.
type ProcInfo struct {
	Run   int32             `json:"run"`
	Proc  int32             `json:"proc"`
	Name  string            `json:"name,omitempty"`
	Extra map[string]string `json:"extra,omitempty"`
}

// StateDef gives a state (basic block) id its name, description and source location.
type StateDef struct {
	ID          int32  `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	File        string `json:"file,omitempty"`
	Line        int32  `json:"line,omitempty"`
	// Absent marks a state that says the process does not exist (a Go
	// goroutine that has ended, a P removed by GOMAXPROCS): a process that
	// enters it is absent, in no state, until its next state record. Every
	// process is also absent before its first state record.
	Absent bool `json:"absent,omitempty"`
}

// AbsentStates returns the ids of the states of h marked Absent, or nil.
func (h *Header) AbsentStates() map[int32]bool {
	var m map[int32]bool
	for _, s := range h.States {
		if s.Absent {
			if m == nil {
				m = map[int32]bool{}
			}
			m[s.ID] = true
		}
	}
	return m
}

// RegionKind is the kind of a code region.
type RegionKind uint8

// Region kinds. The numeric values are stored in .pst files.
const (
	RegionUser     RegionKind = 0
	RegionLoop     RegionKind = 1
	RegionIf       RegionKind = 2
	RegionFunction RegionKind = 3
	RegionCall     RegionKind = 4
)

var regionKindNames = [...]string{"user", "loop", "if", "function", "call"}

// String returns "user", "loop", "if", "function" or "call".
func (k RegionKind) String() string {
	if int(k) < len(regionKindNames) {
		return regionKindNames[k]
	}
	return fmt.Sprintf("region(%d)", uint8(k))
}

// ParseRegionKind is the inverse of RegionKind.String.
func ParseRegionKind(s string) (RegionKind, error) {
	for i, n := range regionKindNames {
		if n == s {
			return RegionKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown region kind %q (want user, loop, if, function or call)", s)
}

// RegionDef describes a code region: a loop, an if, a function or a user
// region, with its source location. Parent is the id of the statically
// enclosing region, or -1.
type RegionDef struct {
	ID       int32      `json:"id"`
	Kind     RegionKind `json:"kind"`
	Label    string     `json:"label"`
	Function string     `json:"function,omitempty"`
	File     string     `json:"file,omitempty"`
	Line     int32      `json:"line,omitempty"`
	EndLine  int32      `json:"end_line,omitempty"`
	Parent   int32      `json:"parent"`
}

// IsMPICall reports whether name is the name of an MPI call: it begins
// with MPI_ or PMPI_ (the profiling interface), in any case.
func IsMPICall(name string) bool {
	return hasPrefixFold(name, "MPI_") || hasPrefixFold(name, "PMPI_")
}

// Name is what r is called: its label, or its function when it has no
// label, or "region ID" when it has neither.
func (r *RegionDef) Name() string {
	switch {
	case r.Label != "":
		return r.Label
	case r.Function != "":
		return r.Function
	}
	return fmt.Sprintf("region %d", r.ID)
}

// IsMPI reports whether r is an MPI call: its label or its function is
// the name of one (IsMPICall).
func (r *RegionDef) IsMPI() bool { return IsMPICall(r.Label) || IsMPICall(r.Function) }

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// EventDef names an event id.
type EventDef struct {
	ID   int32  `json:"id"`
	Name string `json:"name"`
}

// CounterDef names a counter id and gives its unit.
type CounterDef struct {
	ID   int32  `json:"id"`
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
}

// CommDef is a communicator: its members are process ids of the run, in
// communicator rank order. A communicator declared with no members and
// neither Self nor Unknown has no members (it is empty, never "all
// processes"); a communicator the header does not declare at all is all
// processes of the run (the world of a trace that declares none).
type CommDef struct {
	ID      int32   `json:"id"`
	Name    string  `json:"name,omitempty"`
	Members []int32 `json:"members,omitempty"`
	// Self marks a self communicator (MPI_COMM_SELF, OTF2's COMM_SELF
	// groups): one id whose only member is whichever process uses it.
	Self bool `json:"self,omitempty"`
	// Unknown marks a communicator whose members the trace does not give
	// (an annotated trace's Fortran handle, a DUMPI communicator made by
	// MPI_Comm_split): Members is empty and analyses that need the
	// members report the communicator's operations instead of guessing.
	Unknown bool `json:"unknown,omitempty"`
}

// Repair counts an import repair under a documented name, such as
// "same-time-reorder" or "any-source-recv".
func (h *Header) Repair(name string, n int64) {
	if h.Repairs == nil {
		h.Repairs = map[string]int64{}
	}
	h.Repairs[name] += n
}

// Dict is a name dictionary that assigns dense ids to names as they are
// first seen. Importers use it for event and region names.
type Dict struct {
	ids   map[string]int32
	names []string
}

// ID returns the id of name, assigning the next free id the first time.
func (d *Dict) ID(name string) int32 {
	if d.ids == nil {
		d.ids = map[string]int32{}
	}
	if id, ok := d.ids[name]; ok {
		return id
	}
	id := int32(len(d.names))
	d.ids[name] = id
	d.names = append(d.names, name)
	return id
}

// Lookup returns the id of name if it has one.
func (d *Dict) Lookup(name string) (int32, bool) {
	id, ok := d.ids[name]
	return id, ok
}

// Names returns the names in id order.
func (d *Dict) Names() []string { return d.names }

// Len returns the number of names.
func (d *Dict) Len() int { return len(d.names) }

// Index is a read-only lookup over a header's dictionaries.
type Index struct {
	states   map[int32]*StateDef
	regions  map[int32]*RegionDef
	events   map[int32]*EventDef
	counters map[int32]*CounterDef
	comms    map[int32]*CommDef
}

// NewIndex indexes the dictionaries of h by id. h must not change while the
// index is in use.
func NewIndex(h *Header) *Index {
	ix := &Index{
		states:   make(map[int32]*StateDef, len(h.States)),
		regions:  make(map[int32]*RegionDef, len(h.Regions)),
		events:   make(map[int32]*EventDef, len(h.Events)),
		counters: make(map[int32]*CounterDef, len(h.Counters)),
		comms:    make(map[int32]*CommDef, len(h.Comms)),
	}
	for i := range h.States {
		ix.states[h.States[i].ID] = &h.States[i]
	}
	for i := range h.Regions {
		ix.regions[h.Regions[i].ID] = &h.Regions[i]
	}
	for i := range h.Events {
		ix.events[h.Events[i].ID] = &h.Events[i]
	}
	for i := range h.Counters {
		ix.counters[h.Counters[i].ID] = &h.Counters[i]
	}
	for i := range h.Comms {
		ix.comms[h.Comms[i].ID] = &h.Comms[i]
	}
	return ix
}

// State returns the definition of a state id, or nil.
func (ix *Index) State(id int32) *StateDef { return ix.states[id] }

// Region returns the definition of a region id, or nil.
func (ix *Index) Region(id int32) *RegionDef { return ix.regions[id] }

// Event returns the definition of an event id, or nil.
func (ix *Index) Event(id int32) *EventDef { return ix.events[id] }

// Counter returns the definition of a counter id, or nil.
func (ix *Index) Counter(id int32) *CounterDef { return ix.counters[id] }

// Comm returns the definition of a communicator id, or nil.
func (ix *Index) Comm(id int32) *CommDef { return ix.comms[id] }

// StateName returns the name of a state, or its number when it has none.
func (ix *Index) StateName(id int32) string {
	if d := ix.states[id]; d != nil && d.Name != "" {
		return d.Name
	}
	return fmt.Sprint(id)
}

// EventName returns the name of an event, or "event <id>".
func (ix *Index) EventName(id int32) string {
	if d := ix.events[id]; d != nil {
		return d.Name
	}
	return fmt.Sprintf("event %d", id)
}

// RegionName returns the label of a region, or "region <id>".
func (ix *Index) RegionName(id int32) string {
	if d := ix.regions[id]; d != nil {
		return d.Label
	}
	return fmt.Sprintf("region %d", id)
}

// Validate checks the header for internal consistency: runs numbered
// 0..n-1, no duplicate dictionary ids, region parents that exist.
func (h *Header) Validate() error {
	for i, r := range h.Runs {
		if r.ID != int32(i) {
			return fmt.Errorf("header: run %d has id %d (runs must be numbered 0..n-1)", i, r.ID)
		}
		if r.Procs < 0 {
			return fmt.Errorf("header: run %d has %d processes", i, r.Procs)
		}
	}
	if err := uniqueIDs("state", len(h.States), func(i int) int32 { return h.States[i].ID }); err != nil {
		return err
	}
	if err := uniqueIDs("region", len(h.Regions), func(i int) int32 { return h.Regions[i].ID }); err != nil {
		return err
	}
	if err := uniqueIDs("event", len(h.Events), func(i int) int32 { return h.Events[i].ID }); err != nil {
		return err
	}
	if err := uniqueIDs("counter", len(h.Counters), func(i int) int32 { return h.Counters[i].ID }); err != nil {
		return err
	}
	if err := uniqueIDs("communicator", len(h.Comms), func(i int) int32 { return h.Comms[i].ID }); err != nil {
		return err
	}
	ix := NewIndex(h)
	for _, r := range h.Regions {
		if r.Parent >= 0 && ix.Region(r.Parent) == nil {
			return fmt.Errorf("header: region %d (%s) has parent %d, which is not defined", r.ID, r.Label, r.Parent)
		}
	}
	return nil
}

func uniqueIDs(what string, n int, id func(int) int32) error {
	seen := make(map[int32]bool, n)
	for i := 0; i < n; i++ {
		if seen[id(i)] {
			return fmt.Errorf("header: %s id %d defined twice", what, id(i))
		}
		seen[id(i)] = true
	}
	return nil
}

// SortDicts sorts every dictionary by id, so that headers built in
// different orders compare and serialise identically.
func (h *Header) SortDicts() {
	sort.Slice(h.States, func(i, j int) bool { return h.States[i].ID < h.States[j].ID })
	sort.Slice(h.Regions, func(i, j int) bool { return h.Regions[i].ID < h.Regions[j].ID })
	sort.Slice(h.Events, func(i, j int) bool { return h.Events[i].ID < h.Events[j].ID })
	sort.Slice(h.Counters, func(i, j int) bool { return h.Counters[i].ID < h.Counters[j].ID })
	sort.Slice(h.Comms, func(i, j int) bool { return h.Comms[i].ID < h.Comms[j].ID })
	sort.Slice(h.Procs, func(i, j int) bool {
		if h.Procs[i].Run != h.Procs[j].Run {
			return h.Procs[i].Run < h.Procs[j].Run
		}
		return h.Procs[i].Proc < h.Procs[j].Proc
	})
}

// EnsureRun makes sure run id exists (adding empty runs up to it) and has at
// least procs processes.
func (h *Header) EnsureRun(id int32, procs int32) {
	for int32(len(h.Runs)) <= id {
		h.Runs = append(h.Runs, RunInfo{ID: int32(len(h.Runs))})
	}
	if h.Runs[id].Procs < procs {
		h.Runs[id].Procs = procs
	}
}
