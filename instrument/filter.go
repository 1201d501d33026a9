package instrument

import "github.com/parscope/parscope/trace"

// Filter decides, per event, whether a process keeps it. Keep is called on
// the recording goroutine of proc, before the record is buffered, with the
// record's kind, its id (state, region or event id; 0 for messages) and its
// time in nanoseconds since Start (from the start-up calibration of the
// clock). It must be fast and must not block; a Filter that keeps state
// per process may rely on Keep never running concurrently for one proc.
//
// A dropped event is not lost without trace: the recorder counts the events
// dropped since a process's previous kept record and writes the count as a
// DroppedEvent (value = count, time = the last dropped event) just before
// the next kept record, so a run of dropped repeats can be reconstructed.
// Occupancy and BBV counters see every block, kept or dropped.
type Filter interface {
	Keep(proc int, kind trace.Kind, id int32, t int64) bool
}

// ProcessFilter is a Filter that keeps state per process: when the
// recorder creates a process it calls ForProcess with the process's id and
// asks the returned Filter, instead of the ProcessFilter, about that
// process's records. It lets a filter make its per-process state for
// processes created as the program runs. ForProcess may be called from
// several goroutines at once, and, when two goroutines make the same new
// process at once, twice for that id: the recorder keeps the first
// process stored and never asks the other's Filter.
type ProcessFilter interface {
	Filter
	ForProcess(proc int) Filter
}

// KindFilter drops every record whose kind is in the set. It is the filter
// for occupancy-only or BBV-only recording (drop trace.KindState).
type KindFilter uint16

// DropKinds returns a KindFilter dropping the given kinds.
func DropKinds(kinds ...trace.Kind) KindFilter {
	var f KindFilter
	for _, k := range kinds {
		f |= 1 << k
	}
	return f
}

// Keep implements Filter.
func (f KindFilter) Keep(_ int, kind trace.Kind, _ int32, _ int64) bool {
	return f&(1<<kind) == 0
}
