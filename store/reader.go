package store

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/parquet-go/parquet-go"

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

// Open opens the .pst at dir, checking its manifest and index.
func Open(dir string) (*Store, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, m: m}
	var index []indexRow
	if len(m.Tables) > 0 {
		index, err = parquet.ReadFile[indexRow](filepath.Join(dir, indexFile))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, indexFile), err)
		}
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
		tf, err := openTable(filepath.Join(dir, info.File), t, m.TimeUnitNS, byTable[int32(t)])
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
	kinds map[trace.Kind]bool
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
		f.kinds = map[trace.Kind]bool{}
		for _, k := range o.Kinds {
			f.kinds[k] = true
		}
	}
	return f
}

func (f *readFilter) wantsTable(t table) bool {
	if f.kinds == nil {
		return true
	}
	for k := range f.kinds {
		if tableOf(k) == t {
			return true
		}
	}
	return false
}

func (f *readFilter) keep(t table, r *trace.Record) bool {
	if f.kinds != nil && !f.kinds[r.Kind] {
		return false
	}
	if t.timed() && (r.T < f.from || r.T >= f.to) {
		return false
	}
	return true
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

func openTable(path string, t table, unit int64, index []indexRow) (*tableFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipBloomFilters(true))
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
	tf    *tableFile
	f     readFilter
	g     int
	recs  []trace.Record // decoded group (or selected segments)
	order []int32        // indices into recs in key order, filtered
	pos   int
	segs  []segment
	// radix sort buffers
	keys, keys2 []uint64
	idx, idx2   []int32
	i32         []int32
	i64         []int64
	f64         []float64
	err         error
}

type segment struct{ pos, end int }

func (r *tableReader) Read(buf []trace.Record) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for r.pos >= len(r.order) {
		if r.g >= len(r.tf.groups) {
			return 0, io.EOF
		}
		g := r.g
		r.g++
		if err := r.load(g); err != nil {
			r.err = fmt.Errorf("%s: row group %d: %w", r.tf.path, g, err)
			return 0, r.err
		}
	}
	n := min(len(buf), len(r.order)-r.pos)
	for i, j := range r.order[r.pos : r.pos+n] {
		buf[i] = r.recs[j]
	}
	r.pos += n
	return n, nil
}

// load decodes group g's selected segments into r.out in key order.
func (r *tableReader) load(g int) error {
	r.order, r.pos = r.order[:0], 0
	gm := &r.tf.groups[g]
	if r.f.runs != nil && !r.f.runs[gm.run] {
		return nil
	}
	if r.tf.t.timed() && (gm.tmax < r.f.from || gm.tmin >= r.f.to) {
		return nil
	}
	rg := r.tf.pf.RowGroups()[g]
	var sel []indexRow
	var selRows int64
	for _, s := range gm.segs {
		if r.f.procs == nil || r.f.procs[s.Proc] {
			sel = append(sel, s)
			selRows += s.Rows
		}
	}
	if len(sel) == 0 {
		return nil
	}
	r.segs = r.segs[:0]
	if selRows*2 >= gm.rows {
		// Decode the whole group, then keep the selected segments.
		if err := r.decode(rg, 0, gm.rows, 0); err != nil {
			return err
		}
		for _, s := range sel {
			r.segs = append(r.segs, segment{int(s.First), int(s.First + s.Rows)})
		}
	} else {
		// Seek to each selected segment.
		off := 0
		for _, s := range sel {
			if err := r.decode(rg, s.First, s.Rows, off); err != nil {
				return err
			}
			r.segs = append(r.segs, segment{off, off + int(s.Rows)})
			off += int(s.Rows)
		}
	}
	r.merge()
	return nil
}

// decode reads rows [first, first+n) of every column of rg into r.recs[off:].
func (r *tableReader) decode(rg parquet.RowGroup, first, n int64, off int) error {
	need := off + int(n)
	if cap(r.recs) < need {
		grown := make([]trace.Record, need)
		copy(grown, r.recs[:off])
		r.recs = grown
	}
	r.recs = r.recs[:need]
	recs := r.recs[off:need]
	def := trace.Record{Kind: defaultKind[r.tf.t], Peer: trace.NoPeer, Seq: trace.NoRequest}
	for i := range recs {
		recs[i] = def
	}
	for ci, col := range columns[r.tf.t] {
		if err := r.decodeColumn(rg.ColumnChunks()[ci], col, first, recs); err != nil {
			return fmt.Errorf("column %s: %w", col.name, err)
		}
	}
	return nil
}

func (r *tableReader) decodeColumn(cc parquet.ColumnChunk, col column, first int64, recs []trace.Record) error {
	pages := cc.Pages()
	defer pages.Close()
	if first > 0 {
		if err := pages.SeekToRow(first); err != nil {
			return err
		}
	}
	k := 0
	for k < len(recs) {
		p, err := pages.ReadPage()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%d values missing", len(recs)-k)
			}
			return err
		}
		k, err = r.decodePage(p, col, recs, k)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
	return nil
}

// decodePage copies a page's values into recs starting at k and returns
// the new position.
func (r *tableReader) decodePage(p parquet.Page, col column, recs []trace.Record, k int) (int, error) {
	vals := p.Values()
	unit := int64(1)
	if col.time {
		unit = r.tf.unit
	}
	for k < len(recs) {
		var n int
		var err error
		switch col.typ {
		case colI32:
			rd, ok := vals.(parquet.Int32Reader)
			if !ok {
				return k, fmt.Errorf("page of type %s cannot be read as int32", p.Type())
			}
			if r.i32 == nil {
				r.i32 = make([]int32, 4096)
			}
			m := min(len(r.i32), len(recs)-k)
			n, err = rd.ReadInt32s(r.i32[:m])
			for i, v := range r.i32[:n] {
				col.set(&recs[k+i], int64(v))
			}
		case colI64:
			rd, ok := vals.(parquet.Int64Reader)
			if !ok {
				return k, fmt.Errorf("page of type %s cannot be read as int64", p.Type())
			}
			if r.i64 == nil {
				r.i64 = make([]int64, 4096)
			}
			m := min(len(r.i64), len(recs)-k)
			n, err = rd.ReadInt64s(r.i64[:m])
			for i, v := range r.i64[:n] {
				col.set(&recs[k+i], v*unit)
			}
		case colF64:
			rd, ok := vals.(parquet.DoubleReader)
			if !ok {
				return k, fmt.Errorf("page of type %s cannot be read as double", p.Type())
			}
			if r.f64 == nil {
				r.f64 = make([]float64, 4096)
			}
			m := min(len(r.f64), len(recs)-k)
			n, err = rd.ReadDoubles(r.f64[:m])
			for i, v := range r.f64[:n] {
				col.set(&recs[k+i], int64(math.Float64bits(v)))
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

// merge puts the decoded segments into r.out in key order: for timed
// tables a stable LSD radix sort of the rows by time (segments are in
// process order and each is in time order, so the result is ordered by
// time, then process, then stream order); for BBVs the concatenation.
func (r *tableReader) merge() {
	recs := r.recs
	if !r.tf.t.timed() || len(r.segs) == 1 {
		for _, s := range r.segs {
			for i := s.pos; i < s.end; i++ {
				if r.f.keep(r.tf.t, &recs[i]) {
					r.order = append(r.order, int32(i))
				}
			}
		}
		return
	}
	n := 0
	tmin := int64(math.MaxInt64)
	for _, s := range r.segs {
		n += s.end - s.pos
		tmin = min(tmin, recs[s.pos].T)
	}
	keys, idx := growU64(r.keys, n), growI32(r.idx, n)
	var maxKey uint64
	k := 0
	for _, s := range r.segs {
		for i := s.pos; i < s.end; i++ {
			key := uint64(recs[i].T-tmin) / uint64(r.tf.unit)
			keys[k], idx[k] = key, int32(i)
			maxKey |= key
			k++
		}
	}
	keys2, idx2 := growU64(r.keys2, n), growI32(r.idx2, n)
	const digit = 11
	var count [1 << digit]int
	for shift := 0; shift < bits.Len64(maxKey); shift += digit {
		clear(count[:])
		for _, key := range keys {
			count[(key>>shift)&(1<<digit-1)]++
		}
		sum := 0
		for d := range count {
			c := count[d]
			count[d] = sum
			sum += c
		}
		for j, key := range keys {
			d := (key >> shift) & (1<<digit - 1)
			keys2[count[d]], idx2[count[d]] = key, idx[j]
			count[d]++
		}
		keys, keys2 = keys2, keys
		idx, idx2 = idx2, idx
	}
	if r.f.kinds == nil && r.f.from == 0 && r.f.to == math.MaxInt64 {
		r.order = append(r.order, idx...)
	} else {
		for _, i := range idx {
			if r.f.keep(r.tf.t, &recs[i]) {
				r.order = append(r.order, i)
			}
		}
	}
	r.keys, r.keys2, r.idx, r.idx2 = keys, keys2, idx, idx2
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
