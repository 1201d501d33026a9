package otf2

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/parscope/parscope/format"
)

// Global definition record types.
const (
	defClockProperties = 5
	defString          = 10
	defSystemTreeNode  = 12
	defLocationGroup   = 13
	defLocation        = 14
	defRegion          = 15
	defGroup           = 18
	defMetricMember    = 19
	defMetricClass     = 20
	defMetricInstance  = 21
	defComm            = 22
	defParameter       = 23
)

// Local definition record types.
const (
	localMappingTable = 5
	localClockOffset  = 6
)

// Mapping types of local mapping tables (OTF2_MappingType).
const (
	mapString    = 0
	mapRegion    = 3
	mapMetric    = 5
	mapComm      = 6
	mapParameter = 7
	numMaps      = 15
)

// Group types (OTF2_GroupType).
const (
	groupCommLocations = 4
	groupCommGroup     = 5
	groupCommSelf      = 6
)

// undef32 is OTF2_UNDEFINED_UINT32, the "no reference" value.
const undef32 = math.MaxUint32

// ClockProperties is the global ClockProperties definition.
type ClockProperties struct {
	// Resolution is the number of timer ticks per second.
	Resolution uint64
	// Offset is the timestamp of the trace's start.
	Offset uint64
	// Length is the trace's length in ticks.
	Length uint64
}

// Location is a location definition (a thread, a GPU stream, a metric source).
type Location struct {
	ID     uint64
	Name   uint32
	Type   uint8
	Events uint64
	Group  uint32
	off    int64
}

// LocationGroup is a location group definition (a process, a GPU context).
type LocationGroup struct {
	Name, Parent uint32
	Type         uint8
	off          int64
}

// SystemTreeNode is a node of the system tree (machine, node, device).
type SystemTreeNode struct {
	Name, Class, Parent uint32
	off                 int64
}

// Region is a region definition.
type Region struct {
	Name, Canonical, Description, File uint32
	Begin, End                         uint32
	Role, Paradigm                     uint8
	off                                int64
}

// Group is a group definition; for communication groups Members are
// ranks or location ids depending on Type.
type Group struct {
	Name     uint32
	Type     uint8
	Paradigm uint8
	Members  []uint64
	off      int64
}

// Comm is a communicator definition.
type Comm struct {
	Name, Group, Parent uint32
	off                 int64
}

// MetricMember is one metric (a counter) of a metric class.
type MetricMember struct {
	Name, Description, Unit uint32
	Type, Mode, ValueType   uint8
	Base                    uint8
	Exponent                int64
	off                     int64
}

// Parameter is a parameter definition.
type Parameter struct {
	Name uint32
	Type uint8
	off  int64
}

// Defs holds the global definitions of an archive that the importer uses.
// Definition records of other types are counted in Skipped by record type.
type Defs struct {
	Clock           ClockProperties
	HasClock        bool
	Strings         map[uint32]string
	SystemTreeNodes map[uint32]SystemTreeNode
	LocationGroups  map[uint32]LocationGroup
	Locations       []Location
	Regions         map[uint32]Region
	Groups          map[uint32]Group
	Comms           map[uint32]Comm
	MetricMembers   map[uint32]MetricMember
	// MetricClasses maps a metric class to its members.
	MetricClasses map[uint32][]uint32
	// MetricInstances maps a metric instance to its class.
	MetricInstances map[uint32]uint32
	Parameters      map[uint32]Parameter
	// Records counts the definition records read; Skipped those of types
	// the importer does not use, by record type.
	Records int
	Skipped map[uint8]int
	file    string
	instOff map[uint32]int64
	clsOff  map[uint32]int64
}

// String returns the string with the given id, or "" for an undefined one.
func (d *Defs) String(id uint32) string { return d.Strings[id] }

// ReadDefs reads a global definition file (traces.def) written with the
// given definition chunk size, and checks that every reference in it
// points at a definition.
func ReadDefs(name string, r io.ReaderAt, size, chunkSize int64) (*Defs, error) {
	f, err := newChunkedFile(name, r, size, chunkSize)
	if err != nil {
		return nil, err
	}
	d := &Defs{
		Strings: map[uint32]string{}, SystemTreeNodes: map[uint32]SystemTreeNode{},
		LocationGroups: map[uint32]LocationGroup{}, Regions: map[uint32]Region{},
		Groups: map[uint32]Group{}, Comms: map[uint32]Comm{}, MetricMembers: map[uint32]MetricMember{},
		MetricClasses: map[uint32][]uint32{}, MetricInstances: map[uint32]uint32{},
		Parameters: map[uint32]Parameter{}, Skipped: map[uint8]int{}, file: name,
		instOff: map[uint32]int64{}, clsOff: map[uint32]int64{},
	}
	for {
		typ, off, err := f.nextType()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		body := f.c.record()
		if f.c.err != nil {
			return nil, f.c.err
		}
		if err := d.add(typ, off, &body); err != nil {
			return nil, err
		}
		d.Records++
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	return d, nil
}

func dup(name string, off int64, what string, id uint64) error {
	return format.OffsetError(name, off, "%s %d is defined twice", what, id)
}

// add decodes one definition record. Fields added by later OTF2 versions
// come last in a record, so a record that ends early leaves them at zero,
// and bytes after the known fields are skipped.
func (d *Defs) add(typ uint8, off int64, c *cursor) error {
	switch typ {
	case defClockProperties:
		d.Clock = ClockProperties{Resolution: c.u64(), Offset: c.u64(), Length: c.u64()}
		if c.err == nil && d.Clock.Resolution == 0 {
			return format.OffsetError(d.file, off, "ClockProperties with 0 ticks per second")
		}
		d.HasClock = true
	case defString:
		id := c.u32()
		s := c.str()
		if _, ok := d.Strings[id]; ok && c.err == nil {
			return dup(d.file, off, "string", uint64(id))
		}
		d.Strings[id] = s
	case defSystemTreeNode:
		id := c.u32()
		n := SystemTreeNode{Name: c.u32(), Class: c.u32(), Parent: c.u32(), off: off}
		if _, ok := d.SystemTreeNodes[id]; ok && c.err == nil {
			return dup(d.file, off, "system tree node", uint64(id))
		}
		d.SystemTreeNodes[id] = n
	case defLocationGroup:
		id := c.u32()
		g := LocationGroup{Name: c.u32(), Type: c.u8(), Parent: c.u32(), off: off}
		if _, ok := d.LocationGroups[id]; ok && c.err == nil {
			return dup(d.file, off, "location group", uint64(id))
		}
		d.LocationGroups[id] = g
	case defLocation:
		l := Location{ID: c.u64(), Name: c.u32(), Type: c.u8(), Events: c.u64(), Group: c.u32(), off: off}
		d.Locations = append(d.Locations, l)
	case defRegion:
		id := c.u32()
		r := Region{Name: c.u32(), Description: c.u32(), off: off}
		c.u8() // region type (before OTF2 1.1)
		r.File, r.Begin, r.End = c.u32(), c.u32(), c.u32()
		r.Canonical = undef32
		if c.more() {
			r.Canonical, r.Role, r.Paradigm = c.u32(), c.u8(), c.u8()
		}
		if _, ok := d.Regions[id]; ok && c.err == nil {
			return dup(d.file, off, "region", uint64(id))
		}
		d.Regions[id] = r
	case defGroup:
		id := c.u32()
		g := Group{Name: c.u32(), off: off}
		pre12 := c.u8()
		n := c.u32()
		if c.err == nil && uint64(n) > uint64(len(c.b)-c.pos) {
			return format.OffsetError(d.file, off, "group %d claims %d members in a %d-byte record", id, n, len(c.b))
		}
		g.Members = make([]uint64, 0, n)
		for i := uint32(0); i < n && c.err == nil; i++ {
			g.Members = append(g.Members, c.u64())
		}
		if c.more() {
			g.Type, g.Paradigm = c.u8(), c.u8()
		} else {
			g.Type = pre12Type(pre12)
		}
		if _, ok := d.Groups[id]; ok && c.err == nil {
			return dup(d.file, off, "group", uint64(id))
		}
		d.Groups[id] = g
	case defMetricMember:
		id := c.u32()
		m := MetricMember{Name: c.u32(), Description: c.u32(), Type: c.u8(), Mode: c.u8(),
			ValueType: c.u8(), Base: c.u8(), Exponent: c.i64(), Unit: c.u32(), off: off}
		if _, ok := d.MetricMembers[id]; ok && c.err == nil {
			return dup(d.file, off, "metric member", uint64(id))
		}
		d.MetricMembers[id] = m
	case defMetricClass:
		id := c.u32()
		n := c.u8()
		members := make([]uint32, 0, n)
		for i := 0; i < int(n) && c.err == nil; i++ {
			members = append(members, c.u32())
		}
		if _, ok := d.MetricClasses[id]; ok && c.err == nil {
			return dup(d.file, off, "metric class", uint64(id))
		}
		if _, ok := d.MetricInstances[id]; ok && c.err == nil {
			return dup(d.file, off, "metric", uint64(id))
		}
		d.MetricClasses[id] = members
		d.clsOff[id] = off
	case defMetricInstance:
		id := c.u32()
		cls := c.u32()
		if _, ok := d.MetricClasses[id]; ok && c.err == nil {
			return dup(d.file, off, "metric", uint64(id))
		}
		d.MetricInstances[id] = cls
		d.instOff[id] = off
	case defComm:
		id := c.u32()
		cm := Comm{Name: c.u32(), Group: c.u32(), Parent: c.u32(), off: off}
		if _, ok := d.Comms[id]; ok && c.err == nil {
			return dup(d.file, off, "communicator", uint64(id))
		}
		d.Comms[id] = cm
	case defParameter:
		id := c.u32()
		p := Parameter{Name: c.u32(), Type: c.u8(), off: off}
		if _, ok := d.Parameters[id]; ok && c.err == nil {
			return dup(d.file, off, "parameter", uint64(id))
		}
		d.Parameters[id] = p
	default:
		d.Skipped[typ]++
	}
	return c.err
}

// pre12Type maps the group type of OTF2 before 1.2 to the current one.
func pre12Type(t uint8) uint8 {
	switch t {
	case 1: // locations
		return 1
	case 2: // regions
		return 2
	case 3: // metric
		return 3
	case 4: // MPI group
		return groupCommGroup
	case 5: // MPI comm self
		return groupCommSelf
	case 6: // MPI locations
		return groupCommLocations
	}
	return 0
}

// check verifies that the definitions refer only to defined ids.
func (d *Defs) check() error {
	if !d.HasClock {
		return format.OffsetError(d.file, 0, "no ClockProperties definition (expected one to give the timer resolution)")
	}
	str := func(off int64, what string, id uint32) error {
		if id == undef32 {
			return nil
		}
		if _, ok := d.Strings[id]; !ok {
			return format.OffsetError(d.file, off, "%s refers to undefined string %d", what, id)
		}
		return nil
	}
	type ref struct {
		off  int64
		what string
		id   uint32
	}
	var refs []ref
	for id, n := range sorted(d.SystemTreeNodes) {
		refs = append(refs, ref{n.off, fmt.Sprintf("system tree node %d", id), n.Name}, ref{n.off, fmt.Sprintf("system tree node %d", id), n.Class})
		if _, ok := d.SystemTreeNodes[n.Parent]; n.Parent != undef32 && !ok {
			return format.OffsetError(d.file, n.off, "system tree node %d refers to undefined parent %d", id, n.Parent)
		}
	}
	for id, g := range sorted(d.LocationGroups) {
		refs = append(refs, ref{g.off, fmt.Sprintf("location group %d", id), g.Name})
		if _, ok := d.SystemTreeNodes[g.Parent]; g.Parent != undef32 && !ok {
			return format.OffsetError(d.file, g.off, "location group %d refers to undefined system tree node %d", id, g.Parent)
		}
	}
	seen := map[uint64]bool{}
	for _, l := range d.Locations {
		if seen[l.ID] {
			return dup(d.file, l.off, "location", l.ID)
		}
		seen[l.ID] = true
		refs = append(refs, ref{l.off, fmt.Sprintf("location %d", l.ID), l.Name})
		if _, ok := d.LocationGroups[l.Group]; !ok {
			return format.OffsetError(d.file, l.off, "location %d refers to undefined location group %d", l.ID, l.Group)
		}
	}
	for id, r := range sorted(d.Regions) {
		w := fmt.Sprintf("region %d", id)
		refs = append(refs, ref{r.off, w, r.Name}, ref{r.off, w, r.Description}, ref{r.off, w, r.File}, ref{r.off, w, r.Canonical})
	}
	for id, g := range sorted(d.Groups) {
		refs = append(refs, ref{g.off, fmt.Sprintf("group %d", id), g.Name})
	}
	for id, cm := range sorted(d.Comms) {
		refs = append(refs, ref{cm.off, fmt.Sprintf("communicator %d", id), cm.Name})
		if _, ok := d.Groups[cm.Group]; !ok {
			return format.OffsetError(d.file, cm.off, "communicator %d refers to undefined group %d", id, cm.Group)
		}
	}
	for id, m := range sorted(d.MetricMembers) {
		w := fmt.Sprintf("metric member %d", id)
		refs = append(refs, ref{m.off, w, m.Name}, ref{m.off, w, m.Description}, ref{m.off, w, m.Unit})
	}
	for id, ms := range sorted(d.MetricClasses) {
		for _, m := range ms {
			if _, ok := d.MetricMembers[m]; !ok {
				return format.OffsetError(d.file, d.clsOff[id], "metric class %d refers to undefined metric member %d", id, m)
			}
		}
	}
	for id, cls := range sorted(d.MetricInstances) {
		if _, ok := d.MetricClasses[cls]; !ok {
			return format.OffsetError(d.file, d.instOff[id], "metric instance %d refers to undefined metric class %d", id, cls)
		}
	}
	for id, p := range sorted(d.Parameters) {
		refs = append(refs, ref{p.off, fmt.Sprintf("parameter %d", id), p.Name})
	}
	for _, r := range refs {
		if err := str(r.off, r.what, r.id); err != nil {
			return err
		}
	}
	return nil
}

// sorted iterates a map in ascending key order, so that the first error
// reported is the same on every run.
func sorted[V any](m map[uint32]V) func(func(uint32, V) bool) {
	return func(yield func(uint32, V) bool) {
		keys := make([]uint32, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

// idMap is a local-to-global id mapping of one location.
type idMap struct {
	dense  []uint64
	sparse map[uint64]uint64
}

func (m *idMap) get(local uint64) uint64 {
	if m == nil {
		return local
	}
	if m.sparse != nil {
		if g, ok := m.sparse[local]; ok {
			return g
		}
		return local
	}
	if local < uint64(len(m.dense)) {
		return m.dense[local]
	}
	return local
}

// clockOffset is a local ClockOffset definition.
type clockOffset struct {
	time   uint64
	offset int64
}

// LocalDefs holds what a location's local definition file says: mappings
// of local ids in its event file to global ids, and clock offsets.
type LocalDefs struct {
	maps    [numMaps]*idMap
	offsets []clockOffset
	// Records counts the records read; Skipped those of other types.
	Records int
	Skipped map[uint8]int
}

// ReadLocalDefs reads a location's local definition file (traces/<id>.def).
func ReadLocalDefs(name string, r io.ReaderAt, size, chunkSize int64) (*LocalDefs, error) {
	f, err := newChunkedFile(name, r, size, chunkSize)
	if err != nil {
		return nil, err
	}
	ld := &LocalDefs{Skipped: map[uint8]int{}}
	for {
		typ, off, err := f.nextType()
		if errors.Is(err, io.EOF) {
			return ld, nil
		}
		if err != nil {
			return nil, err
		}
		c := f.c.record()
		if f.c.err != nil {
			return nil, f.c.err
		}
		ld.Records++
		switch typ {
		case localMappingTable:
			mt := c.u8()
			n := c.u64()
			mode := c.u8()
			if c.err != nil {
				return nil, c.err
			}
			if mt >= numMaps {
				return nil, format.OffsetError(name, off, "mapping table of unknown type %d (expected 0..%d)", mt, numMaps-1)
			}
			if ld.maps[mt] != nil {
				return nil, format.OffsetError(name, off, "second mapping table of type %d", mt)
			}
			per := uint64(1)
			if mode == 1 {
				per = 2
			} else if mode != 0 {
				return nil, format.OffsetError(name, off, "mapping table mode %d (expected 0 dense or 1 sparse)", mode)
			}
			if n > uint64(len(c.b)-c.pos)/per {
				return nil, format.OffsetError(name, off, "mapping table claims %d entries in a %d-byte record", n, len(c.b))
			}
			m := &idMap{}
			if mode == 0 {
				m.dense = make([]uint64, n)
				for i := range m.dense {
					m.dense[i] = c.u64()
				}
			} else {
				m.sparse = make(map[uint64]uint64, n)
				for i := uint64(0); i < n && c.err == nil; i++ {
					l := c.u64()
					m.sparse[l] = c.u64()
				}
			}
			ld.maps[mt] = m
		case localClockOffset:
			t := c.full64() // timestamps are never compressed
			o := c.i64()
			c.f64() // standard deviation
			if n := len(ld.offsets); c.err == nil && n > 0 && ld.offsets[n-1].time >= t {
				return nil, format.OffsetError(name, off, "clock offset at time %d does not follow the previous one at %d", t, ld.offsets[n-1].time)
			}
			ld.offsets = append(ld.offsets, clockOffset{t, o})
		default:
			ld.Skipped[typ]++
		}
		if c.err != nil {
			return nil, c.err
		}
	}
}
