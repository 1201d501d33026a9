package gomez

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// Name is the format's name as given to --format.
const Name = "gomez"

// DefaultUnit is the unit of the timestamps when Options.TimeUnit is 0.
const DefaultUnit = time.Microsecond

// ctxEvery is how many lines are read between checks of the context.
const ctxEvery = 1 << 16

func init() { format.Register(Importer{}) }

// Importer is the gomez ("time block pid") importer. The zero value is
// ready to use; it is registered with the format package under Name.
type Importer struct{}

// Name returns "gomez".
func (Importer) Name() string { return Name }

// Describe returns a one-line description for help texts.
func (Importer) Describe() string {
	return `"time block pid" block traces of Gomez, Cai & Schubert (2017); merged .srt or one file per process`
}

// Import reads the inputs and writes their block entries to w as state
// records, filling in the header. See the package documentation for the
// rules; it is the same as the package-level Import.
func (Importer) Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	return Import(ctx, inputs, opts, w)
}

// Import reads "time block pid" files and writes their block entries to w
// as trace.KindState records, filling in w's header: metadata, runs and
// the state dictionary. It stops at the first error, which is a
// *format.Error locating the problem when it lies in an input (see the
// package documentation).
func Import(ctx context.Context, inputs []string, opts format.Options, w trace.Writer) error {
	if len(inputs) == 0 {
		return errors.New("gomez: no input files")
	}
	unit := opts.TimeUnit
	if unit == 0 {
		unit = DefaultUnit
	}
	if unit < 0 {
		return fmt.Errorf("gomez: time unit %v is negative", unit)
	}
	var procs int32
	if s, ok := opts.Params["procs"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil || n <= 0 || n > MaxProcs {
			return fmt.Errorf("gomez: parameter procs=%q: expected a number of processes from 1 to %d", s, MaxProcs)
		}
		procs = int32(n)
	}
	var dict []trace.StateDef
	if opts.Dict != "" {
		var err error
		if dict, err = ReadDict(opts.Dict); err != nil {
			return err
		}
	}
	h := w.Header()
	h.Meta.ClockResolution = int64(unit)
	h.Meta.Source = Name
	h.Meta.Inputs = append(h.Meta.Inputs, inputs...)

	s := &importer{ctx: ctx, w: w, h: h, p: newParser(unit, procs), inputs: inputs, multi: len(inputs) > 1}
	// Without a declared number of processes, the pids must be read
	// before anything is written, in case they need renumbering. When
	// the writer can start again, the import guesses instead that they
	// are 0..P-1, as they nearly always are, and checks it as it goes:
	// one pass over the inputs instead of two.
	rw, canReset := w.(trace.Resetter)
	s.guess = procs == 0 && canReset
	if procs == 0 && !s.guess {
		if err := s.scanPids(); err != nil {
			return err
		}
	}
	runs := slices.Clone(h.Runs)
	err := s.files()
	if errors.Is(err, errNotDense) {
		// The pids are not 0..P-1: start again, renumbering them.
		if err := rw.Reset(); err != nil {
			return fmt.Errorf("gomez: cannot start the import again: %w", err)
		}
		h.Runs = runs
		s = &importer{ctx: ctx, w: w, h: h, p: s.p, inputs: inputs, multi: s.multi}
		if err := s.scanPids(); err != nil {
			return err
		}
		err = s.files()
	}
	if err != nil {
		return err
	}
	if s.records == 0 {
		return &format.Error{File: strings.Join(inputs, ", "), Offset: -1,
			Msg: `no records (expected lines of "time block pid")`}
	}
	s.addStates(dict)
	s.addLabels()
	return nil
}

// errNotDense is files' answer when it guessed that the pids are 0..P-1
// and they are not.
var errNotDense = errors.New("gomez: the pids are not 0..P-1")

// files imports every input in turn. When s.guess is set it checks, every
// ctxEvery lines and at the end, that the pids seen so far are 0..P-1
// (with no gap below the largest), and returns errNotDense as soon as
// they are not: a gap that might still close later is taken as an answer
// too, which costs only the pid scan the guess meant to save.
func (s *importer) files() error {
	for i, path := range s.inputs {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("gomez: %w", err)
		}
		if err := s.file(i, path); err != nil {
			return err
		}
	}
	if s.scanErr != nil {
		// The import read past where the scan could not: the error
		// went away (a passing I/O error). The pids are not all known.
		return s.scanErr
	}
	if s.guess && s.gap() {
		return errNotDense
	}
	return nil
}

// seePid notes, while guessing, that the trace uses pid.
func (s *importer) seePid(pid int32) {
	if int(pid>>6) >= len(s.pidSeen) {
		n := min(max(int(pid>>6)+1, 2*len(s.pidSeen), 16), (MaxProcs+63)/64)
		s.pidSeen = append(s.pidSeen, make([]uint64, n-len(s.pidSeen))...)
	}
	s.pidSeen[pid>>6] |= 1 << (pid & 63)
	s.pidCount++
	s.pidMax = max(s.pidMax, pid)
}

// gap reports whether a pid below the largest seen has not been seen.
func (s *importer) gap() bool { return s.pidCount > 0 && s.pidCount != s.pidMax+1 }

// scanPids reads every input once for the pids it uses and, when they are
// not 0..P-1, sets up the dense renumbering: the n-th smallest pid becomes
// process n. Lines that do not parse are left to the import proper, which
// reports them. So are read errors (an input that cannot be opened, a
// corrupt gzip stream, a line too long): the scan stops at the first,
// keeping it in s.scanErr, with the pids of every line before it known.
// The import proper meets it at the same place, or a bad line before it,
// so that the first error in the inputs is the one reported, as when the
// pids are not read first.
func (s *importer) scanPids() error {
	words := (s.p.maxPid + 1 + 63) / 64
	seen := make([]uint64, words)
	maxPid := -1
	// pidOf returns the pid of a record line (ok false for other lines).
	pidOf := func(line []byte) (int32, bool) {
		if pid, ok := s.p.lastPid(line); ok {
			return pid, true
		}
		_, _, pid, ok := s.p.fast(line)
		if !ok {
			kind, _, _, p2, _ := s.p.slow(line)
			if kind != lineRecord {
				return 0, false
			}
			pid = p2
		}
		return pid, true
	}
	for _, path := range s.inputs {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("gomez: %w", err)
		}
		// A large plain file is read in parts on all the cores, as the
		// set of pids does not depend on the order of the lines. Each
		// part has its own set, written by its goroutine alone (a shared
		// running maximum would bounce one cache line between the cores
		// on every line); the largest pid is read from the sets after.
		parts := runtime.GOMAXPROCS(0)
		partSeen := make([][]uint64, parts)
		for i := range partSeen {
			partSeen[i] = make([]uint64, words)
		}
		split, err := format.ScanLinesParallel(s.ctx, path, parts, func(part int, line []byte) error {
			if pid, ok := pidOf(line); ok {
				partSeen[part][pid>>6] |= 1 << (pid & 63)
			}
			return nil
		})
		if err != nil {
			if cerr := s.ctx.Err(); cerr != nil {
				return &format.Error{File: path, Offset: -1, Msg: "import interrupted", Err: cerr}
			}
			// Read again by one reader, which stops where the error is.
			split = false
		}
		if split {
			for _, ps := range partSeen {
				for j, w := range ps {
					seen[j] |= w
					if w != 0 {
						maxPid = max(maxPid, j*64+bits.Len64(w)-1)
					}
				}
			}
			continue
		}
		lr, err := openInput(path)
		if err != nil {
			s.scanErr = err
			break
		}
		for untilCtx := ctxEvery; ; {
			line, err := lr.Next()
			if err != nil {
				lr.Close()
				if !errors.Is(err, io.EOF) {
					s.scanErr = err
				}
				break
			}
			if untilCtx--; untilCtx == 0 {
				untilCtx = ctxEvery
				if err := s.ctx.Err(); err != nil {
					lr.Close()
					return &format.Error{File: path, Line: lr.Line(), Offset: -1, Msg: "import interrupted", Err: err}
				}
			}
			if pid, ok := pidOf(line); ok {
				seen[pid>>6] |= 1 << (pid & 63)
				maxPid = max(maxPid, int(pid))
			}
		}
		if s.scanErr != nil {
			break
		}
	}
	n := 0
	for _, w := range seen {
		n += bits.OnesCount64(w)
	}
	if n == maxPid+1 {
		return nil // already dense
	}
	s.remap = make([]int32, maxPid+1)
	for i := range s.remap {
		s.remap[i] = -1
	}
	for pid, next := 0, int32(0); pid <= maxPid; pid++ {
		if seen[pid>>6]&(1<<(pid&63)) != 0 {
			s.remap[pid] = next
			s.pids = append(s.pids, int32(pid))
			next++
		}
	}
	return nil
}

// addLabels gives every process of every run, when the pids were
// renumbered, its original pid: as its name ("pid 1000000") and as
// Extra["pid"].
func (s *importer) addLabels() {
	if s.remap == nil {
		return
	}
	for _, r := range s.h.Runs {
		for p := int32(0); p < r.Procs && int(p) < len(s.pids); p++ {
			pid := strconv.Itoa(int(s.pids[p]))
			s.h.Procs = append(s.h.Procs, trace.ProcInfo{Run: r.ID, Proc: p, Name: "pid " + pid, Extra: map[string]string{"pid": pid}})
		}
	}
}

// importer is the state of one Import call.
type importer struct {
	ctx    context.Context
	w      trace.Writer
	h      *trace.Header
	p      parser
	inputs []string
	multi  bool // several inputs: check processes across files

	records int64

	// remap[pid] is the dense process number of pid when the pids are not
	// 0..P-1 (nil otherwise); pids[n] is the pid of process n.
	remap []int32
	pids  []int32
	// scanErr is the read error that stopped scanPids, if any.
	scanErr error

	// guess is set while the import takes the pids to be 0..P-1 without
	// having read them first; pidSeen is then the set of pids seen,
	// pidCount its size and pidMax the largest.
	guess    bool
	pidSeen  []uint64
	pidCount int32
	pidMax   int32

	// Per-pid scratch for the current run of the current file: stamp[pid]
	// == epoch when the pid has a record in it, lastT its last time.
	epoch   uint32
	stamp   []uint32
	lastT   []int64
	touched []int32

	// prior holds, per run<<32|pid, the last time and the file of the
	// records earlier files gave that process.
	prior map[uint64]priorEnd

	// batch and lines are the scratch of file's batches, kept across files.
	batch []trace.Record
	lines []int

	blockSeen []bool         // blocks below len(blockSeen) seen in the trace
	blockBig  map[int32]bool // larger blocks seen
}

type priorEnd struct {
	t    int64
	file int
}

// blockTable is how large blockSeen may grow; larger ids go to a map.
const blockTable = 1 << 16

// openInput opens the input at path, passing on a *format.Error and
// wrapping any other error as gomez's.
func openInput(path string) (*format.LineReader, error) {
	lr, err := format.OpenLines(path)
	if err != nil {
		var fe *format.Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, fmt.Errorf("gomez: %w", err)
	}
	return lr, nil
}

// file imports one input file.
func (s *importer) file(index int, path string) (err error) {
	lr, err := openInput(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := lr.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("gomez: %w", cerr)
		}
	}()
	var (
		run      int32
		prevT    int64 = -1
		maxPid   int32 = -1
		started  bool  // a record of the current run has been seen
		records  int64
		untilCtx = ctxEvery
		p        = s.p
		seen     = s.blockSeen
		// The records go to the writer in batches; lines[i] is the line
		// of batch[i], for the writer's error. Every error of a line is
		// returned after the records of the lines before it are written,
		// so that the first error in the file is the one reported.
		batch = s.batch[:0]
		lines = s.lines[:0]
	)
	flush := func() error {
		n, err := trace.AddBatch(s.w, batch)
		records += int64(n)
		if err != nil {
			return &format.Error{File: path, Line: lines[n], Offset: -1, Msg: "cannot write the record", Err: err}
		}
		batch, lines = batch[:0], lines[:0]
		return nil
	}
	// fail returns err, a line's error, once the lines before are written.
	fail := func(err error) error {
		if ferr := flush(); ferr != nil {
			return ferr
		}
		return err
	}
	s.beginRun()
	for {
		line, err := lr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fail(err)
		}
		if untilCtx--; untilCtx == 0 {
			untilCtx = ctxEvery
			if err := s.ctx.Err(); err != nil {
				return &format.Error{File: path, Line: lr.Line(), Offset: -1, Msg: "import interrupted", Err: err}
			}
			if s.guess && s.gap() {
				return errNotDense
			}
		}
		t, block, pid, ok := p.fast(line)
		if !ok {
			kind, t2, b2, p2, msg := p.slow(line)
			switch kind {
			case lineSkip:
				continue
			case lineBad:
				return fail(lr.Errorf("%s", msg))
			}
			t, block, pid = t2, b2, p2
		}
		orig := pid
		if s.guess && (int(pid>>6) >= len(s.pidSeen) || s.pidSeen[pid>>6]&(1<<(pid&63)) == 0) {
			s.seePid(pid)
		}
		if s.remap != nil {
			if int(pid) >= len(s.remap) || s.remap[pid] < 0 {
				return fail(lr.Errorf("pid %d was not seen when the file was first read (did it change during the import?)", pid))
			}
			pid = s.remap[pid]
		}
		if t < prevT {
			// The clock dropped back: the next run starts.
			s.endRun(run, index)
			if run == math.MaxInt32 {
				return fail(lr.Errorf("too many runs"))
			}
			run++
			maxPid = -1
			s.beginRun()
		}
		prevT = t
		started = true
		if s.multi {
			// Track each process of the run for the check across files.
			if uint(pid) < uint(len(s.stamp)) && s.stamp[pid] == s.epoch {
				s.lastT[pid] = t
			} else if err := s.firstOfRun(run, pid, orig, t, path, lr.Line()); err != nil {
				return fail(err)
			}
		}
		if pid > maxPid {
			maxPid = pid
			s.h.EnsureRun(run, max(pid+1, p.procs))
		}
		if uint(block) >= uint(len(seen)) || !seen[block] {
			s.seeBlock(block)
			seen = s.blockSeen
		}
		batch = append(batch, trace.State(run, pid, t, block))
		lines = append(lines, lr.Line())
		if len(batch) == addBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	s.batch, s.lines = batch, lines
	s.records += records
	if started {
		s.endRun(run, index)
	}
	return nil
}

// addBatch is how many records the importer hands the writer at once.
const addBatch = 1024

// beginRun starts a new run of the current file.
func (s *importer) beginRun() {
	s.epoch++
	if s.epoch == 0 { // wrapped: forget every stamp
		clear(s.stamp)
		s.epoch = 1
	}
	s.touched = s.touched[:0]
}

// firstOfRun handles the first record of pid in the current run of the
// current file: it checks the process against earlier files and starts its
// scratch entry.
func (s *importer) firstOfRun(run, pid, orig int32, t int64, path string, line int) error {
	if s.multi && s.prior != nil {
		if pe, ok := s.prior[uint64(run)<<32|uint64(pid)]; ok && t < pe.t {
			return format.LineError(path, line,
				"pid %d of run %d goes back in time: %v here, but input %d (%s) already had it at %v",
				orig, run, time.Duration(t), pe.file+1, s.inputs[pe.file], time.Duration(pe.t))
		}
	}
	if int(pid) >= len(s.stamp) {
		n := max(int(pid)+1, 2*len(s.stamp), 64)
		n = min(n, int(s.p.maxPid)+1)
		s.stamp = append(s.stamp, make([]uint32, n-len(s.stamp))...)
		s.lastT = append(s.lastT, make([]int64, n-len(s.lastT))...)
	}
	s.stamp[pid] = s.epoch
	s.lastT[pid] = t
	s.touched = append(s.touched, pid)
	return nil
}

// endRun records, for the cross-file check, where each process of the
// finished run ended.
func (s *importer) endRun(run int32, file int) {
	if !s.multi {
		return
	}
	if s.prior == nil {
		s.prior = map[uint64]priorEnd{}
	}
	for _, pid := range s.touched {
		s.prior[uint64(run)<<32|uint64(pid)] = priorEnd{t: s.lastT[pid], file: file}
	}
}

// seeBlock notes that the trace uses block.
func (s *importer) seeBlock(block int32) {
	if block < blockTable {
		if int(block) >= len(s.blockSeen) {
			n := min(max(int(block)+1, 2*len(s.blockSeen), 64), blockTable)
			s.blockSeen = append(s.blockSeen, make([]bool, n-len(s.blockSeen))...)
		}
		s.blockSeen[block] = true
		return
	}
	if s.blockBig == nil {
		s.blockBig = map[int32]bool{}
	}
	s.blockBig[block] = true
}

// addStates puts the dictionary's states and a bare StateDef for every
// other block the trace used into the header, sorted by id.
func (s *importer) addStates(dict []trace.StateDef) {
	have := make(map[int32]int, len(s.h.States))
	for i, d := range s.h.States {
		have[d.ID] = i
	}
	add := func(d trace.StateDef) {
		if i, ok := have[d.ID]; ok {
			old := &s.h.States[i]
			if old.Name == "" {
				old.Name = d.Name
			}
			if old.Description == "" {
				old.Description = d.Description
			}
			return
		}
		have[d.ID] = len(s.h.States)
		s.h.States = append(s.h.States, d)
	}
	for _, d := range dict {
		add(d)
	}
	for b, seen := range s.blockSeen {
		if seen {
			add(trace.StateDef{ID: int32(b)})
		}
	}
	for b := range s.blockBig {
		add(trace.StateDef{ID: b})
	}
	slices.SortFunc(s.h.States, func(a, b trace.StateDef) int { return cmp.Compare(a.ID, b.ID) })
}
