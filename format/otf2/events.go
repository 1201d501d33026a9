package otf2

import (
	"fmt"
	"io"
	"math"

	"github.com/parscope/parscope/format"
)

// Event record types (OTF2_EventType) that the importer decodes.
const (
	evBufferFlush        = 10
	evMeasurementOnOff   = 11
	evEnter              = 12
	evLeave              = 13
	evMpiSend            = 14
	evMpiIsend           = 15
	evMpiIsendComplete   = 16
	evMpiIrecvRequest    = 17
	evMpiRecv            = 18
	evMpiIrecv           = 19
	evMpiRequestTest     = 20
	evMpiRequestCanceled = 21
	evMpiCollBegin       = 22
	evMpiCollEnd         = 23
	evOmpFork            = 24
	evOmpTaskCreate      = 28
	evOmpTaskSwitch      = 29
	evOmpTaskComplete    = 30
	evMetric             = 31
	evParamString        = 32
	evParamInt           = 33
	evParamUint          = 34
	evProgramBegin       = 83
	evProgramEnd         = 84
)

// singleton reports whether events of type t have no length byte: the
// records of OTF2 1.1 with a single compressed field. Every other event
// record, known or not, carries its length.
func singleton(t uint8) bool {
	switch t {
	case evEnter, evLeave, evMpiIsendComplete, evMpiIrecvRequest, evMpiRequestTest,
		evMpiRequestCanceled, evOmpFork, evOmpTaskCreate, evOmpTaskSwitch, evOmpTaskComplete:
		return true
	}
	return false
}

var eventNames = map[uint8]string{
	10: "BUFFER_FLUSH", 11: "MEASUREMENT_ON_OFF", 12: "ENTER", 13: "LEAVE", 14: "MPI_SEND",
	15: "MPI_ISEND", 16: "MPI_ISEND_COMPLETE", 17: "MPI_IRECV_REQUEST", 18: "MPI_RECV",
	19: "MPI_IRECV", 20: "MPI_REQUEST_TEST", 21: "MPI_REQUEST_CANCELLED",
	22: "MPI_COLLECTIVE_BEGIN", 23: "MPI_COLLECTIVE_END", 24: "OMP_FORK", 25: "OMP_JOIN",
	26: "OMP_ACQUIRE_LOCK", 27: "OMP_RELEASE_LOCK", 28: "OMP_TASK_CREATE", 29: "OMP_TASK_SWITCH",
	30: "OMP_TASK_COMPLETE", 31: "METRIC", 32: "PARAMETER_STRING", 33: "PARAMETER_INT64",
	34: "PARAMETER_UINT64", 35: "RMA_WIN_CREATE", 36: "RMA_WIN_DESTROY", 37: "RMA_COLLECTIVE_BEGIN",
	38: "RMA_COLLECTIVE_END", 39: "RMA_GROUP_SYNC", 40: "RMA_REQUEST_LOCK", 41: "RMA_ACQUIRE_LOCK",
	42: "RMA_TRY_LOCK", 43: "RMA_RELEASE_LOCK", 44: "RMA_SYNC", 45: "RMA_WAIT_CHANGE", 46: "RMA_PUT",
	47: "RMA_GET", 48: "RMA_ATOMIC", 49: "RMA_OP_COMPLETE_BLOCKING", 50: "RMA_OP_COMPLETE_NON_BLOCKING",
	51: "RMA_OP_TEST", 52: "RMA_OP_COMPLETE_REMOTE", 53: "THREAD_FORK", 54: "THREAD_JOIN",
	55: "THREAD_TEAM_BEGIN", 56: "THREAD_TEAM_END", 57: "THREAD_ACQUIRE_LOCK", 58: "THREAD_RELEASE_LOCK",
	59: "THREAD_TASK_CREATE", 60: "THREAD_TASK_SWITCH", 61: "THREAD_TASK_COMPLETE", 62: "THREAD_CREATE",
	63: "THREAD_BEGIN", 64: "THREAD_WAIT", 65: "THREAD_END", 66: "CALLING_CONTEXT_ENTER",
	67: "CALLING_CONTEXT_LEAVE", 68: "CALLING_CONTEXT_SAMPLE", 69: "IO_CREATE_HANDLE",
	70: "IO_DESTROY_HANDLE", 71: "IO_DUPLICATE_HANDLE", 72: "IO_SEEK", 73: "IO_CHANGE_STATUS_FLAGS",
	74: "IO_DELETE_FILE", 75: "IO_OPERATION_BEGIN", 76: "IO_OPERATION_TEST", 77: "IO_OPERATION_ISSUED",
	78: "IO_OPERATION_COMPLETE", 79: "IO_OPERATION_CANCELLED", 80: "IO_ACQUIRE_LOCK",
	81: "IO_RELEASE_LOCK", 82: "IO_TRY_LOCK", 83: "PROGRAM_BEGIN", 84: "PROGRAM_END",
}

// EventName returns the name otf2-print gives an event record type, or
// "UNKNOWN(<type>)".
func EventName(t uint8) string {
	if n, ok := eventNames[t]; ok {
		return n
	}
	return fmt.Sprintf("UNKNOWN(%d)", t)
}

// Event is one decoded event record. Which fields are set depends on Type;
// ids are global (mapped through the location's mapping tables).
type Event struct {
	Type uint8
	// Time is the timestamp in timer ticks, clock-corrected.
	Time uint64
	// Offset is the file offset of the record's type byte.
	Offset int64
	// Ref is the region (Enter/Leave), metric (Metric), parameter
	// (Parameter*) or program name string (ProgramBegin).
	Ref uint32
	// Peer is the receiver (MpiSend/Isend) or sender (MpiRecv/Irecv) rank
	// in Comm, or the root of a collective.
	Peer uint32
	Comm uint32
	Tag  uint32
	// Length is the message length in bytes, or the bytes sent by a collective.
	Length uint64
	// Received is the bytes received by a collective.
	Received uint64
	// Request is the request id of non-blocking operations.
	Request uint64
	// Op is the collective operation (OTF2_CollectiveOp).
	Op uint8
	// Value is the parameter value, the string of a string parameter, or
	// the exit status of ProgramEnd.
	Value uint64
	// MetricTypes and MetricValues are the values of a Metric event.
	MetricTypes  []uint8
	MetricValues []uint64
	// Args are the program arguments of ProgramBegin (string ids).
	Args []uint32
	// Decoded is false for record types the reader only skips.
	Decoded bool
}

// EventReader decodes the events of one location's event file.
type EventReader struct {
	f     *chunkedFile
	local *LocalDefs
	time  uint64
	// clock correction state
	iv int
	// Attributes counts the attribute lists skipped (attributes attached
	// to events are not modelled).
	Attributes int
}

// NewEventReader returns a reader of the event file r (size bytes, written
// with chunkSize-byte chunks). local, which may be nil, maps local ids to
// global ones and gives the clock offsets to apply.
func NewEventReader(name string, r io.ReaderAt, size, chunkSize int64, local *LocalDefs) (*EventReader, error) {
	f, err := newChunkedFile(name, r, size, chunkSize)
	if err != nil {
		return nil, err
	}
	if local == nil {
		local = &LocalDefs{}
	}
	return &EventReader{f: f, local: local}, nil
}

// Next decodes the next event into ev (reusing its slices). It returns
// io.EOF after the last event.
func (er *EventReader) Next(ev *Event) error {
	f := er.f
	for {
		typ, off, err := f.nextType()
		if err != nil {
			return err
		}
		c := &f.c
		if typ == recTimestamp {
			t := c.full64()
			if c.err != nil {
				return c.err
			}
			if t < er.time {
				return format.OffsetError(f.name, off, "timestamp %d goes back in time (previous %d)", t, er.time)
			}
			er.time = t
			continue
		}
		if typ == recAttrList {
			c.record()
			if c.err != nil {
				return c.err
			}
			er.Attributes++
			continue
		}
		if typ < evBufferFlush {
			return format.OffsetError(f.name, off, "unexpected buffer record type %d (expected an event, a timestamp or END_OF_CHUNK/END_OF_FILE)", typ)
		}
		ev.Type, ev.Offset, ev.Decoded = typ, off, true
		ev.Time = er.correct(er.time)
		if singleton(typ) {
			var v uint64
			if typ == evEnter || typ == evLeave || typ == evOmpFork {
				v = uint64(c.u32())
			} else {
				v = c.u64()
			}
			if c.err != nil {
				return c.err
			}
			switch typ {
			case evEnter, evLeave:
				ev.Ref = uint32(er.local.maps[mapRegion].get(v))
			case evMpiIsendComplete, evMpiIrecvRequest, evMpiRequestTest, evMpiRequestCanceled:
				ev.Request = v
			default:
				ev.Decoded = false
			}
			return nil
		}
		b := c.record()
		if c.err != nil {
			return c.err
		}
		er.decode(ev, &b)
		return b.err
	}
}

func (er *EventReader) decode(ev *Event, c *cursor) {
	m := &er.local.maps
	switch ev.Type {
	case evMpiSend, evMpiRecv, evMpiIsend, evMpiIrecv:
		ev.Peer = c.u32()
		ev.Comm = uint32(m[mapComm].get(uint64(c.u32())))
		ev.Tag = c.u32()
		ev.Length = c.u64()
		if ev.Type == evMpiIsend || ev.Type == evMpiIrecv {
			ev.Request = c.u64()
		}
	case evMpiCollBegin:
	case evMpiCollEnd:
		ev.Op = c.u8()
		ev.Comm = uint32(m[mapComm].get(uint64(c.u32())))
		ev.Peer = c.u32()
		ev.Length = c.u64()
		ev.Received = c.u64()
	case evMetric:
		ev.Ref = uint32(m[mapMetric].get(uint64(c.u32())))
		n := int(c.u8())
		if c.err == nil && 2*n > len(c.b)-c.pos {
			c.fail(fmt.Sprintf("metric record claims %d values in %d bytes", n, len(c.b)-c.pos))
			return
		}
		ev.MetricTypes = ev.MetricTypes[:0]
		ev.MetricValues = ev.MetricValues[:0]
		for i := 0; i < n; i++ { // (type, value) pairs
			ev.MetricTypes = append(ev.MetricTypes, c.u8())
			ev.MetricValues = append(ev.MetricValues, c.u64())
		}
	case evParamString:
		ev.Ref = uint32(m[mapParameter].get(uint64(c.u32())))
		ev.Value = m[mapString].get(uint64(c.u32()))
	case evParamInt:
		ev.Ref = uint32(m[mapParameter].get(uint64(c.u32())))
		ev.Value = uint64(c.i64())
	case evParamUint:
		ev.Ref = uint32(m[mapParameter].get(uint64(c.u32())))
		ev.Value = c.u64()
	case evProgramBegin:
		ev.Ref = uint32(m[mapString].get(uint64(c.u32())))
		n := c.u32()
		if c.err == nil && uint64(n) > uint64(len(c.b)-c.pos) {
			c.fail(fmt.Sprintf("program begin claims %d arguments in %d bytes", n, len(c.b)-c.pos))
			return
		}
		ev.Args = ev.Args[:0]
		for i := uint32(0); i < n; i++ {
			ev.Args = append(ev.Args, uint32(m[mapString].get(uint64(c.u32()))))
		}
	case evProgramEnd:
		ev.Value = uint64(c.i64())
	default:
		ev.Decoded = false
	}
}

// correct applies the location's clock offsets the way OTF2's reader does:
// linear interpolation between consecutive ClockOffset definitions
// (extrapolating before the first and after the last interval), the
// interpolated part rounded to the nearest tick (ties to even, like rint).
func (er *EventReader) correct(t uint64) uint64 {
	offs := er.local.offsets
	if len(offs) < 2 {
		return t
	}
	for er.iv < len(offs)-2 && t > offs[er.iv+1].time {
		er.iv++
	}
	a, b := offs[er.iv], offs[er.iv+1]
	slope := float64(b.offset-a.offset) / float64(b.time-a.time)
	var diff float64
	if t >= a.time {
		diff = float64(t - a.time)
	} else {
		diff = -float64(a.time - t)
	}
	o := a.offset + int64(math.RoundToEven(slope*diff))
	return t + uint64(o)
}
