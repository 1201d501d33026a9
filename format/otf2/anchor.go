package otf2

import (
	"bytes"
	"fmt"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
)

// Magic is what every OTF2 anchor file holds after its two-byte header
// (the chunk-header record type 3 and the endianness marker).
var Magic = []byte("OTF2\x00")

// Anchor is the content of an OTF2 anchor file (traces.otf2).
type Anchor struct {
	// Major, Minor and Bugfix are the OTF2 version that wrote the archive.
	Major, Minor, Bugfix uint8
	// EventChunkSize and DefChunkSize are the chunk sizes of event and
	// definition files in bytes.
	EventChunkSize, DefChunkSize uint64
	// Substrate and Compression are the file substrate (1: POSIX) and
	// compression (1: none) codes.
	Substrate, Compression uint8
	// Locations and GlobalDefs count the locations and global definitions.
	Locations, GlobalDefs uint64
	// MachineName, Creator and Description are free text.
	MachineName, Creator, Description string
	// Properties are the archive properties in file order (name, value).
	Properties [][2]string
	// TraceID identifies the trace.
	TraceID uint64
}

// Supported OTF2 major versions.
const minMajor, maxMajor = 1, 3

// isAnchor reports whether head starts like an anchor file.
func isAnchor(head []byte) bool {
	return len(head) >= 2+len(Magic) && head[0] == recChunkHeader &&
		(head[1] == littleEndian || head[1] == bigEndian) && bytes.Equal(head[2:2+len(Magic)], Magic)
}

// ReadAnchor reads and checks an OTF2 anchor file.
func ReadAnchor(path string) (*Anchor, error) {
	b, err := regular.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("otf2: %w", err)
	}
	return parseAnchor(path, b)
}

func parseAnchor(name string, b []byte) (*Anchor, error) {
	if !isAnchor(b) {
		n := min(len(b), 7)
		return nil, format.OffsetError(name, 0, "not an OTF2 anchor file: starts with % x (expected 03 42 or 03 23, then \"OTF2\\0\")", b[:n])
	}
	c := cursor{b: b, pos: 2 + len(Magic), be: b[1] == bigEndian, file: name}
	a := &Anchor{}
	c.u8() // two format bytes whose meaning the reader does not need
	c.u8()
	verOff := c.base + int64(c.pos)
	a.Major, a.Minor, a.Bugfix = c.u8(), c.u8(), c.u8()
	if c.err == nil && (a.Major < minMajor || a.Major > maxMajor) {
		return nil, format.OffsetError(name, verOff, "unsupported OTF2 version %d.%d.%d (this reader knows versions %d.x to %d.x)", a.Major, a.Minor, a.Bugfix, minMajor, maxMajor)
	}
	a.EventChunkSize = c.full64()
	a.DefChunkSize = c.full64()
	a.Substrate = c.u8()
	a.Compression = c.u8()
	a.Locations = c.full64()
	a.GlobalDefs = c.full64()
	a.MachineName = c.str()
	a.Creator = c.str()
	a.Description = c.str()
	nprops := c.full32()
	if c.err == nil && uint64(nprops) > uint64(len(b)) {
		return nil, format.OffsetError(name, c.base+int64(c.pos)-4, "implausible number of properties %d", nprops)
	}
	for i := uint32(0); i < nprops && c.err == nil; i++ {
		k := c.str()
		v := c.str()
		a.Properties = append(a.Properties, [2]string{k, v})
	}
	a.TraceID = c.full64()
	if c.err != nil {
		return nil, c.err
	}
	const minChunk, maxChunk = 256, 1 << 30
	for _, cs := range []struct {
		what string
		v    uint64
	}{{"event", a.EventChunkSize}, {"definition", a.DefChunkSize}} {
		if cs.v < minChunk || cs.v > maxChunk {
			return nil, format.OffsetError(name, 12, "%s chunk size %d is out of range (expected %d..%d)", cs.what, cs.v, minChunk, maxChunk)
		}
	}
	if a.Substrate != 1 {
		return nil, format.OffsetError(name, 28, "file substrate %d is not supported (only POSIX, 1: SION and other substrates need their own reader)", a.Substrate)
	}
	if a.Compression > 1 {
		return nil, format.OffsetError(name, 29, "compression %d is not supported (only none)", a.Compression)
	}
	return a, nil
}

// Version returns the version as "major.minor.bugfix".
func (a *Anchor) Version() string { return fmt.Sprintf("%d.%d.%d", a.Major, a.Minor, a.Bugfix) }
