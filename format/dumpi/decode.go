package dumpi

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The DUMPI binary format, as far as the importer reads it. All integers
// are big-endian.
//
//	file    = magic(8) body ... header footer ... index
//	index   = the last 64 bytes (older files: 56, 48 or 40): magic, then the
//	          offsets of the sections: [sizes] [addresses] [perfctr labels]
//	          header body footer keyval (u64 each)
//	header  = version(3×u8) starttime(u64) hostname(str) username(str)
//	          meshdim(u32) meshcrd(meshdim×u32) [meshsize(u32 n, n×u32) if meshdim>0]
//	sizes   = count(u32) count×u32: the size in bytes of each datatype id
//	body    = cpuoffset(u32) walloffset(u32) record* label(u16)=End
//	record  = label(u16) mask(u8) [thread(u16) if mask&0x40]
//	          [cpu start/stop: (sec u16, nsec u32)×2 if mask&0x04]
//	          [wall start/stop: (sec u16, nsec u32)×2 if mask&0x08]
//	          [perf: n(u8), n×(in u64, out u64) if mask&0x80]
//	          arguments of the function (see call)
//	str     = len(u16) bytes
//	status  = [count(i32), count×(bytes i32, source i32, cancelled u8,
//	          error u8, tag i32)] present when mask&0x03 != 0
//
// Seconds are stored relative to the body's time offsets.

// headMagic starts every DUMPI file and its index.
const headMagic = uint64(0xffaadd44)<<32 | 0x554d5049

// Config mask bits of a record.
const (
	maskStatus  = 0x03
	maskCPU     = 0x04
	maskWall    = 0x08
	maskThread  = 0x40
	maskPerfCtr = 0x80
)

// decoder reads big-endian values from a byte slice and remembers the
// first error, located at its offset.
type decoder struct {
	b   []byte
	off int
	err error
	// what is being read, for error messages
	what string
	// ver is the file's DUMPI version and mask the config mask of the
	// record being read: both decide which arguments are present.
	ver  [3]uint8
	mask uint8
}

// since reports whether the file's version is at least x.y.z.
func (d *decoder) since(x, y, z uint8) bool {
	v := d.ver
	if v[0] != x {
		return v[0] > x
	}
	if v[1] != y {
		return v[1] > y
	}
	return v[2] >= z
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = &offsetErr{off: int64(d.off), msg: fmt.Sprintf(format, args...)}
	}
}

// offsetErr is a decoding error at a byte offset; the importer turns it
// into a format.Error naming the file.
type offsetErr struct {
	off int64
	msg string
}

func (e *offsetErr) Error() string { return fmt.Sprintf("byte %d: %s", e.off, e.msg) }

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || d.off+n > len(d.b) {
		d.fail("truncated: %s needs %d bytes, %d left", d.what, n, len(d.b)-d.off)
		return nil
	}
	s := d.b[d.off : d.off+n]
	d.off += n
	return s
}

func (d *decoder) u8() uint8 {
	if s := d.take(1); s != nil {
		return s[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if s := d.take(2); s != nil {
		return binary.BigEndian.Uint16(s)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if s := d.take(4); s != nil {
		return binary.BigEndian.Uint32(s)
	}
	return 0
}

func (d *decoder) i32() int32 { return int32(d.u32()) }

func (d *decoder) u64() uint64 {
	if s := d.take(8); s != nil {
		return binary.BigEndian.Uint64(s)
	}
	return 0
}

// count reads a u32 element count and checks that count elements of size
// bytes each can still be in the file.
func (d *decoder) count(size int) int {
	n := d.u32()
	if d.err == nil && (n > math.MaxInt32 || int(n)*size > len(d.b)-d.off) {
		d.fail("%s: count %d exceeds the %d bytes left", d.what, n, len(d.b)-d.off)
		return 0
	}
	return int(n)
}

// ints reads a u32 count and that many i32 values.
func (d *decoder) ints() []int32 {
	n := d.count(4)
	out := make([]int32, n)
	for i := range out {
		out[i] = d.i32()
	}
	return out
}

func (d *decoder) i64() int64 { return int64(d.u64()) }

// u16s reads a u32 count and that many u16 values.
func (d *decoder) u16s() []uint16 {
	n := d.count(2)
	out := make([]uint16, n)
	for i := range out {
		out[i] = d.u16()
	}
	return out
}

// u8s reads a u32 count and that many bytes.
func (d *decoder) u8s() []uint8 {
	return append([]uint8(nil), d.take(d.count(1))...)
}

// chars reads a u32 length and that many characters.
func (d *decoder) chars() string {
	return string(d.take(d.count(1)))
}

// charss reads a u32 count and that many chars.
func (d *decoder) charss() []string {
	n := d.count(4)
	out := make([]string, n)
	for i := range out {
		out[i] = d.chars()
	}
	return out
}

// charsss reads a u32 count and that many charss.
func (d *decoder) charsss() [][]string {
	n := d.count(4)
	out := make([][]string, n)
	for i := range out {
		out[i] = d.charss()
	}
	return out
}

// intss reads a u32 count and that many ints.
func (d *decoder) intss() [][]int32 {
	n := d.count(4)
	out := make([][]int32, n)
	for i := range out {
		out[i] = d.ints()
	}
	return out
}

// argv reads MPI_Init's arguments: argc, a second copy of argc when dup
// (DUMPI before 0.6.2), then argc chars.
func (d *decoder) argv(dup bool) []string {
	n := d.count(4)
	if dup {
		d.u32()
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.chars()
	}
	return out
}

func (d *decoder) str() string {
	n := d.u16()
	return string(d.take(int(n)))
}

// status is one MPI status as DUMPI stores it.
type status struct {
	bytes, source, tag int32
}

// statuses reads the statuses of a record when its mask says they are
// there; files before DUMPI 0.6.3 store no tag (it reads as MPI_ANY_TAG).
func (d *decoder) statuses() []status {
	if d.mask&maskStatus == 0 {
		return nil
	}
	n := d.i32()
	if n <= 0 {
		return nil
	}
	size := 14
	tags := d.since(0, 6, 3)
	if !tags {
		size = 10
	}
	if int(n)*size > len(d.b)-d.off {
		d.fail("%s: %d statuses exceed the %d bytes left", d.what, n, len(d.b)-d.off)
		return nil
	}
	out := make([]status, n)
	for i := range out {
		out[i].bytes = d.i32()
		out[i].source = d.i32()
		d.u8() // cancelled
		d.u8() // error
		out[i].tag = anyTag
		if tags {
			out[i].tag = d.i32()
		}
	}
	return out
}

// index holds the section offsets of a file.
type index struct {
	sizes, perf, header, body int64
}

// readIndex finds the index at the end of the file.
func readIndex(b []byte) (index, error) {
	var ix index
	if len(b) < 8 || binary.BigEndian.Uint64(b) != headMagic {
		return ix, &offsetErr{0, "not a DUMPI file: expected the magic ffaadd44554d5049"}
	}
	// The index holds 4 to 7 offsets after its magic, newer files more.
	for extra := 3; extra >= 0; extra-- {
		n := 8 * (5 + extra)
		if len(b) < 8+n {
			continue
		}
		d := &decoder{b: b, off: len(b) - n, what: "index"}
		if d.u64() != headMagic {
			continue
		}
		var off []int64
		for i := 0; i < 4+extra; i++ {
			off = append(off, int64(d.u64()))
		}
		if extra >= 3 {
			ix.sizes, off = off[0], off[1:]
		}
		if extra >= 2 {
			off = off[1:] // function addresses
		}
		if extra >= 1 {
			ix.perf, off = off[0], off[1:]
		}
		ix.header, ix.body = off[0], off[1]
		for _, o := range []int64{ix.sizes, ix.perf, ix.header, ix.body} {
			if o < 0 || o >= int64(len(b)) {
				return ix, &offsetErr{int64(len(b) - n), fmt.Sprintf("index: section offset %d lies outside the %d-byte file", o, len(b))}
			}
		}
		return ix, nil
	}
	return ix, &offsetErr{int64(len(b)), "no index at the end of the file (truncated?)"}
}

// fileHeader is the header section.
type fileHeader struct {
	version   [3]uint8
	starttime uint64
	host      string
	user      string
}

func readHeader(b []byte, off int64) (fileHeader, error) {
	var h fileHeader
	d := &decoder{b: b, off: int(off), what: "header"}
	for i := range h.version {
		h.version[i] = d.u8()
	}
	h.starttime = d.u64()
	h.host = d.str()
	h.user = d.str()
	dims := d.ints()
	if len(dims) > 0 && (h.version[0] > 0 || h.version[1] > 4) {
		d.ints()
	}
	return h, d.err
}

// readSizes reads the datatype size table.
func readSizes(b []byte, off int64) ([]int64, error) {
	if off == 0 {
		return nil, nil
	}
	d := &decoder{b: b, off: int(off), what: "datatype sizes"}
	n := d.count(4)
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(d.i32())
	}
	return out, d.err
}
