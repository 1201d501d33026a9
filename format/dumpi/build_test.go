package dumpi

import (
	"encoding/binary"
	"testing"

	"github.com/parscope/parscope/internal/realdata"
)

// enc writes the big-endian values of a synthetic DUMPI file.
type enc struct{ b []byte }

// put appends each value: uint8, uint16, int32, uint32 and uint64 as
// themselves, []int32 as a u32 count and the values, string as a u16
// length and the bytes.
func (e *enc) put(vals ...any) {
	for _, v := range vals {
		switch v := v.(type) {
		case uint8:
			e.b = append(e.b, v)
		case uint16:
			e.b = binary.BigEndian.AppendUint16(e.b, v)
		case int32:
			e.b = binary.BigEndian.AppendUint32(e.b, uint32(v))
		case uint32:
			e.b = binary.BigEndian.AppendUint32(e.b, v)
		case uint64:
			e.b = binary.BigEndian.AppendUint64(e.b, v)
		case []int32:
			e.put(uint32(len(v)))
			for _, x := range v {
				e.put(x)
			}
		case string:
			e.put(uint16(len(v)))
			e.b = append(e.b, v...)
		default:
			panic("enc: unsupported value")
		}
	}
}

// testCall is one record of a synthetic file: the function, its wall-clock
// enter and exit in ns after the body's time offset (under one second),
// whether statuses follow, and its arguments in file order.
type testCall struct {
	fn          string
	enter, exit uint32
	status      bool
	args        []any
}

// statusArgs encodes n statuses (bytes, source, tag each) as call arguments.
func statusArgs(st ...[3]int32) []any {
	out := []any{int32(len(st))}
	for _, s := range st {
		out = append(out, s[0], s[1], uint8(0), uint8(0), s[2])
	}
	return out
}

// buildFile writes a DUMPI 1.0.0 rank file with the given datatype sizes
// and calls, laid out as libdumpi does: magic, body, header, sizes, the
// (empty) function address and perf-counter sections, then the 64-byte index.
func buildFile(sizes []int32, calls []testCall) []byte {
	e := &enc{}
	e.put(headMagic)
	body := len(e.b)
	e.put(uint32(0), uint32(0)) // cpu and wall time offsets
	for _, c := range calls {
		mask := uint8(maskWall)
		if c.status {
			mask |= maskStatus
		}
		e.put(uint16(label(c.fn)), mask, uint16(0), c.enter, uint16(0), c.exit)
		e.put(c.args...)
	}
	e.put(uint16(labelEnd))
	header := len(e.b)
	e.put(uint8(1), uint8(0), uint8(0), uint64(0), "host", "user", []int32{})
	perf := len(e.b)
	e.put(uint32(0))
	sz := len(e.b)
	e.put(sizes)
	addr := len(e.b)
	e.put(uint32(0))
	e.put(headMagic, uint64(sz), uint64(addr), uint64(perf), uint64(header), uint64(body), uint64(addr), uint64(0))
	return e.b
}

// compactSample returns a rank file of the real sample without its footer
// (per-function call counts the importer does not read): the same records
// in 620 bytes instead of 2,960, so that fuzzing mutates and minimises it
// quickly.
func compactSample(t testing.TB, rank string) []byte {
	t.Helper()
	b := realdata.Read(t, "traces/dumpi/testtrace-"+rank+".bin")
	ix, err := readIndex(b)
	if err != nil || ix.perf <= ix.header || ix.sizes != ix.perf+4 {
		t.Fatalf("unexpected layout of the real sample: %+v %v", ix, err)
	}
	foot := int(binary.BigEndian.Uint64(b[len(b)-16:])) // footer offset
	tail := b[ix.perf : len(b)-64]                      // perf, sizes, addresses
	out := append([]byte(nil), b[:foot]...)
	shift := int64(foot) - ix.perf
	e := &enc{b: append(out, tail...)}
	addr := int64(binary.BigEndian.Uint64(b[len(b)-56:]))
	e.put(headMagic, uint64(ix.sizes+shift), uint64(addr+shift), uint64(ix.perf+shift),
		uint64(ix.header), uint64(ix.body), uint64(foot), uint64(0))
	return e.b
}
