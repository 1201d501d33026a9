package instrument

import "slices"

// denseLimit bounds the state ids kept in flat arrays; larger ids go to a map.
const denseLimit = 1 << 16

// occupancy accumulates, per state, the time (in ticks) a process spent in
// it: Lyon's (1990) local occupancy counters o_i, kept without the sequence.
type occupancy struct {
	started bool
	cur     int32
	since   int64
	dense   []int64
	sparse  map[int32]int64
}

// enter closes the current state at t and enters id.
func (o *occupancy) enter(id int32, t int64) {
	if o.started {
		o.addTo(o.cur, t-o.since)
	}
	o.cur, o.since, o.started = id, t, true
}

func (o *occupancy) addTo(id int32, d int64) {
	if uint32(id) < denseLimit {
		if int(id) >= len(o.dense) {
			o.dense = append(o.dense, make([]int64, int(id)+1-len(o.dense))...)
		}
		o.dense[id] += d
		return
	}
	if o.sparse == nil {
		o.sparse = map[int32]int64{}
	}
	o.sparse[id] += d
}

func (o *occupancy) total(id int32) int64 {
	if uint32(id) < denseLimit {
		return o.dense[id]
	}
	return o.sparse[id]
}

// states lists, in id order, the states the process was ever in.
func (o *occupancy) states() []int32 {
	var ids []int32
	for id, d := range o.dense {
		if d > 0 {
			ids = append(ids, int32(id))
		}
	}
	for id, d := range o.sparse {
		if d > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// bbvCounter counts block executions per interval of every block entries
// (Strube 2011, Figure 4.2, with blocks instead of instructions).
type bbvCounter struct {
	every    int64
	n        int64
	interval int32
	dense    []int64
	sparse   map[int32]int64
	touched  []int32
}

// count adds one execution of block id and reports whether the interval is
// complete.
func (b *bbvCounter) count(id int32) bool {
	if uint32(id) < denseLimit {
		if int(id) >= len(b.dense) {
			b.dense = append(b.dense, make([]int64, int(id)+1-len(b.dense))...)
		}
		if b.dense[id] == 0 {
			b.touched = append(b.touched, id)
		}
		b.dense[id]++
	} else {
		if b.sparse == nil {
			b.sparse = map[int32]int64{}
		}
		if b.sparse[id] == 0 {
			b.touched = append(b.touched, id)
		}
		b.sparse[id]++
	}
	b.n++
	return b.n == b.every
}

// take returns block id's count in the interval and resets it.
func (b *bbvCounter) take(id int32) int64 {
	if uint32(id) < denseLimit {
		c := b.dense[id]
		b.dense[id] = 0
		return c
	}
	c := b.sparse[id]
	delete(b.sparse, id)
	return c
}
