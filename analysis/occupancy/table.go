package occupancy

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/parscope/parscope/internal/spill"
)

// DefaultBudget is the memory (bytes) an accumulator's table of distinct
// macrostates may take before it is spilled, sorted, to a temporary file
// (Options.Budget): the memory of an accumulator is bounded by it, not by
// the number of distinct macrostates.
const DefaultBudget = 16 << 20

// minBudget is the smallest budget: a table of a few slots, for tests of
// the spilled path.
const minBudget = 4 * slotSize

// table is the occupancy table being built: every distinct macrostate's
// occupancy and first appearance (the start time of its first T2 row, which
// orders the rows of T3). Packed keys live in an open-addressing table of
// one slot per key (pkey: one word, or two when the counts need more than
// 64 bits), string keys (4 bytes per mode, big-endian) in a map;
// when either reaches the budget it is written, sorted by key, as a run of
// a spill.Runs and cleared. A macrostate may then be in several runs and
// in memory: each, and only each, combines them (occupancies summed, the
// earliest first appearance kept).
type table struct {
	packed bool
	m      int
	layout
	budget int64

	// Packed keys: open addressing with linear probing, one cache line
	// per look-up; slots of occ < 0 are empty.
	slots    []slot
	n        int
	mask     uint64
	maxSlots int

	// String keys.
	sindex map[string]int32
	svals  []sval
	sbytes int64

	runs *spill.Runs // nil before the first spill
	err  error       // the first spill's error; the table is wrong after it
	kbuf []byte      // the key being looked up
	wbuf []byte      // the key being written
	vbuf []byte
	cnt  []int32
}

type slot struct {
	key   pkey
	occ   int64 // -1: empty
	first int64
}

const slotSize = 32

type sval struct {
	key        string
	occ, first int64
}

// sentryCost is what a string-keyed entry costs beyond its key: its sval,
// the map's key header, index and overhead.
const sentryCost = 64

// later is the first appearance of an entry made for a macrostate whose
// first appearance is elsewhere (a run, or the table it is merged from):
// the combination keeps the earlier one.
const later = math.MaxInt64

// newTable returns the table of m modes; packed keys have layout l.
func newTable(packed bool, m int, l layout, budget int64) *table {
	if budget <= 0 {
		budget = DefaultBudget
	}
	budget = max(budget, minBudget)
	t := &table{packed: packed, m: m, layout: l, budget: budget, cnt: make([]int32, m)}
	if packed {
		t.maxSlots = 4
		for 2*t.maxSlots*slotSize <= int(min(budget, math.MaxInt32)) {
			t.maxSlots *= 2
		}
		t.alloc(min(64, t.maxSlots))
	} else {
		t.sindex = map[string]int32{}
	}
	return t
}

func (t *table) alloc(size int) {
	t.slots = make([]slot, size)
	for i := range t.slots {
		t.slots[i].occ = -1
	}
	t.mask = uint64(size - 1)
	t.n = 0
}

func (t *table) home(k pkey) uint64 {
	return ((k.lo ^ k.hi*0xC2B2AE3D27D4EB4F) * 0x9E3779B97F4A7C15) >> 32 & t.mask
}

// entry returns the entry of a macrostate (counts, or its packed key),
// inserting it with first appearance first when it is not in memory. An
// entry is valid until the next insertion.
func (t *table) entry(counts []int32, key pkey, first int64) int {
	if !t.packed {
		return t.sentry(counts, first)
	}
	if t.slots == nil {
		t.alloc(min(64, t.maxSlots))
	}
	i := t.home(key)
	for ; t.slots[i].occ >= 0; i = (i + 1) & t.mask {
		if t.slots[i].key == key {
			return int(i)
		}
	}
	// Grow to half full up to the budget's size, then fill to three
	// quarters and spill.
	if 2*(t.n+1) > len(t.slots) && (len(t.slots) < t.maxSlots || 4*(t.n+1) > 3*len(t.slots)) {
		if len(t.slots) < t.maxSlots || t.err != nil {
			t.grow()
		} else if err := t.spill(); err != nil {
			t.err = err
			t.grow()
		}
		i = t.home(key)
		for t.slots[i].occ >= 0 {
			i = (i + 1) & t.mask
		}
	}
	t.slots[i] = slot{key: key, first: first}
	t.n++
	return int(i)
}

// grow doubles the slots.
func (t *table) grow() {
	old := t.slots
	t.alloc(2 * len(old))
	for _, o := range old {
		if o.occ >= 0 {
			j := t.home(o.key)
			for t.slots[j].occ >= 0 {
				j = (j + 1) & t.mask
			}
			t.slots[j] = o
			t.n++
		}
	}
}

// skey returns the string key of counts in t.kbuf.
func (t *table) skey(counts []int32) []byte {
	b := t.kbuf[:0]
	for _, c := range counts {
		b = binary.BigEndian.AppendUint32(b, uint32(c))
	}
	t.kbuf = b
	return b
}

func (t *table) sentry(counts []int32, first int64) int {
	kb := t.skey(counts)
	if j, ok := t.sindex[string(kb)]; ok {
		return int(j)
	}
	cost := int64(len(kb)) + sentryCost
	if len(t.svals) > 0 && t.sbytes+cost > t.budget && t.err == nil {
		if err := t.spill(); err != nil {
			t.err = err
		}
	}
	k := string(kb)
	t.sindex[k] = int32(len(t.svals))
	t.svals = append(t.svals, sval{key: k, first: first})
	t.sbytes += cost
	return len(t.svals) - 1
}

// add adds dur to the occupancy of entry e.
func (t *table) add(e int, dur int64) {
	if t.packed {
		t.slots[e].occ += dur
	} else {
		t.svals[e].occ += dur
	}
}

// merge adds occupancy occ of first appearance first to a macrostate.
func (t *table) merge(counts []int32, key pkey, occ, first int64) {
	e := t.entry(counts, key, first)
	if t.packed {
		t.slots[e].occ += occ
		t.slots[e].first = min(t.slots[e].first, first)
	} else {
		t.svals[e].occ += occ
		t.svals[e].first = min(t.svals[e].first, first)
	}
}

// inMemory returns the number of macrostates in memory.
func (t *table) inMemory() int {
	if t.packed {
		return t.n
	}
	return len(t.svals)
}

// counts decodes a key of either form into t.cnt.
func (t *table) counts(key []byte) []int32 {
	if t.packed {
		return t.unpack(t.readKey(key), t.cnt)
	}
	for j := range t.cnt {
		t.cnt[j] = int32(binary.BigEndian.Uint32(key[4*j:]))
	}
	return t.cnt
}

// spill writes the entries in memory, sorted by key, as a run and clears
// the memory.
func (t *table) spill() error {
	if t.runs == nil {
		t.runs = spill.New("occupancy", combineOcc)
	}
	w, err := t.runs.Create()
	if err != nil {
		return err
	}
	if t.packed {
		n := 0
		for _, s := range t.slots {
			if s.occ >= 0 {
				t.slots[n] = s
				n++
			}
		}
		used := t.slots[:n]
		slices.SortFunc(used, func(x, y slot) int { return x.key.compare(y.key) })
		for _, s := range used {
			t.wbuf = t.appendKey(t.wbuf[:0], s.key)
			if err = w.Add(t.wbuf, t.val(s.occ, s.first)); err != nil {
				break
			}
		}
		for i := range t.slots {
			t.slots[i].occ = -1
		}
		t.n = 0
	} else {
		slices.SortFunc(t.svals, func(x, y sval) int { return cmp.Compare(x.key, y.key) })
		for _, s := range t.svals {
			t.wbuf = append(t.wbuf[:0], s.key...)
			if err = w.Add(t.wbuf, t.val(s.occ, s.first)); err != nil {
				break
			}
		}
		clear(t.sindex)
		clear(t.svals)
		t.svals, t.sbytes = t.svals[:0], 0
	}
	if err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// val encodes an entry's occupancy and first appearance as a run's value.
func (t *table) val(occ, first int64) []byte {
	t.vbuf = binary.AppendVarint(binary.AppendUvarint(t.vbuf[:0], uint64(occ)), first)
	return t.vbuf
}

// decodeVal decodes a value of a run.
func decodeVal(v []byte) (occ, first int64) {
	o, n := binary.Uvarint(v)
	f, _ := binary.Varint(v[n:])
	return int64(o), f
}

// combineOcc combines the values of a macrostate in two runs: the
// occupancies summed, the earlier first appearance.
func combineOcc(dst, src []byte) []byte {
	o1, f1 := decodeVal(dst)
	o2, f2 := decodeVal(src)
	return binary.AppendVarint(binary.AppendUvarint(dst[:0], uint64(o1+o2)), min(f1, f2))
}

// eachMem calls fn with every entry in memory, in no particular order.
// counts is valid only during the call.
func (t *table) eachMem(fn func(counts []int32, key pkey, occ, first int64)) {
	if t.packed {
		for _, s := range t.slots {
			if s.occ >= 0 {
				fn(t.unpack(s.key, t.cnt), s.key, s.occ, s.first)
			}
		}
		return
	}
	for _, s := range t.svals {
		for j := range t.cnt {
			k := s.key[4*j:]
			t.cnt[j] = int32(uint32(k[0])<<24 | uint32(k[1])<<16 | uint32(k[2])<<8 | uint32(k[3]))
		}
		fn(t.cnt, pkey{}, s.occ, s.first)
	}
}

// each calls fn with every distinct macrostate: its counts, its key (8
// or 16 bytes big-endian when packed, else 4 bytes per mode), its occupancy and
// its first appearance; in no particular order when nothing was spilled,
// else by key. counts and key are valid only during the call. The entries
// in memory are spilled first when there are runs, and their memory let
// go.
func (t *table) each(fn func(counts []int32, key []byte, occ, first int64) error) error {
	if t.err != nil {
		return t.err
	}
	if t.runs == nil {
		var err error
		var kb []byte
		t.eachMem(func(counts []int32, key pkey, occ, first int64) {
			if err != nil {
				return
			}
			if t.packed {
				kb = t.appendKey(kb[:0], key)
			} else {
				kb = t.skey(counts)
			}
			err = fn(counts, kb, occ, first)
		})
		return err
	}
	if t.inMemory() > 0 {
		if err := t.spill(); err != nil {
			t.err = err
			return err
		}
	}
	t.slots, t.n = nil, 0
	t.sindex, t.svals = map[string]int32{}, nil
	return t.runs.Merge(func(key, val []byte) error {
		occ, first := decodeVal(val)
		return fn(t.counts(key), key, occ, first)
	})
}

// take moves o's runs into t.
func (t *table) take(o *table) error {
	if o.err != nil {
		return o.err
	}
	if o.runs == nil {
		return nil
	}
	if t.runs == nil {
		t.runs = spill.New("occupancy", combineOcc)
	}
	return t.runs.Take(o.runs)
}

// close removes the runs.
func (t *table) close() error {
	if t.runs == nil {
		return nil
	}
	return t.runs.Close()
}

// has reports whether a macrostate is in memory.
func (t *table) has(counts []int32, key pkey) bool {
	if !t.packed {
		_, ok := t.sindex[string(t.skey(counts))]
		return ok
	}
	if t.slots == nil {
		return false
	}
	for i := t.home(key); t.slots[i].occ >= 0; i = (i + 1) & t.mask {
		if t.slots[i].key == key {
			return true
		}
	}
	return false
}
