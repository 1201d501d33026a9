package store

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/parscope/parscope/trace"
)

// table identifies one record table of a .pst.
type table int

const (
	tStates table = iota
	tRegions
	tMessages
	tCollectives
	tEvents
	tCounters
	tBBV
	numTables
)

var tableNames = [numTables]string{"states", "regions", "messages", "collectives", "events", "counters", "bbv"}

func (t table) String() string { return tableNames[t] }

// file is the table's file name inside the .pst directory.
func (t table) file() string { return tableNames[t] + ".parquet" }

// timed reports whether the table is laid out by time (every table but bbv).
func (t table) timed() bool { return t != tBBV }

// tableOf maps a record kind to the table that stores it.
func tableOf(k trace.Kind) table {
	switch k {
	case trace.KindState:
		return tStates
	case trace.KindEnter, trace.KindExit:
		return tRegions
	case trace.KindSend, trace.KindRecv:
		return tMessages
	case trace.KindCollective:
		return tCollectives
	case trace.KindEvent:
		return tEvents
	case trace.KindCounter:
		return tCounters
	case trace.KindBBV:
		return tBBV
	}
	return -1
}

// The row types give each table its Parquet schema (column order = field
// order). Times are stored in units of the manifest's time_unit_ns; the
// columns documented in docs/format.md follow these definitions.

type stateRow struct {
	Run   int32 `parquet:"run"`
	Proc  int32 `parquet:"proc"`
	T     int64 `parquet:"t,delta"`
	State int32 `parquet:"state"`
}

type regionRow struct {
	Run    int32 `parquet:"run"`
	Proc   int32 `parquet:"proc"`
	T      int64 `parquet:"t,delta"`
	Kind   int32 `parquet:"kind"`
	Region int32 `parquet:"region"`
}

type messageRow struct {
	Run     int32 `parquet:"run"`
	Proc    int32 `parquet:"proc"`
	T       int64 `parquet:"t,delta"`
	End     int64 `parquet:"end,delta"`
	Kind    int32 `parquet:"kind"`
	Peer    int32 `parquet:"peer"`
	Bytes   int64 `parquet:"bytes"`
	Tag     int32 `parquet:"tag"`
	Comm    int32 `parquet:"comm"`
	Request int32 `parquet:"request"`
	Flags   int32 `parquet:"flags"`
}

type collectiveRow struct {
	Run   int32 `parquet:"run"`
	Proc  int32 `parquet:"proc"`
	T     int64 `parquet:"t,delta"`
	End   int64 `parquet:"end,delta"`
	Op    int32 `parquet:"op"`
	Root  int32 `parquet:"root"`
	Bytes int64 `parquet:"bytes"`
	Comm  int32 `parquet:"comm"`
}

type eventRow struct {
	Run   int32 `parquet:"run"`
	Proc  int32 `parquet:"proc"`
	T     int64 `parquet:"t,delta"`
	Event int32 `parquet:"event"`
	Value int64 `parquet:"value"`
}

type counterRow struct {
	Run     int32   `parquet:"run"`
	Proc    int32   `parquet:"proc"`
	T       int64   `parquet:"t,delta"`
	Counter int32   `parquet:"counter"`
	Value   float64 `parquet:"value"`
}

type bbvRow struct {
	Run      int32 `parquet:"run"`
	Proc     int32 `parquet:"proc"`
	Interval int32 `parquet:"interval"`
	T        int64 `parquet:"t,delta"`
	Block    int32 `parquet:"block"`
	Count    int64 `parquet:"count"`
}

// colType is the physical type of a column as read back.
type colType uint8

const (
	colI32 colType = iota
	colI64
	colF64
)

// column names a Parquet column and gives its physical type as read back.
type column struct {
	name string
	typ  colType
}

// columns lists, per table, its columns in schema order.
var columns = [numTables][]column{
	tStates:      {{"run", colI32}, {"proc", colI32}, {"t", colI64}, {"state", colI32}},
	tRegions:     {{"run", colI32}, {"proc", colI32}, {"t", colI64}, {"kind", colI32}, {"region", colI32}},
	tMessages:    {{"run", colI32}, {"proc", colI32}, {"t", colI64}, {"end", colI64}, {"kind", colI32}, {"peer", colI32}, {"bytes", colI64}, {"tag", colI32}, {"comm", colI32}, {"request", colI32}, {"flags", colI32}},
	tCollectives: {{"run", colI32}, {"proc", colI32}, {"t", colI64}, {"end", colI64}, {"op", colI32}, {"root", colI32}, {"bytes", colI64}, {"comm", colI32}},
	tEvents:      {{"run", colI32}, {"proc", colI32}, {"t", colI64}, {"event", colI32}, {"value", colI64}},
	tCounters:    {{"run", colI32}, {"proc", colI32}, {"t", colI64}, {"counter", colI32}, {"value", colF64}},
	tBBV:         {{"run", colI32}, {"proc", colI32}, {"interval", colI32}, {"t", colI64}, {"block", colI32}, {"count", colI64}},
}

// timeColumn is the position of each table's t column; kindColumn that of
// its kind column, or -1 for tables of a single kind.
var (
	timeColumn = [numTables]int{2, 2, 2, 2, 2, 2, 3}
	kindColumn = [numTables]int{-1, 3, 4, -1, -1, -1, -1}
)

// defaultKind is the kind of records of tables that hold a single kind.
var defaultKind = [numTables]trace.Kind{
	tStates: trace.KindState, tCollectives: trace.KindCollective, tEvents: trace.KindEvent,
	tCounters: trace.KindCounter, tBBV: trace.KindBBV,
}

// builders assemble row i of a table's decoded columns into a Record; the
// fields a kind does not use get their defaults (Record.Canonical).
var builders = [numTables]func(dst *trace.Record, c [][]int64, i int, unit int64){
	tStates: func(d *trace.Record, c [][]int64, i int, u int64) {
		*d = trace.Record{Kind: trace.KindState, Run: int32(c[0][i]), Proc: int32(c[1][i]), T: c[2][i] * u, ID: int32(c[3][i]), Peer: trace.NoPeer, Seq: trace.NoRequest}
	},
	tRegions: func(d *trace.Record, c [][]int64, i int, u int64) {
		*d = trace.Record{Kind: trace.Kind(c[3][i]), Run: int32(c[0][i]), Proc: int32(c[1][i]), T: c[2][i] * u, ID: int32(c[4][i]), Peer: trace.NoPeer, Seq: trace.NoRequest}
	},
	tMessages: func(d *trace.Record, c [][]int64, i int, u int64) {
		*d = trace.Record{Kind: trace.Kind(c[4][i]), Run: int32(c[0][i]), Proc: int32(c[1][i]), T: c[2][i] * u, End: c[3][i] * u,
			Peer: int32(c[5][i]), Value: c[6][i], Tag: int32(c[7][i]), Comm: int32(c[8][i]), Seq: int32(c[9][i]), Flags: uint8(c[10][i])}
	},
	tCollectives: func(d *trace.Record, c [][]int64, i int, u int64) {
		*d = trace.Record{Kind: trace.KindCollective, Run: int32(c[0][i]), Proc: int32(c[1][i]), T: c[2][i] * u, End: c[3][i] * u,
			ID: int32(c[4][i]), Peer: int32(c[5][i]), Value: c[6][i], Comm: int32(c[7][i]), Seq: trace.NoRequest}
	},
	tEvents: func(d *trace.Record, c [][]int64, i int, u int64) {
		*d = trace.Record{Kind: trace.KindEvent, Run: int32(c[0][i]), Proc: int32(c[1][i]), T: c[2][i] * u, ID: int32(c[3][i]), Value: c[4][i], Peer: trace.NoPeer, Seq: trace.NoRequest}
	},
	tCounters: func(d *trace.Record, c [][]int64, i int, u int64) {
		*d = trace.Record{Kind: trace.KindCounter, Run: int32(c[0][i]), Proc: int32(c[1][i]), T: c[2][i] * u, ID: int32(c[3][i]), Value: c[4][i], Peer: trace.NoPeer, Seq: trace.NoRequest}
	},
	tBBV: func(d *trace.Record, c [][]int64, i int, u int64) {
		*d = trace.Record{Kind: trace.KindBBV, Run: int32(c[0][i]), Proc: int32(c[1][i]), Seq: int32(c[2][i]), T: c[3][i] * u, ID: int32(c[4][i]), Value: c[5][i], Peer: trace.NoPeer}
	},
}

// groupWriter buffers one table's records as typed Parquet rows and writes
// them as row groups. Rows are bucketed by process as they arrive, so a
// row group comes out sorted by process (then time, or interval) without
// sorting or copying records.
type groupWriter interface {
	add(r *trace.Record)
	pendingRows() int
	// flush hands the buffered rows over to be written as row group number
	// group and returns the index entries of its process segments. Errors
	// of the write come back from a later flush or from close.
	flush(group int32) ([]indexRow, error)
	// close waits for the last row group and writes the file's footer. It
	// must be called, even after an error, to stop the encoding goroutine.
	close() error
}

// bucket holds one process's rows of the current row group.
type bucket[R any] struct {
	rows        []R
	first, last int64 // time (ns) or interval of the first and last row
	run         int32
}

type genericGroupWriter[R any] struct {
	w       *parquet.GenericWriter[R]
	conv    func(dst *R, r *trace.Record, d divider)
	div     divider
	timed   bool
	buckets []bucket[R] // by process, for processes below denseBuckets
	lo, hi  int32       // dense processes with rows in the current group
	far     map[int32]*bucket[R]
	farUsed []int32 // processes of far with rows in the current group
	n       int
	// Row groups are encoded by a background goroutine while the next one
	// fills: spare is the buffer not being written, done reports each write.
	spare   []R
	work    chan []R
	done    chan writeResult[R]
	pending bool
}

type writeResult[R any] struct {
	rows []R
	err  error
}

// encode runs in its own goroutine and writes each row group it receives.
func (g *genericGroupWriter[R]) encode() {
	for rows := range g.work {
		_, err := g.w.Write(rows)
		if err == nil {
			err = g.w.Flush()
		}
		g.done <- writeResult[R]{rows[:0], err}
	}
	close(g.done)
}

// wait waits for the row group being written, if any, and takes back its buffer.
func (g *genericGroupWriter[R]) wait() error {
	if !g.pending {
		return nil
	}
	g.pending = false
	res := <-g.done
	g.spare = res.rows
	return res.err
}

// denseBuckets is the number of processes whose buckets are kept in a
// slice; a process id above it (a sparse numbering, up to trace.MaxProcs)
// gets its bucket from a map so that one large id costs one bucket.
const denseBuckets = 1 << 16

// bucket returns process p's bucket, noting it as used in the current group.
func (g *genericGroupWriter[R]) bucket(p int32) *bucket[R] {
	if p >= denseBuckets {
		if g.far == nil {
			g.far = map[int32]*bucket[R]{}
		}
		b := g.far[p]
		if b == nil {
			b = &bucket[R]{}
			g.far[p] = b
		}
		if len(b.rows) == 0 {
			g.farUsed = append(g.farUsed, p)
		}
		return b
	}
	if int(p) >= len(g.buckets) {
		g.buckets = append(g.buckets, make([]bucket[R], int(p)+1-len(g.buckets))...)
	}
	if g.lo > g.hi {
		g.lo, g.hi = p, p
	}
	g.lo, g.hi = min(g.lo, p), max(g.hi, p)
	return &g.buckets[p]
}

func (g *genericGroupWriter[R]) add(r *trace.Record) {
	if g.n == 0 {
		g.lo, g.hi = 1, 0 // no dense process yet
	}
	b := g.bucket(r.Proc)
	key := r.T
	if !g.timed {
		key = int64(r.Seq)
	}
	if len(b.rows) == 0 {
		b.first, b.run = key, r.Run
	}
	b.last = key
	var zero R
	b.rows = append(b.rows, zero)
	g.conv(&b.rows[len(b.rows)-1], r, g.div)
	g.n++
}

func (g *genericGroupWriter[R]) pendingRows() int { return g.n }

func (g *genericGroupWriter[R]) flush(group int32) ([]indexRow, error) {
	if g.n == 0 {
		return nil, nil
	}
	if err := g.wait(); err != nil {
		return nil, err
	}
	rows := g.spare[:0]
	var index []indexRow
	take := func(p int32, b *bucket[R]) {
		if len(b.rows) == 0 {
			return
		}
		index = append(index, indexRow{Group: group, Run: b.run, Proc: p, First: int64(len(rows)),
			Rows: int64(len(b.rows)), TMin: b.first, TMax: b.last})
		rows = append(rows, b.rows...)
		b.rows = b.rows[:0]
	}
	for p := g.lo; p <= g.hi; p++ {
		take(p, &g.buckets[p])
	}
	// Far processes all lie above the dense ones: in id order after them.
	slices.Sort(g.farUsed)
	for _, p := range g.farUsed {
		take(p, g.far[p])
		delete(g.far, p)
	}
	g.farUsed = g.farUsed[:0]
	g.spare = nil
	g.n = 0
	g.work <- rows
	g.pending = true
	return index, nil
}

func (g *genericGroupWriter[R]) close() error {
	err := g.wait()
	close(g.work)
	for range g.done {
	}
	if err != nil {
		return err
	}
	return g.w.Close()
}

func newGeneric[R any](w io.Writer, t table, unit int64, conv func(*R, *trace.Record, divider), opts []parquet.WriterOption) groupWriter {
	g := &genericGroupWriter[R]{w: parquet.NewGenericWriter[R](w, opts...), conv: conv, div: newDivider(unit), timed: t.timed(),
		work: make(chan []R), done: make(chan writeResult[R], 1)}
	go g.encode()
	return g
}

// divider divides times that are exact multiples of a unit by that unit
// with a shift and a multiplication by the inverse of the unit's odd part
// modulo 2^64, several times cheaper than a 64-bit division. The writer
// checks that every time is a multiple of the unit.
type divider struct {
	shift uint
	inv   uint64
}

func newDivider(unit int64) divider {
	u := uint64(unit)
	shift := uint(bits.TrailingZeros64(u))
	m := u >> shift
	x := m // Newton's iteration doubles the number of correct low bits each step.
	for i := 0; i < 6; i++ {
		x *= 2 - m*x
	}
	return divider{shift: shift, inv: x}
}

// div returns t / unit for t a multiple of unit.
func (d divider) div(t int64) int64 { return int64(uint64(t>>d.shift) * d.inv) }

// tableCodec compresses every table of every store the process writes. One
// codec for all keeps one pool of zstd encoders: each encoder holds
// megabytes of match tables, and a codec per table made new ones for each
// table of each store, which was most of the time a small recording took
// to write its .pst at exit.
var tableCodec = &zstd.Codec{Level: zstd.SpeedDefault}

// newGroupWriter returns a writer of t's row groups to w: zstd for tables,
// Snappy for temporary spill runs (fast is set).
func newGroupWriter(t table, w io.Writer, unit int64, fast bool) groupWriter {
	var codec compress.Codec = tableCodec
	if fast {
		// Spill runs are read back all at once by the final merge: Snappy
		// needs no large decoder window per open run, unlike zstd.
		codec = &snappy.Codec{}
	}
	opts := []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.MaxRowsPerRowGroup(math.MaxInt64),
		parquet.PageBufferSize(256 << 10),
		parquet.CreatedBy("parscope", "", ""),
		parquet.KeyValueMetadata("parscope.table", t.String()),
		parquet.KeyValueMetadata("parscope.time_unit_ns", fmt.Sprint(unit)),
	}
	switch t {
	case tStates:
		return newGeneric(w, t, unit, func(d *stateRow, r *trace.Record, u divider) {
			*d = stateRow{r.Run, r.Proc, u.div(r.T), r.ID}
		}, opts)
	case tRegions:
		return newGeneric(w, t, unit, func(d *regionRow, r *trace.Record, u divider) {
			*d = regionRow{r.Run, r.Proc, u.div(r.T), int32(r.Kind), r.ID}
		}, opts)
	case tMessages:
		return newGeneric(w, t, unit, func(d *messageRow, r *trace.Record, u divider) {
			*d = messageRow{r.Run, r.Proc, u.div(r.T), u.div(r.End), int32(r.Kind), r.Peer, r.Value, r.Tag, r.Comm, r.Seq, int32(r.Flags)}
		}, opts)
	case tCollectives:
		return newGeneric(w, t, unit, func(d *collectiveRow, r *trace.Record, u divider) {
			*d = collectiveRow{r.Run, r.Proc, u.div(r.T), u.div(r.End), r.ID, r.Peer, r.Value, r.Comm}
		}, opts)
	case tEvents:
		return newGeneric(w, t, unit, func(d *eventRow, r *trace.Record, u divider) {
			*d = eventRow{r.Run, r.Proc, u.div(r.T), r.ID, r.Value}
		}, opts)
	case tCounters:
		return newGeneric(w, t, unit, func(d *counterRow, r *trace.Record, u divider) {
			*d = counterRow{r.Run, r.Proc, u.div(r.T), r.ID, r.Float()}
		}, opts)
	case tBBV:
		return newGeneric(w, t, unit, func(d *bbvRow, r *trace.Record, u divider) {
			*d = bbvRow{r.Run, r.Proc, r.Seq, u.div(r.T), r.ID, r.Value}
		}, opts)
	}
	panic("store: unknown table")
}

// indexRow is one entry of index.parquet: the rows of one process inside
// one row group of one table.
type indexRow struct {
	Table int32 `parquet:"table"`
	Group int32 `parquet:"group"`
	Run   int32 `parquet:"run"`
	Proc  int32 `parquet:"proc"`
	First int64 `parquet:"first"`
	Rows  int64 `parquet:"rows"`
	TMin  int64 `parquet:"t_min"`
	TMax  int64 `parquet:"t_max"`
}
