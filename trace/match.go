package trace

// Matcher pairs the send and receive sides of point-to-point messages as a
// time-merged stream goes by. Messages between the same pair with the same
// tag and communicator are matched first-in first-out, which is MPI's
// non-overtaking rule. A receive whose source is unknown (NoPeer, an
// MPI_ANY_SOURCE receive) is matched with the earliest pending send to its
// process with the same tag and communicator. Memory is proportional to the
// number of messages in flight and of distinct (pair, tag, communicator)
// lanes.
type Matcher struct {
	lanes map[matchKey]*lane
	cache []cached // direct-mapped cache in front of lanes
	anyRv map[anyKey]*queue
	// anyPending counts the any-source receives waiting in anyRv, so that a
	// send looks there only when one might be waiting.
	anyPending int
	// OnMatch is called with each matched pair.
	OnMatch func(send, recv *Record)
}

type matchKey struct {
	run, src, dst, tag, comm int32
}

type anyKey struct {
	run, dst, tag, comm int32
}

// lane holds the pending sides of one (run, src, dst, tag, comm): at most
// one of its queues is non-empty at a time.
type lane struct {
	sends, recvs queue
}

// cached is one entry of the lane cache: the key is kept beside the
// pointer so a lookup compares without following it.
type cached struct {
	key matchKey
	l   *lane
}

// cacheBits sizes the lane cache (1,024 entries, 32 KB).
const cacheBits = 10

// queue is a FIFO of records that reuses its storage once drained.
type queue struct {
	items []Record
	head  int
}

func (q *queue) len() int { return len(q.items) - q.head }

func (q *queue) front() *Record { return &q.items[q.head] }

func (q *queue) pop() {
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
}

func (q *queue) push(r *Record) { q.items = append(q.items, *r) }

func (q *queue) rest() []Record { return q.items[q.head:] }

// lane returns the lane of k, creating it.
func (m *Matcher) lane(k matchKey) *lane {
	h := (uint32(k.src)*0x9e3779b1 ^ uint32(k.dst)*0x85ebca6b ^ uint32(k.tag)*0xc2b2ae35 ^
		uint32(k.comm)*0x27d4eb2f ^ uint32(k.run)) >> (32 - cacheBits)
	c := &m.cache[h]
	if c.l != nil && c.key == k {
		return c.l
	}
	l := m.lanes[k]
	if l == nil {
		l = &lane{}
		m.lanes[k] = l
	}
	*c = cached{k, l}
	return l
}

// Add feeds one record; records that are not sends or receives are ignored.
func (m *Matcher) Add(r *Record) {
	if r.Kind != KindSend && r.Kind != KindRecv {
		return
	}
	if m.lanes == nil {
		m.lanes = map[matchKey]*lane{}
		m.cache = make([]cached, 1<<cacheBits)
		m.anyRv = map[anyKey]*queue{}
	}
	if r.Kind == KindSend {
		l := m.lane(matchKey{r.Run, r.Proc, r.Peer, r.Tag, r.Comm})
		if l.recvs.len() > 0 {
			m.emit(r, l.recvs.front())
			l.recvs.pop()
			return
		}
		if m.anyPending > 0 {
			if q := m.anyRv[anyKey{r.Run, r.Peer, r.Tag, r.Comm}]; q != nil && q.len() > 0 {
				m.emit(r, q.front())
				q.pop()
				m.anyPending--
				return
			}
		}
		l.sends.push(r)
		return
	}
	if r.Peer == NoPeer {
		// Any-source receive: the earliest pending send to this process.
		var best *queue
		for k, l := range m.lanes {
			q := &l.sends
			if q.len() == 0 || k.run != r.Run || k.dst != r.Proc || k.tag != r.Tag || k.comm != r.Comm {
				continue
			}
			if best == nil || Less(q.front(), best.front()) {
				best = q
			}
		}
		if best != nil {
			m.emit(best.front(), r)
			best.pop()
			return
		}
		q := m.anyRv[anyKey{r.Run, r.Proc, r.Tag, r.Comm}]
		if q == nil {
			q = &queue{}
			m.anyRv[anyKey{r.Run, r.Proc, r.Tag, r.Comm}] = q
		}
		q.push(r)
		m.anyPending++
		return
	}
	l := m.lane(matchKey{r.Run, r.Peer, r.Proc, r.Tag, r.Comm})
	if l.sends.len() > 0 {
		m.emit(l.sends.front(), r)
		l.sends.pop()
		return
	}
	l.recvs.push(r)
}

func (m *Matcher) emit(s, r *Record) {
	if m.OnMatch != nil {
		m.OnMatch(s, r)
	}
}

// Unmatched returns the sends and receives still waiting for their other side.
func (m *Matcher) Unmatched() (sends, recvs []Record) {
	for _, l := range m.lanes {
		sends = append(sends, l.sends.rest()...)
		recvs = append(recvs, l.recvs.rest()...)
	}
	for _, q := range m.anyRv {
		recvs = append(recvs, q.rest()...)
	}
	sortRecords(sends)
	sortRecords(recvs)
	return sends, recvs
}

// Slots keeps the values that ride with records through a Matcher: Put
// stores a value and returns the id to carry in the record's Value, and
// Take, given that id back in OnMatch, returns the value and frees the id
// for a later Put. The ids index a slice, so a message costs no hashing;
// memory is proportional to the most values held at once, as a map's is.
type Slots[T any] struct {
	items []T
	held  []bool
	free  []int64
}

// Put holds v and returns its id: the last one freed, if any.
func (s *Slots[T]) Put(v T) int64 {
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		s.free = s.free[:n-1]
		s.items[id], s.held[id] = v, true
		return id
	}
	s.items, s.held = append(s.items, v), append(s.held, true)
	return int64(len(s.items) - 1)
}

// Take returns the value held under id and frees the id. An id not held
// (never returned by Put, or taken already) gives the zero value and
// frees nothing.
func (s *Slots[T]) Take(id int64) T {
	var zero T
	if id < 0 || id >= int64(len(s.items)) || !s.held[id] {
		return zero
	}
	v := s.items[id]
	s.items[id], s.held[id] = zero, false
	s.free = append(s.free, id)
	return v
}

// Len returns the number of values held.
func (s *Slots[T]) Len() int { return len(s.items) - len(s.free) }
