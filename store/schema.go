package store

import (
	"fmt"
	"io"
	"math"

	"github.com/parquet-go/parquet-go"
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

// column describes how one Parquet column maps to Record fields on read.
type column struct {
	name string
	typ  colType
	time bool // scaled by the time unit
	set  func(r *trace.Record, v int64)
}

func setRun(r *trace.Record, v int64)   { r.Run = int32(v) }
func setProc(r *trace.Record, v int64)  { r.Proc = int32(v) }
func setT(r *trace.Record, v int64)     { r.T = v }
func setEnd(r *trace.Record, v int64)   { r.End = v }
func setID(r *trace.Record, v int64)    { r.ID = int32(v) }
func setPeer(r *trace.Record, v int64)  { r.Peer = int32(v) }
func setValue(r *trace.Record, v int64) { r.Value = v }
func setTag(r *trace.Record, v int64)   { r.Tag = int32(v) }
func setComm(r *trace.Record, v int64)  { r.Comm = int32(v) }
func setSeq(r *trace.Record, v int64)   { r.Seq = int32(v) }
func setKind(r *trace.Record, v int64)  { r.Kind = trace.Kind(v) }
func setFlags(r *trace.Record, v int64) { r.Flags = uint8(v) }

var (
	colRun  = column{"run", colI32, false, setRun}
	colProc = column{"proc", colI32, false, setProc}
	colT    = column{"t", colI64, true, setT}
	colEnd  = column{"end", colI64, true, setEnd}
)

// columns lists, per table, its columns in schema order.
var columns = [numTables][]column{
	tStates:      {colRun, colProc, colT, {"state", colI32, false, setID}},
	tRegions:     {colRun, colProc, colT, {"kind", colI32, false, setKind}, {"region", colI32, false, setID}},
	tMessages:    {colRun, colProc, colT, colEnd, {"kind", colI32, false, setKind}, {"peer", colI32, false, setPeer}, {"bytes", colI64, false, setValue}, {"tag", colI32, false, setTag}, {"comm", colI32, false, setComm}, {"request", colI32, false, setSeq}, {"flags", colI32, false, setFlags}},
	tCollectives: {colRun, colProc, colT, colEnd, {"op", colI32, false, setID}, {"root", colI32, false, setPeer}, {"bytes", colI64, false, setValue}, {"comm", colI32, false, setComm}},
	tEvents:      {colRun, colProc, colT, {"event", colI32, false, setID}, {"value", colI64, false, setValue}},
	tCounters:    {colRun, colProc, colT, {"counter", colI32, false, setID}, {"value", colF64, false, setValue}},
	tBBV:         {colRun, colProc, {"interval", colI32, false, setSeq}, colT, {"block", colI32, false, setID}, {"count", colI64, false, setValue}},
}

// defaultKind is the kind of records of tables that hold a single kind.
var defaultKind = [numTables]trace.Kind{
	tStates: trace.KindState, tCollectives: trace.KindCollective, tEvents: trace.KindEvent,
	tCounters: trace.KindCounter, tBBV: trace.KindBBV,
}

// groupWriter writes groups of records as Parquet row groups of one table.
type groupWriter interface {
	writeGroup(recs []trace.Record, unit int64) error
	close() error
}

type genericGroupWriter[R any] struct {
	w    *parquet.GenericWriter[R]
	rows []R
	conv func(dst *R, r *trace.Record, unit int64)
}

func (g *genericGroupWriter[R]) writeGroup(recs []trace.Record, unit int64) error {
	if cap(g.rows) < len(recs) {
		g.rows = make([]R, len(recs))
	}
	rows := g.rows[:len(recs)]
	for i := range recs {
		g.conv(&rows[i], &recs[i], unit)
	}
	if _, err := g.w.Write(rows); err != nil {
		return err
	}
	return g.w.Flush()
}

func (g *genericGroupWriter[R]) close() error { return g.w.Close() }

func newGeneric[R any](w io.Writer, conv func(*R, *trace.Record, int64), opts []parquet.WriterOption) groupWriter {
	return &genericGroupWriter[R]{w: parquet.NewGenericWriter[R](w, opts...), conv: conv}
}

// newGroupWriter returns a writer of t's row groups to w.
func newGroupWriter(t table, w io.Writer, unit int64, fast bool) groupWriter {
	level := zstd.SpeedDefault
	if fast {
		level = zstd.SpeedFastest
	}
	opts := []parquet.WriterOption{
		parquet.Compression(&zstd.Codec{Level: level}),
		parquet.MaxRowsPerRowGroup(math.MaxInt64),
		parquet.PageBufferSize(256 << 10),
		parquet.CreatedBy("parscope", "", ""),
		parquet.KeyValueMetadata("parscope.table", t.String()),
		parquet.KeyValueMetadata("parscope.time_unit_ns", fmt.Sprint(unit)),
	}
	switch t {
	case tStates:
		return newGeneric(w, func(d *stateRow, r *trace.Record, u int64) {
			*d = stateRow{r.Run, r.Proc, r.T / u, r.ID}
		}, opts)
	case tRegions:
		return newGeneric(w, func(d *regionRow, r *trace.Record, u int64) {
			*d = regionRow{r.Run, r.Proc, r.T / u, int32(r.Kind), r.ID}
		}, opts)
	case tMessages:
		return newGeneric(w, func(d *messageRow, r *trace.Record, u int64) {
			*d = messageRow{r.Run, r.Proc, r.T / u, r.End / u, int32(r.Kind), r.Peer, r.Value, r.Tag, r.Comm, r.Seq, int32(r.Flags)}
		}, opts)
	case tCollectives:
		return newGeneric(w, func(d *collectiveRow, r *trace.Record, u int64) {
			*d = collectiveRow{r.Run, r.Proc, r.T / u, r.End / u, r.ID, r.Peer, r.Value, r.Comm}
		}, opts)
	case tEvents:
		return newGeneric(w, func(d *eventRow, r *trace.Record, u int64) {
			*d = eventRow{r.Run, r.Proc, r.T / u, r.ID, r.Value}
		}, opts)
	case tCounters:
		return newGeneric(w, func(d *counterRow, r *trace.Record, u int64) {
			*d = counterRow{r.Run, r.Proc, r.T / u, r.ID, r.Float()}
		}, opts)
	case tBBV:
		return newGeneric(w, func(d *bbvRow, r *trace.Record, u int64) {
			*d = bbvRow{r.Run, r.Proc, r.Seq, r.T / u, r.ID, r.Value}
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
