package occupancy

import (
	"cmp"
	"encoding/binary"
)

// pkey is a packed macrostate key: the count of each mode in a field of
// shift bits (enough for p), fields never crossing a word. Mode j is in
// word j/per at bit (j%per)·shift, so a run of up to per modes packs
// into lo alone, and up to 2·per modes into both words: 13 modes of 64
// processes (7 bits each) take 91 bits.
type pkey struct{ lo, hi uint64 }

// compare orders keys as their big-endian encodings (hi, then lo).
func (k pkey) compare(o pkey) int {
	if c := cmp.Compare(k.hi, o.hi); c != 0 {
		return c
	}
	return cmp.Compare(k.lo, o.lo)
}

// layout is how counts pack into a pkey.
type layout struct {
	shift uint // bits per mode
	per   int  // modes per word
	wide  bool // both words are used: keys encode in 16 bytes, not 8
}

// newLayout returns the layout of m modes of shift bits each, and whether
// they fit in a pkey.
func newLayout(m int, shift uint) (layout, bool) {
	if shift == 0 { // no process: every count is 0
		return layout{per: max(m, 1)}, true
	}
	per := 64 / int(shift)
	return layout{shift: shift, per: per, wide: m > per}, m <= 2*per
}

// unit returns the key of one process in mode j.
func (l layout) unit(j int) pkey {
	b := uint64(1) << (uint(j%l.per) * l.shift)
	if j < l.per {
		return pkey{lo: b}
	}
	return pkey{hi: b}
}

// pack returns the key of counts.
func (l layout) pack(counts []int32) pkey {
	var k pkey
	for j, c := range counts {
		u := l.unit(j)
		k.lo += uint64(c) * u.lo
		k.hi += uint64(c) * u.hi
	}
	return k
}

// unpack decodes k into counts (one per mode).
func (l layout) unpack(k pkey, counts []int32) []int32 {
	mask := uint64(1)<<l.shift - 1
	for j := range counts {
		w := k.lo
		if j >= l.per {
			w = k.hi
		}
		counts[j] = int32(w >> (uint(j%l.per) * l.shift) & mask)
	}
	return counts
}

// appendKey appends k's encoding: 8 bytes big-endian, or 16 (hi, then lo)
// when the layout is wide. The encodings sort as compare does.
func (l layout) appendKey(b []byte, k pkey) []byte {
	if l.wide {
		b = binary.BigEndian.AppendUint64(b, k.hi)
	}
	return binary.BigEndian.AppendUint64(b, k.lo)
}

// readKey decodes what appendKey encoded.
func (l layout) readKey(b []byte) pkey {
	if l.wide {
		return pkey{hi: binary.BigEndian.Uint64(b), lo: binary.BigEndian.Uint64(b[8:])}
	}
	return pkey{lo: binary.BigEndian.Uint64(b)}
}
