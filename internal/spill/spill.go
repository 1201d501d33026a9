// Package spill keeps an aggregation by key within a memory budget. The
// caller aggregates in memory, in whatever table suits it; when the table
// reaches its budget, it writes the table sorted by key as a run to a
// temporary file (Runs.Create, Writer.Add, Writer.Close), clears it and
// goes on. At the end Runs.Merge reads the runs back in key order (a k-way
// merge), combining the values of equal keys, so that the aggregation is
// exact and its memory is bounded by the budget, not by the number of
// distinct keys.
//
// A run is a sequence of records (key, value) of byte strings, keys in
// increasing order, each key stored as the length it shares with the one
// before and the rest (prefix compression), every length an unsigned
// varint. The values are opaque: a Combine function folds the value of a
// record into the value of an earlier record of the same key. With more
// than MaxRuns runs, they are merged into one (combined), so that the
// number of open files and of read buffers stays bounded.
//
// Run files are created with os.CreateTemp in os.TempDir() ($TMPDIR),
// named parscope-NAME-PID-*.run, and unlinked as soon as they are open:
// the data stays reachable through the open file only, so neither an
// error nor a crash (kill -9 included) leaves a file behind. Where an open
// file cannot be removed (Windows), it is removed by Close, and a crash
// leaves it under that recognisable name.
package spill

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
)

// MaxRuns is the number of runs past which Runs merges its runs into one.
const MaxRuns = 32

// readBuffer is the read buffer of each run during a merge.
const readBuffer = 32 << 10

// Combine folds src, the value of a record, into dst, the value of an
// earlier record of the same key (or the combination of several), and
// returns the result, which may reuse dst's memory. src is valid only
// during the call.
type Combine func(dst, src []byte) []byte

// Runs is a set of sorted runs of one aggregation. The zero value is not
// usable; use New.
type Runs struct {
	name    string
	combine Combine
	runs    []*run
	written int64
}

// run is one run's file.
type run struct {
	f       *os.File
	name    string
	size    int64
	records int64
	// unlinked is true once the file's name is removed.
	unlinked bool
}

// New returns an empty set of runs whose files are named after name (a
// word: "occupancy"), combining the values of equal keys with combine. A
// nil combine keeps every record: Merge then hands equal keys one by one.
func New(name string, combine Combine) *Runs {
	return &Runs{name: name, combine: combine}
}

// Len returns the number of runs.
func (s *Runs) Len() int { return len(s.runs) }

// Records returns the number of records in the runs (equal keys of
// different runs counted once per run).
func (s *Runs) Records() int64 {
	var n int64
	for _, r := range s.runs {
		n += r.records
	}
	return n
}

// Written returns the bytes written to run files so far, runs merged into
// one included.
func (s *Runs) Written() int64 { return s.written }

// Writer writes one run: Add records in increasing key order, then Close
// to add the run to its Runs, or Abort to drop it.
type Writer struct {
	s    *Runs
	r    *run
	w    *bufio.Writer
	prev []byte
	buf  []byte
	has  bool
	err  error
}

// Create starts a new run in a temporary file.
func (s *Runs) Create() (*Writer, error) {
	r, err := newRun(s.name)
	if err != nil {
		return nil, err
	}
	return &Writer{s: s, r: r, w: bufio.NewWriterSize(r.f, 64<<10)}, nil
}

// newRun creates a temporary file and unlinks it where the system allows.
func newRun(name string) (*run, error) {
	f, err := os.CreateTemp("", "parscope-"+name+"-"+strconv.Itoa(os.Getpid())+"-*.run")
	if err != nil {
		return nil, fmt.Errorf("spill: creating a temporary file in %s for the %s table: %w", os.TempDir(), name, err)
	}
	r := &run{f: f, name: f.Name()}
	if os.Remove(r.name) == nil {
		r.unlinked = true
	}
	return r, nil
}

// Add appends a record. Keys must come in increasing order (equal keys
// are allowed); key and val may be reused after the call.
func (w *Writer) Add(key, val []byte) error {
	if w.err != nil {
		return w.err
	}
	shared := 0
	if w.has {
		if bytes.Compare(key, w.prev) < 0 {
			w.err = fmt.Errorf("spill: %s: keys out of order (%x after %x)", w.r.name, key, w.prev)
			return w.err
		}
		for shared < len(key) && shared < len(w.prev) && key[shared] == w.prev[shared] {
			shared++
		}
	}
	b := binary.AppendUvarint(w.buf[:0], uint64(shared))
	b = binary.AppendUvarint(b, uint64(len(key)-shared))
	b = append(b, key[shared:]...)
	b = binary.AppendUvarint(b, uint64(len(val)))
	b = append(b, val...)
	w.buf = b
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("spill: writing %s: %w", w.r.name, err)
		return w.err
	}
	w.r.size += int64(len(b))
	w.r.records++
	w.prev = append(w.prev[:0], key...)
	w.has = true
	return nil
}

// Close ends the run and adds it to its Runs, merging the runs into one
// when there are more than MaxRuns.
func (w *Writer) Close() error {
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("spill: writing %s: %w", w.r.name, err)
		}
	}
	if w.err != nil {
		w.r.close()
		return w.err
	}
	w.err = errors.New("spill: the run is closed")
	w.s.runs = append(w.s.runs, w.r)
	w.s.written += w.r.size
	return w.s.compact()
}

// Abort drops the run. It does nothing after Close.
func (w *Writer) Abort() {
	if w.err == nil {
		w.err = errors.New("spill: the run is aborted")
		w.r.close()
	}
}

// Take moves the runs of o into s (o is left empty), merging them when
// there are then more than MaxRuns. o must combine values as s does.
func (s *Runs) Take(o *Runs) error {
	s.runs = append(s.runs, o.runs...)
	s.written += o.written
	o.runs, o.written = nil, 0
	return s.compact()
}

// compact merges the runs into one when there are more than MaxRuns.
func (s *Runs) compact() error {
	if len(s.runs) <= MaxRuns {
		return nil
	}
	w, err := s.Create()
	if err != nil {
		return err
	}
	if err := s.Merge(w.Add); err != nil {
		w.Abort()
		return err
	}
	old := s.runs
	s.runs = nil
	if err := w.Close(); err != nil {
		s.runs = old
		return err
	}
	for _, r := range old {
		r.close()
	}
	return nil
}

// Close removes every run. The Runs is empty afterwards, and usable.
func (s *Runs) Close() error {
	var errs []error
	for _, r := range s.runs {
		errs = append(errs, r.close())
	}
	s.runs = nil
	return errors.Join(errs...)
}

// close closes and removes the run's file.
func (r *run) close() error {
	err := r.f.Close()
	if !r.unlinked {
		if e := os.Remove(r.name); e != nil && !errors.Is(e, os.ErrNotExist) && err == nil {
			err = e
		}
		r.unlinked = true
	}
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("spill: removing %s: %w", r.name, err)
	}
	return nil
}

// cursor reads one run during a merge.
type cursor struct {
	r   *run
	br  *bufio.Reader
	idx int // the run's place in Runs, which orders equal keys
	key []byte
	val []byte
	n   int64 // records left
}

// next reads the cursor's next record; it returns false at the end.
func (c *cursor) next() (bool, error) {
	if c.n == 0 {
		return false, nil
	}
	c.n--
	shared, err := binary.ReadUvarint(c.br)
	if err != nil {
		return false, c.bad(err)
	}
	rest, err := binary.ReadUvarint(c.br)
	if err != nil {
		return false, c.bad(err)
	}
	if shared > uint64(len(c.key)) || rest > uint64(c.r.size) {
		return false, c.bad(errors.New("a key longer than the file"))
	}
	c.key = c.key[:shared]
	c.key, err = readN(c.br, c.key, int(rest))
	if err != nil {
		return false, c.bad(err)
	}
	n, err := binary.ReadUvarint(c.br)
	if err != nil || n > uint64(c.r.size) {
		return false, c.bad(err)
	}
	c.val, err = readN(c.br, c.val[:0], int(n))
	if err != nil {
		return false, c.bad(err)
	}
	return true, nil
}

// readN appends n bytes read from r to b.
func readN(r io.Reader, b []byte, n int) ([]byte, error) {
	l := len(b)
	b = slices.Grow(b, n)[:l+n]
	_, err := io.ReadFull(r, b[l:])
	return b, err
}

func (c *cursor) bad(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("spill: reading %s: %d records expected, the file ends or is corrupt: %w", c.r.name, c.r.records, err)
}

// Merge calls fn with every key of the runs, in increasing order, and its
// value: the values of the key's records combined in the order of the
// runs (with a nil Combine, fn is called for every record, equal keys in
// the order of the runs). key and val are valid only during the call. The
// runs stay: Merge can be called again.
func (s *Runs) Merge(fn func(key, val []byte) error) error {
	h := make(cursorHeap, 0, len(s.runs))
	for i, r := range s.runs {
		c := &cursor{r: r, idx: i, n: r.records, br: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, r.size), readBuffer)}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, c)
		}
	}
	h.init()
	var key, val []byte
	has := false
	for len(h) > 0 {
		c := h[0]
		if s.combine != nil && has && bytes.Equal(c.key, key) {
			val = s.combine(val, c.val)
		} else {
			if has {
				if err := fn(key, val); err != nil {
					return err
				}
			}
			key = append(key[:0], c.key...)
			val = append(val[:0], c.val...)
			has = true
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			h.fix()
		} else {
			h.pop()
		}
	}
	if has {
		return fn(key, val)
	}
	return nil
}

// cursorHeap is a binary min-heap of cursors by key, then by run.
type cursorHeap []*cursor

func (h cursorHeap) less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].idx < h[j].idx
}

func (h cursorHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// fix restores the heap after the root's key grew.
func (h cursorHeap) fix() { h.down(0) }

// pop removes the root.
func (h *cursorHeap) pop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
}

func (h cursorHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
