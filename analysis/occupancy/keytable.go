package occupancy

// keyTable maps packed macrostate keys to their occupancy table index and
// accumulates their occupancy, by open addressing with linear probing: one
// cache line per look-up, cheaper than a Go map on the per-row path.
type keyTable struct {
	slots []slot
	n     int
	mask  uint64
}

type slot struct {
	key uint64
	occ int64
	idx int32 // table index; -1: empty
}

func newKeyTable() *keyTable {
	t := &keyTable{}
	t.alloc(64)
	return t
}

func (t *keyTable) alloc(size int) {
	t.slots = make([]slot, size)
	for i := range t.slots {
		t.slots[i].idx = -1
	}
	t.mask = uint64(size - 1)
}

func (t *keyTable) home(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> 32 & t.mask }

// slotOf returns the slot of k, inserting k with table index next when it
// is new (added). Slots move when the table grows: a slot number is valid
// until the next insertion.
func (t *keyTable) slotOf(k uint64, next int32) (s int, added bool) {
	i := t.home(k)
	for ; t.slots[i].idx >= 0; i = (i + 1) & t.mask {
		if t.slots[i].key == k {
			return int(i), false
		}
	}
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.alloc(2 * len(old))
		for _, o := range old {
			if o.idx >= 0 {
				j := t.home(o.key)
				for t.slots[j].idx >= 0 {
					j = (j + 1) & t.mask
				}
				t.slots[j] = o
			}
		}
		i = t.home(k)
		for t.slots[i].idx >= 0 {
			i = (i + 1) & t.mask
		}
	}
	t.slots[i] = slot{key: k, idx: next}
	t.n++
	return int(i), true
}
