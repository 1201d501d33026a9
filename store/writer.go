package store

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/pstdir"
	"github.com/parscope/parscope/trace"
)

// Options tune a Writer. The zero value is what the CLI uses.
type Options struct {
	// Force replaces an existing .pst at the path (atomically, only once the
	// new one is complete). Without it, Create refuses an existing path;
	// with it, it still refuses anything that is not a .pst (see
	// Replaceable).
	Force bool
	// GroupRows is the target number of rows per row group (a time window);
	// 0 means the default (262144, or 256 per process when that is larger).
	GroupRows int
	// ChunkRows is how many records of one table are sorted in memory
	// before a sorted run is spilled to disk, once input arrives out of time
	// order; 0 means 1<<19.
	ChunkRows int
}

const (
	defaultGroupRows = 1 << 18
	spillGroupRows   = 1 << 14
	defaultChunkRows = 1 << 19
)

// Writer writes a trace into a new .pst directory. It implements
// trace.Writer. Records may arrive in any order across processes (per
// process they must be in time order); input that is already in time order
// streams straight into the tables, and other input is sorted in bounded
// memory with sorted runs spilled to temporary files. Nothing appears at the
// destination until Close succeeds; Abort (or a failed Close) removes every
// temporary file.
type Writer struct {
	path   string
	out    *atomicfile.Dir
	tmp    string // out.Path()
	opts   Options
	header trace.Header
	check  trace.OrderCheck
	unit   int64
	sinks  [numTables]*tableSink
	stats  statsBuilder
	closed bool
	err    error
}

// Create starts a new .pst at path. The tables are written into a
// temporary directory beside path (see package atomicfile), which Close
// fsyncs and renames into place.
func Create(path string, opts Options) (*Writer, error) {
	path = filepath.Clean(path)
	if _, err := os.Lstat(path); err == nil && !opts.Force {
		return nil, fmt.Errorf("%s already exists (use --force to replace it)", path)
	}
	var replace atomicfile.Replace // nil: refuse whatever appears at path meanwhile
	if opts.Force {
		replace = Replaceable
	}
	out, err := atomicfile.CreateDir(path, replace)
	if err != nil {
		return nil, err
	}
	if opts.GroupRows <= 0 {
		opts.GroupRows = defaultGroupRows
	}
	if opts.ChunkRows <= 0 {
		opts.ChunkRows = defaultChunkRows
	}
	return &Writer{path: path, out: out, tmp: out.Path(), opts: opts}, nil
}

// Replaceable allows replacing path only when it is a .pst: a directory
// (not a symbolic link) holding a parscope manifest (pstdir.Replaceable).
// It is the rule for every --force: whatever else is at the path (a file,
// a directory of other things) is refused, never deleted.
func Replaceable(path string) error { return pstdir.Replaceable(path) }

// Header implements trace.Writer. The clock resolution in Meta must be set
// before the first Add: it fixes the time unit of the stored columns.
func (w *Writer) Header() *trace.Header { return &w.header }

// Add implements trace.Writer.
func (w *Writer) Add(r trace.Record) error { return w.add(&r) }

// AddBatch implements trace.BatchWriter: it adds the records of rs in
// order, as Add would one by one, without copying each through the calls.
func (w *Writer) AddBatch(rs []trace.Record) (int, error) {
	for i := range rs {
		if err := w.add(&rs[i]); err != nil {
			return i, err
		}
	}
	return len(rs), nil
}

// add adds *r, which it does not keep: the tables copy what they hold.
func (w *Writer) add(r *trace.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("store: Add after Close")
	}
	if err := w.check.Check(r); err != nil {
		w.err = err
		return err
	}
	if w.unit == 0 {
		w.unit = w.header.Meta.ClockResolution
		if w.unit <= 0 {
			w.unit = 1
		}
	}
	if r.T%w.unit != 0 || r.End%w.unit != 0 {
		w.err = fmt.Errorf("record %v: time is not a multiple of the trace's clock resolution %d ns", *r, w.unit)
		return w.err
	}
	t := tableOf(r.Kind)
	s := w.sinks[t]
	if s == nil {
		s = &tableSink{w: w, t: t}
		w.sinks[t] = s
	}
	w.stats.add(r)
	if err := s.add(r); err != nil {
		w.err = w.out.Hide(err)
		return w.err
	}
	return nil
}

// Reset implements trace.Resetter: it discards every record added so far
// (the tables written and spilled, the order check and the statistics),
// keeping the header and the options, as if the writer had just been
// created with that header. It fails after Close or Abort, or once an Add
// failed.
func (w *Writer) Reset() error {
	if w.closed {
		return errors.New("store: Reset after Close")
	}
	if w.err != nil {
		return w.err
	}
	for i, s := range w.sinks {
		if s != nil {
			s.abort()
		}
		w.sinks[i] = nil
	}
	w.check = trace.OrderCheck{}
	w.stats = statsBuilder{}
	w.unit = 0
	return nil
}

// Abort discards everything written so far. It is safe to call after Close.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	for _, s := range w.sinks {
		if s != nil {
			s.abort()
		}
	}
	w.out.Abort()
}

// Close finishes every table, writes the index, the dictionaries and the
// manifest, and moves the .pst into place. On error nothing is left behind
// and an existing .pst at the path is untouched.
func (w *Writer) Close() error {
	if w.closed {
		return errors.New("store: Close called twice")
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	if err := w.finish(); err != nil {
		w.Abort()
		return w.out.Hide(err)
	}
	w.closed = true
	return nil
}

func (w *Writer) finish() error {
	if w.unit == 0 {
		w.unit = max(w.header.Meta.ClockResolution, 1)
	}
	if w.header.Meta.ClockResolution <= 0 {
		w.header.Meta.ClockResolution = w.unit
	}
	m := Manifest{Format: FormatName, Version: FormatVersion, TimeUnitNS: w.unit, Tables: map[string]TableInfo{}, Files: map[string]TableInfo{}}
	var index []indexRow
	for t, s := range w.sinks {
		if s == nil {
			continue
		}
		rows, idx, err := s.finish()
		if err != nil {
			return fmt.Errorf("writing %s: %w", table(t), err)
		}
		for i := range idx {
			idx[i].Table = int32(t)
		}
		index = append(index, idx...)
		st, err := os.Stat(filepath.Join(w.tmp, table(t).file()))
		if err != nil {
			return err
		}
		groups := 0
		if len(idx) > 0 {
			groups = int(idx[len(idx)-1].Group) + 1
		}
		m.Tables[table(t).String()] = TableInfo{File: table(t).file(), Rows: rows, RowGroups: groups, Bytes: st.Size()}
	}
	if err := writeIndex(filepath.Join(w.tmp, indexFile), index); err != nil {
		return err
	}
	if err := describeFile(w.tmp, indexName, m.Files); err != nil {
		return err
	}
	w.stats.finishRuns(&w.header)
	w.header.SortDicts()
	if err := w.header.Validate(); err != nil {
		return err
	}
	if err := writeDicts(w.tmp, &w.header, m.Files); err != nil {
		return err
	}
	m.Header = w.header
	m.Stats = w.stats.result()
	if err := writeManifest(filepath.Join(w.tmp, manifestFile), &m); err != nil {
		return err
	}
	return w.out.Commit()
}

// keyLess is the storage order of a table: (run, time, process) for timed
// tables and (run, process, interval) for BBVs.
func keyLess(t table, a, b *trace.Record) bool {
	if t.timed() {
		return trace.Less(a, b)
	}
	if a.Run != b.Run {
		return a.Run < b.Run
	}
	if a.Proc != b.Proc {
		return a.Proc < b.Proc
	}
	return a.Seq < b.Seq
}

func keyCompare(t table) func(a, b trace.Record) int {
	return func(a, b trace.Record) int {
		switch {
		case keyLess(t, &a, &b):
			return -1
		case keyLess(t, &b, &a):
			return 1
		}
		return 0
	}
}

// tableSink receives one table's records in arrival order and turns them
// into a sorted table file: directly while the input is in order, through
// sorted spill runs and a final merge otherwise.
type tableSink struct {
	w        *Writer
	t        table
	chunk    []trace.Record
	final    *builder
	spills   []*builder
	spilling bool
	merged   []trace.Record // scratch for sortChunk
	order    []int32        // scratch for sortByIndex
	nspill   int            // spill files created, for unique names
}

func (s *tableSink) add(r *trace.Record) error {
	if !s.spilling {
		// In-order input streams straight into the final table, whose
		// builder holds the last record (the first has no builder yet).
		if s.final == nil || !keyLess(s.t, r, &s.final.last) {
			if s.final == nil {
				b, err := newBuilder(s.t, s.finalPath(), s.w.unit, s.groupRows, false)
				if err != nil {
					return err
				}
				s.final = b
			}
			return s.final.add(r)
		}
		// The first record out of order: what was streamed so far becomes
		// the first sorted run, and the rest is sorted in chunks.
		if err := s.startSpilling(); err != nil {
			return err
		}
	}
	s.chunk = append(s.chunk, *r)
	if len(s.chunk) >= s.w.opts.ChunkRows {
		return s.spillChunk()
	}
	return nil
}

func (s *tableSink) finalPath() string { return filepath.Join(s.w.tmp, s.t.file()) }

func (s *tableSink) startSpilling() error {
	s.spilling = true
	if s.final == nil {
		return nil
	}
	if err := s.final.finish(); err != nil {
		return err
	}
	p := s.spillPath(s.nspill)
	s.nspill++
	if err := os.Rename(s.final.path, p); err != nil {
		return err
	}
	s.final.path = p
	s.spills = append(s.spills, s.final)
	s.final = nil
	return nil
}

// spillChunk sorts the chunk and writes it as one sorted run.
func (s *tableSink) spillChunk() error {
	if len(s.chunk) == 0 {
		return nil
	}
	sorted := s.sortChunk()
	b, err := newBuilder(s.t, s.spillPath(s.nspill), s.w.unit, func() int { return spillGroupRows }, true)
	if err != nil {
		return err
	}
	s.nspill++
	s.spills = append(s.spills, b)
	for i := range sorted {
		if err := b.add(&sorted[i]); err != nil {
			return err
		}
	}
	if err := b.finish(); err != nil {
		return err
	}
	s.chunk = s.chunk[:0]
	return nil
}

// sortChunk returns the chunk in key order. Input that arrives process by
// process consists of a few long sorted runs, so the runs are merged
// (O(n log runs)); a chunk with very many runs is sorted instead.
func (s *tableSink) sortChunk() []trace.Record {
	c := s.chunk
	var bounds []int
	for i := 1; i < len(c); i++ {
		if keyLess(s.t, &c[i], &c[i-1]) {
			bounds = append(bounds, i)
			if len(bounds) > 4096 {
				return s.sortByIndex()
			}
		}
	}
	if len(bounds) == 0 {
		return c
	}
	bounds = append(bounds, len(c))
	var inputs []trace.Reader
	prev := 0
	for _, b := range bounds {
		inputs = append(inputs, trace.NewSliceReader(c[prev:b]))
		prev = b
	}
	if cap(s.merged) < len(c) {
		s.merged = make([]trace.Record, 0, len(c))
	}
	out := s.merged[:0]
	merged := trace.MergeFunc(func(a, b *trace.Record) bool { return keyLess(s.t, a, b) }, inputs...)
	buf := make([]trace.Record, 1024)
	for {
		n, err := merged.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			break
		}
	}
	s.merged = out
	return out
}

// sortByIndex returns the chunk in key order, records of equal keys in
// arrival order: it sorts the records' indices, ties broken by index, and
// gathers the records in that order. A stable sort of the records
// themselves (slices.SortStableFunc: insertion sort and in-place merges,
// O(n log² n) moves of 56-byte records) was most of the cost of closing
// a recording of tens of thousands of goroutines, whose processes arrive
// one after another.
func (s *tableSink) sortByIndex() []trace.Record {
	c := s.chunk
	if cap(s.order) < len(c) {
		s.order = make([]int32, len(c))
	}
	order := s.order[:len(c)]
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		switch {
		case keyLess(s.t, &c[i], &c[j]):
			return -1
		case keyLess(s.t, &c[j], &c[i]):
			return 1
		}
		return cmp.Compare(i, j)
	})
	if cap(s.merged) < len(c) {
		s.merged = make([]trace.Record, 0, len(c))
	}
	out := s.merged[:0]
	for _, i := range order {
		out = append(out, c[i])
	}
	s.merged = out
	return out
}

func (s *tableSink) spillPath(i int) string {
	return filepath.Join(s.w.tmp, fmt.Sprintf("spill-%s-%04d.parquet", s.t, i))
}

// groupRows is the target number of rows of a row group of the final
// table: the option, or 256 per process when that is larger. It never
// decreases, as the number of processes seen only grows; builder.add
// relies on that.
func (s *tableSink) groupRows() int {
	g := s.w.opts.GroupRows
	if p := 256 * s.w.stats.maxProcs(); p > g {
		g = min(p, 1<<22)
	}
	return g
}

// finish returns the table's row count and index.
func (s *tableSink) finish() (int64, []indexRow, error) {
	if s.spilling {
		// Merge the spilled runs with the last chunk, sorted in memory.
		last := s.sortChunk()
		s.chunk = nil // sortChunk made a sorted copy or returned the chunk itself
		if err := s.mergeSpills(trace.NewSliceReader(last)); err != nil {
			return 0, nil, err
		}
		s.chunk, s.merged = nil, nil
	}
	if s.final == nil { // only possible for an empty table
		b, err := newBuilder(s.t, s.finalPath(), s.w.unit, s.groupRows, false)
		if err != nil {
			return 0, nil, err
		}
		s.final = b
	}
	if err := s.final.finish(); err != nil {
		return 0, nil, err
	}
	return s.final.rows, s.final.index, nil
}

// maxFanIn bounds how many sorted runs are merged at once, and so the
// memory of the merge (a few MB per open run).
const maxFanIn = 16

// mergeSpills merges the spilled runs and last (the final chunk, sorted,
// in memory) into the table. With more than maxFanIn runs, runs are first
// merged maxFanIn at a time into longer runs.
func (s *tableSink) mergeSpills(last trace.Reader) error {
	for len(s.spills) > maxFanIn {
		b, err := newBuilder(s.t, s.spillPath(s.nspill), s.w.unit, func() int { return spillGroupRows }, true)
		if err != nil {
			return err
		}
		s.nspill++
		if err := s.merge(s.spills[:maxFanIn], nil, b); err != nil {
			b.abort()
			return err
		}
		s.spills = append(s.spills[maxFanIn:], b)
	}
	b, err := newBuilder(s.t, s.finalPath(), s.w.unit, s.groupRows, false)
	if err != nil {
		return err
	}
	s.final = b
	if err := s.merge(s.spills, last, b); err != nil {
		return err
	}
	s.spills = nil
	return nil
}

// merge merges the runs (and extra, when not nil) into b, finishes b's
// input and removes the runs' files.
func (s *tableSink) merge(runs []*builder, extra trace.Reader, b *builder) error {
	var inputs []trace.Reader
	var files []*tableFile
	defer func() {
		for _, f := range files {
			f.close()
		}
	}()
	for _, sp := range runs {
		f, err := openSpill(sp.path, s.t, s.w.unit, sp.index)
		if err != nil {
			return err
		}
		files = append(files, f)
		inputs = append(inputs, f.reader(newFilter(ReadOptions{})))
	}
	if extra != nil {
		inputs = append(inputs, extra)
	}
	merged := trace.MergeFunc(func(a, c *trace.Record) bool { return keyLess(s.t, a, c) }, inputs...)
	if err := trace.Each(merged, b.add); err != nil {
		return err
	}
	if b != s.final {
		if err := b.finish(); err != nil {
			return err
		}
	}
	for _, sp := range runs {
		if err := os.Remove(sp.path); err != nil {
			return err
		}
	}
	return nil
}

func (s *tableSink) abort() {
	if s.final != nil {
		s.final.abort()
	}
	for _, b := range s.spills {
		b.abort()
	}
}

// builder writes one table file: it cuts the key-ordered input into row
// groups (time windows that never span runs nor split one timestamp),
// sorted by process inside, and records where each process's rows are.
type builder struct {
	t       table
	path    string
	f       *os.File
	bw      *bufio.Writer
	gw      groupWriter
	target  func() int // rows per group; it never decreases
	atLeast int        // the last value of target read
	last    trace.Record
	group   int32
	rows    int64
	index   []indexRow
	done    bool
}

// tableWriter is what a table file is written through; tests replace it
// to simulate a full disk.
var tableWriter = func(f *os.File) io.Writer { return f }

// tableBuffers recycles the builders' 1 MiB write buffers: a store has a
// builder per table, and a large import one per spilled run besides.
var tableBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}

func newBuilder(t table, path string, unit int64, target func() int, fast bool) (*builder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := tableBuffers.Get().(*bufio.Writer)
	bw.Reset(tableWriter(f))
	return &builder{t: t, path: path, f: f, bw: bw, gw: newGroupWriter(t, bw, unit, fast), target: target}, nil
}

func (b *builder) add(r *trace.Record) error {
	if n := b.gw.pendingRows(); n > 0 {
		last := &b.last
		cut := r.Run != last.Run
		// The target only grows (with the processes seen), so a group
		// below the last target read needs no new reading.
		if !cut && n >= b.atLeast {
			b.atLeast = b.target()
		}
		if !cut && n >= b.atLeast {
			if b.t.timed() {
				cut = r.T != last.T
			} else {
				cut = r.Proc != last.Proc || r.Seq != last.Seq
			}
		}
		if cut {
			if err := b.flush(); err != nil {
				return err
			}
		}
	}
	b.last = *r
	b.gw.add(&b.last) // the builder's copy: r itself must not escape
	return nil
}

// maxRowGroups is the most row groups a Parquet file holds (its footer
// numbers them with 16-bit ordinals).
const maxRowGroups = 32767

// flush writes the buffered rows as one row group.
func (b *builder) flush() error {
	n := b.gw.pendingRows()
	if n == 0 {
		return nil
	}
	if b.group >= maxRowGroups {
		return fmt.Errorf("the %s table needs more than %d row groups, the most a Parquet file holds: every run starts a row group, and the trace reaches run %d",
			b.t, maxRowGroups, b.last.Run)
	}
	idx, err := b.gw.flush(b.group)
	if err != nil {
		return err
	}
	b.index = append(b.index, idx...)
	b.rows += int64(n)
	b.group++
	return nil
}

func (b *builder) finish() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.flush()
	if cerr := b.gw.close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = b.bw.Flush()
	}
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	// A finished run waiting to be merged keeps only its path and index.
	b.release()
	return err
}

// release gives the builder's write buffer back for another builder.
func (b *builder) release() {
	b.bw.Reset(nil)
	tableBuffers.Put(b.bw)
	b.bw, b.gw = nil, nil
}

func (b *builder) abort() {
	if !b.done {
		b.done = true
		b.gw.close()
		b.f.Close()
		b.release()
	}
	os.Remove(b.path)
}

// openSpill opens a spilled run, a table file the writer wrote at path.
func openSpill(path string, t table, unit int64, index []indexRow) (*tableFile, error) {
	dir := filepath.Dir(path)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return openTable(root, dir, filepath.Base(path), t, unit, index)
}
