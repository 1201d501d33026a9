// Package state reconstructs total parallel states from per-process block
// traces, as section 5.5 of Gomez, Cai & Schubert (2017) describes: each
// record sets its process's column; a new state (row) begins whenever the
// time changes, carrying the other columns over.
//
// A process exists from its first state record on, until it enters a state
// the trace marks Absent (trace.StateDef.Absent: a Go goroutine that ended).
// Before and after, its column holds Absent: it is in no block, and the
// block counts, the class and its probability are those of the processes
// that exist (see docs/entropy.md, "Processes that come and go"). The paper's
// start block, every process in it at time 0, is Options.Start: a trace
// whose processes all record their first state at time 0 gives the same
// states either way. A row in which no process exists is not a state and
// is not delivered.
//
// Reconstruction streams over the time-merged records of a trace and keeps,
// besides the state vector, the quantities the entropy and PCA analyses
// need, updated in O(1) per record because consecutive states differ in one
// column: the number of processes in each block, the log-multiplicity of
// the state's class and a hash of the class (the multiset of blocks, which
// is what the paper treats as equivalent states).
package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/parscope/parscope/trace"
)

// Options select what Reconstruct builds.
type Options struct {
	// Procs restricts the state to these processes, in this order (a
	// partial state, e.g. philosophers 4,5,6). nil means every process.
	Procs []int32
	// Start is the block every process is in from time 0 until its first
	// record, when StartSet is true (the paper's start block). When
	// StartSet is false processes are Absent until their first record.
	Start    int32
	StartSet bool
	// PerRecord makes a row of every record instead of one per distinct
	// time (the variant that keeps a row per record); the initial state
	// is a row of its own in both variants.
	PerRecord bool
	// ValueEvent, when not nil, builds the state from the values of this
	// event instead of from block ids: the "representative variable" of
	// section 3.1, recorded as events whose Value is the variable.
	ValueEvent *int32
	// Seed, when not nil, is the state of every selected process (in column
	// order) at time From: each run's first row begins at From with X = Seed
	// instead of at 0 with every process in Start. It reconstructs one time
	// window of a trace, seeded with the last state of every process before
	// the window, from the window's records alone; the window's rows equal
	// those of a reconstruction of the whole trace from From on (the class
	// quantities of the tracker may differ in the last bits: they are sums
	// taken in another order).
	Seed []int32
	From int64
	// To, when positive, is the end of a seeded window: the last row lasts
	// until To instead of having duration 0 (the run goes on after the
	// window). A seeded window without records is then one row, of run Run,
	// from From to To (none when the seed has every process Absent).
	To  int64
	Run int32
}

// Row is one parallel state of one run. X, Counts and Blocks are owned by
// the reconstruction and valid only during the callback.
type Row struct {
	Run int32
	// T is the time at which the state was entered (ns); Dur is how long
	// it lasted: the time to the next row of the run, 0 for the last row.
	T, Dur int64
	// Index counts the rows of the run from 0. Row 0 is the run's
	// first state in which a process exists; later rows differ from the
	// previous one in the columns listed in Tracker.Changed.
	Index int64
	// X holds the block (or value) of each selected process, Absent for
	// a process that does not exist at T.
	X []int32
	// Tracker gives the block counts and class quantities of X.
	*Tracker
}

// Reconstruct streams the records of r (in time-merged order, as
// store.Records returns them) and calls fn once per reconstructed state.
// Records that are not state entries (or not the ValueEvent) are skipped.
// Rows are delivered one record late so that each carries its duration.
func Reconstruct(ctx context.Context, h *trace.Header, r trace.Reader, opts Options, fn func(*Row) error) error {
	b, err := NewBuilder(h, opts, fn)
	if err != nil {
		return err
	}
	buf := make([]trace.Record, 4096)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		for i := 0; i < n; i++ {
			if e := b.Add(&buf[i]); e != nil {
				return e
			}
		}
		if errors.Is(err, io.EOF) {
			return b.Close()
		}
		if err != nil {
			return err
		}
	}
}

// Builder is Reconstruct for records pushed to it, as an accumulator of
// the engine is given batches of a pass: Add the records in time-merged
// order, then Close to deliver the last row. fn is called as Reconstruct
// calls it.
type Builder struct {
	rc *reconstructor
}

// NewBuilder returns a builder of the states of the trace with header h.
func NewBuilder(h *trace.Header, opts Options, fn func(*Row) error) (*Builder, error) {
	start := Absent
	if opts.StartSet {
		start = opts.Start
	}
	if opts.Seed != nil && opts.Procs != nil && len(opts.Seed) != len(opts.Procs) {
		return nil, fmt.Errorf("state: a seed of %d processes for a state of %d", len(opts.Seed), len(opts.Procs))
	}
	rc := &reconstructor{h: h, opts: opts, fn: fn, blocks: NewBlockIndex(h)}
	if opts.ValueEvent == nil {
		rc.absent = h.AbsentStates()
	}
	// A start block marked Absent is no block: processes are absent.
	rc.start = rc.block(start)
	return &Builder{rc: rc}, nil
}

// Add adds a record; those that are not state entries (or not the
// ValueEvent) are skipped.
func (b *Builder) Add(r *trace.Record) error { return b.rc.add(r) }

// Close delivers the last row; the builder must not be used afterwards.
func (b *Builder) Close() error { return b.rc.finish() }

// Absent is the block (column value of Row.X) of a process that does not
// exist at the time: before its first state record, and after it enters a
// state marked trace.StateDef.Absent until its next record. It is in no
// block: Tracker.Counts and the class leave it out. (With
// Options.ValueEvent, a value of -1 also reads as Absent.)
const Absent int32 = -1

type reconstructor struct {
	h      *trace.Header
	opts   Options
	start  int32
	fn     func(*Row) error
	blocks *BlockIndex
	absent map[int32]bool // states marked Absent

	run     int32
	rows    int64 // rows of the run delivered
	started bool
	cols    []int // process -> column (dense), -1 when not selected
	tr      *Tracker
	row     Row
	pending bool // row holds a state not yet delivered
}

// MaxProcs is the largest number of processes (columns) of a state: the
// reconstruction holds about TrackerBytes per process, so this bounds its
// memory to 4 GiB.
const MaxProcs = 1 << 26

// TrackerBytes is the memory the reconstruction holds per process.
const TrackerBytes = 64

func (rc *reconstructor) beginRun(run int32) error {
	rc.run, rc.started = run, true
	var procs []int32
	if rc.opts.Procs != nil {
		procs = rc.opts.Procs
	} else {
		n := int32(0)
		if int(run) < len(rc.h.Runs) {
			n = rc.h.Runs[run].Procs
		}
		if n > MaxProcs {
			return fmt.Errorf("state: run %d has %d processes: its states would need %d MiB (at most %d processes)",
				run, n, int64(n)*TrackerBytes>>20, MaxProcs)
		}
		for p := int32(0); p < n; p++ {
			procs = append(procs, p)
		}
	}
	rc.cols = rc.cols[:0]
	for i, p := range procs {
		for int(p) >= len(rc.cols) {
			rc.cols = append(rc.cols, -1)
		}
		rc.cols[p] = i
	}
	rc.tr = NewTracker(len(procs), rc.blocks, rc.start)
	rc.row = Row{Run: run, T: 0, X: rc.tr.X, Tracker: rc.tr}
	if rc.opts.Seed != nil {
		if len(rc.opts.Seed) != len(procs) {
			return fmt.Errorf("state: a seed of %d processes for run %d of %d processes", len(rc.opts.Seed), run, len(procs))
		}
		for c, v := range rc.opts.Seed {
			rc.tr.Set(c, rc.block(v))
		}
		rc.tr.resetChanged()
		rc.row.T = rc.opts.From
	}
	rc.pending = true
	rc.rows = 0
	return nil
}

// block returns the column value of a process entering state v: Absent
// for a state marked Absent.
func (rc *reconstructor) block(v int32) int32 {
	if rc.absent[v] {
		return Absent
	}
	return v
}

func (rc *reconstructor) add(r *trace.Record) error {
	var v int32
	switch {
	case rc.opts.ValueEvent != nil:
		if r.Kind != trace.KindEvent || r.ID != *rc.opts.ValueEvent {
			return nil
		}
		v = int32(r.Value)
	case r.Kind == trace.KindState:
		v = r.ID
	default:
		return nil
	}
	if !rc.started || r.Run != rc.run {
		if rc.started {
			if err := rc.emit(0); err != nil {
				return err
			}
		}
		if err := rc.beginRun(r.Run); err != nil {
			return err
		}
	}
	c := -1
	if int(r.Proc) < len(rc.cols) {
		c = rc.cols[r.Proc]
	}
	if c < 0 {
		if rc.opts.Procs == nil {
			return fmt.Errorf("state: process %d of run %d is not among the run's %d processes", r.Proc, r.Run, len(rc.tr.X))
		}
		return nil
	}
	// A new row begins when the time changes, or at every record in the
	// per-record variant; the row before it is delivered first, with its
	// duration, before the record changes the state.
	if r.T != rc.row.T || rc.opts.PerRecord {
		if err := rc.emit(r.T - rc.row.T); err != nil {
			return err
		}
		rc.row.T = r.T
		rc.pending = true
	}
	rc.tr.Set(c, rc.block(v))
	return nil
}

// emit delivers the pending row with duration dur. A row in which no
// process exists is not delivered; Changed then goes on collecting the
// columns that change until the next row that is.
func (rc *reconstructor) emit(dur int64) error {
	if !rc.pending {
		return nil
	}
	rc.pending = false
	if rc.tr.Present() == 0 {
		return nil
	}
	rc.row.Dur = dur
	rc.row.Index = rc.rows
	rc.rows++
	err := rc.fn(&rc.row)
	rc.tr.resetChanged()
	return err
}

func (rc *reconstructor) finish() error {
	if !rc.started && rc.opts.Seed != nil && rc.opts.To > 0 {
		if err := rc.beginRun(rc.opts.Run); err != nil {
			return err
		}
	}
	if !rc.started {
		return nil
	}
	var dur int64
	if rc.opts.To > 0 {
		dur = max(rc.opts.To-rc.row.T, 0)
	}
	return rc.emit(dur)
}

// BlockIndex maps block (state) ids to dense indices 0..N-1, in id order
// for the ids of the header's dictionary and in order of appearance for
// others.
type BlockIndex struct {
	small []int32 // id -> index+1 for ids in [0, smallIDs); 0 = not yet indexed
	dense map[int32]int
	ids   []int32
}

// smallIDs bounds the ids looked up in a slice rather than a map.
const smallIDs = 1 << 16

// NewBlockIndex indexes the state ids of h's dictionary.
func NewBlockIndex(h *trace.Header) *BlockIndex {
	b := &BlockIndex{dense: map[int32]int{}}
	if h != nil {
		ids := make([]int32, 0, len(h.States))
		for _, s := range h.States {
			ids = append(ids, s.ID)
		}
		slices.Sort(ids)
		for _, id := range ids {
			b.Index(id)
		}
	}
	return b
}

// Index returns the dense index of id, assigning the next one if new.
func (b *BlockIndex) Index(id int32) int {
	if uint32(id) < smallIDs {
		if int(id) < len(b.small) && b.small[id] != 0 {
			return int(b.small[id]) - 1
		}
	} else if i, ok := b.dense[id]; ok {
		return i
	}
	i := len(b.ids)
	b.ids = append(b.ids, id)
	if uint32(id) < smallIDs {
		if int(id) >= len(b.small) {
			b.small = append(b.small, make([]int32, max(int(id)+1, 2*len(b.small))-len(b.small))...)
		}
		b.small[id] = int32(i) + 1
	} else {
		b.dense[id] = i
	}
	return i
}

// Len returns the number of blocks indexed.
func (b *BlockIndex) Len() int { return len(b.ids) }

// ID returns the block id of dense index i.
func (b *BlockIndex) ID(i int) int32 { return b.ids[i] }

// Tracker holds a parallel state and, updated in O(1) per change, the
// number of processes in each block, Σ_k lnΓ(b_k+1) (for the class
// multiplicity), Σ_k b_k ln b_k (for the histogram entropy) and an
// order-independent hash of the class. Absent processes are in no block:
// the counts, the class and its quantities are those of the processes
// present (Present of them).
type Tracker struct {
	// X is the current state: the block of each process (column), Absent
	// for a process that does not exist.
	X []int32
	// Changed lists the columns set to a new block since the previous row
	// was delivered (in the order of their first change).
	Changed []int
	marked  []bool
	// Counts[k] is the number of processes in block k (dense index).
	Counts  []int
	present int
	blocks  *BlockIndex
	dense   []int // dense block index of each column, -1 when absent

	lnFactSum  float64   // Σ_k lnΓ(b_k+1)
	bLnBSum    float64   // Σ_k b_k ln b_k
	ln         []float64 // ln b for b = 0..P (ln 0 unused)
	xlnx       []float64 // b ln b for b = 0..P
	lnFact     []float64 // lnΓ(n+1) for n = 0..P
	classHash  uint64    // Σ over columns of h(block), a multiset hash
	blockHash  []uint64
	hashSource *rand.PCG
}

// NewTracker returns a tracker of p processes, all in block start (all
// absent when start is Absent).
func NewTracker(p int, blocks *BlockIndex, start int32) *Tracker {
	t := &Tracker{X: make([]int32, p), dense: make([]int, p), marked: make([]bool, p), blocks: blocks, hashSource: rand.NewPCG(0x5eed, 0xc1a55)}
	t.ln, t.xlnx, t.lnFact = make([]float64, p+2), make([]float64, p+2), make([]float64, p+1)
	for b := 1; b <= p+1; b++ {
		t.ln[b] = math.Log(float64(b))
		t.xlnx[b] = float64(b) * t.ln[b]
	}
	for n := range t.lnFact {
		t.lnFact[n] = lgamma(float64(n) + 1)
	}
	if start == Absent {
		for i := range t.X {
			t.X[i], t.dense[i] = Absent, -1
		}
		return t
	}
	k := blocks.Index(start)
	t.grow(k)
	for i := range t.X {
		t.X[i] = start
		t.dense[i] = k
	}
	t.Counts[k] = p
	t.present = p
	t.lnFactSum = t.lnFact[p]
	t.bLnBSum = t.xlnx[p]
	t.classHash = uint64(p) * t.blockHash[k]
	return t
}

func (t *Tracker) grow(k int) {
	for len(t.Counts) <= k {
		t.Counts = append(t.Counts, 0)
		t.blockHash = append(t.blockHash, t.hashSource.Uint64()|1)
	}
}

// Set moves process column c to block v (Absent: the process leaves the
// state).
func (t *Tracker) Set(c int, v int32) {
	if t.X[c] == v {
		return
	}
	from := t.dense[c]
	switch {
	case v == Absent:
		t.leave(from)
		t.dense[c] = -1
	case from < 0:
		t.dense[c] = t.enter(v)
	default:
		to := t.blocks.Index(v)
		t.grow(to)
		bf, bt := t.Counts[from], t.Counts[to]
		// lnΓ(b+1) changes by -ln b when b decreases by one, +ln(b+1) when it grows.
		t.lnFactSum += t.ln[bt+1] - t.ln[bf]
		t.bLnBSum += t.xlnx[bf-1] - t.xlnx[bf] + t.xlnx[bt+1] - t.xlnx[bt]
		t.classHash += t.blockHash[to] - t.blockHash[from]
		t.Counts[from], t.Counts[to] = bf-1, bt+1
		t.dense[c] = to
	}
	t.X[c] = v
	if !t.marked[c] {
		t.marked[c] = true
		t.Changed = append(t.Changed, c)
	}
}

// enter adds a process that was absent to block v and returns v's dense
// index.
func (t *Tracker) enter(v int32) int {
	k := t.blocks.Index(v)
	t.grow(k)
	b := t.Counts[k]
	t.lnFactSum += t.ln[b+1]
	t.bLnBSum += t.xlnx[b+1] - t.xlnx[b]
	t.classHash += t.blockHash[k]
	t.Counts[k] = b + 1
	t.present++
	return k
}

// leave takes a process out of dense block k (it becomes absent).
func (t *Tracker) leave(k int) {
	b := t.Counts[k]
	t.lnFactSum -= t.ln[b]
	t.bLnBSum += t.xlnx[b-1] - t.xlnx[b]
	t.classHash -= t.blockHash[k]
	t.Counts[k] = b - 1
	t.present--
}

// resetChanged empties Changed once a row has been delivered.
func (t *Tracker) resetChanged() {
	for _, c := range t.Changed {
		t.marked[c] = false
	}
	t.Changed = t.Changed[:0]
}

// P returns the number of processes (columns), present or not.
func (t *Tracker) P() int { return len(t.X) }

// Present returns the number of processes that exist in the current
// state: the P of its class.
func (t *Tracker) Present() int { return t.present }

// LnMultiplicity returns ln W = lnΓ(P+1) − Σ_k lnΓ(b_k+1), P the processes
// present: the log of the number of ordered states in the current state's
// class.
func (t *Tracker) LnMultiplicity() float64 {
	return t.lnFact[t.present] - t.lnFactSum
}

// LnProb returns ln p = ln W − P ln N, P the processes present, the
// combinatorial probability of the current state's class among N blocks
// (Gomez, Cai & Schubert 2017, section 4).
func (t *Tracker) LnProb(n int) float64 {
	return t.LnMultiplicity() - float64(t.present)*math.Log(float64(n))
}

// HistogramEntropy returns −Σ_k (b_k/P) log2(b_k/P) of the current state,
// P the processes present, in bits.
func (t *Tracker) HistogramEntropy() float64 {
	p := float64(t.present)
	if p == 0 {
		return 0
	}
	// −Σ (b/P) ln(b/P) = ln P − (1/P) Σ b ln b
	h := t.ln[t.present] - t.bLnBSum/p
	if h < 0 { // rounding at a single block
		h = 0
	}
	return h / math.Ln2
}

// ClassHash returns a hash of the current state's class (its multiset of
// blocks): equal for states that are permutations of each other.
func (t *Tracker) ClassHash() uint64 { return t.classHash }

// BlockID returns the block id of dense index k.
func (t *Tracker) BlockID(k int) int32 { return t.blocks.ID(k) }

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}
