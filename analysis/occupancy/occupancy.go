// Package occupancy computes state occupancies as Lyon describes them
// ("State occupancy information for performance comparisons", NISTIR 4418):
// every process of a run is, at any time, in one of m modes; the
// microstate trace (T1) records which processes are in each mode over
// time, the macrostate trace (T2) only how many (adjacent identical rows
// merged, durations summed), the occupancy table (T3) drops time and sums
// the durations per macrostate, projections (T4) keep a subset of the
// modes, and the mean node occupancy (T5) is Σ (A_j/p)·occupancy, which
// equals the mean over processes of the local per-process occupancy.
//
// A process exists from its first state record on, until it enters a state
// the trace marks Absent (trace.StateDef.Absent: a Go goroutine that
// ended). Before and after, it is in no mode: a macrostate counts the
// processes that exist, and its counts sum to fewer than p while some do
// not (docs/occupancy.md, "Processes that come and go"). Options.Start puts
// processes in a mode before their first record instead.
//
// An Accumulator streams the time-merged records of one run in O(1) per
// record (the mode counts and a packed macrostate key change by one per
// record). Accumulators of consecutive time shards of a run can be computed
// in parallel and merged: a shard does not need to know the modes of the
// processes at its beginning; they are resolved by Merge.
//
// The memory of an Accumulator is bounded by Options.Budget, not by the
// number of distinct macrostates: past the budget, its table of
// macrostates is written, sorted, to temporary files (package spill) and
// merged back at Result, exactly. The Result holds the summary (how many
// macrostates, the mean node occupancy, each mode's histogram), the
// Options.Top rows of largest occupancy, and, with Options.Stream, the whole
// table to stream in order of first appearance.
package occupancy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/trace"
)

// Options select what an Accumulator keeps.
type Options struct {
	// Trace keeps the macrostate time trace (T2) in the Result. Without it
	// memory does not grow with the length of the trace.
	Trace bool
	// Micro, when not nil, is called with every microstate row (T1): the
	// time it began, its duration and the mode of each process (-1 for a
	// process without a state record yet in this shard, -2 for one that
	// entered a state marked Absent). modes is valid only during the call.
	Micro func(t, dur int64, modes []int32)
	// Start names the mode processes are in before their first state
	// record. When empty, a process does not exist before its first state
	// record: it is in no mode.
	Start string
	// Top keeps in Result.Table only the rows of largest occupancy, at
	// most Top (ties to the earlier row), in order of first appearance. 0
	// keeps every row: the whole table, in memory (unless Stream is set).
	Top int
	// Stream keeps the whole table in Result.Stream, to be read row by
	// row in order of first appearance, in temporary files when it
	// outgrows the budget; Result.Table then holds the Top rows only (none
	// with Top 0). The caller must close Result.Stream.
	Stream bool
	// Budget bounds the memory (bytes) of the table of distinct
	// macrostates, and at Result that of sorting the rows: past it, they
	// are written, sorted, to temporary files in os.TempDir(). 0 means
	// DefaultBudget. Each accumulator has its own: shards accumulated in
	// parallel take one each, and a Merge holds both shards' tables until
	// the merged one is let go.
	Budget int64
}

// Row is one row of the macrostate trace (T2).
type Row struct {
	// T is the time the row began and Dur its duration (ns).
	T, Dur int64
	// Micro is the index of the row's first microstate (T1 row, from 0)
	// and N the number of microstate rows merged into it.
	Micro, N int64
	// Counts is the number of processes in each mode (the macrostate).
	Counts []int32
}

// Macro is one row of the occupancy table (T3) or of a projection (T4).
type Macro struct {
	// Counts is the number of processes in each mode (of the projection).
	Counts []int32 `json:"counts"`
	// Occupancy is the total time spent in the macrostate (ns).
	Occupancy int64 `json:"occupancy_ns"`
}

type prefixRow struct {
	t, dur, micro int64
	counts        []int32
}

const never = math.MaxInt32

// The mode of a process that is in none: not known yet in a shard (it may
// have one from an earlier shard), or absent (it does not exist).
const (
	unknownMode int32 = -1
	absentMode  int32 = -2
)

// Accumulator computes the occupancies of one run, or of one time shard of
// a run, from its records in time order. The zero value is not usable; use
// NewAccumulator.
type Accumulator struct {
	modes     *Modes
	opts      Options
	m, p      int
	startMode int

	packed bool
	lay    layout
	inc    []pkey // per mode: the key of one process in it
	fast   bool   // packed, and neither the T2 trace nor microstates wanted

	t0, now, maxT int64
	records       int64
	micro         int64

	mode    []int32 // per process; unknownMode while not known, absentMode while absent
	counts  []int32 // known processes per mode
	key     pkey    // packed counts (meaningful when packed)
	unknown int

	since      []int64 // per process: time its current mode began
	local      []int64 // p×m occupancy per process and mode
	unknownDur []int64 // per process: time from t0 to its first state
	firstRow   []int32 // per process: first prefix row in which it is known

	prefix []prefixRow // rows with processes of unknown mode

	tab    *table
	lut    modeTable
	trace  []Row
	rows   int64 // T2 rows
	hasCur bool
	cur    int     // table entry of the current T2 row (valid until the next new entry)
	curDur int64   // its duration not yet added to its entry
	curKey pkey    // its packed key
	curCnt []int32 // its counts
	first  []int32 // counts of the first T2 row
}

// NewAccumulator returns an accumulator of a run with p processes whose
// shard begins at time t0 (0 for the beginning of the run).
func NewAccumulator(modes *Modes, p int, t0 int64, opts Options) (*Accumulator, error) {
	m := len(modes.Names)
	if m == 0 {
		return nil, errors.New("occupancy: no modes")
	}
	if p < 0 {
		return nil, fmt.Errorf("occupancy: %d processes", p)
	}
	a := &Accumulator{modes: modes, opts: opts, m: m, p: p, startMode: -1, t0: t0, now: t0, maxT: t0}
	if opts.Start != "" {
		if a.startMode = modes.Index(opts.Start); a.startMode < 0 {
			return nil, fmt.Errorf("occupancy: start mode %q is not one of the modes %s", opts.Start, strings.Join(modes.Names, ", "))
		}
	}
	a.lay, a.packed = newLayout(m, uint(bits.Len(uint(p))))
	a.inc = make([]pkey, m)
	for j := range a.inc {
		a.inc[j] = a.lay.unit(j)
	}
	a.fast = a.packed && !opts.Trace && opts.Micro == nil
	if opts.Top < 0 {
		return nil, fmt.Errorf("occupancy: top %d rows: want 0 or more", opts.Top)
	}
	a.tab = newTable(a.packed, m, a.lay, opts.Budget)
	a.mode = make([]int32, p)
	for i := range a.mode {
		a.mode[i] = -1
	}
	a.lut = newModeTable(modes)
	a.counts = make([]int32, m)
	a.curCnt = make([]int32, m)
	a.unknown = p
	a.since = make([]int64, p)
	a.local = make([]int64, p*m)
	a.unknownDur = make([]int64, p)
	a.firstRow = make([]int32, p)
	for i := range a.firstRow {
		a.firstRow[i] = never
	}
	return a, nil
}

// Add adds the next record of the run (records in time order, as
// store.Records returns them). Records other than state entries only
// extend the run's end. A state marked Absent takes its process out of
// every mode. A state that maps to no mode, a process outside the run or a
// record earlier than the one before (which would make mode intervals
// overlap) is an error.
func (a *Accumulator) Add(r *trace.Record) error {
	a.records++
	if r.Kind != trace.KindState {
		if e := r.EndTime(); e > a.maxT {
			a.maxT = e
		}
		return nil
	}
	if uint32(r.Proc) >= uint32(a.p) {
		return fmt.Errorf("occupancy: a state record of process %d at %d ns, but the run has %d processes", r.Proc, r.T, a.p)
	}
	k, ok := a.lut.mode(r.ID)
	if !ok {
		return fmt.Errorf("occupancy: process %d enters state %d at %d ns, which is mapped to no mode", r.Proc, r.ID, r.T)
	}
	if r.T != a.now {
		if r.T < a.now {
			return fmt.Errorf("occupancy: process %d enters state %d at %d ns, before %d ns: records out of time order make mode intervals overlap", r.Proc, r.ID, r.T, a.now)
		}
		// The common case inline: packed keys, nothing but the table kept,
		// every process known, and the macrostate of the current T2 row.
		if dur := r.T - a.now; a.fast && a.unknown == 0 && a.hasCur && a.key == a.curKey {
			a.micro++
			a.curDur += dur
		} else {
			a.emit(dur)
			if a.tab.err != nil {
				return a.tab.err
			}
		}
		a.now = r.T
	}
	i := int(r.Proc)
	old := a.mode[i]
	if old == k {
		return nil
	}
	if old < 0 || k < 0 {
		a.set(i, k)
		return nil
	}
	a.counts[old]--
	a.counts[k]++
	in, out := a.inc[k], a.inc[old]
	a.key.lo += in.lo - out.lo
	a.key.hi += in.hi - out.hi
	a.local[i*a.m+int(old)] += a.now - a.since[i]
	a.since[i] = a.now
	a.mode[i] = k
	return nil
}

// set puts process i in mode k (or absentMode) at the current time.
func (a *Accumulator) set(i int, k int32) {
	old := a.mode[i]
	if old == k {
		return
	}
	switch {
	case old == unknownMode:
		a.unknown--
		a.firstRow[i] = int32(len(a.prefix))
		a.unknownDur[i] = a.now - a.t0
	case old >= 0:
		a.counts[old]--
		a.key.lo -= a.inc[old].lo
		a.key.hi -= a.inc[old].hi
		a.local[i*a.m+int(old)] += a.now - a.since[i]
	}
	a.since[i] = a.now
	a.mode[i] = k
	if k >= 0 {
		a.counts[k]++
		a.key.lo += a.inc[k].lo
		a.key.hi += a.inc[k].hi
	}
}

// emit ends the current microstate row after dur.
func (a *Accumulator) emit(dur int64) {
	if a.opts.Micro != nil {
		a.opts.Micro(a.now, dur, a.mode)
	}
	idx := a.micro
	a.micro++
	if a.unknown > 0 {
		a.prefix = append(a.prefix, prefixRow{t: a.now, dur: dur, micro: idx, counts: slices.Clone(a.counts)})
		return
	}
	a.push(a.now, dur, idx, 1, a.counts, a.key)
}

// packKey returns the packed key of counts.
func (a *Accumulator) packKey(counts []int32) pkey { return a.lay.pack(counts) }

// push appends a macrostate row to T2, merging it with the current row
// when the macrostate is the same.
func (a *Accumulator) push(t, dur, micro, n int64, counts []int32, key pkey) {
	if a.hasCur && (a.packed && key == a.curKey || !a.packed && slices.Equal(counts, a.curCnt)) {
		a.curDur += dur
		if a.opts.Trace {
			last := &a.trace[len(a.trace)-1]
			last.Dur += dur
			last.N += n
		}
		return
	}
	if a.hasCur {
		a.tab.add(a.cur, a.curDur)
	}
	a.cur = a.tab.entry(counts, key, t)
	a.curDur = dur
	a.curKey = key
	if !a.packed {
		copy(a.curCnt, counts)
	}
	if a.first == nil {
		a.first = slices.Clone(counts)
	}
	a.hasCur = true
	a.rows++
	if a.opts.Trace {
		a.trace = append(a.trace, Row{T: t, Dur: dur, Micro: micro, N: n, Counts: slices.Clone(counts)})
	}
}

// current returns the counts of the current T2 row.
func (a *Accumulator) current() []int32 {
	if a.packed {
		a.lay.unpack(a.curKey, a.curCnt)
	}
	return a.curCnt
}

// sync adds the current T2 row's duration so far to its entry.
func (a *Accumulator) sync() {
	if a.hasCur {
		a.tab.add(a.cur, a.curDur)
		a.curDur = 0
	}
}

// advance ends the current microstate at t.
func (a *Accumulator) advance(t int64) {
	if t > a.now {
		a.emit(t - a.now)
		a.now = t
	}
	for i, k := range a.mode {
		if k >= 0 {
			a.local[i*a.m+int(k)] += a.now - a.since[i]
			a.since[i] = a.now
		}
	}
}

// Merge appends b, the accumulator of the time shard that follows a's in
// the same run, to a. b's shard must begin (its t0) no earlier than a's
// last record; a's last microstate lasts until then. The modes of
// processes that b met only later are resolved from a. The result equals
// one pass over both shards' records when b's t0 is the time of its first
// state record, or b has none (otherwise the microstate at the boundary
// counts twice in Microstates; the tables are the same). b must not be
// used afterwards.
func (a *Accumulator) Merge(b *Accumulator) error {
	if b.p != a.p || b.m != a.m || b.modes != a.modes {
		return fmt.Errorf("occupancy: merging shards of different runs or modes (%d and %d processes, %d and %d modes)", a.p, b.p, a.m, b.m)
	}
	if a.opts.Trace != b.opts.Trace {
		return errors.New("occupancy: merging a shard that keeps the macrostate trace with one that does not")
	}
	if a.packed != b.packed {
		return errors.New("occupancy: merging shards of packed and string keys")
	}
	if err := errors.Join(a.tab.err, b.tab.err); err != nil {
		return err
	}
	if b.t0 < a.now {
		return fmt.Errorf("occupancy: the shard beginning at %d ns overlaps the previous shard, which ends at %d ns", b.t0, a.now)
	}
	// A shard without state records (b.unknown == b.p) only adds records
	// and extends the end: a's last microstate goes on through it.
	stateless := b.unknown == b.p
	if stateless {
		a.records += b.records
		a.maxT = max(a.maxT, b.maxT)
		return b.tab.close()
	}
	a.advance(b.t0)
	// Resolve b's rows with processes of unknown mode from a's final modes.
	order := make([]int, 0, b.p)
	extra := make([]int32, a.m)
	still := 0
	for i := range b.p {
		if b.firstRow[i] > 0 {
			order = append(order, i)
			switch k := a.mode[i]; {
			case k >= 0:
				extra[k]++
			case k == unknownMode:
				still++
			}
		}
	}
	slices.SortFunc(order, func(x, y int) int { return int(b.firstRow[x]) - int(b.firstRow[y]) })
	aPrefix := int32(len(a.prefix))
	counts := make([]int32, a.m)
	for r, row := range b.prefix {
		for len(order) > 0 && int(b.firstRow[order[0]]) <= r {
			switch k := a.mode[order[0]]; {
			case k >= 0:
				extra[k]--
			case k == unknownMode:
				still--
			}
			order = order[1:]
		}
		for j := range counts {
			counts[j] = row.counts[j] + extra[j]
		}
		if still > 0 {
			a.prefix = append(a.prefix, prefixRow{t: row.t, dur: row.dur, micro: row.micro + a.micro, counts: slices.Clone(counts)})
			continue
		}
		a.push(row.t, row.dur, row.micro+a.micro, 1, counts, a.packKey(counts))
	}
	// b's rows whose modes b knew.
	if b.hasCur {
		if a.opts.Trace {
			for _, row := range b.trace {
				a.push(row.T, row.Dur, row.Micro+a.micro, row.N, row.Counts, a.packKey(row.Counts))
			}
		} else {
			if a.hasCur {
				if slices.Equal(a.current(), b.first) {
					a.rows--
				}
				a.tab.add(a.cur, a.curDur)
				a.curDur = 0
			}
			b.sync()
			b.tab.eachMem(func(counts []int32, key pkey, occ, first int64) {
				a.tab.merge(counts, key, occ, first)
			})
			if err := a.tab.take(b.tab); err != nil {
				return err
			}
			a.rows += b.rows
			if a.first == nil {
				a.first = slices.Clone(b.first)
			}
		}
		if !a.opts.Trace {
			a.cur = a.tab.entry(b.current(), b.curKey, later)
		}
		a.curKey = b.curKey
		copy(a.curCnt, b.current())
		a.hasCur = true
	}
	// Per-process counters and modes.
	for i := range a.p {
		for j := range a.m {
			a.local[i*a.m+j] += b.local[i*a.m+j]
		}
		if b.mode[i] == unknownMode {
			continue
		}
		// Until its first record in b, i stayed as a left it: in a mode,
		// absent, or not known yet.
		switch k := a.mode[i]; {
		case k >= 0:
			a.local[i*a.m+int(k)] += b.unknownDur[i]
		case k == unknownMode:
			a.unknownDur[i] = b.t0 - a.t0 + b.unknownDur[i]
			a.firstRow[i] = aPrefix + b.firstRow[i]
			a.unknown--
		}
		a.mode[i] = b.mode[i]
		a.since[i] = b.since[i]
	}
	clear(a.counts)
	for _, k := range a.mode {
		if k >= 0 {
			a.counts[k]++
		}
	}
	a.key = a.packKey(a.counts)
	a.now = b.now
	a.micro += b.micro
	a.records += b.records
	a.maxT = max(a.maxT, b.maxT)
	if err := b.tab.close(); err != nil {
		return err
	}
	return a.tab.err
}

// Result ends the run at end (when end is less than the last record's
// time, at the last record's time or completion time) and returns its
// occupancies. Processes are in Options.Start before their first state
// record, or without it absent, in no mode. The accumulator must not be
// used afterwards.
func (a *Accumulator) Result(end int64) (*Result, error) {
	end = max(end, a.maxT, a.now)
	a.advance(end)
	if len(a.prefix) > 0 {
		s, err := NewAccumulator(a.modes, a.p, a.t0, a.opts)
		if err != nil {
			a.tab.close()
			return nil, err
		}
		if !a.packed {
			// (Tests force string keys on an accumulator that could pack.)
			s.packed, s.fast, s.tab = false, false, newTable(false, s.m, s.lay, s.opts.Budget)
		}
		s.opts.Micro = nil
		before := absentMode
		if a.startMode >= 0 {
			before = int32(a.startMode)
		}
		for i := range s.p {
			s.set(i, before)
		}
		if err := s.Merge(a); err != nil {
			a.tab.close()
			s.tab.close()
			return nil, err
		}
		s.advance(end)
		a = s
	}
	a.sync()
	res := &Result{Modes: a.modes.Names, Procs: a.p, Begin: a.t0, End: end, Records: a.records,
		Microstates: a.micro, Rows: a.rows, Trace: a.trace}
	if err := a.table(res); err != nil {
		return nil, err
	}
	res.Local = make([][]int64, a.p)
	res.AbsentNS = int64(a.p) * (end - a.t0)
	for i := range a.p {
		res.Local[i] = a.local[i*a.m : (i+1)*a.m : (i+1)*a.m]
		for _, v := range res.Local[i] {
			res.AbsentNS -= v
		}
	}
	return res, nil
}

// table fills res's table and summary from the accumulator's table, and
// lets the table go.
func (a *Accumulator) table(res *Result) error {
	defer a.tab.close()
	if a.tab.err != nil {
		return a.tab.err
	}
	whole := a.opts.Top == 0 && !a.opts.Stream
	s := newSummary(a.m, a.p, a.opts.Top, a.opts.Stream || whole, a.tab)
	err := a.tab.each(s.add)
	var rows *TableStream
	if s.rows != nil {
		var e error
		rows, e = s.rows.done()
		err = errors.Join(err, e)
	}
	if err != nil {
		rows.Close()
		return err
	}
	res.Observed, res.Histogram, res.modeSum = s.observed, s.hist, s.modeSum
	switch {
	case s.top != nil:
		res.Table = s.top.macros(a.tab)
	case whole:
		res.Table, err = rows.All()
		if e := rows.Close(); err == nil {
			err = e
		}
		rows = nil
	}
	if a.opts.Stream {
		res.Stream = rows
	}
	return err
}

// Result holds the occupancies of one run.
type Result struct {
	// Run is the run's id (set by Compute).
	Run int32
	// Modes are the mode names (the columns A_1..A_m).
	Modes []string
	// Procs is the number of processes p.
	Procs int
	// Begin and End delimit the time covered (ns).
	Begin, End int64
	// Records is the number of records read, Microstates the number of
	// microstate rows (T1) and Rows the number of macrostate rows (T2).
	Records, Microstates, Rows int64
	// Trace is the macrostate trace (T2), when Options.Trace was set.
	Trace []Row
	// Table is the occupancy table (T3) in order of first appearance: the
	// whole table, or with Options.Top the rows of largest occupancy only,
	// or none with Options.Stream and no Top.
	Table []Macro
	// Observed is the number of distinct macrostates: the rows of the
	// whole table.
	Observed int
	// Stream is the whole table, to be read in order of first appearance,
	// with Options.Stream (nil otherwise); the caller closes it.
	Stream *TableStream `json:"-"`
	// Histogram[j][k] is the time (ns) with k processes in mode j: the
	// table projected on mode j.
	Histogram [][]int64
	// Local is the occupancy of each process in each mode (ns): the
	// counters a local collection keeps.
	Local [][]int64
	// AbsentNS is the time processes did not exist, summed over the
	// processes (ns): p·(End−Begin) minus every Local counter.
	AbsentNS int64

	// modeSum[j] is Σ count_j·occupancy over the table, exactly (128
	// bits), for Mean.
	modeSum [][2]uint64
}

// eachRow calls fn with every row of the whole table in order of first
// appearance (m.Counts valid only during the call), from Stream or Table;
// it is an error when Table holds only the rows of largest occupancy.
func (r *Result) eachRow(fn func(m Macro) error) error {
	if r.Stream != nil {
		return r.Stream.Each(fn)
	}
	if r.Observed != 0 && len(r.Table) != r.Observed {
		return fmt.Errorf("occupancy: the result holds %d of the %d rows of the occupancy table (Options.Top); this needs the whole table (Options.Stream)", len(r.Table), r.Observed)
	}
	for _, m := range r.Table {
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Possible returns the number of possible macrostates: C(p+m−1, p) when
// every process exists throughout, else C(p+m, p), the counts of a
// macrostate then summing to at most p (the processes absent are one more
// "mode" no column shows).
func (r *Result) Possible() *big.Int {
	n := int64(r.Procs + len(r.Modes) - 1)
	if r.AbsentNS > 0 {
		n++
	}
	return new(big.Int).Binomial(n, int64(r.Procs))
}

// Project sums the occupancy table over the modes not in keep (T4). The
// rows are sorted by their counts, largest first.
func (r *Result) Project(keep []int) ([]Macro, error) {
	for _, k := range keep {
		if k < 0 || k >= len(r.Modes) {
			return nil, fmt.Errorf("occupancy: mode %d out of range (%d modes)", k, len(r.Modes))
		}
	}
	idx := map[string]int{}
	var out []Macro
	c := make([]int32, len(keep))
	err := r.eachRow(func(e Macro) error {
		for i, k := range keep {
			c[i] = e.Counts[k]
		}
		s := Key(c)
		j, ok := idx[s]
		if !ok {
			j = len(out)
			idx[s] = j
			out = append(out, Macro{Counts: slices.Clone(c)})
		}
		out[j].Occupancy += e.Occupancy
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(x, y Macro) int { return slices.Compare(y.Counts, x.Counts) })
	return out, nil
}

// Mean returns the mean node occupancy of each mode from the occupancy
// table (T5): Σ over macrostates of (A_j/p)·occupancy, in ns, the sum
// computed exactly (in integers) and divided by p. Absent time is in no
// mode: the means then sum to less than End−Begin.
func (r *Result) Mean() []float64 {
	if r.modeSum != nil {
		return means(r.modeSum, r.Procs)
	}
	out := make([]float64, len(r.Modes))
	if r.Procs == 0 {
		return out
	}
	for _, e := range r.Table {
		for j, c := range e.Counts {
			out[j] += float64(c) * float64(e.Occupancy)
		}
	}
	for j := range out {
		out[j] /= float64(r.Procs)
	}
	return out
}

// LocalMean returns the mean node occupancy of each mode from the local
// per-process counters: (1/p)·Σ_nodes occupancy. It equals Mean.
func (r *Result) LocalMean() []float64 { return LocalMean(r.Local) }

// LocalMean averages per-process occupancy counters (local[i][j]: time
// process i spent in mode j) over the processes.
func LocalMean[T int64 | float64](local [][]T) []float64 {
	if len(local) == 0 {
		return nil
	}
	out := make([]float64, len(local[0]))
	for _, row := range local {
		for j, v := range row {
			out[j] += float64(v)
		}
	}
	for j := range out {
		out[j] /= float64(len(local))
	}
	return out
}

// Rates is a rate table r(macrostate): the processing rate of each
// macrostate, keyed by Key(counts); the key "*" (DefaultRate) gives the
// rate of every macrostate not listed.
type Rates map[string]float64

// DefaultRate is the key of the rate of macrostates a Rates table does not
// list.
const DefaultRate = "*"

// Work returns the total work Σ occupancy × rate over the whole
// occupancy table (occupancy in seconds), summed in order of first
// appearance, or an error naming the observed macrostates the table has no
// rate for.
func (r *Result) Work(rates Rates) (float64, error) {
	var w work
	if err := r.eachRow(func(m Macro) error { w.add(m, rates); return nil }); err != nil {
		return 0, err
	}
	return w.result()
}

// WorkOf returns Σ occupancy × rate over rows (the occupancy table, or a
// projection of it with rates r_j of the projected counts), occupancy in
// seconds, or an error naming the rows the table has no rate for.
func WorkOf(rows []Macro, rates Rates) (float64, error) {
	var w work
	for _, m := range rows {
		w.add(m, rates)
	}
	return w.result()
}

// maxMissing is the number of macrostates without a rate an error names.
const maxMissing = 20

// work sums occupancy × rate row by row.
type work struct {
	w       float64
	missing []string
	more    int
}

func (w *work) add(m Macro, rates Rates) {
	k := Key(m.Counts)
	rate, ok := rates[k]
	if !ok {
		if rate, ok = rates[DefaultRate]; !ok {
			if len(w.missing) < maxMissing {
				w.missing = append(w.missing, "("+k+")")
			} else {
				w.more++
			}
			return
		}
	}
	w.w += rate * float64(m.Occupancy) / 1e9
}

func (w *work) result() (float64, error) {
	if w.missing != nil {
		more := ""
		if w.more > 0 {
			more = fmt.Sprintf(" and %d more", w.more)
		}
		return 0, fmt.Errorf("occupancy: no rate for macrostate(s) %s%s", strings.Join(w.missing, ", "), more)
	}
	return w.w, nil
}

// Key formats a macrostate as "c1,c2,...,cm", the key of a Rates table.
func Key(counts []int32) string {
	b := make([]byte, 0, 4*len(counts))
	for j, c := range counts {
		if j > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(c), 10)
	}
	return string(b)
}

// eachRecord calls fn for every record of r, checking ctx every batch.
func eachRecord(ctx context.Context, r trace.Reader, fn func(*trace.Record) error) error {
	n := 0
	return trace.Each(r, func(rec *trace.Record) error {
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return fn(rec)
	})
}

// Compute streams the time-merged records of r (one run after another, as
// store.Records returns them) and returns the occupancies of each run.
// The number of processes of a run comes from h.Runs; every run begins at
// time 0.
func Compute(ctx context.Context, h *trace.Header, r trace.Reader, modes *Modes, opts Options) ([]*Result, error) {
	var out []*Result
	var acc *Accumulator
	run := int32(-1)
	finish := func() error {
		if acc == nil {
			return nil
		}
		res, err := acc.Result(0)
		if err != nil {
			return fmt.Errorf("run %d: %w", run, err)
		}
		res.Run = run
		out = append(out, res)
		return nil
	}
	// A batch that stays in the L2 cache between the copy and the pass.
	buf := make([]trace.Record, 512)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(buf)
		for i := 0; i < n; i++ {
			rec := &buf[i]
			if acc == nil || rec.Run != run {
				if e := finish(); e != nil {
					return nil, e
				}
				run = rec.Run
				p := 0
				if int(run) >= 0 && int(run) < len(h.Runs) {
					p = int(h.Runs[run].Procs)
				}
				var e error
				if acc, e = NewAccumulator(modes, p, 0, opts); e != nil {
					return nil, e
				}
			}
			if e := acc.Add(rec); e != nil {
				return nil, fmt.Errorf("run %d: %w", run, e)
			}
		}
		if errors.Is(err, io.EOF) {
			if e := finish(); e != nil {
				return nil, e
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
