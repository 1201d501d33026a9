package prv

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/trace"
)

// ExportOptions tune Export.
type ExportOptions struct {
	// Run is the run to export: a Paraver trace holds one run, so records
	// of other runs are skipped (and counted in ExportStats.Skipped).
	Run int32
	// Replace decides whether an existing file at one of the three paths
	// may be replaced: it returns nil to allow it, or an error saying why
	// not. Nil allows a regular file.
	Replace func(path string) error
}

// ExportStats says what Export wrote.
type ExportStats struct {
	// Records is the number of records read from the reader.
	Records int64
	// Lines is the number of records written to the .prv body.
	Lines int64
	// Unmatched counts sends and receives without their other side: a
	// Paraver communication record needs both, so they are left out.
	Unmatched int64
	// Skipped counts records Paraver cannot hold: those of other runs and
	// basic block vectors.
	Skipped int64
}

// exportLayout is the Paraver resource and application layout of the
// exported processes.
type exportLayout struct {
	appl, task, thread []int32 // per process, 1-based
	node               []int32 // per process, 1-based
	cpu                []int32 // per process, 1-based global CPU
	tasks              [][]int32
	cpusPerNode        []int
}

// Paths returns the .prv, .pcf and .row paths Export writes for out: out
// itself when it ends in ".prv", else out + ".prv", and the .pcf and .row
// next to it with the same base name.
func Paths(out string) (prvPath, pcfPath, rowPath string) {
	base := strings.TrimSuffix(out, ".prv")
	return base + ".prv", base + ".pcf", base + ".row"
}

// Export writes run opts.Run of a trace as a Paraver trace: the .prv, .pcf
// and .row files named by Paths(out). r must deliver the records in
// time-merged order (trace.Merge, store.Records). Each file is written
// under a temporary name next to its destination, synced and renamed into
// place once all three are complete (see package atomicfile), so a failed
// export leaves nothing behind; only regular files are
// replaced, and only those opts.Replace allows.
//
// The mapping is the importer's in reverse (see the package comment):
// times in ns; processes become the application/task/thread layout their
// ProcInfo records ("appl", "task", "thread", "node", as the importer
// writes them) or else one application with one single-thread task per
// process; a state lasts until the process's next state (the last one to
// the trace's end); region entries and exits of a trace imported from
// Paraver (Meta.Source "prv") become the MPI call or function events their
// ids encode (RegionType: a region imported from type 60000019 goes back
// under 60000019 with its value), other regions user function events
// (UserFunctionType, value id+1, 0 on exit); events keep their id as the
// event type; counters
// keep an id in the hardware counter range and get CounterTypeMin+id
// otherwise (values rounded to integers); matched messages (trace.Matcher)
// become communication records (logical times the post times, physical
// times the completion times) and collectives global operation records.
// The trace's end is the largest time of any record, or the original
// duration (Meta.Extra "prv.duration_ns") when that is later.
//
// Export holds in memory the lines that follow a state whose end is not yet
// known or a message whose other side has not yet come; for traces with
// frequent state changes and matched messages that is a small window.
func Export(ctx context.Context, out string, h *trace.Header, r trace.Reader, opts ExportOptions) (ExportStats, error) {
	var st ExportStats
	if int(opts.Run) >= len(h.Runs) || opts.Run < 0 {
		return st, fmt.Errorf("prv export: run %d does not exist (the trace has %d)", opts.Run, len(h.Runs))
	}
	nproc := h.Runs[opts.Run].Procs
	if nproc <= 0 {
		return st, fmt.Errorf("prv export: run %d has no processes", opts.Run)
	}
	lay := layoutOf(h, opts.Run, nproc)
	prvPath, pcfPath, rowPath := Paths(out)

	// The body is written to a scratch file first (its header needs the
	// trace's end), then copied behind the header into the .prv.
	body, err := atomicfile.Scratch(prvPath)
	if err != nil {
		return st, fmt.Errorf("prv export: %w", err)
	}
	defer func() {
		body.Close()
		os.Remove(body.Name())
	}()
	var files []*atomicfile.File
	defer func() {
		for _, f := range files {
			f.Abort()
		}
	}()
	replace := atomicfile.Replace(atomicfile.RegularFile)
	if opts.Replace != nil {
		replace = opts.Replace
	}
	create := func(path string) (*atomicfile.File, error) {
		f, err := atomicfile.Create(path, replace)
		if err == nil {
			files = append(files, f)
		}
		return f, err
	}
	ex := &exporter{h: h, lay: lay, nproc: nproc, run: opts.Run, w: bufio.NewWriterSize(body, 1<<20),
		fromPRV: h.Meta.Source == Name, open: make([]int64, nproc), stats: &st, usedCounters: map[int64]int32{}}
	for i := range ex.open {
		ex.open[i] = -1
	}
	ex.match.OnMatch = ex.matched
	if err := ex.records(ctx, r); err != nil {
		return st, err
	}
	if err := ex.w.Flush(); err != nil {
		return st, fmt.Errorf("prv export: writing %s: %w", prvPath, atomicfile.Cause(err))
	}

	final, err := create(prvPath)
	if err != nil {
		return st, fmt.Errorf("prv export: %w", err)
	}
	fw := bufio.NewWriterSize(final, 1<<20)
	ex.header(fw)
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return st, fmt.Errorf("prv export: %w", err)
	}
	if _, err := io.Copy(fw, body); err != nil {
		return st, fmt.Errorf("prv export: writing %s: %w", prvPath, atomicfile.Cause(err))
	}
	if err := fw.Flush(); err != nil {
		return st, fmt.Errorf("prv export: %w", err)
	}
	pcfFile, err := create(pcfPath)
	if err != nil {
		return st, fmt.Errorf("prv export: %w", err)
	}
	if err := writeAll(pcfFile, ex.pcf); err != nil {
		return st, err
	}
	rowFile, err := create(rowPath)
	if err != nil {
		return st, fmt.Errorf("prv export: %w", err)
	}
	if err := writeAll(rowFile, ex.row); err != nil {
		return st, err
	}
	for _, f := range files {
		if err := f.Commit(); err != nil {
			return st, fmt.Errorf("prv export: %w", err)
		}
	}
	return st, nil
}

func writeAll(f *atomicfile.File, fill func(w *bufio.Writer)) error {
	w := bufio.NewWriter(f)
	fill(w)
	if err := w.Flush(); err != nil {
		return fmt.Errorf("prv export: %w", err)
	}
	return nil
}

// layoutOf rebuilds the application/task/thread layout from the ProcInfo
// the importer wrote, when every process has one and they form the
// importer's dense order; otherwise one task per process on one node.
func layoutOf(h *trace.Header, run, nproc int32) *exportLayout {
	lay := &exportLayout{appl: make([]int32, nproc), task: make([]int32, nproc), thread: make([]int32, nproc),
		node: make([]int32, nproc), cpu: make([]int32, nproc)}
	info := make([]*trace.ProcInfo, nproc)
	for i := range h.Procs {
		if p := &h.Procs[i]; p.Run == run && p.Proc >= 0 && p.Proc < nproc {
			info[p.Proc] = p
		}
	}
	num := func(p *trace.ProcInfo, k string) int32 {
		if p == nil {
			return 0
		}
		v, err := strconv.ParseInt(p.Extra[k], 10, 32)
		if err != nil {
			return 0
		}
		return int32(v)
	}
	ok := nproc > 0
	var pa, pt, pth int32 = 1, 1, 0
	for p := int32(0); p < nproc && ok; p++ {
		a, t, th, n := num(info[p], "appl"), num(info[p], "task"), num(info[p], "thread"), num(info[p], "node")
		switch {
		case a == pa && t == pt && th == pth+1:
		case a == pa && t == pt+1 && th == 1 && p > 0:
		case a == pa+1 && t == 1 && th == 1 && p > 0:
		default:
			ok = false
		}
		if th == 1 && n < 1 {
			ok = false
		}
		pa, pt, pth = a, t, th
		lay.appl[p], lay.task[p], lay.thread[p], lay.node[p] = a, t, th, n
		if th > 1 {
			lay.node[p] = lay.node[p-1] // a task's threads share its node
		}
	}
	if !ok {
		for p := int32(0); p < nproc; p++ {
			lay.appl[p], lay.task[p], lay.thread[p], lay.node[p] = 1, p+1, 1, 1
		}
	}
	for p := int32(0); p < nproc; p++ {
		a, t := lay.appl[p], lay.task[p]
		for int32(len(lay.tasks)) < a {
			lay.tasks = append(lay.tasks, nil)
		}
		if int32(len(lay.tasks[a-1])) < t {
			lay.tasks[a-1] = append(lay.tasks[a-1], 0)
		}
		lay.tasks[a-1][t-1]++
		n := int(lay.node[p])
		for len(lay.cpusPerNode) < n {
			lay.cpusPerNode = append(lay.cpusPerNode, 0)
		}
		lay.cpusPerNode[n-1]++
	}
	// CPUs are numbered node by node; each thread gets its own.
	first := make([]int32, len(lay.cpusPerNode))
	next := int32(1)
	for i, c := range lay.cpusPerNode {
		first[i] = next
		next += int32(c)
	}
	for p := int32(0); p < nproc; p++ {
		n := lay.node[p] - 1
		lay.cpu[p] = first[n]
		first[n]++
	}
	return lay
}

// exporter is the state of one export.
type exporter struct {
	h       *trace.Header
	lay     *exportLayout
	nproc   int32
	run     int32
	w       *bufio.Writer
	fromPRV bool
	stats   *ExportStats
	end     int64 // the largest time seen

	// queue holds the body lines in stream order from base on; a nil
	// entry is a line not yet known (an open state, an unmatched message).
	queue   [][]byte
	base    int64   // stream position of queue[0]
	pending int64   // queue entries still nil
	open    []int64 // per process: the position of its open state, or -1
	openRec []trace.Record
	match   trace.Matcher
	matchOK bool // the current record was matched by its Add

	states       map[int32]bool
	events       map[int32]bool
	usedCounters map[int64]int32 // Paraver type -> counter id
	regionTypes  map[int64]bool  // MPI call and function types of exported regions
	userRegions  bool
	buf          []byte
}

func (ex *exporter) records(ctx context.Context, r trace.Reader) error {
	ex.openRec = make([]trace.Record, ex.nproc)
	ex.states, ex.events, ex.regionTypes = map[int32]bool{}, map[int32]bool{}, map[int64]bool{}
	buf := make([]trace.Record, 4096)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		for i := range buf[:n] {
			if err := ex.record(&buf[i]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("prv export: %w", err)
		}
	}
	if ex.end < ex.durationHint() {
		ex.end = ex.durationHint()
	}
	for p, pos := range ex.open {
		if pos >= 0 {
			ex.fill(pos, ex.stateLine(&ex.openRec[p], ex.end))
		}
	}
	sends, recvs := ex.match.Unmatched()
	for _, u := range slices.Concat(sends, recvs) {
		ex.stats.Unmatched++
		ex.fill(slot(&u), []byte{})
	}
	return ex.flush()
}

func (ex *exporter) durationHint() int64 {
	if !ex.fromPRV {
		return 0
	}
	v, _ := strconv.ParseInt(ex.h.Meta.Extra["prv.duration_ns"], 10, 64)
	return v
}

// slot returns the queue position stored in a message record's ID and Seq.
func slot(r *trace.Record) int64 { return int64(uint32(r.ID)) | int64(r.Seq)<<32 }

// push appends a known line (or nil for one not yet known) to the queue
// and returns its position.
func (ex *exporter) push(line []byte) int64 {
	ex.queue = append(ex.queue, line)
	if line == nil {
		ex.pending++
	}
	return ex.base + int64(len(ex.queue)) - 1
}

func (ex *exporter) fill(pos int64, line []byte) {
	ex.queue[pos-ex.base] = line
	ex.pending--
}

// flush writes the known lines at the head of the queue.
func (ex *exporter) flush() error {
	i := 0
	for i < len(ex.queue) && ex.queue[i] != nil {
		if len(ex.queue[i]) > 0 {
			ex.stats.Lines++
			if _, err := ex.w.Write(ex.queue[i]); err != nil {
				return fmt.Errorf("prv export: %w", err)
			}
		}
		i++
	}
	if i > 0 {
		ex.base += int64(i)
		n := copy(ex.queue, ex.queue[i:])
		clear(ex.queue[n:])
		ex.queue = ex.queue[:n]
	}
	return nil
}

func (ex *exporter) record(r *trace.Record) error {
	ex.stats.Records++
	if r.Run != ex.run || r.Kind == trace.KindBBV {
		ex.stats.Skipped++
		return nil
	}
	if r.Proc < 0 || r.Proc >= ex.nproc {
		return fmt.Errorf("prv export: record %v names process %d; the header declares %d in run %d", r, r.Proc, ex.nproc, ex.run)
	}
	ex.end = max(ex.end, r.T, r.End)
	p := r.Proc
	switch r.Kind {
	case trace.KindState:
		if pos := ex.open[p]; pos >= 0 {
			ex.fill(pos, ex.stateLine(&ex.openRec[p], r.T))
		}
		ex.states[r.ID] = true
		ex.openRec[p] = *r
		ex.open[p] = ex.push(nil)
	case trace.KindEnter, trace.KindExit:
		typ, v := ex.regionEvent(r)
		ex.push(ex.eventLine(r, typ, v))
	case trace.KindEvent:
		ex.events[r.ID] = true
		ex.push(ex.eventLine(r, int64(r.ID), r.Value))
	case trace.KindCounter:
		typ := int64(r.ID)
		if typ < CounterTypeMin || typ > CounterTypeMax {
			typ = CounterTypeMin + int64(r.ID)
		}
		ex.usedCounters[typ] = r.ID
		ex.push(ex.eventLine(r, typ, int64(r.Float())))
	case trace.KindSend, trace.KindRecv:
		m := *r
		pos := ex.base + int64(len(ex.queue))
		m.ID, m.Seq = int32(uint32(pos)), int32(pos>>32)
		ex.matchOK = false
		ex.match.Add(&m)
		if !ex.matchOK {
			ex.push(nil)
		}
	case trace.KindCollective:
		ex.push(ex.globalLine(r))
	}
	if len(ex.queue) > 0 && ex.queue[0] != nil {
		return ex.flush()
	}
	return nil
}

// regionEvent returns the Paraver event of a region entry or exit.
func (ex *exporter) regionEvent(r *trace.Record) (typ, v int64) {
	if ex.fromPRV {
		if t, val, ok := RegionType(r.ID); ok {
			ex.regionTypes[t] = true
			if r.Kind == trace.KindExit {
				val = 0
			}
			return t, val
		}
	}
	ex.userRegions = true
	if r.Kind == trace.KindExit {
		return UserFunctionType, 0
	}
	return UserFunctionType, int64(r.ID) + 1
}

// matched writes the communication record of a matched message into the
// slot of the side that came first.
func (ex *exporter) matched(s, r *trace.Record) {
	ex.matchOK = true
	first := s
	if slot(r) < slot(s) {
		first = r
	}
	b := ex.buf[:0]
	b = append(b, '3', ':')
	b = ex.who(b, s.Proc)
	b = appendInts(b, s.T, endOr(s))
	b = append(b, ':')
	b = ex.who(b, r.Proc)
	b = appendInts(b, r.T, endOr(r), s.Value, int64(s.Tag))
	b = append(b, '\n')
	ex.fill(slot(first), slices.Clone(b))
	ex.buf = b
}

func endOr(r *trace.Record) int64 {
	if r.End != 0 {
		return r.End
	}
	return r.T
}

// who appends "cpu:appl:task:thread" of process p.
func (ex *exporter) who(b []byte, p int32) []byte {
	l := ex.lay
	b = strconv.AppendInt(b, int64(l.cpu[p]), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(l.appl[p]), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(l.task[p]), 10)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(l.thread[p]), 10)
}

// appendInts appends ":v" for each value.
func appendInts(b []byte, vs ...int64) []byte {
	for _, v := range vs {
		b = append(b, ':')
		b = strconv.AppendInt(b, v, 10)
	}
	return b
}

func (ex *exporter) line(kind byte, p int32, vs ...int64) []byte {
	b := append(ex.buf[:0], kind, ':')
	b = ex.who(b, p)
	b = appendInts(b, vs...)
	b = append(b, '\n')
	ex.buf = b
	return slices.Clone(b)
}

func (ex *exporter) stateLine(r *trace.Record, end int64) []byte {
	return ex.line('1', r.Proc, r.T, end, int64(r.ID))
}

func (ex *exporter) eventLine(r *trace.Record, typ, v int64) []byte {
	return ex.line('2', r.Proc, r.T, typ, v)
}

// globalLine writes "4:cpu:appl:task:thread:time:comm:send:recv:op:root".
func (ex *exporter) globalLine(r *trace.Record) []byte {
	op := int64(len(dimemasOps)) // no Dimemas id: imported as an unknown operation
	for i, o := range dimemasOps {
		if o == trace.CollectiveOp(r.ID) {
			op = int64(i)
			break
		}
	}
	root := int64(-1)
	for _, c := range ex.h.Comms {
		if c.ID == r.Comm {
			if k := slices.Index(c.Members, r.Peer); k >= 0 && r.Peer != trace.NoPeer {
				root = int64(k)
			}
			break
		}
	}
	return ex.line('4', r.Proc, r.T, int64(r.Comm), r.Value, 0, op, root)
}

// header writes the .prv header line and the communicator lines.
func (ex *exporter) header(w *bufio.Writer) {
	date := "01/01/70 at 00:00"
	if d := ex.h.Meta.Extra["prv.date"]; ex.fromPRV && d != "" && !strings.ContainsAny(d, "()\n") {
		date = d
	}
	fmt.Fprintf(w, "#Paraver (%s):%d_ns:%d(", date, ex.end, len(ex.lay.cpusPerNode))
	for i, c := range ex.lay.cpusPerNode {
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprint(w, max(c, 1))
	}
	fmt.Fprintf(w, "):%d:", len(ex.lay.tasks))
	firstProc := int32(0)
	for a, tasks := range ex.lay.tasks {
		if a > 0 {
			w.WriteByte(':')
		}
		fmt.Fprintf(w, "%d(", len(tasks))
		for t, nth := range tasks {
			if t > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, "%d:%d", nth, ex.lay.node[firstProc])
			firstProc += nth
		}
		w.WriteByte(')')
	}
	fmt.Fprintf(w, ",%d\n", len(ex.h.Comms))
	for _, c := range ex.h.Comms {
		appl := int32(1)
		var tasks []int32
		for _, m := range c.Members {
			if m < 0 || m >= ex.nproc {
				continue
			}
			if len(tasks) == 0 {
				appl = ex.lay.appl[m]
			}
			if ex.lay.appl[m] == appl {
				tasks = append(tasks, ex.lay.task[m])
			}
		}
		fmt.Fprintf(w, "c:%d:%d:%d", appl, c.ID, len(tasks))
		for _, t := range tasks {
			fmt.Fprintf(w, ":%d", t)
		}
		w.WriteByte('\n')
	}
}

// values returns the .pcf value names of an event type kept by the importer.
func (ex *exporter) values(typ int64) map[int64]string {
	out := map[int64]string{}
	var m map[string]string
	if err := json.Unmarshal([]byte(ex.h.Meta.Extra["prv.values."+strconv.FormatInt(typ, 10)]), &m); err == nil {
		for k, v := range m {
			if n, err := strconv.ParseInt(k, 10, 64); err == nil {
				out[n] = v
			}
		}
	}
	return out
}

// pcf writes the .pcf: units, states, and one EVENT_TYPE block per type.
func (ex *exporter) pcf(w *bufio.Writer) {
	w.WriteString("DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\nLOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\nNUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\n")
	w.WriteString("DEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\n\n")
	ids := map[int32]string{}
	for _, s := range ex.h.States {
		ids[s.ID] = s.Name
	}
	for id := range ex.states {
		if _, ok := ids[id]; !ok {
			ids[id] = ""
		}
	}
	w.WriteString("STATES\n")
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		name := oneLine(ids[id])
		if name == "" {
			name = "state " + strconv.Itoa(int(id))
		}
		fmt.Fprintf(w, "%d    %s\n", id, name)
	}
	w.WriteString("\n\n")
	block := func(typ int64, name string, vals map[int64]string) {
		fmt.Fprintf(w, "EVENT_TYPE\n0    %d    %s\n", typ, oneLine(name))
		if len(vals) > 0 {
			w.WriteString("VALUES\n")
			for _, v := range slices.Sorted(maps.Keys(vals)) {
				fmt.Fprintf(w, "%d      %s\n", v, oneLine(vals[v]))
			}
		}
		w.WriteString("\n\n")
	}
	ix := trace.NewIndex(ex.h)
	evIDs := map[int32]bool{}
	for _, e := range ex.h.Events {
		evIDs[e.ID] = true
	}
	for id := range ex.events {
		evIDs[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(evIDs)) {
		block(int64(id), ix.EventName(id), ex.values(int64(id)))
	}
	for _, typ := range slices.Sorted(maps.Keys(ex.usedCounters)) {
		id := ex.usedCounters[typ]
		name := "counter " + strconv.Itoa(int(id))
		if c := ix.Counter(id); c != nil && c.Name != "" {
			name = c.Name
		}
		block(typ, name, nil)
	}
	// MPI call and function types: the value names are the region labels.
	regs := map[int64]map[int64]string{}
	for typ := range ex.regionTypes {
		regs[typ] = ex.values(typ)
	}
	if ex.fromPRV {
		for _, rd := range ex.h.Regions {
			if typ, v, ok := RegionType(rd.ID); ok && ex.regionTypes[typ] {
				regs[typ][v] = rd.Label
			}
		}
	}
	if ex.userRegions {
		// Regions written as user functions by id+1 (one block with the
		// user functions of the trace's own, if any).
		vals := regs[UserFunctionType]
		if vals == nil {
			vals = map[int64]string{}
			regs[UserFunctionType] = vals
		}
		vals[0] = "End"
		for _, rd := range ex.h.Regions {
			if _, _, ok := RegionType(rd.ID); !ok || !ex.fromPRV {
				vals[int64(rd.ID)+1] = rd.Label
			}
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(regs)) {
		name := ex.h.Meta.Extra["prv.type."+strconv.FormatInt(typ, 10)]
		switch {
		case name != "":
		case typ == UserFunctionType && ex.userRegions:
			name = "User function"
		case IsFunctionType(typ):
			name = "function type " + strconv.FormatInt(typ, 10)
		default:
			name = "MPI type " + strconv.FormatInt(typ, 10)
		}
		block(typ, name, regs[typ])
	}
}

// row writes the .row: CPU, NODE and THREAD names.
func (ex *exporter) row(w *bufio.Writer) {
	l := ex.lay
	fmt.Fprintf(w, "LEVEL CPU SIZE %d\n", ex.nproc)
	for p := int32(0); p < ex.nproc; p++ {
		fmt.Fprintf(w, "%d.%d\n", l.node[p], l.cpu[p])
	}
	fmt.Fprintf(w, "\nLEVEL NODE SIZE %d\n", len(l.cpusPerNode))
	for n := range l.cpusPerNode {
		fmt.Fprintf(w, "node%d\n", n+1)
	}
	names := make([]string, ex.nproc)
	for _, p := range ex.h.Procs {
		if p.Run == ex.run && p.Proc >= 0 && p.Proc < ex.nproc {
			names[p.Proc] = oneLine(p.Name)
		}
	}
	fmt.Fprintf(w, "\nLEVEL THREAD SIZE %d\n", ex.nproc)
	for p, n := range names {
		if n == "" || strings.HasPrefix(n, "LEVEL ") {
			n = fmt.Sprintf("%d.%d.%d", l.appl[p], l.task[p], l.thread[p])
		}
		fmt.Fprintln(w, n)
	}
}

// oneLine makes a name fit on one .pcf/.row line.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s))
}
