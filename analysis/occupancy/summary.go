package occupancy

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"slices"

	"github.com/parscope/parscope/internal/spill"
)

// summary computes, in one pass over the distinct macrostates of a run
// (in any order), what its Result holds: how many there are, the exact
// sums of the mean node occupancy, the histogram of each mode, the rows of
// largest occupancy and, when wanted, the whole table in order of first
// appearance.
type summary struct {
	observed int
	modeSum  [][2]uint64 // per mode: Σ count·occupancy, 128 bits (high, low)
	hist     [][]int64
	top      *topHeap
	rows     *rowSorter
}

func newSummary(m, p, top int, rows bool, t *table) *summary {
	s := &summary{modeSum: make([][2]uint64, m), hist: make([][]int64, m)}
	for j := range s.hist {
		s.hist[j] = make([]int64, p+1)
	}
	if top > 0 {
		s.top = &topHeap{n: top}
	}
	if rows {
		s.rows = newRowSorter(t)
	}
	return s
}

func (s *summary) add(counts []int32, key []byte, occ, first int64) error {
	s.observed++
	for j, c := range counts {
		hi, lo := bits.Mul64(uint64(c), uint64(occ))
		var carry uint64
		s.modeSum[j][1], carry = bits.Add64(s.modeSum[j][1], lo, 0)
		s.modeSum[j][0] += hi + carry
		if int(c) < len(s.hist[j]) {
			s.hist[j][c] += occ
		}
	}
	if s.top != nil {
		s.top.add(key, occ, first)
	}
	if s.rows != nil {
		return s.rows.add(key, occ, first)
	}
	return nil
}

// means returns the mean node occupancy of each mode from the exact sums.
func means(modeSum [][2]uint64, p int) []float64 {
	out := make([]float64, len(modeSum))
	if p == 0 {
		return out
	}
	for j, s := range modeSum {
		x := new(big.Int).SetUint64(s[0])
		x.Lsh(x, 64).Or(x, new(big.Int).SetUint64(s[1]))
		v, _ := new(big.Float).SetInt(x).Float64()
		out[j] = v / float64(p)
	}
	return out
}

// topHeap keeps the n rows of largest occupancy, ties to the earlier first
// appearance: a min-heap whose root is the row to give up first.
type topHeap struct {
	n int
	e []topEnt
}

type topEnt struct {
	occ, first int64
	key        []byte
}

// worse reports whether x ranks after y.
func (x *topEnt) worse(y *topEnt) bool {
	return x.occ < y.occ || x.occ == y.occ && x.first > y.first
}

func (h *topHeap) add(key []byte, occ, first int64) {
	e := topEnt{occ: occ, first: first}
	if len(h.e) < h.n {
		e.key = slices.Clone(key)
		h.e = append(h.e, e)
		for i := len(h.e) - 1; i > 0; {
			up := (i - 1) / 2
			if !h.e[i].worse(&h.e[up]) {
				break
			}
			h.e[i], h.e[up] = h.e[up], h.e[i]
			i = up
		}
		return
	}
	if !h.e[0].worse(&e) {
		return
	}
	e.key = append(h.e[0].key[:0], key...)
	h.e[0] = e
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h.e) {
			return
		}
		m := l
		if r := l + 1; r < len(h.e) && h.e[r].worse(&h.e[l]) {
			m = r
		}
		if !h.e[m].worse(&h.e[i]) {
			return
		}
		h.e[i], h.e[m] = h.e[m], h.e[i]
		i = m
	}
}

// macros returns the rows kept in order of first appearance.
func (h *topHeap) macros(t *table) []Macro {
	if len(h.e) == 0 {
		return nil
	}
	slices.SortFunc(h.e, func(x, y topEnt) int { return cmp.Compare(x.first, y.first) })
	out := make([]Macro, len(h.e))
	for i, e := range h.e {
		out[i] = Macro{Counts: slices.Clone(t.counts(e.key)), Occupancy: e.occ}
	}
	return out
}

// TableStream is the whole occupancy table (T3) of a run in order of first
// appearance, kept in memory when it is small and otherwise in temporary
// files (see Options.Stream), until Close.
type TableStream struct {
	n     int
	m     int
	dec   *table // decodes keys
	mem   []rowEnt
	arena []byte
	runs  *spill.Runs
}

type rowEnt struct {
	first, occ int64
	off, len   int32 // key in the arena
}

// rowSorter sorts the rows by first appearance within the table's budget.
type rowSorter struct {
	r      *TableStream
	budget int64
	kbuf   []byte
	vbuf   []byte
}

func newRowSorter(t *table) *rowSorter {
	dec := &table{packed: t.packed, m: t.m, layout: t.layout, cnt: make([]int32, t.m)}
	return &rowSorter{r: &TableStream{m: t.m, dec: dec}, budget: t.budget}
}

func (s *rowSorter) add(key []byte, occ, first int64) error {
	r := s.r
	r.n++
	full := int64(len(r.mem)+1)*24+int64(len(r.arena)+len(key)) > s.budget || len(r.arena)+len(key) > math.MaxInt32
	if full && len(r.mem) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	r.mem = append(r.mem, rowEnt{first: first, occ: occ, off: int32(len(r.arena)), len: int32(len(key))})
	r.arena = append(r.arena, key...)
	return nil
}

func (s *rowSorter) sort() {
	slices.SortFunc(s.r.mem, func(x, y rowEnt) int { return cmp.Compare(x.first, y.first) })
}

// spill writes the rows in memory, sorted, as a run keyed by first
// appearance.
func (s *rowSorter) spill() error {
	r := s.r
	if r.runs == nil {
		r.runs = spill.New("occupancy-rows", nil)
	}
	s.sort()
	w, err := r.runs.Create()
	if err != nil {
		return err
	}
	for _, e := range r.mem {
		s.kbuf = binary.BigEndian.AppendUint64(s.kbuf[:0], uint64(e.first)^1<<63)
		s.vbuf = append(binary.AppendUvarint(s.vbuf[:0], uint64(e.occ)), r.arena[e.off:e.off+e.len]...)
		if err := w.Add(s.kbuf, s.vbuf); err != nil {
			w.Abort()
			return err
		}
	}
	r.mem, r.arena = r.mem[:0], r.arena[:0]
	return w.Close()
}

// done returns the rows.
func (s *rowSorter) done() (*TableStream, error) {
	r := s.r
	if r.runs != nil && len(r.mem) > 0 {
		if err := s.spill(); err != nil {
			r.Close()
			return nil, err
		}
	}
	if r.runs != nil {
		r.mem, r.arena = nil, nil
	} else {
		s.sort()
	}
	return r, nil
}

// Len returns the number of rows.
func (r *TableStream) Len() int {
	if r == nil {
		return 0
	}
	return r.n
}

// Each calls fn with every row in order of first appearance, stopping at
// fn's first error. m.Counts is valid only during the call (copy it to keep
// it). Each can be called again until Close, one call at a time.
func (r *TableStream) Each(fn func(m Macro) error) error {
	if r == nil {
		return nil
	}
	if r.runs == nil {
		for _, e := range r.mem {
			if err := fn(Macro{Counts: r.dec.counts(r.arena[e.off : e.off+e.len]), Occupancy: e.occ}); err != nil {
				return err
			}
		}
		return nil
	}
	return r.runs.Merge(func(_, val []byte) error {
		occ, n := binary.Uvarint(val)
		return fn(Macro{Counts: r.dec.counts(val[n:]), Occupancy: int64(occ)})
	})
}

// All returns every row, in memory (nil for none).
func (r *TableStream) All() ([]Macro, error) {
	if r.Len() == 0 {
		return nil, nil
	}
	out := make([]Macro, 0, r.Len())
	err := r.Each(func(m Macro) error {
		out = append(out, Macro{Counts: slices.Clone(m.Counts), Occupancy: m.Occupancy})
		return nil
	})
	return out, err
}

// Close removes the rows' temporary files (the rows cannot be read
// afterwards). Close of a nil *TableStream does nothing.
func (r *TableStream) Close() error {
	if r == nil {
		return nil
	}
	r.mem, r.arena = nil, nil
	if r.runs == nil {
		return nil
	}
	return r.runs.Close()
}
