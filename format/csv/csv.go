// Package csv exports a trace as CSV files, one per table, with the same
// tables and columns as the Parquet tables of a .pst store, for tools that
// read CSV more easily than Parquet.
//
// Record tables (one row per record, in the order the reader yields them,
// which for a merged stream is time-merged order):
//
//	states.csv       run,proc,t,state
//	regions.csv      run,proc,t,kind,region                          kind: enter or exit
//	messages.csv     run,proc,t,end,kind,peer,bytes,tag,comm,request,flags   kind: send or recv
//	collectives.csv  run,proc,t,end,op,root,bytes,comm               op: trace.CollectiveOp name
//	events.csv       run,proc,t,event,value
//	counters.csv     run,proc,t,counter,value
//	bbv.csv          run,proc,interval,t,block,count
//
// Dictionary tables (from the header, sorted by id, or by run and process):
//
//	runs.csv           id,name,procs
//	procs.csv          run,proc,name
//	state_names.csv    id,name,description,file,line
//	region_names.csv   id,kind,label,function,file,line,end_line,parent   kind: user, loop, if, function or call
//	event_names.csv    id,name
//	counter_names.csv  id,name,unit
//	comms.csv          id,name,members    members: process ids joined by ';'
//
// Values are written as the trace model holds them (see trace.Record): times
// in integer nanoseconds from the start of the run, end = 0 when the
// completion time is unknown, peer and root = -1 when there is none,
// request = -1 for a blocking message, flags as the integer bit set of
// trace.FlagDynamic and friends, counter values in the shortest
// representation that reads back exactly (strconv 'g', -1: "NaN" and
// "+Inf" for the non-finite ones). Every file starts with its header line;
// lines end in "\n"; a field is quoted, with inner quotes doubled, when it
// holds a comma, a quote, a line break or leading white space (as
// encoding/csv does), so names with any of those read back intact.
//
// Export writes a table only when it has rows, except runs.csv, which it
// always writes. Each file is written under a temporary name in the target
// directory and renamed into place once every table is complete, so a
// failure never leaves a half-written table behind; and once the new tables
// are in place, the files of the selected tables that are empty in this
// trace are removed, so that the directory never mixes two traces.
package csv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/trace"
)

// Options configure Export.
type Options struct {
	// Tables, when not empty, restricts the export to these tables, named
	// as TableNames names them (a ".csv" suffix is accepted). runs.csv is
	// then written only when asked for.
	Tables []string
}

// table describes one CSV table.
type table struct {
	name   string
	header string
	kinds  []trace.Kind                           // record kinds it holds; nil for a dictionary
	row    func(b []byte, r *trace.Record) []byte // record tables
	dict   func(w *rowWriter, h *trace.Header)    // dictionary tables
	rows   func(h *trace.Header) int              // dictionary tables: number of rows
	always bool                                   // written even when empty
}

var tables = []*table{
	{name: "states", header: "run,proc,t,state", kinds: []trace.Kind{trace.KindState}, row: stateRow},
	{name: "regions", header: "run,proc,t,kind,region", kinds: []trace.Kind{trace.KindEnter, trace.KindExit}, row: regionRow},
	{name: "messages", header: "run,proc,t,end,kind,peer,bytes,tag,comm,request,flags", kinds: []trace.Kind{trace.KindSend, trace.KindRecv}, row: messageRow},
	{name: "collectives", header: "run,proc,t,end,op,root,bytes,comm", kinds: []trace.Kind{trace.KindCollective}, row: collectiveRow},
	{name: "events", header: "run,proc,t,event,value", kinds: []trace.Kind{trace.KindEvent}, row: eventRow},
	{name: "counters", header: "run,proc,t,counter,value", kinds: []trace.Kind{trace.KindCounter}, row: counterRow},
	{name: "bbv", header: "run,proc,interval,t,block,count", kinds: []trace.Kind{trace.KindBBV}, row: bbvRow},
	{name: "runs", header: "id,name,procs", dict: runsDict, rows: func(h *trace.Header) int { return len(h.Runs) }, always: true},
	{name: "procs", header: "run,proc,name", dict: procsDict, rows: func(h *trace.Header) int { return len(h.Procs) }},
	{name: "state_names", header: "id,name,description,file,line", dict: statesDict, rows: func(h *trace.Header) int { return len(h.States) }},
	{name: "region_names", header: "id,kind,label,function,file,line,end_line,parent", dict: regionsDict, rows: func(h *trace.Header) int { return len(h.Regions) }},
	{name: "event_names", header: "id,name", dict: eventsDict, rows: func(h *trace.Header) int { return len(h.Events) }},
	{name: "counter_names", header: "id,name,unit", dict: countersDict, rows: func(h *trace.Header) int { return len(h.Counters) }},
	{name: "comms", header: "id,name,members", dict: commsDict, rows: func(h *trace.Header) int { return len(h.Comms) }},
}

// byKind maps a record kind to the index of its table in tables.
var byKind [trace.KindBBV + 1]int

func init() {
	for i := range byKind {
		byKind[i] = -1
	}
	for i, t := range tables {
		for _, k := range t.kinds {
			byKind[k] = i
		}
	}
}

// TableNames returns the names of the tables, record tables first, in the
// order of the package documentation. The files are named NAME.csv.
func TableNames() []string {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.name
	}
	return names
}

func lookup(name string) (int, error) {
	n := strings.TrimSuffix(name, ".csv")
	for i, t := range tables {
		if t.name == n {
			return i, nil
		}
	}
	return -1, fmt.Errorf("csv: unknown table %q (known: %s)", name, strings.Join(TableNames(), ", "))
}

// ExportTable writes one table, with its header line, to w: a record table
// from the records of r that belong to it (r may be nil, which gives just
// the header; pass the BBV reader for "bbv"), or a dictionary table from h
// (r is not read). table is a name from TableNames, with or without ".csv".
// Unlike Export, it writes the header line even when the table has no rows.
func ExportTable(w io.Writer, table string, h *trace.Header, r trace.Reader) error {
	i, err := lookup(table)
	if err != nil {
		return err
	}
	if h == nil {
		h = &trace.Header{}
	}
	t := tables[i]
	rw := newRowWriter(w)
	rw.line(t.header)
	if t.dict != nil {
		t.dict(rw, h)
	} else if r != nil {
		err = trace.Each(r, func(rec *trace.Record) error {
			if !rec.Kind.Valid() {
				return fmt.Errorf("csv: record of invalid kind %d", rec.Kind)
			}
			if byKind[rec.Kind] == i {
				rw.put(t.row(rw.buf(), rec))
			}
			return rw.err
		})
	}
	if err != nil {
		return err
	}
	return rw.flush()
}

// Export writes the tables of a trace as CSV files into dir, creating it if
// needed: the record tables from the records of r (all kinds but BBV, in
// the order given; BBV records found in r go to bbv.csv too) and of bbv (BBV
// records only; nil when there are none), and the dictionary tables from h.
// A table is written only when it has rows, except runs.csv, which always
// is (see the package documentation for the columns and for how files are
// replaced). On error no table is left half-written and no temporary file
// remains: tables are renamed into place only after every one of them has
// been written completely, and an obstacle to a rename (a directory of a
// table's name) is looked for before the first one. Only a failure of
// rename itself, or a crash, could leave some tables replaced and others
// not; a crash may also leave hidden temporary files behind (see package
// atomicfile), which the next export to the directory removes.
func Export(dir string, h *trace.Header, r trace.Reader, bbv trace.Reader, opts Options) error {
	if h == nil {
		h = &trace.Header{}
	}
	selected := make([]bool, len(tables))
	if len(opts.Tables) == 0 {
		for i := range selected {
			selected[i] = true
		}
	}
	for _, name := range opts.Tables {
		i, err := lookup(name)
		if err != nil {
			return err
		}
		selected[i] = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	x := &exporter{dir: dir, files: make([]*outFile, len(tables)), selected: selected, written: make([]bool, len(tables))}
	if err := x.export(h, r, bbv); err != nil {
		x.abort()
		return err
	}
	return nil
}

func (x *exporter) export(h *trace.Header, r, bbv trace.Reader) error {
	if r != nil {
		if err := trace.Each(r, x.record); err != nil {
			return err
		}
	}
	if bbv != nil {
		err := trace.Each(bbv, func(rec *trace.Record) error {
			if rec.Kind != trace.KindBBV {
				return fmt.Errorf("csv: the BBV reader yields a %s record", rec.Kind)
			}
			return x.record(rec)
		})
		if err != nil {
			return err
		}
	}
	for i, t := range tables {
		if t.dict == nil || !x.selected[i] || (!t.always && t.rows(h) == 0) {
			continue
		}
		f, err := x.file(i)
		if err != nil {
			return err
		}
		t.dict(f.w, h)
	}
	return x.commit()
}

type exporter struct {
	dir      string
	files    []*outFile // by table index; nil until the table's first row
	selected []bool
	written  []bool // renamed into place
}

type outFile struct {
	f *atomicfile.File
	w *rowWriter
}

func (x *exporter) record(r *trace.Record) error {
	if !r.Kind.Valid() {
		return fmt.Errorf("csv: record of invalid kind %d", r.Kind)
	}
	i := byKind[r.Kind]
	if !x.selected[i] {
		return nil
	}
	f := x.files[i]
	if f == nil {
		var err error
		if f, err = x.file(i); err != nil {
			return err
		}
	}
	f.w.put(tables[i].row(f.w.buf(), r))
	return f.w.err
}

// file starts the file of table i under a temporary name (see package
// atomicfile) and writes its header line. Anything but a regular file in
// the way of the table (a directory of its name) is refused here, before
// any table is renamed into place.
func (x *exporter) file(i int) (*outFile, error) {
	f, err := atomicfile.Create(filepath.Join(x.dir, tables[i].name+".csv"), atomicfile.RegularFile)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	o := &outFile{f: f, w: newRowWriter(f)}
	x.files[i] = o
	o.w.line(tables[i].header)
	return o, nil
}

// commit completes every temporary file, then renames them into place,
// then removes the files of selected tables that stayed empty.
func (x *exporter) commit() error {
	for _, o := range x.files {
		if o != nil {
			if err := o.w.flush(); err != nil {
				return fmt.Errorf("csv: writing %s: %w", o.f.Name(), err)
			}
		}
	}
	for i, o := range x.files {
		if o == nil {
			continue
		}
		if err := o.f.Commit(); err != nil {
			return fmt.Errorf("csv: %w", err)
		}
		x.files[i] = nil
		x.written[i] = true
	}
	for i, t := range tables {
		if !x.selected[i] || x.written[i] {
			continue
		}
		stale := filepath.Join(x.dir, t.name+".csv")
		if fi, err := os.Lstat(stale); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(stale); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("csv: removing the stale %s: %w", stale, err)
			}
		}
	}
	return nil
}

// abort removes the temporary files not yet renamed.
func (x *exporter) abort() {
	for i, o := range x.files {
		if o != nil {
			o.f.Abort()
			x.files[i] = nil
		}
	}
}

// rowWriter writes lines through a bufio.Writer without allocating per row.
type rowWriter struct {
	bw  *bufio.Writer
	err error
}

func newRowWriter(w io.Writer) *rowWriter {
	return &rowWriter{bw: bufio.NewWriterSize(w, 256<<10)}
}

// buf returns an empty buffer to append one line to.
func (w *rowWriter) buf() []byte { return w.bw.AvailableBuffer() }

// put writes a line built in a buffer from buf; the row functions end it with "\n".
func (w *rowWriter) put(b []byte) {
	if _, err := w.bw.Write(b); err != nil && w.err == nil {
		w.err = err
	}
}

// line writes s and a line break.
func (w *rowWriter) line(s string) {
	b := append(w.buf(), s...)
	w.put(append(b, '\n'))
}

func (w *rowWriter) flush() error {
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// appendField appends s as one CSV field, quoted when it must be.
func appendField(b []byte, s string) []byte {
	if !needsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// commaInt appends a comma and v, the next column of a row.
func commaInt(b []byte, v int64) []byte { return format.AppendInt(append(b, ','), v) }

// commaField appends a comma and s as the next column of a row, quoted
// when it must be.
func commaField(b []byte, s string) []byte { return appendField(append(b, ','), s) }

// needsQuotes follows encoding/csv: a field is quoted when it contains a
// comma, a quote or a line break, starts with white space, or is `\.`
// (which PostgreSQL's COPY would read as the end of the data).
func needsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` || strings.ContainsAny(s, ",\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// head appends the run,proc,t columns that start most record rows.
func head(b []byte, r *trace.Record) []byte {
	b = format.AppendInt(b, int64(r.Run))
	b = commaInt(b, int64(r.Proc))
	b = commaInt(b, r.T)
	return append(b, ',')
}

func stateRow(b []byte, r *trace.Record) []byte {
	b = head(b, r)
	b = format.AppendInt(b, int64(r.ID))
	return append(b, '\n')
}

func regionRow(b []byte, r *trace.Record) []byte {
	b = head(b, r)
	if r.Kind == trace.KindEnter {
		b = append(b, "enter,"...)
	} else {
		b = append(b, "exit,"...)
	}
	b = format.AppendInt(b, int64(r.ID))
	return append(b, '\n')
}

func messageRow(b []byte, r *trace.Record) []byte {
	b = head(b, r)
	b = format.AppendInt(b, r.End)
	if r.Kind == trace.KindSend {
		b = append(b, ",send,"...)
	} else {
		b = append(b, ",recv,"...)
	}
	b = format.AppendInt(b, int64(r.Peer))
	b = commaInt(b, r.Value)
	b = commaInt(b, int64(r.Tag))
	b = commaInt(b, int64(r.Comm))
	b = commaInt(b, int64(r.Seq))
	b = commaInt(b, int64(r.Flags))
	return append(b, '\n')
}

func collectiveRow(b []byte, r *trace.Record) []byte {
	b = head(b, r)
	b = format.AppendInt(b, r.End)
	b = commaField(b, trace.CollectiveOp(r.ID).String())
	b = commaInt(b, int64(r.Peer))
	b = commaInt(b, r.Value)
	b = commaInt(b, int64(r.Comm))
	return append(b, '\n')
}

func eventRow(b []byte, r *trace.Record) []byte {
	b = head(b, r)
	b = format.AppendInt(b, int64(r.ID))
	b = commaInt(b, r.Value)
	return append(b, '\n')
}

func counterRow(b []byte, r *trace.Record) []byte {
	b = head(b, r)
	b = format.AppendInt(b, int64(r.ID))
	b = append(b, ',')
	b = strconv.AppendFloat(b, r.Float(), 'g', -1, 64)
	return append(b, '\n')
}

func bbvRow(b []byte, r *trace.Record) []byte {
	b = format.AppendInt(b, int64(r.Run))
	b = commaInt(b, int64(r.Proc))
	b = commaInt(b, int64(r.Seq))
	b = commaInt(b, r.T)
	b = commaInt(b, int64(r.ID))
	b = commaInt(b, r.Value)
	return append(b, '\n')
}

// sortedByID returns a copy of s sorted by id (stable, so duplicates keep
// their order).
func sortedByID[T any](s []T, id func(*T) int32) []T {
	c := slices.Clone(s)
	slices.SortStableFunc(c, func(a, b T) int { return int(id(&a)) - int(id(&b)) })
	return c
}

// putDict writes a line per definition of defs in id order: the id, then
// the columns cols appends.
func putDict[T any](w *rowWriter, defs []T, id func(*T) int32, cols func(b []byte, d *T) []byte) {
	for _, d := range sortedByID(defs, id) {
		b := format.AppendInt(w.buf(), int64(id(&d)))
		w.put(append(cols(b, &d), '\n'))
	}
}

func runsDict(w *rowWriter, h *trace.Header) {
	for _, r := range h.Runs {
		b := format.AppendInt(w.buf(), int64(r.ID))
		b = commaField(b, r.Name)
		b = commaInt(b, int64(r.Procs))
		w.put(append(b, '\n'))
	}
}

func procsDict(w *rowWriter, h *trace.Header) {
	ps := slices.Clone(h.Procs)
	slices.SortStableFunc(ps, func(a, b trace.ProcInfo) int {
		if a.Run != b.Run {
			return int(a.Run) - int(b.Run)
		}
		return int(a.Proc) - int(b.Proc)
	})
	for _, p := range ps {
		b := format.AppendInt(w.buf(), int64(p.Run))
		b = commaInt(b, int64(p.Proc))
		b = commaField(b, p.Name)
		w.put(append(b, '\n'))
	}
}

func statesDict(w *rowWriter, h *trace.Header) {
	putDict(w, h.States, func(d *trace.StateDef) int32 { return d.ID }, func(b []byte, d *trace.StateDef) []byte {
		b = commaField(b, d.Name)
		b = commaField(b, d.Description)
		b = commaField(b, d.File)
		return commaInt(b, int64(d.Line))
	})
}

func regionsDict(w *rowWriter, h *trace.Header) {
	putDict(w, h.Regions, func(d *trace.RegionDef) int32 { return d.ID }, func(b []byte, d *trace.RegionDef) []byte {
		b = commaField(b, d.Kind.String())
		b = commaField(b, d.Label)
		b = commaField(b, d.Function)
		b = commaField(b, d.File)
		b = commaInt(b, int64(d.Line))
		b = commaInt(b, int64(d.EndLine))
		return commaInt(b, int64(d.Parent))
	})
}

func eventsDict(w *rowWriter, h *trace.Header) {
	putDict(w, h.Events, func(d *trace.EventDef) int32 { return d.ID }, func(b []byte, d *trace.EventDef) []byte {
		return commaField(b, d.Name)
	})
}

func countersDict(w *rowWriter, h *trace.Header) {
	putDict(w, h.Counters, func(d *trace.CounterDef) int32 { return d.ID }, func(b []byte, d *trace.CounterDef) []byte {
		b = commaField(b, d.Name)
		return commaField(b, d.Unit)
	})
}

func commsDict(w *rowWriter, h *trace.Header) {
	putDict(w, h.Comms, func(d *trace.CommDef) int32 { return d.ID }, func(b []byte, d *trace.CommDef) []byte {
		b = commaField(b, d.Name)
		b = append(b, ',')
		for i, m := range d.Members {
			if i > 0 {
				b = append(b, ';')
			}
			b = format.AppendInt(b, int64(m))
		}
		return b
	})
}
