package mpi

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/parscope/parscope/format"
)

// Format constants of a rank file (see shim/shim.h, which is the other half
// of this definition).
const (
	// Magic starts every rank file.
	Magic = "PSMPI\x00\r\n"
	// Version is the format version this package reads and the shim writes.
	Version = 1
	// HeaderSize is the size of the fixed file header.
	HeaderSize = 48
	// EventSize is the size of an event record's body.
	EventSize = 64
	// MaxRanks bounds the world size of a run.
	MaxRanks = 1 << 16
)

// RecType is the type of a record of a rank file.
type RecType uint8

// Record types (shim.h's PS_REC_*).
const (
	RecString   RecType = 1
	RecInfo     RecType = 2
	RecMap      RecType = 3
	RecComm     RecType = 4
	RecFree     RecType = 5
	RecSend     RecType = 16
	RecRecv     RecType = 17
	RecIsend    RecType = 18
	RecIrecv    RecType = 19
	RecComplete RecType = 20
	RecColl     RecType = 21
	RecBegin    RecType = 22
	RecEnd      RecType = 23
	RecCall     RecType = 24
	RecFinal    RecType = 32
)

// Special peer and tag values of events.
const (
	// PeerAny is MPI_ANY_SOURCE (as a peer) or MPI_ANY_TAG (as a tag).
	PeerAny = -1
	// PeerNull is MPI_PROC_NULL.
	PeerNull = -2
)

// FileHeader is the fixed header of a rank file.
type FileHeader struct {
	Version   uint16
	Rank      int32
	Size      int32
	PID       int32
	Realtime  int64 // CLOCK_REALTIME at MPI_Init, ns since the epoch
	Monotonic int64 // CLOCK_MONOTONIC at MPI_Init, ns (the clock of every event)
}

// Event is one event record: a message, a completion, a collective, a
// region mark or a Wait/Test call (the fields' meaning per type is in
// shim.h).
type Event struct {
	Type     RecType
	T, End   int64
	Site     uint64 // return address of the MPI call
	Request  uint64
	Comm     uint32 // the rank's local communicator id
	Peer     int32  // communicator rank, PeerAny or PeerNull
	Tag      int32
	Func     Func
	Bytes    int64
	Src      int32 // status source (communicator rank), for receives
	StatusTg int32 // status tag
	// Offset is where the record starts in the file.
	Offset int64
}

// Mapping is an executable mapping of the rank's address space at MPI_Init.
type Mapping struct {
	Start, End, Offset uint64
	Path               string
}

// CommDef is a communicator as a rank defined it.
type CommDef struct {
	ID uint32
	// Lazy is set when the shim saw the communicator first at a use rather
	// than at its creation.
	Lazy bool
	// Members are world ranks in communicator-rank order (-1: not in
	// MPI_COMM_WORLD).
	Members []int32
	// Offset is where the definition is in the file.
	Offset int64
}

// RankFile is the decoded content of one rank file.
type RankFile struct {
	Name   string
	Header FileHeader
	Info   map[string]string
	// Strings are the region names by id.
	Strings map[uint32]string
	Maps    []Mapping
	Comms   []CommDef
	Events  []Event
	// Complete is set when the file ends with the record MPI_Finalize
	// writes; a rank that died (or exited without MPI_Finalize) leaves a
	// file without it.
	Complete bool
	// Truncated is set when the file ends inside a record; Size is the
	// offset of the last complete record's end.
	Truncated bool
	Size      int64
	// Unknown counts records of types this reader does not know (skipped).
	Unknown int
}

// ReadRank decodes a rank file held in data; name is used in errors. A
// file cut at any byte decodes up to its last complete record (Truncated,
// not Complete). Errors locate the byte offset and say what was expected.
func ReadRank(name string, data []byte) (*RankFile, error) {
	rf := &RankFile{Name: name, Info: map[string]string{}, Strings: map[uint32]string{}}
	if len(data) < HeaderSize {
		if len(data) >= len(Magic) && string(data[:len(Magic)]) != Magic {
			return nil, format.OffsetError(name, 0, "not a parscope MPI rank file (want magic %q)", Magic)
		}
		return nil, format.OffsetError(name, int64(len(data)), "file ends inside the %d-byte header (%d bytes)", HeaderSize, len(data))
	}
	if string(data[:len(Magic)]) != Magic {
		return nil, format.OffsetError(name, 0, "not a parscope MPI rank file (want magic %q)", Magic)
	}
	le := binary.LittleEndian
	h := &rf.Header
	h.Version = le.Uint16(data[8:])
	if h.Version != Version {
		return nil, format.OffsetError(name, 8, "format version %d, this parscope reads version %d", h.Version, Version)
	}
	if hs := le.Uint16(data[10:]); hs != HeaderSize {
		return nil, format.OffsetError(name, 10, "header size %d, want %d", hs, HeaderSize)
	}
	h.Rank = int32(le.Uint32(data[12:]))
	h.Size = int32(le.Uint32(data[16:]))
	h.PID = int32(le.Uint32(data[20:]))
	h.Realtime = int64(le.Uint64(data[24:]))
	h.Monotonic = int64(le.Uint64(data[32:]))
	if h.Size <= 0 || h.Size > MaxRanks {
		return nil, format.OffsetError(name, 16, "world size %d: want 1..%d", h.Size, MaxRanks)
	}
	if h.Rank < 0 || h.Rank >= h.Size {
		return nil, format.OffsetError(name, 12, "rank %d of %d: want 0 <= rank < size", h.Rank, h.Size)
	}
	off := HeaderSize
	rf.Size = int64(off)
	for off < len(data) {
		if len(data)-off < 4 {
			rf.Truncated = true
			break
		}
		w := le.Uint32(data[off:])
		typ, size := RecType(w&0xff), int(w>>8)
		if size < 4 {
			return nil, format.OffsetError(name, int64(off), "record of type %d has size %d (want at least 4)", typ, size)
		}
		if size > len(data)-off {
			rf.Truncated = true
			break
		}
		body := data[off+4 : off+size]
		if rf.Complete {
			return nil, format.OffsetError(name, int64(off), "record of type %d after the final record", typ)
		}
		if err := rf.record(typ, body, int64(off)); err != nil {
			return nil, err
		}
		off += size
		rf.Size = int64(off)
	}
	return rf, nil
}

// record decodes one record's body.
func (rf *RankFile) record(typ RecType, body []byte, off int64) error {
	le := binary.LittleEndian
	short := func(want int) error {
		return format.OffsetError(rf.Name, off, "record of type %d has a %d-byte body, want %d", typ, len(body), want)
	}
	switch typ {
	case RecString:
		if len(body) < 4 {
			return short(4)
		}
		rf.Strings[le.Uint32(body)] = string(body[4:])
	case RecInfo:
		k, v, ok := bytes.Cut(body, []byte{0})
		if !ok {
			return format.OffsetError(rf.Name, off, "info record without the NUL between key and value")
		}
		rf.Info[string(k)] = string(v)
	case RecMap:
		if len(body) < 24 {
			return short(24)
		}
		rf.Maps = append(rf.Maps, Mapping{Start: le.Uint64(body), End: le.Uint64(body[8:]), Offset: le.Uint64(body[16:]),
			Path: string(body[24:])})
	case RecComm:
		if len(body) < 12 {
			return short(12)
		}
		n := le.Uint32(body[8:])
		if uint64(len(body)) != 12+4*uint64(n) {
			return format.OffsetError(rf.Name, off, "communicator record of %d members has a %d-byte body, want %d", n, len(body), 12+4*uint64(n))
		}
		c := CommDef{ID: le.Uint32(body), Lazy: le.Uint32(body[4:])&1 != 0, Members: make([]int32, n), Offset: off}
		for i := range c.Members {
			c.Members[i] = int32(le.Uint32(body[12+4*i:]))
		}
		rf.Comms = append(rf.Comms, c)
	case RecFree:
		if len(body) < 4 {
			return short(4)
		}
	case RecSend, RecRecv, RecIsend, RecIrecv, RecComplete, RecColl, RecBegin, RecEnd, RecCall:
		if len(body) != EventSize {
			return short(EventSize)
		}
		if n := int64(le.Uint64(body[48:])); n < 0 {
			return format.OffsetError(rf.Name, off, "event of type %d has a negative byte count %d", typ, n)
		}
		rf.Events = append(rf.Events, Event{Type: typ, Offset: off,
			T: int64(le.Uint64(body)), End: int64(le.Uint64(body[8:])), Site: le.Uint64(body[16:]),
			Request: le.Uint64(body[24:]), Comm: le.Uint32(body[32:]), Peer: int32(le.Uint32(body[36:])),
			Tag: int32(le.Uint32(body[40:])), Func: Func(le.Uint32(body[44:])), Bytes: int64(le.Uint64(body[48:])),
			Src: int32(le.Uint32(body[56:])), StatusTg: int32(le.Uint32(body[60:]))})
	case RecFinal:
		if len(body) != 16 {
			return short(16)
		}
		rf.Complete = true
	default:
		rf.Unknown++
	}
	return nil
}

// String describes the file's state for reports.
func (rf *RankFile) String() string {
	state := "complete"
	switch {
	case rf.Truncated:
		state = fmt.Sprintf("cut inside a record after byte %d (rank died mid-run)", rf.Size)
	case !rf.Complete:
		state = fmt.Sprintf("no MPI_Finalize record after byte %d (rank died or exited early)", rf.Size)
	}
	return fmt.Sprintf("%s: rank %d of %d, %d events, %s", rf.Name, rf.Header.Rank, rf.Header.Size, len(rf.Events), state)
}
