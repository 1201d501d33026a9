// Package trace is parscope's one data model: an ensemble of runs, each run a
// set of processes 0..P-1, each process a time-ordered stream of records.
//
// Every importer produces this model, the .pst store persists it, and every
// analysis reads it; no analysis parses a file format. Records are a compact
// tagged union (Record) so that one stream can carry every kind in time order
// without allocation per record; the meaning of each field per kind is
// documented on Record. Dictionaries (state names, regions, event names,
// counters, communicators) and metadata live in a Header, which is small and
// held in memory, while records stream.
//
// Time is int64 nanoseconds from the start of the run; the clock resolution
// of the source is recorded in Meta.ClockResolution.
package trace

import (
	"fmt"
	"math"
)

// Kind is the kind of a Record.
type Kind uint8

// Record kinds. The numeric values are stored in .pst files and must not change.
const (
	// KindState is a state (basic block) entry: the process enters state ID at T.
	KindState Kind = 1
	// KindEnter is a region (loop, if, function, user region) entry.
	KindEnter Kind = 2
	// KindExit is a region exit.
	KindExit Kind = 3
	// KindSend is the send side of a point-to-point message.
	KindSend Kind = 4
	// KindRecv is the receive side of a point-to-point message.
	KindRecv Kind = 5
	// KindCollective is one process's part in a collective operation.
	KindCollective Kind = 6
	// KindEvent is a named event with an optional integer value.
	KindEvent Kind = 7
	// KindCounter is a counter sample (a float64 value).
	KindCounter Kind = 8
	// KindBBV is one entry of a basic block vector: block ID executed Value
	// times (or instructions) in interval Seq.
	KindBBV Kind = 9
)

var kindNames = [...]string{
	KindState: "state", KindEnter: "enter", KindExit: "exit", KindSend: "send",
	KindRecv: "recv", KindCollective: "collective", KindEvent: "event",
	KindCounter: "counter", KindBBV: "bbv",
}

// String returns the lower-case name of the kind ("state", "send", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return k >= KindState && k <= KindBBV }

// Kinds lists every record kind in numeric order.
var Kinds = []Kind{KindState, KindEnter, KindExit, KindSend, KindRecv, KindCollective, KindEvent, KindCounter, KindBBV}

// TimedKinds returns every kind of record but KindBBV (whose records are
// ordered by interval, not time), in a new slice: what an analysis reads
// when a process ends with its last record, whatever its kind.
func TimedKinds() []Kind {
	return []Kind{KindEnter, KindExit, KindState, KindSend, KindRecv, KindCollective, KindEvent, KindCounter}
}

// Record flags.
const (
	// FlagDynamic marks a message whose peer the compiler could not determine
	// statically (the "[D]" mark of the annotated traces of Jones et al. 2007).
	FlagDynamic uint8 = 1 << 0
	// FlagAnySource marks a receive posted with MPI_ANY_SOURCE whose actual
	// source is not known from the trace (Peer is then -1).
	FlagAnySource uint8 = 1 << 1
	// FlagRepaired marks a record whose timestamp was repaired on import
	// (see Header.Repairs for the counts).
	FlagRepaired uint8 = 1 << 2
	// FlagDerived marks a state record the engine derived from other
	// records (states from regions, engine.StatesFrom) as it reads a
	// trace; such records are never stored.
	FlagDerived uint8 = 1 << 3
)

// NoPeer is the Peer value of a record without a peer (or an unknown one).
const NoPeer int32 = -1

// NoRequest is the Seq value of a blocking message (no request handle).
const NoRequest int32 = -1

// Record is one record of a process's stream. The fields are a tagged union
// whose meaning depends on Kind:
//
//	kind        T                 End               ID          Peer      Value            Tag  Comm  Seq
//	state       entry time        -                 state id    -         -                -    -     -
//	enter/exit  time              -                 region id   -         -                -    -     -
//	send        post time         completion time   -           dst       bytes            tag  comm  request (-1: blocking)
//	recv        post time         completion time   -           src (-1)  bytes            tag  comm  request (-1: blocking)
//	collective  begin time        end time          op          root (-1) bytes sent       -    comm  -
//	event       time              -                 event id    -         value            -    -     -
//	counter     time              -                 counter id  -         float64 bits     -    -     -
//	bbv         interval end (0)  -                 block id    -         count            -    -     interval
//
// End is 0 when the completion time is unknown; use EndTime to read it.
// Run and Proc locate the record in the ensemble.
type Record struct {
	T     int64
	End   int64
	Value int64
	Run   int32
	Proc  int32
	ID    int32
	Peer  int32
	Tag   int32
	Comm  int32
	Seq   int32
	Kind  Kind
	Flags uint8
}

// EndTime returns the completion time of a send, receive or collective, or T
// when it is not known or the kind has no duration.
func (r *Record) EndTime() int64 {
	if r.End < r.T {
		return r.T
	}
	return r.End
}

// Float returns the value of a counter record.
func (r *Record) Float() float64 { return math.Float64frombits(uint64(r.Value)) }

// State returns a state-entry record.
func State(run, proc int32, t int64, state int32) Record {
	return Record{Kind: KindState, Run: run, Proc: proc, T: t, ID: state, Peer: NoPeer, Seq: NoRequest}
}

// Enter returns a region-entry record.
func Enter(run, proc int32, t int64, region int32) Record {
	return Record{Kind: KindEnter, Run: run, Proc: proc, T: t, ID: region, Peer: NoPeer, Seq: NoRequest}
}

// Exit returns a region-exit record.
func Exit(run, proc int32, t int64, region int32) Record {
	return Record{Kind: KindExit, Run: run, Proc: proc, T: t, ID: region, Peer: NoPeer, Seq: NoRequest}
}

// Send returns the send side of a message from proc to dst.
func Send(run, proc int32, t, end int64, dst int32, bytes int64, tag, comm int32) Record {
	return Record{Kind: KindSend, Run: run, Proc: proc, T: t, End: end, Peer: dst, Value: bytes, Tag: tag, Comm: comm, Seq: NoRequest}
}

// Recv returns the receive side of a message from src (NoPeer if unknown) to proc.
func Recv(run, proc int32, t, end int64, src int32, bytes int64, tag, comm int32) Record {
	return Record{Kind: KindRecv, Run: run, Proc: proc, T: t, End: end, Peer: src, Value: bytes, Tag: tag, Comm: comm, Seq: NoRequest}
}

// Coll returns one process's part in a collective operation.
func Coll(run, proc int32, t, end int64, op CollectiveOp, root int32, bytes int64, comm int32) Record {
	return Record{Kind: KindCollective, Run: run, Proc: proc, T: t, End: end, ID: int32(op), Peer: root, Value: bytes, Comm: comm, Seq: NoRequest}
}

// Event returns a named-event record.
func Event(run, proc int32, t int64, event int32, value int64) Record {
	return Record{Kind: KindEvent, Run: run, Proc: proc, T: t, ID: event, Value: value, Peer: NoPeer, Seq: NoRequest}
}

// Counter returns a counter-sample record.
func Counter(run, proc int32, t int64, counter int32, v float64) Record {
	return Record{Kind: KindCounter, Run: run, Proc: proc, T: t, ID: counter, Value: int64(math.Float64bits(v)), Peer: NoPeer, Seq: NoRequest}
}

// BBV returns one entry of a basic block vector: block executed count times
// in interval. t is the interval's end time, or 0 when unknown.
func BBV(run, proc int32, interval int32, t int64, block int32, count int64) Record {
	return Record{Kind: KindBBV, Run: run, Proc: proc, T: t, ID: block, Value: count, Seq: interval, Peer: NoPeer}
}

// Less orders records by (run, time, process); records that compare equal
// keep their stream order when sorted stably. It is the order of a
// time-merged stream.
func Less(a, b *Record) bool {
	if a.Run != b.Run {
		return a.Run < b.Run
	}
	if a.T != b.T {
		return a.T < b.T
	}
	return a.Proc < b.Proc
}

// Compare is Less as a three-way comparison, for slices.SortStableFunc.
func Compare(a, b Record) int {
	switch {
	case a.Run != b.Run:
		return cmp32(a.Run, b.Run)
	case a.T != b.T:
		if a.T < b.T {
			return -1
		}
		return 1
	default:
		return cmp32(a.Proc, b.Proc)
	}
}

func cmp32(a, b int32) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// String formats a record for diagnostics and golden files.
func (r Record) String() string {
	switch r.Kind {
	case KindState, KindEnter, KindExit:
		return fmt.Sprintf("%d/%d %d %s %d", r.Run, r.Proc, r.T, r.Kind, r.ID)
	case KindSend, KindRecv:
		return fmt.Sprintf("%d/%d %d %s peer=%d bytes=%d tag=%d comm=%d end=%d req=%d flags=%d",
			r.Run, r.Proc, r.T, r.Kind, r.Peer, r.Value, r.Tag, r.Comm, r.End, r.Seq, r.Flags)
	case KindCollective:
		return fmt.Sprintf("%d/%d %d %s %s root=%d bytes=%d comm=%d end=%d",
			r.Run, r.Proc, r.T, r.Kind, CollectiveOp(r.ID), r.Peer, r.Value, r.Comm, r.End)
	case KindEvent:
		return fmt.Sprintf("%d/%d %d %s %d value=%d", r.Run, r.Proc, r.T, r.Kind, r.ID, r.Value)
	case KindCounter:
		return fmt.Sprintf("%d/%d %d %s %d value=%g", r.Run, r.Proc, r.T, r.Kind, r.ID, r.Float())
	case KindBBV:
		return fmt.Sprintf("%d/%d %d %s interval=%d block=%d count=%d", r.Run, r.Proc, r.T, r.Kind, r.Seq, r.ID, r.Value)
	}
	return fmt.Sprintf("%d/%d %d %s", r.Run, r.Proc, r.T, r.Kind)
}
