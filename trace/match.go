package trace

// Matcher pairs the send and receive sides of point-to-point messages as a
// time-merged stream goes by. Messages between the same pair with the same
// tag and communicator are matched first-in first-out, which is MPI's
// non-overtaking rule. A receive whose source is unknown (NoPeer, an
// MPI_ANY_SOURCE receive) is matched with the earliest pending send to its
// process with the same tag and communicator. Memory is proportional to the
// number of messages in flight.
type Matcher struct {
	sends map[matchKey]*queue
	recvs map[matchKey]*queue
	anyRv map[anyKey]*queue
	// OnMatch is called with each matched pair.
	OnMatch func(send, recv *Record)
}

type matchKey struct {
	run, src, dst, tag, comm int32
}

type anyKey struct {
	run, dst, tag, comm int32
}

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

func get[K comparable](m map[K]*queue, k K) *queue {
	q := m[k]
	if q == nil {
		q = &queue{}
		m[k] = q
	}
	return q
}

// Add feeds one record; records that are not sends or receives are ignored.
func (m *Matcher) Add(r *Record) {
	if r.Kind != KindSend && r.Kind != KindRecv {
		return
	}
	if m.sends == nil {
		m.sends = map[matchKey]*queue{}
		m.recvs = map[matchKey]*queue{}
		m.anyRv = map[anyKey]*queue{}
	}
	if r.Kind == KindSend {
		k := matchKey{r.Run, r.Proc, r.Peer, r.Tag, r.Comm}
		if q := m.recvs[k]; q != nil && q.len() > 0 {
			m.emit(r, q.front())
			q.pop()
			return
		}
		if q := m.anyRv[anyKey{r.Run, r.Peer, r.Tag, r.Comm}]; q != nil && q.len() > 0 {
			m.emit(r, q.front())
			q.pop()
			return
		}
		get(m.sends, k).push(r)
		return
	}
	if r.Peer == NoPeer {
		// Any-source receive: the earliest pending send to this process.
		var best *queue
		for k, q := range m.sends {
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
		get(m.anyRv, anyKey{r.Run, r.Proc, r.Tag, r.Comm}).push(r)
		return
	}
	k := matchKey{r.Run, r.Peer, r.Proc, r.Tag, r.Comm}
	if q := m.sends[k]; q != nil && q.len() > 0 {
		m.emit(q.front(), r)
		q.pop()
		return
	}
	get(m.recvs, k).push(r)
}

func (m *Matcher) emit(s, r *Record) {
	if m.OnMatch != nil {
		m.OnMatch(s, r)
	}
}

// Unmatched returns the sends and receives still waiting for their other side.
func (m *Matcher) Unmatched() (sends, recvs []Record) {
	for _, q := range m.sends {
		sends = append(sends, q.rest()...)
	}
	for _, q := range m.recvs {
		recvs = append(recvs, q.rest()...)
	}
	for _, q := range m.anyRv {
		recvs = append(recvs, q.rest()...)
	}
	sortRecords(sends)
	sortRecords(recvs)
	return sends, recvs
}
