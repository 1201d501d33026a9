package phase

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/parscope/parscope/format/bbv"
	"github.com/parscope/parscope/trace"
)

// The accumulator keeps, for each (run, process) stream, the intervals
// already complete as projected rows (or, with NoProject, as vectors),
// and two intervals as vectors: the first one seen, which may continue
// the last interval of an earlier accumulator it will be merged into, and
// the current one, which later records may extend. An interval is
// complete when a record of the next one comes. A stream's records must
// come in interval order, the entries of an interval in file order (the
// order of the store's BBV table); the records of different streams may
// interleave.

// streamKey identifies a stream.
type streamKey struct{ run, proc int32 }

func (k streamKey) compare(o streamKey) int {
	return cmp.Or(cmp.Compare(k.run, o.run), cmp.Compare(k.proc, o.proc))
}

// stream is what the accumulator keeps of one stream.
type stream struct {
	key streamKey
	// first and cur are the first and the current interval; head holds
	// interval first and, when cur > first, tail interval cur.
	first, cur int32
	head, tail bbv.Vector
	// mid holds intervals first+1 … cur−1 projected, after a row for
	// interval first that run fills; vecs the same intervals with
	// NoProject.
	mid   *projector
	vecs  []bbv.Vector
	inDim int32
	// bad is the error of the first complete interval that cannot be
	// normalised (Run's error for it), reported by Result.
	bad    error
	badSeq int32
}

// streamName is the name of a stream in results and errors.
func (a *Accumulator) streamName(k streamKey) string {
	return fmt.Sprintf("%s run %d proc %d", a.name, k.run, k.proc)
}

// recordError is bbv.FromRecords' error for interval seq of stream k.
func (a *Accumulator) recordError(k streamKey, seq int32, format string, args ...any) error {
	return fmt.Errorf("bbv: %s: run %d process %d interval %d: %s", a.name, k.run, k.proc, seq, fmt.Sprintf(format, args...))
}

// newStream returns an empty stream whose first interval is seq.
func (a *Accumulator) newStream(k streamKey, seq int32) *stream {
	s := &stream{key: k, first: seq, cur: seq}
	if a.m != nil {
		// Row 0 is the first interval's, projected by run.
		s.mid = &projector{d: a.opts.Dim, m: a.m}
		s.mid.addRow(nil, 0)
	}
	return s
}

// last returns the stream's current interval.
func (s *stream) last() *bbv.Vector {
	if s.cur > s.first {
		return &s.tail
	}
	return &s.head
}

// add adds one record to its stream.
func (a *Accumulator) add(r *trace.Record) error {
	k := streamKey{r.Run, r.Proc}
	s := a.last
	if s == nil || s.key != k {
		if s = a.streams[k]; s == nil {
			s = a.newStream(k, r.Seq)
			a.streams[k] = s
		}
		a.last = s
	}
	if r.ID < 1 || r.ID > bbv.DefaultMaxDim {
		return a.recordError(k, r.Seq, "block id %d outside 1..%d", r.ID, bbv.DefaultMaxDim)
	}
	if r.Value < 0 {
		return a.recordError(k, r.Seq, "block %d has negative count %d", r.ID, r.Value)
	}
	switch {
	case r.Seq == s.cur:
	case r.Seq == s.cur+1:
		if err := a.push(s, r.Seq, bbv.Vector{}); err != nil {
			return err
		}
	case r.Seq < s.cur:
		return a.recordError(k, r.Seq, "comes after interval %d (expected intervals in order)", s.cur)
	default:
		return a.recordError(k, r.Seq, "intervals %d to %d have no entries (expected consecutive intervals from 0)", s.cur+1, r.Seq-1)
	}
	v := s.last()
	v.Blocks = append(v.Blocks, r.ID)
	v.Counts = append(v.Counts, float64(r.Value))
	s.inDim = max(s.inDim, r.ID)
	return nil
}

// push makes v interval seq = s.cur+1, the stream's current interval:
// the previous current interval is complete (unless it is the first,
// which Result completes).
func (a *Accumulator) push(s *stream, seq int32, v bbv.Vector) error {
	if s.cur > s.first {
		if err := a.complete(s, s.cur, s.tail); err != nil {
			return err
		}
		if s.mid != nil && v.Blocks == nil {
			// The projected interval's buffers take the next one.
			v = bbv.Vector{Blocks: s.tail.Blocks[:0], Counts: s.tail.Counts[:0]}
		}
	}
	s.tail, s.cur = v, seq
	return nil
}

// complete checks interval seq of s, v (as bbv.FromRecords and Run do),
// and adds it to the intervals kept.
func (a *Accumulator) complete(s *stream, seq int32, v bbv.Vector) error {
	if err := a.check(s, seq, v); err != nil {
		return err
	}
	switch {
	case s.mid == nil:
		s.vecs = append(s.vecs, v)
	case s.bad != nil:
		s.mid.addRow(make([]float64, s.mid.d), 0) // the result is an error
	default:
		s.mid.add(v)
	}
	return nil
}

// check returns the error of a block that appears twice in interval seq
// of s, v, and notes in s.bad the first interval that cannot be
// normalised.
func (a *Accumulator) check(s *stream, seq int32, v bbv.Vector) error {
	if a.stamp++; a.stamp == 0 {
		clear(a.seen)
		a.stamp = 1
	}
	for _, b := range v.Blocks {
		if int(b) >= len(a.seen) {
			a.seen = append(a.seen, make([]uint32, int(b)+1-len(a.seen))...)
		}
		if a.seen[b] == a.stamp {
			return a.recordError(s.key, seq, "block %d appears twice", b)
		}
		a.seen[b] = a.stamp
	}
	// Ids and counts were checked as they came; only the sum can fail.
	if sum := v.Sum(); (!(sum > 0) || math.IsInf(sum, 0)) && (s.bad == nil || seq < s.badSeq) {
		s.bad, s.badSeq = checkVector(a.streamName(s.key), int(seq), 0, v, bbv.DefaultMaxDim), seq
	}
	return nil
}

// merge adds s2, a stream of a later accumulator, to a.
func (a *Accumulator) merge(s2 *stream) error {
	s := a.streams[s2.key]
	if s == nil {
		if s2.mid != nil {
			s2.mid.m = a.m
		}
		a.streams[s2.key] = s2
		return nil
	}
	switch {
	case s2.first == s.cur:
		l := s.last()
		l.Blocks = append(l.Blocks, s2.head.Blocks...)
		l.Counts = append(l.Counts, s2.head.Counts...)
	case s2.first == s.cur+1:
		if err := a.push(s, s2.first, s2.head); err != nil {
			return err
		}
	case s2.first < s.cur:
		return a.recordError(s.key, s2.first, "comes after interval %d (expected intervals in order)", s.cur)
	default:
		return a.recordError(s.key, s2.first, "intervals %d to %d have no entries (expected consecutive intervals from 0)", s.cur+1, s2.first-1)
	}
	s.inDim = max(s.inDim, s2.inDim)
	if s2.cur == s2.first {
		return nil
	}
	// s's current interval, which took s2's first, is complete; s2's
	// complete intervals and its current one follow.
	if s.cur > s.first {
		if err := a.complete(s, s.cur, s.tail); err != nil {
			return err
		}
	}
	if s2.bad != nil && (s.bad == nil || s2.badSeq < s.badSeq) {
		s.bad, s.badSeq = s2.bad, s2.badSeq
	}
	if s.mid != nil {
		for i := 1; i < s2.mid.n; i++ { // row 0 is s2's first interval's
			s.mid.addRow(s2.mid.row(i), s2.mid.sums[i])
		}
	} else {
		s.vecs = append(s.vecs, s2.vecs...)
	}
	s.tail, s.cur = s2.tail, s2.cur
	return nil
}

// end checks the first and the current interval of s, which no record
// can extend any more.
func (a *Accumulator) end(s *stream) error {
	if s.first != 0 {
		return a.recordError(s.key, s.first, "intervals %d to %d have no entries (expected consecutive intervals from 0)", 0, s.first-1)
	}
	if err := a.check(s, s.first, s.head); err != nil {
		return err
	}
	if s.cur > s.first {
		return a.check(s, s.cur, s.tail)
	}
	return nil
}

// run clusters the intervals of s (ended) as Run does the File of them.
func (a *Accumulator) run(ctx context.Context, s *stream, name string) (*Result, error) {
	if err := a.opts.validate(); err != nil {
		return nil, err
	}
	if s.bad != nil {
		return nil, s.bad
	}
	if s.mid == nil {
		f := &bbv.File{Name: name, Dim: s.inDim, Vectors: append([]bbv.Vector{s.head}, s.vecs...)}
		if s.cur > s.first {
			f.Vectors = append(f.Vectors, s.tail)
		}
		return Run(ctx, f, a.opts)
	}
	if a.m == nil {
		_, err := newMatrix(&a.opts)
		return nil, err
	}
	s.mid.sums[0] = a.m.project(s.mid.row(0), s.head)
	if s.cur > s.first {
		s.mid.add(s.tail)
	}
	ds := s.mid.dataset(a.opts.VariableLength)
	ds.inDim = s.inDim
	s.mid, s.head, s.tail = nil, bbv.Vector{}, bbv.Vector{}
	return cluster(ctx, ds, a.opts)
}
