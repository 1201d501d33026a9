package trace

// Canonical returns r with every field that its kind does not use set to
// that field's default (0, or -1 for Peer and Seq), so that two records that
// mean the same compare equal. The store returns records in this form.
func (r Record) Canonical() Record {
	c := Record{Kind: r.Kind, Run: r.Run, Proc: r.Proc, T: r.T, Peer: NoPeer, Seq: NoRequest}
	switch r.Kind {
	case KindState, KindEnter, KindExit:
		c.ID = r.ID
	case KindSend, KindRecv:
		c.End, c.Peer, c.Value, c.Tag, c.Comm, c.Seq, c.Flags = r.End, r.Peer, r.Value, r.Tag, r.Comm, r.Seq, r.Flags
	case KindCollective:
		c.End, c.ID, c.Peer, c.Value, c.Comm = r.End, r.ID, r.Peer, r.Value, r.Comm
	case KindEvent, KindCounter:
		c.ID, c.Value = r.ID, r.Value
	case KindBBV:
		c.ID, c.Value, c.Seq = r.ID, r.Value, r.Seq
	}
	return c
}
