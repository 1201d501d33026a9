package otf2

import (
	"encoding/binary"
	"math"
)

// enc writes OTF2 records little-endian, the way OTF2's buffer layer does,
// for tests and benchmarks.
type enc struct {
	b         []byte
	chunkSize int
	start     int // offset of the current chunk
	time      uint64
	events    bool // an event file: chunks start with a timestamp
}

func newEnc(chunkSize int) *enc {
	e := &enc{chunkSize: chunkSize}
	e.header()
	return e
}

func (e *enc) header() {
	e.start = len(e.b)
	e.b = append(e.b, recChunkHeader, littleEndian)
	e.b = binary.LittleEndian.AppendUint64(e.b, 1)
	e.b = binary.LittleEndian.AppendUint64(e.b, 0)
}

// room starts a new chunk when n more bytes (plus END_OF_CHUNK) do not fit.
func (e *enc) room(n int) {
	if len(e.b)-e.start+n+1 <= e.chunkSize {
		return
	}
	e.b = append(e.b, recEndOfChunk)
	for len(e.b)-e.start < e.chunkSize {
		e.b = append(e.b, 0)
	}
	e.header()
	if e.events {
		e.b = append(e.b, recTimestamp)
		e.b = binary.LittleEndian.AppendUint64(e.b, e.time)
	}
}

func appendUint(b []byte, v uint64, unsigned bool) []byte {
	if v == 0 {
		return append(b, 0)
	}
	if unsigned && (v == math.MaxUint64) {
		return append(b, 0xff)
	}
	n := 8
	for n > 1 && v>>(8*(n-1)) == 0 {
		n--
	}
	b = append(b, byte(n))
	for i := 0; i < n; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

func u(v uint64) []byte { return appendUint(nil, v, true) }

// event appends an event at time t: a timestamp record when the time
// changed, then the type and the body (with a length byte unless the type
// is a singleton).
func (e *enc) event(t uint64, typ uint8, body ...[]byte) {
	var p []byte
	for _, x := range body {
		p = append(p, x...)
	}
	e.events = true
	e.room(9 + 2 + 9 + len(p))
	if t != e.time || len(e.b)-e.start == chunkHeaderSize {
		e.b = append(e.b, recTimestamp)
		e.b = binary.LittleEndian.AppendUint64(e.b, t)
		e.time = t
	}
	e.b = append(e.b, typ)
	if !singleton(typ) {
		e.b = append(e.b, byte(len(p)))
	}
	e.b = append(e.b, p...)
}

// def appends a definition record.
func (e *enc) def(typ uint8, body ...[]byte) {
	var p []byte
	for _, x := range body {
		p = append(p, x...)
	}
	e.room(2 + len(p))
	e.b = append(e.b, typ, byte(len(p)))
	e.b = append(e.b, p...)
}

func (e *enc) end() []byte { return append(e.b, recEndOfFile) }

func cstr(s string) []byte { return append([]byte(s), 0) }
