package store

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/parscope/parscope/internal/regular"
	"github.com/parscope/parscope/trace"
)

// Store is an open .pst trace. Its methods stream records; none needs the
// whole trace in memory. A Store may be read by several goroutines through
// separate readers.
type Store struct {
	dir    string
	m      *Manifest
	tables [numTables]*tableFile
}

// Open opens the .pst at dir, checking its manifest and index. Every file
// is opened inside dir (os.Root): the manifest names its tables by plain
// file names, and a table that is not a regular file, or a symbolic link
// leading out of dir, is refused.
func Open(dir string) (*Store, error) {
	root, err := openRoot(dir)
	if err != nil {
		return nil, err
	}
	// Files opened through root stay open after it is closed.
	defer root.Close()
	m, err := readManifest(root, dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, m: m}
	var index []indexRow
	if len(m.Tables) > 0 {
		index, err = readIndex(root, dir)
		if err != nil {
			return nil, err
		}
	}
	if err := checkCounts(dir, m); err != nil {
		return nil, err
	}
	byTable := map[int32][]indexRow{}
	for _, ix := range index {
		byTable[ix.Table] = append(byTable[ix.Table], ix)
	}
	for t := table(0); t < numTables; t++ {
		info, ok := m.Tables[t.String()]
		if !ok {
			continue
		}
		tf, err := openTable(root, dir, info.File, t, m.TimeUnitNS, byTable[int32(t)])
		if err != nil {
			s.Close()
			return nil, err
		}
		if tf.rows != info.Rows {
			s.Close()
			return nil, fmt.Errorf("%s: has %d rows, the manifest says %d (the .pst is damaged)", tf.path, tf.rows, info.Rows)
		}
		s.tables[t] = tf
	}
	return s, nil
}

// checkCounts checks the manifest against itself: the records of each kind
// its statistics count must add up to the rows of the table that holds
// that kind, and a kind with records must have its table.
func checkCounts(dir string, m *Manifest) error {
	var want [numTables]int64
	for _, k := range trace.Kinds {
		n := m.Stats.Records[k.String()]
		if n < 0 {
			return fmt.Errorf("%s: the manifest counts %d %s records (the .pst is damaged)", filepath.Join(dir, manifestFile), n, k)
		}
		want[tableOf(k)] += n
	}
	for t := table(0); t < numTables; t++ {
		info, ok := m.Tables[t.String()]
		switch {
		case !ok && want[t] > 0:
			return fmt.Errorf("%s: the manifest counts %d records of table %s but lists no such table (the .pst is damaged)", filepath.Join(dir, manifestFile), want[t], t)
		case ok && info.Rows != want[t]:
			return fmt.Errorf("%s: the manifest lists %d rows in %s but counts %d records of its kinds (the .pst is damaged)", filepath.Join(dir, manifestFile), info.Rows, info.File, want[t])
		}
	}
	return nil
}

// Close releases the open files.
func (s *Store) Close() error {
	var first error
	for _, t := range s.tables {
		if t != nil {
			if err := t.close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Manifest returns the trace's manifest (header, table list and statistics).
func (s *Store) Manifest() *Manifest { return s.m }

// Header returns the trace's header.
func (s *Store) Header() *trace.Header { return &s.m.Header }

// Dir returns the directory the store was opened from.
func (s *Store) Dir() string { return s.dir }

// ReadOptions select what a reader returns. The zero value selects every
// timestamped record of every run.
type ReadOptions struct {
	Runs  []int32      // nil: every run
	Procs []int32      // nil: every process
	Kinds []trace.Kind // nil: every kind but BBV
	// From and To bound the time in ns: From <= T < To; To == 0 means no bound.
	From, To int64
}

// Records returns the selected records in time-merged order (run, time,
// process). Within one process, records of one kind keep their recorded
// order; records of different kinds with equal times come in table order
// (states, regions, messages, collectives, events, counters).
func (s *Store) Records(opts ReadOptions) trace.Reader {
	f := newFilter(opts)
	var rs []trace.Reader
	for t := table(0); t < numTables; t++ {
		if !t.timed() || s.tables[t] == nil || !f.wantsTable(t) {
			continue
		}
		rs = append(rs, s.tables[t].reader(f))
	}
	switch len(rs) {
	case 0:
		return trace.NewSliceReader(nil)
	case 1:
		return rs[0]
	}
	return trace.Merge(rs...)
}

// Process returns one process's records in time order.
func (s *Store) Process(run, proc int32) trace.Reader {
	return s.Records(ReadOptions{Runs: []int32{run}, Procs: []int32{proc}})
}

// BBV returns the basic block vector records in (run, process, interval)
// order; Kinds and the time bounds of opts are ignored.
func (s *Store) BBV(opts ReadOptions) trace.Reader {
	if s.tables[tBBV] == nil {
		return trace.NewSliceReader(nil)
	}
	f := newFilter(ReadOptions{Runs: opts.Runs, Procs: opts.Procs})
	return s.tables[tBBV].reader(f)
}

// readFilter is the compiled form of ReadOptions.
type readFilter struct {
	runs  map[int32]bool
	procs map[int32]bool
	kinds kindSet
	from  int64
	to    int64
}

func newFilter(o ReadOptions) readFilter {
	f := readFilter{from: o.From, to: o.To}
	if f.to == 0 {
		f.to = math.MaxInt64
	}
	if o.Runs != nil {
		f.runs = map[int32]bool{}
		for _, r := range o.Runs {
			f.runs[r] = true
		}
	}
	if o.Procs != nil {
		f.procs = map[int32]bool{}
		for _, p := range o.Procs {
			f.procs[p] = true
		}
	}
	if o.Kinds != nil {
		f.kinds = kindSet{}
		for _, k := range o.Kinds {
			f.kinds.add(k)
		}
	}
	return f
}

// kindSet is a set of record kinds, indexed by kind: the filter asks it
// once per row, which a map made a tenth of a pass's reading time. nil
// holds every kind.
type kindSet []bool

// add puts k in the set; a kind that is not valid is never in it.
func (s *kindSet) add(k trace.Kind) {
	if !k.Valid() {
		return
	}
	if int(k) >= len(*s) {
		*s = append(*s, make([]bool, int(k)+1-len(*s))...)
	}
	(*s)[k] = true
}

// has reports whether k is in the set; a kind read from a damaged column
// (out of range) is not.
func (s kindSet) has(k trace.Kind) bool { return int(k) < len(s) && s[k] }

// timeBound reports whether the reader selects a time range.
func (f *readFilter) timeBound() bool { return f.from != 0 || f.to != math.MaxInt64 }

func (f *readFilter) wantsTable(t table) bool {
	if f.kinds == nil {
		return true
	}
	for k, in := range f.kinds {
		if in && tableOf(trace.Kind(k)) == t {
			return true
		}
	}
	return false
}

// groupMeta describes one row group: its run and its process segments.
type groupMeta struct {
	run        int32
	rows       int64
	tmin, tmax int64
	segs       []indexRow
}

// tableFile is one open table with its index.
type tableFile struct {
	t      table
	path   string
	f      *os.File
	pf     *parquet.File
	unit   int64
	rows   int64
	groups []groupMeta
}

// openParquet opens the file name inside root (the .pst at dir) and checks
// that it is a regular file that starts and ends with Parquet's magic, so
// that an error never quotes the bytes of a file that is not a table.
func openParquet(root *os.Root, dir, name string) (*os.File, int64, error) {
	path := filepath.Join(dir, name)
	// Stat before opening: opening a named pipe would block.
	if fi, err := root.Stat(name); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	} else if err := regular.CheckMode(path, fi.Mode()); err != nil {
		return nil, 0, err
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file (a table of the .pst must be one)", path)
	}
	var head, tail [4]byte
	if st.Size() < 8 || readFull(f, head[:], 0) != nil || readFull(f, tail[:], st.Size()-4) != nil ||
		string(head[:]) != "PAR1" || string(tail[:]) != "PAR1" {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a Parquet file (want the magic PAR1 at its start and end; the .pst is damaged)", path)
	}
	return f, st.Size(), nil
}

func readFull(f *os.File, b []byte, off int64) error {
	_, err := f.ReadAt(b, off)
	return err
}

// readIndex reads the index of the .pst open as root at dir.
func readIndex(root *os.Root, dir string) ([]indexRow, error) {
	f, size, err := openParquet(root, dir, indexFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	path := filepath.Join(dir, indexFile)
	pf, err := parquet.OpenFile(f, size, parquetOpen...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	index := make([]indexRow, pf.NumRows())
	r := parquet.NewGenericReader[indexRow](pf)
	defer r.Close()
	n, err := r.Read(index)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return index[:n], nil
}

// parquetOpen are the options every Parquet file of a store is opened
// with. The store reads neither bloom filters nor page indexes (its own
// index says where each process's rows are), and a damaged page index
// made parquet-go panic (FuzzOpen).
var parquetOpen = []parquet.FileOption{parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true)}

// openTable opens the table file name inside root (the directory dir).
func openTable(root *os.Root, dir, name string, t table, unit int64, index []indexRow) (*tableFile, error) {
	path := filepath.Join(dir, name)
	f, size, err := openParquet(root, dir, name)
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, size, parquetOpen...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tf := &tableFile{t: t, path: path, f: f, pf: pf, unit: unit, rows: pf.NumRows()}
	ngroups := len(pf.RowGroups())
	tf.groups = make([]groupMeta, ngroups)
	for i := range tf.groups {
		tf.groups[i].tmin = math.MaxInt64
		tf.groups[i].tmax = math.MinInt64
		tf.groups[i].run = -1
	}
	for _, ix := range index {
		if ix.Group < 0 || int(ix.Group) >= ngroups {
			f.Close()
			return nil, fmt.Errorf("%s: index names row group %d of %d (the .pst is damaged)", path, ix.Group, ngroups)
		}
		g := &tf.groups[ix.Group]
		g.run = ix.Run
		g.rows += ix.Rows
		g.tmin = min(g.tmin, ix.TMin)
		g.tmax = max(g.tmax, ix.TMax)
		g.segs = append(g.segs, ix)
	}
	for i := range tf.groups {
		// The segments of a group are its processes' rows: back to back
		// from row 0, each non-empty and of the group's run. Readers slice
		// the decoded columns by them.
		g := &tf.groups[i]
		slices.SortFunc(g.segs, func(a, b indexRow) int { return cmp.Compare(a.First, b.First) })
		next := int64(0)
		for _, s := range g.segs {
			if s.First != next || s.Rows <= 0 || s.Rows > tf.rows || s.Run != g.run {
				f.Close()
				return nil, fmt.Errorf("%s: the index gives process %d of run %d rows %d..%d of row group %d, which do not follow the rows before them (from %d on, run %d; the .pst is damaged)",
					path, s.Proc, s.Run, s.First, s.First+s.Rows, i, next, g.run)
			}
			next += s.Rows
		}
	}
	for i, rg := range pf.RowGroups() {
		if tf.groups[i].rows != rg.NumRows() {
			f.Close()
			return nil, fmt.Errorf("%s: row group %d has %d rows, the index covers %d (the .pst is damaged)", path, i, rg.NumRows(), tf.groups[i].rows)
		}
		if want := len(columns[t]); len(rg.ColumnChunks()) != want {
			f.Close()
			return nil, fmt.Errorf("%s: row group %d has %d columns, want %d", path, i, len(rg.ColumnChunks()), want)
		}
	}
	return tf, nil
}

func (tf *tableFile) close() error { return tf.f.Close() }

// reader streams the table's selected records in key order.
func (tf *tableFile) reader(f readFilter) trace.Reader {
	return &tableReader{tf: tf, f: f}
}

type tableReader struct {
	tf  *tableFile
	f   readFilter
	g   int    // the next row group to hand out
	cur *group // the row group being returned
	pos int    // the next row of cur to return
	// ahead receives the next row group, decoded by a goroutine while
	// the caller works on the current one; nil when none is on its way.
	ahead chan *group
	spare *group
	sc    *decodeScratch
	err   error
}

// maxAheadRows is the largest row group decoded ahead: past it, the
// memory of a second group outweighs the overlap.
var maxAheadRows int64 = 1 << 19

// group is one row group decoded: its selected rows' columns and the
// order to return them in.
type group struct {
	g    int       // its index in the table
	cols [][]int64 // decoded columns (of the selected segments)
	// order lists the decoded rows to return, in key order, filtered;
	// gather then puts them first in cols, in that order: rows of them.
	order []int32
	rows  int
	segs  []segment
	err   error
	sc    *decodeScratch // shared with the reader's other group
}

// decodeScratch is what decoding a row group uses and lets go of: a
// reader's groups decode one at a time, so they share one.
type decodeScratch struct {
	// pages for the two decoding goroutines
	pages [2]pageScratch
	// the radix sort's keys and row indexes, twice
	keys, keys2 []uint64
	idx, idx2   []int32
	// cols is the set of columns gather fills; it swaps them with the
	// group's
	cols [][]int64
}

// segment is a process's rows among the decoded ones: [pos, end) of the
// decoded columns, which the index says are process proc of run run.
type segment struct {
	pos, end  int
	run, proc int32
	first     int64 // the row in the row group that pos holds
}

// Every table's first two columns are run and proc.
const (
	runColumn  = 0
	procColumn = 1
)

// pageScratch holds the typed buffers one goroutine decodes pages into.
type pageScratch struct {
	i32 []int32
	f64 []float64
}

func (r *tableReader) Read(buf []trace.Record) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for r.cur == nil || r.pos >= r.cur.rows {
		if r.g >= len(r.tf.groups) {
			r.cur = nil
			return 0, io.EOF
		}
		d := r.next()
		if d.err != nil {
			r.err = fmt.Errorf("%s: row group %d: %w", r.tf.path, d.g, d.err)
			return 0, r.err
		}
		r.spare, r.cur, r.pos = r.cur, d, 0
		r.g++
		r.decodeAhead()
	}
	d := r.cur
	n := min(len(buf), d.rows-r.pos)
	build := builders[r.tf.t]
	unit := r.tf.unit
	for i := range n {
		build(&buf[i], d.cols, r.pos+i, unit)
	}
	r.pos += n
	return n, nil
}

// next returns row group r.g decoded: the one decoded ahead, or decoded
// now.
func (r *tableReader) next() *group {
	if r.ahead != nil {
		d := <-r.ahead
		r.ahead = nil
		return d
	}
	d := r.newGroup()
	d.g = r.g
	d.err = d.load(r.tf, &r.f)
	return d
}

// newGroup returns the spare group to decode into, or a new one.
func (r *tableReader) newGroup() *group {
	d := r.spare
	r.spare = nil
	if d == nil {
		if r.sc == nil {
			r.sc = &decodeScratch{}
		}
		d = &group{sc: r.sc}
	}
	return d
}

// decodeAhead starts decoding row group r.g in a goroutine, into the
// spare buffers, when there is one to decode and it is not too large.
// The goroutine only reads the table file and the filter, which do not
// change; a reader dropped before it ends leaves it to finish on its own.
func (r *tableReader) decodeAhead() {
	if r.g >= len(r.tf.groups) || r.tf.groups[r.g].rows > maxAheadRows {
		return
	}
	d := r.newGroup()
	d.g = r.g
	ch := make(chan *group, 1)
	r.ahead = ch
	tf, f := r.tf, &r.f
	go func() {
		d.err = d.load(tf, f)
		ch <- d
	}()
}

// load decodes row group d.g's selected segments and puts them in key
// order.
func (d *group) load(tf *tableFile, f *readFilter) error {
	d.order, d.rows = d.order[:0], 0
	g := d.g
	gm := &tf.groups[g]
	if f.runs != nil && !f.runs[gm.run] {
		return nil
	}
	// Skip a group outside the time bounds, if any: without bounds every
	// record is read, before time 0 too, whatever the index says.
	if tf.t.timed() && f.timeBound() && (gm.tmax < f.from || gm.tmin >= f.to) {
		return nil
	}
	var sel []indexRow
	var selRows int64
	for _, s := range gm.segs {
		if f.procs == nil || f.procs[s.Proc] {
			sel = append(sel, s)
			selRows += s.Rows
		}
	}
	if len(sel) == 0 {
		return nil
	}
	// The ranges of rows to decode: the whole group, or each selected
	// segment (seeking past the others) when they are a small part of it.
	type span struct{ first, rows int64 }
	var spans []span
	d.segs = d.segs[:0]
	if selRows*2 >= gm.rows {
		spans = []span{{0, gm.rows}}
		for _, s := range sel {
			d.segs = append(d.segs, segment{int(s.First), int(s.First + s.Rows), s.Run, s.Proc, s.First})
		}
	} else {
		off := 0
		for _, s := range sel {
			spans = append(spans, span{s.First, s.Rows})
			d.segs = append(d.segs, segment{off, off + int(s.Rows), s.Run, s.Proc, s.First})
			off += int(s.Rows)
		}
	}
	n := 0
	for _, sp := range spans {
		n += int(sp.rows)
	}
	cols := columns[tf.t]
	if len(d.cols) != len(cols) {
		d.cols = make([][]int64, len(cols))
	}
	for c := range d.cols {
		if cap(d.cols[c]) < n {
			d.cols[c] = make([]int64, n)
		}
		d.cols[c] = d.cols[c][:n]
	}
	rg := tf.pf.RowGroups()[g]
	decodeCol := func(c int, sc *pageScratch) error {
		off := 0
		for _, sp := range spans {
			if err := decodeColumn(rg.ColumnChunks()[c], cols[c].typ, sp.first, d.cols[c][off:off+int(sp.rows)], sc); err != nil {
				return fmt.Errorf("column %s: %w", cols[c].name, err)
			}
			off += int(sp.rows)
		}
		return nil
	}
	// The time column and the sort on it run beside the other columns.
	tc := timeColumn[tf.t]
	var wg sync.WaitGroup
	var terr error
	wg.Go(func() {
		if terr = decodeCol(tc, &d.sc.pages[1]); terr == nil && tf.t.timed() {
			d.sortByTime(tf)
		}
	})
	var err error
	for c := range cols {
		if c != tc && err == nil {
			err = decodeCol(c, &d.sc.pages[0])
		}
	}
	wg.Wait()
	if err == nil {
		err = terr
	}
	if err != nil {
		return err
	}
	// Readers select rows by the index: rows that are not the process and
	// run it names would be returned as another process's.
	for _, s := range d.segs {
		runs, procs := d.cols[runColumn][s.pos:s.end], d.cols[procColumn][s.pos:s.end]
		for i := range procs {
			if procs[i] != int64(s.proc) || runs[i] != int64(s.run) {
				return fmt.Errorf("the index says row %d is process %d of run %d, the table holds process %d of run %d there (the .pst is damaged)",
					s.first+int64(i), s.proc, s.run, procs[i], runs[i])
			}
		}
	}
	if !tf.t.timed() {
		for _, s := range d.segs {
			for i := s.pos; i < s.end; i++ {
				d.order = append(d.order, int32(i))
			}
		}
	}
	d.filter(tf, f)
	d.gather()
	return nil
}

// gather puts each column's rows in d.order, so that the rows to return
// are 0..d.rows-1 of d.cols: the random accesses of the reordering are
// made here, where a group decoded ahead makes them beside the caller's
// work, and building records reads the columns in sequence.
func (d *group) gather() {
	d.rows = len(d.order)
	if len(d.sc.cols) != len(d.cols) {
		d.sc.cols = make([][]int64, len(d.cols))
	}
	for c, col := range d.cols {
		out := d.sc.cols[c]
		if cap(out) < d.rows {
			out = make([]int64, d.rows, max(d.rows, len(col)))
		}
		out = out[:d.rows]
		for k, j := range d.order {
			out[k] = col[j]
		}
		d.cols[c], d.sc.cols[c] = out, col
	}
}

// decodeColumn reads rows [first, first+len(dst)) of a column chunk into dst.
func decodeColumn(cc parquet.ColumnChunk, typ colType, first int64, dst []int64, sc *pageScratch) error {
	pages := cc.Pages()
	defer pages.Close()
	if first > 0 {
		if err := pages.SeekToRow(first); err != nil {
			return err
		}
	}
	k := 0
	for k < len(dst) {
		p, err := pages.ReadPage()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%d values missing", len(dst)-k)
			}
			return err
		}
		k, err = decodePage(p, typ, dst, k, sc)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
	return nil
}

// decodePage copies a page's values into dst starting at k and returns the
// new position. Doubles are stored as their bits.
func decodePage(p parquet.Page, typ colType, dst []int64, k int, sc *pageScratch) (int, error) {
	vals := p.Values()
	for k < len(dst) {
		var n int
		var err error
		switch typ {
		case colI32:
			rd, ok := vals.(parquet.Int32Reader)
			if !ok {
				return k, fmt.Errorf("page of type %s cannot be read as int32", p.Type())
			}
			if sc.i32 == nil {
				sc.i32 = make([]int32, 8192)
			}
			n, err = rd.ReadInt32s(sc.i32[:min(len(sc.i32), len(dst)-k)])
			out := dst[k : k+n]
			for i, v := range sc.i32[:n] {
				out[i] = int64(v)
			}
		case colI64:
			rd, ok := vals.(parquet.Int64Reader)
			if !ok {
				return k, fmt.Errorf("page of type %s cannot be read as int64", p.Type())
			}
			n, err = rd.ReadInt64s(dst[k:])
		case colF64:
			rd, ok := vals.(parquet.DoubleReader)
			if !ok {
				return k, fmt.Errorf("page of type %s cannot be read as double", p.Type())
			}
			if sc.f64 == nil {
				sc.f64 = make([]float64, 8192)
			}
			n, err = rd.ReadDoubles(sc.f64[:min(len(sc.f64), len(dst)-k)])
			out := dst[k : k+n]
			for i, v := range sc.f64[:n] {
				out[i] = int64(math.Float64bits(v))
			}
		}
		k += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				return k, nil
			}
			return k, err
		}
		if n == 0 {
			return k, nil
		}
	}
	return k, nil
}

// sortByTime puts the decoded segments in time order into d.order with a
// stable LSD radix sort on the time column. Segments are stored in process
// order and each is in time order, so the result is ordered by time, then
// process, then stream order.
func (d *group) sortByTime(tf *tableFile) {
	tcol := d.cols[timeColumn[tf.t]]
	if len(d.segs) == 1 {
		for i := d.segs[0].pos; i < d.segs[0].end; i++ {
			d.order = append(d.order, int32(i))
		}
		return
	}
	n := 0
	tmin := int64(math.MaxInt64)
	for _, s := range d.segs {
		n += s.end - s.pos
		tmin = min(tmin, tcol[s.pos])
	}
	keys, idx := growU64(d.sc.keys, n), growI32(d.sc.idx, n)
	// One pass extracts the keys and counts the digits of the first three
	// passes (33 bits of time range, enough for almost every row group).
	const digit, mask, ahead = 11, 1<<11 - 1, 3
	var counts [ahead][1 << digit]int
	var maxKey uint64
	k := 0
	for _, s := range d.segs {
		for i := s.pos; i < s.end; i++ {
			key := uint64(tcol[i] - tmin)
			keys[k], idx[k] = key, int32(i)
			maxKey |= key
			counts[0][key&mask]++
			counts[1][(key>>digit)&mask]++
			counts[2][(key>>(2*digit))&mask]++
			k++
		}
	}
	keys2, idx2 := growU64(d.sc.keys2, n), growI32(d.sc.idx2, n)
	var count [1 << digit]int
	for pass, shift := 0, 0; shift < bits.Len64(maxKey); pass, shift = pass+1, shift+digit {
		if pass < ahead {
			count = counts[pass]
		} else {
			clear(count[:])
			for _, key := range keys {
				count[(key>>shift)&mask]++
			}
		}
		sum := 0
		for d := range count {
			c := count[d]
			count[d] = sum
			sum += c
		}
		for j, key := range keys {
			dg := (key >> shift) & mask
			keys2[count[dg]], idx2[count[dg]] = key, idx[j]
			count[dg]++
		}
		keys, keys2 = keys2, keys
		idx, idx2 = idx2, idx
	}
	d.order = append(d.order, idx...)
	d.sc.keys, d.sc.keys2, d.sc.idx, d.sc.idx2 = keys, keys2, idx, idx2
}

// filter drops from d.order the rows outside the requested kinds and times.
func (d *group) filter(tf *tableFile, f *readFilter) {
	timeBound := f.timeBound()
	kc := kindColumn[tf.t]
	if !timeBound && (f.kinds == nil || kc < 0 && f.kinds.has(defaultKind[tf.t])) {
		return
	}
	tcol := d.cols[timeColumn[tf.t]]
	unit := tf.unit
	out := d.order[:0]
	for _, i := range d.order {
		if tf.t.timed() && timeBound {
			if t := tcol[i] * unit; t < f.from || t >= f.to {
				continue
			}
		}
		if f.kinds != nil {
			k := defaultKind[tf.t]
			if kc >= 0 {
				k = trace.Kind(d.cols[kc][i])
			}
			if !f.kinds.has(k) {
				continue
			}
		}
		out = append(out, i)
	}
	d.order = out
}

func growU64(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n)
	}
	return b[:n]
}

func growI32(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

// Procs returns the processes of a run that have records in any table, in order.
func (s *Store) Procs(run int32) []int32 {
	seen := map[int32]bool{}
	for _, t := range s.tables {
		if t == nil {
			continue
		}
		for _, g := range t.groups {
			if g.run != run {
				continue
			}
			for _, sg := range g.segs {
				seen[sg.Proc] = true
			}
		}
	}
	out := make([]int32, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// ProcSpan is the time span of one process's timed records: the time of
// its first record and of its last (record times, not completion times).
type ProcSpan struct {
	Run, Proc   int32
	First, Last int64
}

// ProcSpans returns the span of every process of every run that has timed
// records, ordered by run and process. It reads the index only, not the
// tables.
func (s *Store) ProcSpans() []ProcSpan {
	type key struct{ run, proc int32 }
	spans := map[key]*ProcSpan{}
	for _, t := range s.tables {
		if t == nil || !t.t.timed() {
			continue
		}
		for _, g := range t.groups {
			for _, sg := range g.segs {
				k := key{sg.Run, sg.Proc}
				sp := spans[k]
				if sp == nil {
					spans[k] = &ProcSpan{Run: sg.Run, Proc: sg.Proc, First: sg.TMin, Last: sg.TMax}
					continue
				}
				sp.First = min(sp.First, sg.TMin)
				sp.Last = max(sp.Last, sg.TMax)
			}
		}
	}
	out := make([]ProcSpan, 0, len(spans))
	for _, sp := range spans {
		out = append(out, *sp)
	}
	slices.SortFunc(out, func(a, b ProcSpan) int {
		if a.Run != b.Run {
			return cmp.Compare(a.Run, b.Run)
		}
		return cmp.Compare(a.Proc, b.Proc)
	})
	return out
}
