package comm

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"github.com/parscope/parscope/trace"
)

// accState is an Accumulator's state in exported fields, for gob.
type accState struct {
	Opts     Options
	N        int
	Nodes    []nodeState
	Stacks   [][]frameState
	Seen     []bool
	Sends    []trace.Record // unmatched
	Recvs    []trace.Record
	Matched  int64
	Problems Problems
}

type nodeState struct {
	Parent       int
	Region       int32
	Bytes, Count []int64
	Entries      []int32
	Windows      [][]uint64
}

type frameState struct {
	Node int
	K    int32
	Dsts []int32
}

// MarshalBinary encodes the accumulator, so that accumulators of disjoint
// processes computed on different machines can be merged on one
// (UnmarshalAccumulator, then Merge).
func (a *Accumulator) MarshalBinary() ([]byte, error) {
	st := accState{Opts: a.opts, N: a.n, Seen: a.seen, Matched: a.matched, Problems: a.problems}
	for _, nd := range a.nodes {
		st.Nodes = append(st.Nodes, nodeState{Parent: nd.parent, Region: nd.region, Bytes: nd.bytes, Count: nd.count,
			Entries: nd.entries, Windows: nd.windows})
	}
	for _, s := range a.stacks {
		fs := make([]frameState, len(s))
		for i, f := range s {
			fs[i] = frameState{Node: f.node, K: f.k, Dsts: f.dsts}
		}
		st.Stacks = append(st.Stacks, fs)
	}
	st.Sends, st.Recvs = a.match.Unmatched()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&st); err != nil {
		return nil, fmt.Errorf("comm: encoding an accumulator: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalAccumulator decodes an accumulator MarshalBinary encoded, for
// the trace with header h. Data that is not a consistent accumulator of h
// is an error.
func UnmarshalAccumulator(data []byte, h *trace.Header) (*Accumulator, error) {
	var st accState
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return nil, fmt.Errorf("comm: decoding an accumulator: %w", err)
	}
	a, err := New(h, st.Opts)
	if err != nil {
		return nil, err
	}
	n := a.n
	bad := st.N != n || len(st.Seen) != n || len(st.Stacks) != n || len(st.Nodes) == 0
	for id, ns := range st.Nodes {
		if bad {
			break
		}
		bad = len(ns.Entries) != n || ns.Bytes != nil && (len(ns.Bytes) != n*n || len(ns.Count) != n*n)
		if id == 0 {
			bad = bad || ns.Parent != -1
		} else {
			// Nodes come in creation order, each after its parent, each new.
			bad = bad || ns.Parent < 0 || ns.Parent >= id || a.child(ns.Parent, ns.Region) != id
		}
		if bad {
			break
		}
		nd := a.nodes[id]
		nd.bytes, nd.count, nd.entries, nd.windows = ns.Bytes, ns.Count, ns.Entries, ns.Windows
	}
	for p, s := range st.Stacks {
		if bad {
			break
		}
		if len(s) == 0 || s[0].Node != 0 {
			bad = true
			break
		}
		fs := make([]frame, len(s))
		for i, f := range s {
			if f.Node < 0 || f.Node >= len(a.nodes) {
				bad = true
				break
			}
			fs[i] = frame{node: f.Node, k: f.K}
			for _, d := range f.Dsts {
				fs[i].addDst(d)
			}
		}
		if bad {
			break
		}
		a.stacks[p] = fs
		a.top[p] = a.nodes[fs[len(fs)-1].node]
	}
	if bad {
		return nil, fmt.Errorf("comm: an encoded accumulator is inconsistent with the trace's run %d of %d processes", st.Opts.Run, n)
	}
	copy(a.seen, st.Seen)
	for i := range st.Sends {
		a.match.Add(&st.Sends[i])
	}
	for i := range st.Recvs {
		a.match.Add(&st.Recvs[i])
	}
	a.matched, a.problems = st.Matched, st.Problems
	return a, nil
}
