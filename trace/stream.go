package trace

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Writer receives a trace: its header, which the writer may fill in as it
// goes, and its records. Records of different processes may arrive in any
// order; records of one process must arrive in that process's time order.
// The store's writer and Memory implement it.
type Writer interface {
	// Header returns the header being built; importers add runs,
	// dictionaries and repairs to it until the writer is closed.
	Header() *Header
	// Add appends one record.
	Add(r Record) error
}

// BatchWriter is a Writer that also takes records in batches, which saves
// a call and a copy of each record through the layers of a large import.
// AddBatch adds the records of rs in order, exactly as Add would one by
// one, and returns how many it added before an error.
type BatchWriter interface {
	Writer
	AddBatch(rs []Record) (int, error)
}

// AddBatch adds the records of rs to w in order: through w's AddBatch when
// w is a BatchWriter, else one by one. It returns how many it added before
// an error.
func AddBatch(w Writer, rs []Record) (int, error) {
	if bw, ok := w.(BatchWriter); ok {
		return bw.AddBatch(rs)
	}
	for i, r := range rs {
		if err := w.Add(r); err != nil {
			return i, err
		}
	}
	return len(rs), nil
}

// Resetter is a Writer that can discard every record it was given and
// start again, keeping its header as it is: an importer that guessed
// something about its input and found out otherwise imports it again.
type Resetter interface {
	Writer
	Reset() error
}

// Reader streams records in batches. Read fills buf and returns the number
// of records written; it returns io.EOF (and 0) after the last record.
type Reader interface {
	Read(buf []Record) (int, error)
}

// ReadAll drains a Reader into a slice. Use it in tests and for small traces.
func ReadAll(r Reader) ([]Record, error) {
	var out []Record
	buf := make([]Record, 4096)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// Each calls fn for every record of r, in order, stopping at the first error.
func Each(r Reader, fn func(*Record) error) error {
	buf := make([]Record, 4096)
	for {
		n, err := r.Read(buf)
		for i := 0; i < n; i++ {
			if e := fn(&buf[i]); e != nil {
				return e
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// SliceReader reads records from a slice.
type SliceReader struct {
	recs []Record
}

// NewSliceReader returns a Reader over recs (which it does not copy).
func NewSliceReader(recs []Record) *SliceReader { return &SliceReader{recs: recs} }

// Read implements Reader.
func (s *SliceReader) Read(buf []Record) (int, error) {
	if len(s.recs) == 0 {
		return 0, io.EOF
	}
	n := copy(buf, s.recs)
	s.recs = s.recs[n:]
	return n, nil
}

// Memory is a whole trace held in memory: a Writer for importers and tests,
// and the source of Readers over its records.
type Memory struct {
	H       Header
	Records []Record
	check   OrderCheck
}

// Header implements Writer.
func (m *Memory) Header() *Header { return &m.H }

// Reset implements Resetter: it drops the records and keeps the header.
func (m *Memory) Reset() error {
	m.Records = m.Records[:0]
	m.check = OrderCheck{}
	return nil
}

// Add implements Writer. It checks that each process's records arrive in
// time order.
func (m *Memory) Add(r Record) error {
	if err := m.check.Check(&r); err != nil {
		return err
	}
	m.Records = append(m.Records, r)
	return nil
}

// Sort puts the records in time-merged order (run, time, process), keeping
// the stream order of equal keys.
func (m *Memory) Sort() { slices.SortStableFunc(m.Records, Compare) }

// Reader returns a Reader over the records in their current order.
func (m *Memory) Reader() Reader { return NewSliceReader(m.Records) }

// OrderCheck verifies, record by record, that each process's stream is in
// time order and that identities and sizes are sane. The zero value is ready
// to use. BBV records are exempt from the time check (they are ordered by
// interval instead).
type OrderCheck struct {
	last [][]int64       // per run, per process: last time (dense ids)
	seen [][]bool        // per run, per process: last is set
	far  map[int64]int64 // (run<<32 | proc) -> last time, for large ids
}

// ErrOutOfOrder is wrapped by errors about timestamps going backwards within a process.
var ErrOutOfOrder = errors.New("timestamp out of order")

const denseIDs = 1 << 20

// MaxProcs bounds the processes of a run: a record's process id is below
// it. Every analysis keeps arrays indexed by process, so an id of two
// billion would ask for tens of gigabytes; 16.7 million processes is well
// above the largest parallel runs.
const MaxProcs = 1 << 24

// MaxRuns bounds the runs of a trace: a record's run id is below it.
const MaxRuns = 1 << 16

// Check returns an error if r goes back in time on its process or carries
// impossible values (negative process, run or size, invalid kind, a
// process id of MaxProcs or more, a run id of MaxRuns or more).
func (c *OrderCheck) Check(r *Record) error {
	if !r.Kind.Valid() {
		return fmt.Errorf("invalid record kind %d", r.Kind)
	}
	if r.Run < 0 || r.Proc < 0 {
		return fmt.Errorf("record with negative run %d or process %d", r.Run, r.Proc)
	}
	if r.Proc >= MaxProcs {
		return fmt.Errorf("record of process %d: process ids must be below %d", r.Proc, MaxProcs)
	}
	if r.Run >= MaxRuns {
		return fmt.Errorf("record of run %d: run ids must be below %d", r.Run, MaxRuns)
	}
	switch r.Kind {
	case KindSend, KindRecv, KindCollective:
		if r.Value < 0 {
			return fmt.Errorf("%s of process %d at %d has negative size %d", r.Kind, r.Proc, r.T, r.Value)
		}
	case KindBBV:
		if r.Value < 0 {
			return fmt.Errorf("bbv of process %d interval %d has negative count %d", r.Proc, r.Seq, r.Value)
		}
		return nil
	}
	if r.Run < denseIDs && r.Proc < denseIDs {
		for int(r.Run) >= len(c.last) {
			c.last = append(c.last, nil)
			c.seen = append(c.seen, nil)
		}
		last, seen := c.last[r.Run], c.seen[r.Run]
		if int(r.Proc) >= len(last) {
			n := max(int(r.Proc)+1, 2*len(last))
			last = append(last, make([]int64, n-len(last))...)
			seen = append(seen, make([]bool, n-len(seen))...)
			c.last[r.Run], c.seen[r.Run] = last, seen
		}
		if seen[r.Proc] && r.T < last[r.Proc] {
			return c.backwards(r, last[r.Proc])
		}
		last[r.Proc], seen[r.Proc] = r.T, true
		return nil
	}
	if c.far == nil {
		c.far = map[int64]int64{}
	}
	key := int64(r.Run)<<32 | int64(r.Proc)
	if last, ok := c.far[key]; ok && r.T < last {
		return c.backwards(r, last)
	}
	c.far[key] = r.T
	return nil
}

func (c *OrderCheck) backwards(r *Record, last int64) error {
	return fmt.Errorf("%w: process %d of run %d goes back from %d to %d ns", ErrOutOfOrder, r.Proc, r.Run, last, r.T)
}

// Merge returns a Reader that merges already time-ordered readers into one
// time-ordered stream (run, time, process); records with equal keys come
// in the order of the readers given, then in their stream order. It holds
// one batch per input in memory.
func Merge(inputs ...Reader) Reader { return MergeFunc(Less, inputs...) }

// MergeFunc is Merge with another order: less must be the order the inputs
// are already in.
func MergeFunc(less func(a, b *Record) bool, inputs ...Reader) Reader {
	m := &merger{h: cursorHeap{less: less}}
	for i, in := range inputs {
		m.cursors = append(m.cursors, &cursor{r: in, idx: i, buf: make([]Record, firstBatch)})
	}
	return m
}

type cursor struct {
	r   Reader
	idx int
	buf []Record
	pos int
	n   int
	err error
}

// firstBatch and maxBatch bound a merge cursor's batch: it starts small
// and doubles each time a read fills it, so that merging many short inputs
// (the processes of a short recording) holds little memory, and a long
// input is read in batches of maxBatch records.
const (
	firstBatch = 32
	maxBatch   = 1024
)

func (c *cursor) fill() bool {
	for c.pos >= c.n {
		if c.err != nil {
			return false
		}
		if c.n == len(c.buf) && len(c.buf) < maxBatch {
			c.buf = make([]Record, 2*len(c.buf))
		}
		c.n, c.err = c.r.Read(c.buf)
		c.pos = 0
		if c.n == 0 && c.err == nil {
			c.err = io.ErrNoProgress
		}
	}
	return true
}

type merger struct {
	cursors []*cursor
	h       cursorHeap
	started bool
	err     error
}

type cursorHeap struct {
	c    []*cursor
	less func(a, b *Record) bool
}

func (h *cursorHeap) Len() int           { return len(h.c) }
func (h *cursorHeap) Less(i, j int) bool { return h.before(h.c[i], h.c[j]) }

// before reports whether c's head comes before d's: the heap's order.
func (h *cursorHeap) before(c, d *cursor) bool {
	a, b := &c.buf[c.pos], &d.buf[d.pos]
	if h.less(a, b) {
		return true
	}
	if h.less(b, a) {
		return false
	}
	return c.idx < d.idx
}

func (h *cursorHeap) Swap(i, j int) { h.c[i], h.c[j] = h.c[j], h.c[i] }
func (h *cursorHeap) Push(x any)    { h.c = append(h.c, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	x := h.c[len(h.c)-1]
	h.c = h.c[:len(h.c)-1]
	return x
}

func (m *merger) Read(buf []Record) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if !m.started {
		m.started = true
		for _, c := range m.cursors {
			if c.fill() {
				m.h.c = append(m.h.c, c)
			} else if !errors.Is(c.err, io.EOF) {
				m.err = c.err
				return 0, c.err
			}
		}
		heap.Init(&m.h)
	}
	n := 0
	for n < len(buf) && len(m.h.c) > 0 {
		c := m.h.c[0]
		// The cursor after c is one of the root's children. c's records
		// go out while they come before that cursor's head: one comparison
		// a record instead of restoring the heap after each.
		var next *cursor
		if len(m.h.c) > 1 {
			next = m.h.c[1]
			if len(m.h.c) > 2 && m.h.Less(2, 1) {
				next = m.h.c[2]
			}
		}
		for {
			buf[n] = c.buf[c.pos]
			n++
			c.pos++
			if n == len(buf) || c.pos >= c.n || next != nil && !m.h.before(c, next) {
				break
			}
		}
		if c.pos < c.n || c.fill() {
			heap.Fix(&m.h, 0)
			continue
		}
		if !errors.Is(c.err, io.EOF) {
			m.err = c.err
			return n, c.err
		}
		heap.Pop(&m.h)
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Filter returns a Reader that passes only the records for which keep returns true.
func Filter(r Reader, keep func(*Record) bool) Reader { return &filter{r: r, keep: keep} }

type filter struct {
	r    Reader
	keep func(*Record) bool
}

func (f *filter) Read(buf []Record) (int, error) {
	for {
		n, err := f.r.Read(buf)
		k := 0
		for i := 0; i < n; i++ {
			if f.keep(&buf[i]) {
				buf[k] = buf[i]
				k++
			}
		}
		if k > 0 || err != nil {
			if k > 0 && errors.Is(err, io.EOF) {
				return k, nil
			}
			return k, err
		}
	}
}

func sortRecords(rs []Record) { slices.SortStableFunc(rs, Compare) }
