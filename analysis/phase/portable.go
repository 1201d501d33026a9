package phase

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/parscope/parscope/format/bbv"
)

// streamSnapshot is one stream of an Accumulator in exported fields.
type streamSnapshot struct {
	Run, Proc  int32
	First, Cur int32
	Head, Tail bbv.Vector
	// Rows are the projected rows (Dim values each) and Sums their sums,
	// with their largest block id MidInDim; Vecs the vectors with
	// NoProject.
	Projected bool
	Rows      []float64
	Sums      []float64
	MidInDim  int32
	Vecs      []bbv.Vector
	InDim     int32
	Bad       string
	HasBad    bool
	BadSeq    int32
}

// MarshalBinary implements engine.Portable: the streams, their complete
// intervals projected, their first and current intervals as vectors, so
// that an accumulator of the records that follow, decoded or not, merges
// into the decoded one as into this one (by process, or in time order).
func (a *Accumulator) MarshalBinary() ([]byte, error) {
	keys := slices.SortedFunc(maps.Keys(a.streams), streamKey.compare)
	out := make([]streamSnapshot, 0, len(keys))
	for _, k := range keys {
		s := a.streams[k]
		ss := streamSnapshot{Run: k.run, Proc: k.proc, First: s.first, Cur: s.cur, Head: s.head, Tail: s.tail,
			Vecs: s.vecs, InDim: s.inDim, BadSeq: s.badSeq}
		if s.bad != nil {
			ss.Bad, ss.HasBad = s.bad.Error(), true
		}
		if s.mid != nil {
			ss.Projected, ss.MidInDim, ss.Sums = true, s.mid.inDim, s.mid.sums
			ss.Rows = make([]float64, 0, s.mid.n*s.mid.d)
			for i := range s.mid.n {
				ss.Rows = append(ss.Rows, s.mid.row(i)...)
			}
		}
		out = append(out, ss)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(out); err != nil {
		return nil, fmt.Errorf("phases: encoding an accumulator: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary implements engine.Portable.
func (a *Accumulator) UnmarshalBinary(data []byte) error {
	var in []streamSnapshot
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&in); err != nil {
		return fmt.Errorf("phases: decoding an accumulator: %w", err)
	}
	a.streams, a.last = map[streamKey]*stream{}, nil
	for _, ss := range in {
		k := streamKey{ss.Run, ss.Proc}
		if a.streams[k] != nil || ss.Projected != (a.m != nil) || ss.Cur < ss.First {
			return errors.New("phases: decoding an accumulator of other options, or not one MarshalBinary made")
		}
		s := &stream{key: k, first: ss.First, cur: ss.Cur, head: ss.Head, tail: ss.Tail, vecs: ss.Vecs, inDim: ss.InDim, badSeq: ss.BadSeq}
		if ss.HasBad {
			s.bad = errors.New(ss.Bad)
		}
		if ss.Projected {
			d := a.opts.Dim
			if len(ss.Rows) != len(ss.Sums)*d || len(ss.Sums) == 0 {
				return fmt.Errorf("phases: decoding an accumulator: %d projected values for %d rows of %d", len(ss.Rows), len(ss.Sums), d)
			}
			s.mid = &projector{d: d, m: a.m}
			for i, sum := range ss.Sums {
				s.mid.addRow(ss.Rows[i*d:(i+1)*d], sum)
			}
			s.mid.inDim = ss.MidInDim
		}
		a.streams[k] = s
	}
	return nil
}
