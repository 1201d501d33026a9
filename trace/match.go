package trace

// Matcher pairs the send and receive sides of point-to-point messages as a
// time-merged stream goes by. Messages between the same pair with the same
// tag and communicator are matched first-in first-out, which is MPI's
// non-overtaking rule. A receive whose source is unknown (NoPeer, an
// MPI_ANY_SOURCE receive) is matched with the earliest pending send to its
// process with the same tag and communicator. Memory is proportional to the
// number of messages in flight.
type Matcher struct {
	sends map[matchKey][]Record
	recvs map[matchKey][]Record
	anyRv map[anyKey][]Record
	// OnMatch is called with each matched pair.
	OnMatch func(send, recv *Record)
}

type matchKey struct {
	run, src, dst, tag, comm int32
}

type anyKey struct {
	run, dst, tag, comm int32
}

// Add feeds one record; records that are not sends or receives are ignored.
func (m *Matcher) Add(r *Record) {
	if r.Kind != KindSend && r.Kind != KindRecv {
		return
	}
	if m.sends == nil {
		m.sends = map[matchKey][]Record{}
		m.recvs = map[matchKey][]Record{}
		m.anyRv = map[anyKey][]Record{}
	}
	if r.Kind == KindSend {
		k := matchKey{r.Run, r.Proc, r.Peer, r.Tag, r.Comm}
		if q := m.recvs[k]; len(q) > 0 {
			m.emit(r, &q[0])
			m.recvs[k] = q[1:]
			return
		}
		ak := anyKey{r.Run, r.Peer, r.Tag, r.Comm}
		if q := m.anyRv[ak]; len(q) > 0 {
			m.emit(r, &q[0])
			m.anyRv[ak] = q[1:]
			return
		}
		m.sends[k] = append(m.sends[k], *r)
		return
	}
	if r.Peer == NoPeer {
		// Any-source receive: the earliest pending send to this process.
		var best matchKey
		found := false
		for k, q := range m.sends {
			if len(q) == 0 || k.run != r.Run || k.dst != r.Proc || k.tag != r.Tag || k.comm != r.Comm {
				continue
			}
			if !found || Less(&q[0], &m.sends[best][0]) {
				best, found = k, true
			}
		}
		if found {
			q := m.sends[best]
			m.emit(&q[0], r)
			m.sends[best] = q[1:]
			return
		}
		ak := anyKey{r.Run, r.Proc, r.Tag, r.Comm}
		m.anyRv[ak] = append(m.anyRv[ak], *r)
		return
	}
	k := matchKey{r.Run, r.Peer, r.Proc, r.Tag, r.Comm}
	if q := m.sends[k]; len(q) > 0 {
		m.emit(&q[0], r)
		m.sends[k] = q[1:]
		return
	}
	m.recvs[k] = append(m.recvs[k], *r)
}

func (m *Matcher) emit(s, r *Record) {
	if m.OnMatch != nil {
		m.OnMatch(s, r)
	}
}

// Unmatched returns the sends and receives still waiting for their other side.
func (m *Matcher) Unmatched() (sends, recvs []Record) {
	for _, q := range m.sends {
		sends = append(sends, q...)
	}
	for _, q := range m.recvs {
		recvs = append(recvs, q...)
	}
	for _, q := range m.anyRv {
		recvs = append(recvs, q...)
	}
	sortRecords(sends)
	sortRecords(recvs)
	return sends, recvs
}
