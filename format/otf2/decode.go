package otf2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/parscope/parscope/format"
)

// Buffer-level record identifiers shared by every OTF2 file type.
const (
	recEndOfChunk  = 0
	recEndOfBuffer = 1
	recEndOfFile   = 2
	recChunkHeader = 3
	recTimestamp   = 5
	recAttrList    = 6
)

// Endianness markers of a chunk header.
const (
	bigEndian    = 0x23
	littleEndian = 0x42
)

// chunkHeaderSize is the size of a chunk header: type, endianness, and the
// numbers of the first and last event (8 bytes each).
const chunkHeaderSize = 18

// cursor decodes OTF2's primitive types from a byte slice. Errors are
// sticky: after the first failure every read returns 0 and err says what
// was expected where.
type cursor struct {
	b    []byte
	pos  int
	be   bool  // written by a big-endian machine
	base int64 // file offset of b[0]
	file string
	err  error
}

func (c *cursor) fail(what string) {
	if c.err == nil {
		c.err = format.OffsetError(c.file, c.base+int64(c.pos), "%s", what)
	}
	c.pos = len(c.b)
}

func (c *cursor) more() bool { return c.err == nil && c.pos < len(c.b) }

func (c *cursor) u8() uint8 {
	if c.pos >= len(c.b) {
		c.fail("truncated record: expected 1 more byte")
		return 0
	}
	v := c.b[c.pos]
	c.pos++
	return v
}

// full64 reads an uncompressed 8-byte value.
func (c *cursor) full64() uint64 { return c.full(8) }

// full32 reads an uncompressed 4-byte value.
func (c *cursor) full32() uint32 { return uint32(c.full(4)) }

// full reads an uncompressed n-byte value (n is 4 or 8).
func (c *cursor) full(n int) uint64 {
	if len(c.b)-c.pos < n {
		c.fail(fmt.Sprintf("truncated record: expected a %d-byte value", n))
		return 0
	}
	p := c.b[c.pos : c.pos+n]
	c.pos += n
	switch {
	case n == 4 && c.be:
		return uint64(binary.BigEndian.Uint32(p))
	case n == 4:
		return uint64(binary.LittleEndian.Uint32(p))
	case c.be:
		return binary.BigEndian.Uint64(p)
	}
	return binary.LittleEndian.Uint64(p)
}

// compressed reads OTF2's compressed integer: a size byte n (0..max)
// followed by the n low-order bytes of the value in the writer's byte
// order. For unsigned values a lone 0xff stands for the all-ones value.
func (c *cursor) compressed(max int, unsigned bool) uint64 {
	if c.pos >= len(c.b) {
		c.fail("truncated record: expected a compressed integer")
		return 0
	}
	n := int(c.b[c.pos])
	c.pos++
	if n == 0 {
		return 0
	}
	if n == 0xff && unsigned {
		if max == 4 {
			return math.MaxUint32
		}
		return math.MaxUint64
	}
	if n > max {
		c.pos--
		c.fail(fmt.Sprintf("bad compressed integer: size byte %d (expected 0..%d)", n, max))
		return 0
	}
	if len(c.b)-c.pos < n {
		c.fail(fmt.Sprintf("truncated record: compressed integer needs %d more bytes", n))
		return 0
	}
	var v uint64
	p := c.b[c.pos : c.pos+n]
	if c.be {
		for _, x := range p {
			v = v<<8 | uint64(x)
		}
	} else {
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(p[i])
		}
	}
	c.pos += n
	return v
}

func (c *cursor) u32() uint32 {
	// Fast path: the most common encodings, little-endian, 0..2 bytes.
	if !c.be && c.pos+2 < len(c.b) {
		switch c.b[c.pos] {
		case 0:
			c.pos++
			return 0
		case 1:
			v := uint32(c.b[c.pos+1])
			c.pos += 2
			return v
		case 2:
			v := uint32(c.b[c.pos+1]) | uint32(c.b[c.pos+2])<<8
			c.pos += 3
			return v
		}
	}
	return uint32(c.compressed(4, true))
}

func (c *cursor) u64() uint64 { return c.compressed(8, true) }

func (c *cursor) i64() int64 {
	v := c.compressed(8, false)
	return int64(v)
}

func (c *cursor) f64() float64 { return math.Float64frombits(c.full64()) }

func (c *cursor) str() string {
	for i := c.pos; i < len(c.b); i++ {
		if c.b[i] == 0 {
			s := string(c.b[c.pos:i])
			c.pos = i + 1
			return s
		}
	}
	c.fail("truncated record: expected a NUL-terminated string")
	return ""
}

// record reads a record's length (one byte, or 0xff and 8 more bytes) and
// returns a cursor over its body, advancing c past it.
func (c *cursor) record() cursor {
	n := uint64(c.u8())
	if n == 0xff {
		n = c.full64()
	}
	if c.err != nil {
		return cursor{err: c.err}
	}
	if n > uint64(len(c.b)-c.pos) {
		c.fail(fmt.Sprintf("truncated record: length %d exceeds the %d bytes left in the chunk", n, len(c.b)-c.pos))
		return cursor{err: c.err}
	}
	body := cursor{b: c.b[c.pos : c.pos+int(n)], be: c.be, base: c.base + int64(c.pos), file: c.file}
	c.pos += int(n)
	return body
}

// chunkedFile reads an OTF2 file chunk by chunk: every chunk starts at a
// multiple of the chunk size with a chunk header, and its records end with
// END_OF_CHUNK (more chunks follow) or END_OF_FILE.
type chunkedFile struct {
	name      string
	r         io.ReaderAt
	size      int64
	chunkSize int64
	next      int64 // offset of the next chunk to load
	buf       []byte
	c         cursor
	done      bool
}

func newChunkedFile(name string, r io.ReaderAt, size, chunkSize int64) (*chunkedFile, error) {
	if chunkSize < chunkHeaderSize+1 {
		return nil, fmt.Errorf("otf2: %s: chunk size %d is too small", name, chunkSize)
	}
	f := &chunkedFile{name: name, r: r, size: size, chunkSize: chunkSize}
	if err := f.load(); err != nil {
		return nil, err
	}
	return f, nil
}

// load reads the chunk at f.next and parses its header.
func (f *chunkedFile) load() error {
	off := f.next
	if off >= f.size {
		return format.OffsetError(f.name, off, "truncated file: expected a chunk header at byte %d, but the file has %d bytes", off, f.size)
	}
	n := min(f.chunkSize, f.size-off)
	if int64(cap(f.buf)) < n {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	if _, err := f.r.ReadAt(f.buf, off); err != nil && !errors.Is(err, io.EOF) {
		return &format.Error{File: f.name, Offset: off, Msg: "cannot read chunk", Err: err}
	}
	f.next = off + f.chunkSize
	f.c = cursor{b: f.buf, base: off, file: f.name}
	if n < chunkHeaderSize {
		return format.OffsetError(f.name, off, "truncated chunk header: %d bytes (expected %d)", n, chunkHeaderSize)
	}
	if f.buf[0] != recChunkHeader {
		return format.OffsetError(f.name, off, "bad chunk header: record type %d (expected %d)", f.buf[0], recChunkHeader)
	}
	switch f.buf[1] {
	case littleEndian:
	case bigEndian:
		f.c.be = true
	default:
		return format.OffsetError(f.name, off+1, "bad endianness marker 0x%02x (expected 0x42 or 0x23)", f.buf[1])
	}
	f.c.pos = chunkHeaderSize
	return nil
}

// nextType returns the type of the next record, moving to the next chunk at
// END_OF_CHUNK; it returns io.EOF at END_OF_FILE (or END_OF_BUFFER). The
// cursor f.c then points just past the type byte; off is its file offset.
func (f *chunkedFile) nextType() (typ uint8, off int64, err error) {
	for {
		if f.done {
			return 0, 0, io.EOF
		}
		if f.c.pos >= len(f.c.b) {
			return 0, 0, format.OffsetError(f.name, f.c.base+int64(f.c.pos), "truncated file: expected a record or END_OF_FILE")
		}
		off = f.c.base + int64(f.c.pos)
		typ = f.c.b[f.c.pos]
		f.c.pos++
		switch typ {
		case recEndOfChunk:
			if err := f.load(); err != nil {
				return 0, 0, err
			}
			continue
		case recEndOfFile, recEndOfBuffer:
			f.done = true
			return 0, 0, io.EOF
		}
		return typ, off, nil
	}
}
