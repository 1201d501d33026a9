package instrument

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/pstdir"
	"github.com/parscope/parscope/trace"
)

// Options configure a Recorder. Only Path is required.
type Options struct {
	// Path is the .pst to write at Close.
	Path string
	// Force replaces an existing trace at Path (and removes a leftover
	// spill directory of an earlier run that was never recovered).
	Force bool
	// Program names the recorded program in the trace's metadata.
	Program string
	// States, Regions and Events are the dictionaries of the ids the
	// program records (Events may also be registered with EventID).
	States  []trace.StateDef
	Regions []trace.RegionDef
	Events  []trace.EventDef
	// Extra is free metadata stored in the trace (seed, variant, ...).
	Extra map[string]string
	// Filter, when not nil, decides per event whether to keep it. Dropped
	// events are counted (see Filter).
	Filter Filter
	// Throttle, when positive, is TAU's throttle: once a process has
	// recorded a block, or entered a region, Throttle times, it drops the
	// later ones (a region's exits with its enters), counted like the
	// Filter's drops. The trace's metadata says, per state and region
	// with drops, how many records were kept and dropped and why
	// (FilterStatsKey).
	Throttle int64
	// Occupancy keeps, per process, the time spent in each state, written
	// at the process's end as counter records (see Process.Done).
	Occupancy bool
	// BBVInterval, when positive, counts per process how often each block
	// runs in every interval of BBVInterval block executions and writes
	// the counts as BBV records at the end of each interval.
	BBVInterval int64
	// ClockResolution is the resolution of the recorded times in ns; times
	// are rounded down to a multiple of it. 0 means 1.
	ClockResolution int64
	// BufferRecords is the size of a buffer (32 bytes a record); 0 means
	// 1024 (32 KiB). Each process fills one buffer at a time, and a full
	// one is handed to the spill writer, which gives it back once
	// written: a smaller buffer comes back sooner, so fewer of them are
	// ever made, and a process touches fewer fresh pages, each a page
	// fault paid on the recording goroutine's time (see MemoryLimit).
	BufferRecords int
	// MemoryLimit bounds the bytes of full buffers kept in memory; beyond
	// it the oldest are written to the spill file (by a background
	// goroutine) and their memory is reused. 0 means 128 KiB (four
	// buffers of the default size): a buffer held back is one more that
	// recording must fill fresh instead of reusing a warm one, and the
	// page faults of fresh memory cost the recording goroutines more than
	// the writes cost the writer (with 16 processes, 1 MiB held and 4096
	// records a buffer took about 950 page faults more than 128 KiB and 1024
	// records; docs/performance.md, "Buffers given back sooner"). A
	// MemoryLimit that is set also bounds the entries of finished
	// processes held before the writer is woken for them (Process.Done);
	// with 0 they may hold 1 MiB. Memory in use is about MemoryLimit plus
	// two buffers per process, plus what finished processes hold.
	MemoryLimit int64
	// SimClock, when not nil, records on a simulated clock (see SimClock)
	// instead of the wall clock: every record's time is its process's
	// virtual time, advanced by the model's costs, Process.Work and
	// Process.RecvStamped. DefaultSimClock gives the documented defaults.
	SimClock *SimClock
	// Disabled makes Start return a nil *Recorder: every method is then a
	// no-op, for measuring a program without recording.
	Disabled bool
	// BuildLater makes Close leave the recording in the spill directory
	// (Path+".spill"), complete and durable, instead of building the .pst:
	// the program then ends without the cost of sorting its records and
	// encoding them as Parquet, which grows with the records (and is a few
	// milliseconds even for a handful). Recover, `parscope recover`, or any
	// parscope command given Path builds the .pst afterwards, the same
	// trace Close would have built. The environment variable
	// PARSCOPE_BUILD ("later" or "now") overrides it. A program that does
	// not link the trace store (see RegisterStore) always builds later.
	BuildLater bool
	// Sync makes what the recorder leaves in the spill directory durable
	// against a power failure or a kernel crash, not only against the
	// program's death: the spill's header is fsynced with its directory
	// whenever it is written, and a Close that leaves the recording for
	// later fsyncs the records before the header says they are complete.
	// Without it (the default) everything the recorder writes survives
	// the program's death (os.Exit, a panic, SIGKILL) once the write
	// returns, as the records at a flush point always did, and a
	// recording saves the fsyncs' milliseconds: a power failure during
	// or just after it can leave a spill that Recover reports damaged.
	// A .pst built by Close is written durably either way. The
	// environment variable PARSCOPE_SYNC ("on" or "off") overrides it.
	Sync bool
}

// Recorder records the processes of one run of a program. Its methods are
// safe for concurrent use, except that Flush, Close and Abort must not run
// while any process is recording (see the package documentation).
type Recorder struct {
	opts  Options
	spill string // spill directory
	// leftUnbuilt is set by a Close that left the recording in the spill
	// directory for parscope to build (Options.BuildLater).
	leftUnbuilt bool
	sp          *spiller
	start       clockPair
	scale0      float64 // ns per tick from the start-up calibration
	// refresh rewrites the header with a later calibration pair.
	refresh *time.Timer
	wall    time.Time

	hdrMu    sync.Mutex // serialises writes of the spill header
	hdrDirty bool       // guarded by mu: dictionaries changed since the last write
	hdrFirst chan error // the result of Start's header write (see firstHeader)
	hdrOnce  sync.Once
	hdrErr   error

	mu sync.Mutex
	// closing is held shared by Flush and Done, exclusively by Close and
	// Abort, so a process finishing while the program closes cannot race.
	closing sync.RWMutex
	procs   map[int]*Process
	events  map[string]int32
	evDefs  []trace.EventDef
	nextEv  int32
	occIDs  []int32 // states with an occupancy counter written
	occSet  map[int32]bool
	dropEv  int32
	closed  bool
}

// DroppedEvent is the name of the event that stands for events a Filter
// dropped: its value is how many were dropped since the previous kept
// record of the process, and it is written just before the next kept record
// (or at the process's end).
const DroppedEvent = "parscope.dropped"

// The defaults of Options.BufferRecords and Options.MemoryLimit (see
// there why these sizes).
const (
	defaultBufferRecords = 1024
	defaultMemoryLimit   = 128 << 10
	// defaultHoldBytes is what finished processes may hold before the
	// writer is woken for them, when MemoryLimit is 0: it stays at 1 MiB,
	// so that a program of many short goroutines wakes the writer as
	// seldom as before the full buffers' limit went down.
	defaultHoldBytes = 1 << 20
)

// Start begins recording. It creates a spill directory Path+".spill" that
// Close turns into the .pst at Path (and Recover does after a crash).
func Start(opts Options) (*Recorder, error) {
	if opts.Disabled {
		return nil, nil
	}
	if opts.Path == "" {
		return nil, errors.New("instrument: Options.Path is empty")
	}
	chooseClock()
	if opts.ClockResolution <= 0 {
		opts.ClockResolution = 1
	}
	if opts.BufferRecords <= 0 {
		opts.BufferRecords = defaultBufferRecords
	}
	if opts.BBVInterval < 0 {
		return nil, fmt.Errorf("instrument: negative BBVInterval %d", opts.BBVInterval)
	}
	if opts.SimClock != nil {
		if err := opts.SimClock.validate(); err != nil {
			return nil, err
		}
		c := *opts.SimClock // the recorder's own copy: the caller may change theirs
		opts.SimClock = &c
	}
	switch b := os.Getenv("PARSCOPE_BUILD"); b {
	case "":
	case "later":
		opts.BuildLater = true
	case "now":
		if linkedStore() == nil {
			return nil, fmt.Errorf("instrument: PARSCOPE_BUILD=now: %w", errNoStore)
		}
		opts.BuildLater = false
	default:
		return nil, fmt.Errorf("instrument: PARSCOPE_BUILD=%q: expected \"later\" (leave the recording for parscope to build) or \"now\" (build the .pst at Close)", b)
	}
	switch v := os.Getenv("PARSCOPE_SYNC"); v {
	case "":
	case "on":
		opts.Sync = true
	case "off":
		opts.Sync = false
	default:
		return nil, fmt.Errorf("instrument: PARSCOPE_SYNC=%q: expected \"on\" (fsync the spill's header and a recording left for later) or \"off\"", v)
	}
	path := filepath.Clean(opts.Path)
	opts.Path = path
	if _, err := os.Lstat(path); err == nil {
		if !opts.Force {
			return nil, fmt.Errorf("instrument: %s already exists (set Force to replace it)", path)
		}
		// Refuse now, not at Close after the whole run, what Force may
		// not replace (anything but a .pst).
		if err := pstdir.Replaceable(path); err != nil {
			return nil, fmt.Errorf("instrument: %w", err)
		}
	}
	spill := SpillDir(path)
	if fi, err := os.Lstat(spill); err == nil {
		if !opts.Force {
			return nil, fmt.Errorf("instrument: %s holds an earlier recording not yet built (PARSCOPE_BUILD=later) or left over from a run that ended without Close: build it with instrument.Recover (parscope recover %s), or remove it", spill, path)
		}
		if err := clearSpill(spill, fi); err != nil {
			return nil, fmt.Errorf("instrument: %w", err)
		}
	}
	if err := os.MkdirAll(spill, 0o755); err != nil {
		return nil, fmt.Errorf("instrument: %w", err)
	}
	hold := opts.MemoryLimit
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit, hold = defaultMemoryLimit, defaultHoldBytes
	}
	limit := max(1, int(opts.MemoryLimit/int64(opts.BufferRecords*entrySize)))
	sp, err := newSpiller(filepath.Join(spill, spillFile), limit, max(1, int(hold/entrySize)))
	if err != nil {
		os.RemoveAll(spill)
		return nil, fmt.Errorf("instrument: %w", err)
	}
	r := &Recorder{opts: opts, spill: spill, sp: sp, procs: map[int]*Process{}, wall: time.Now(), dropEv: -1}
	var cal clockPair
	if opts.SimClock != nil {
		// Virtual nanoseconds from 0: nothing to calibrate.
		r.scale0 = 1
	} else {
		r.start, cal = calibrate(startCalibration)
		r.scale0 = nsPerTick(r.start, cal)
	}
	r.events, r.occSet = map[string]int32{}, map[int32]bool{}
	for _, e := range opts.Events {
		r.events[e.Name] = e.ID
		r.nextEv = max(r.nextEv, e.ID+1)
	}
	r.evDefs = append(r.evDefs, opts.Events...)
	if opts.Filter != nil || opts.Throttle > 0 {
		r.dropEv = r.EventID(DroppedEvent)
	}
	// The spill's first header is written (atomically; with Sync, two
	// fsyncs too) while the program starts its work, not before: Flush, Close and Abort wait
	// for it (firstHeader), and a failure is reported by the first of
	// them. A program that dies in the first milliseconds may leave a
	// spill without a header, which Recover refuses; it holds nothing
	// flushed then either.
	r.hdrFirst = make(chan error, 1)
	go func() { r.hdrFirst <- r.writeHeader(cal) }()
	if opts.SimClock == nil && useTSC {
		// The header's calibration is what Recover converts ticks with
		// after a crash; a later pair makes it as good as a long one.
		// On the monotonic clock a tick is a nanosecond: nothing to
		// refresh.
		r.refresh = time.AfterFunc(refreshCalibration, func() {
			r.whileOpen(func() error {
				if err := r.firstHeader(); err != nil {
					return err
				}
				return r.writeHeader(readPair())
			})
		})
	}
	return r, nil
}

// startCalibration is how long Start measures the tick rate for the
// filters' clock while recording: the pairs are read to within tens of
// nanoseconds, so the rate is good to about 0.05 %. The trace itself is
// converted with the rate from Start to Close, and Recover with the one
// the header holds, refreshed refreshCalibration after Start (on the TSC
// only) and at every Flush.
const startCalibration = 100 * time.Microsecond

// refreshCalibration is when the header's calibration is refreshed after
// Start (a variable for the tests). Not sooner: the refresh writes the
// header from a goroutine of its own, and in a program that keeps every
// core busy (spectral-norm's four goroutines on two cores) the thread it
// wakes cost 1-2 % of a run of 180 ms when it came at 100 ms. A program
// that dies within the second converts its ticks with Start's 100 µs
// calibration, which is good to about 0.5 ms a second.
var refreshCalibration = time.Second

// firstHeader waits for the header write Start began and returns its
// error.
func (r *Recorder) firstHeader() error {
	r.hdrOnce.Do(func() { r.hdrErr = <-r.hdrFirst })
	return r.hdrErr
}

// ErrClosed is returned by Flush and Done once the recorder is closed.
var ErrClosed = errors.New("instrument: the recorder is closed")

// isClosed reports whether Close or Abort has run.
func (r *Recorder) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// whileOpen runs f holding the closing lock (so that Close waits for it),
// or returns ErrClosed when the recorder is already closed.
func (r *Recorder) whileOpen(f func() error) error {
	r.closing.RLock()
	defer r.closing.RUnlock()
	if r.isClosed() {
		return ErrClosed
	}
	return f()
}

// SpillDir returns the spill directory of a recording to path.
func SpillDir(path string) string { return filepath.Clean(path) + ".spill" }

// EventID returns the id of a named event, registering the name the first
// time. Call it once per name, outside the hot path.
func (r *Recorder) EventID(name string) int32 {
	if r == nil {
		return -1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.events[name]; ok {
		return id
	}
	id := r.nextEv
	r.nextEv++
	r.events[name] = id
	r.evDefs = append(r.evDefs, trace.EventDef{ID: id, Name: name})
	r.hdrDirty = true
	return id
}

// Process returns the recording handle of process id, creating it the
// first time. It is safe to call from any goroutine and returns the same
// *Process for the same id; the handle itself must be used by one goroutine
// at a time. On a nil Recorder it returns nil, whose methods do nothing.
// id must be from 0 to trace.MaxProcs-1.
func (r *Recorder) Process(id int) *Process {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	p := r.procs[id]
	r.mu.Unlock()
	if p != nil {
		return p
	}
	if id < 0 || id >= trace.MaxProcs {
		panic(fmt.Sprintf("instrument: process id %d out of range", id)) // a programming error, like an index out of range
	}
	// The process is made outside the lock: goroutines of a rewritten
	// program starting on both cores at once waited for each other's
	// allocations (and the collector's assists they paid) there. When two
	// goroutines make the same new process at once, the first one stored
	// is every caller's.
	p = r.newProcess(id)
	r.mu.Lock()
	defer r.mu.Unlock()
	if q := r.procs[id]; q != nil {
		return q
	}
	r.procs[id] = p
	return p
}

// newProcess makes the handle of process id. It reads only what Start
// set, and takes no lock of the recorder's.
func (r *Recorder) newProcess(id int) *Process {
	p := &Process{
		id:     int32(id),
		rec:    r,
		buf:    make([]entry, min(firstBuffer, r.opts.BufferRecords)),
		filter: r.opts.Filter,
		dropEv: r.dropEv,
		t0:     r.start.Ticks,
		scale:  r.scale0,
		sim:    r.opts.SimClock,
	}
	if pf, ok := p.filter.(ProcessFilter); ok {
		p.filter = pf.ForProcess(id)
	}
	if r.opts.Occupancy {
		p.occ = &occupancy{}
	}
	if r.opts.BBVInterval > 0 {
		p.bbv = &bbvCounter{every: r.opts.BBVInterval}
	}
	if p.filter != nil || r.opts.Throttle > 0 {
		p.throttle, p.tally = r.opts.Throttle, &tally{}
	}
	p.slow = p.filter != nil || p.throttle > 0 || p.occ != nil || p.bbv != nil
	p.quickThrottle = p.throttle > 0 && p.occ == nil && p.bbv == nil && p.sim == nil
	return p
}

// sortedProcs returns the processes in id order.
func (r *Recorder) sortedProcs() []*Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	ps := make([]*Process, 0, len(r.procs))
	for _, p := range r.procs {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].id < ps[j].id })
	return ps
}

// Flush writes every process's buffered records to the spill file and
// returns once they are there (in the kernel: they survive os.Exit, a
// panic or a kill of the program, though not a power failure). It must not
// run while any process is recording; a goroutine can flush its own
// process at any time with Process.Flush.
func (r *Recorder) Flush() error {
	if r == nil {
		return nil
	}
	return r.whileOpen(func() error {
		for _, p := range r.sortedProcs() {
			p.queue()
		}
		if err := r.sp.sync(); err != nil {
			return err
		}
		if err := r.firstHeader(); err != nil {
			return err
		}
		return r.writeHeader(readPair())
	})
}

// Close ends every process that has not called Done, writes the .pst at
// Path and removes the spill directory. It must not run while any process
// is recording. On error nothing is written at Path, and the spill
// directory is kept with what reached it (for Recover).
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	// Wait for processes flushing or finishing (Done) right now; those that
	// come later see the recorder closed.
	r.closing.Lock()
	defer r.closing.Unlock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errors.New("instrument: Close called twice")
	}
	r.closed = true
	r.mu.Unlock()
	r.stopRefresh()
	end := ticks()
	hdrErr := r.firstHeader()
	for _, p := range r.sortedProcs() {
		if p.sim != nil {
			// On the simulated clock a process ends at its own time.
			p.finish(p.vt)
		} else {
			p.finish(end)
		}
		p.queue()
	}
	var cal clockPair
	if r.opts.SimClock == nil {
		cal = readPair()
	}
	// However short the run, the rate from Start to here converts every
	// tick of it to within the pairs' own error: both ends are measured,
	// and what lies between is interpolated.
	//
	// With BuildLater every record goes to the spill file (and, with Sync,
	// is fsynced) before the header says the spill is complete. Should
	// that fail (a write error keeps the records in memory), the .pst is
	// built now instead, from what the recorder holds.
	//
	// A program that does not link the store always leaves the recording
	// for later; if its spill cannot be completed, what the spill file
	// holds up to the failure is what Recover can build.
	create := linkedStore()
	later := (r.opts.BuildLater || create == nil) && r.sp.sync() == nil
	stopErr := r.sp.stop(later && r.opts.Sync)
	if stopErr != nil {
		if !later && create != nil {
			return stopErr
		}
		later = false
	}
	if hdrErr != nil {
		return hdrErr
	}
	if !later && create == nil {
		cause := r.sp.err // the write that failed, if one did
		if cause == nil {
			cause = stopErr
		}
		return fmt.Errorf("%w; the records not yet written are lost, and %s holds those that were (parscope recover %s builds them): %w", cause, r.spill, r.opts.Path, errNoStore)
	}
	hdr := r.header(cal)
	r.addFilterStats(hdr.Header.Meta.Extra)
	if later {
		// The header Close would build with, marked complete, written
		// after the records: the spill is then the whole trace.
		// If it cannot be written, the .pst is built now.
		hdr.Complete, hdr.Replace = true, r.opts.Force
		err := writeHeaderFile(filepath.Join(r.spill, headerFile), hdr, r.opts.Sync)
		if err == nil {
			r.leftUnbuilt = true
			return nil
		}
		if create == nil {
			// Every record is in the spill file; only the
			// header that says so is missing. Recover builds the
			// records with the header Start wrote, as after a crash.
			return fmt.Errorf("%w; every record is in %s, but not the end's header (parscope recover %s builds them, marked recovered): %w", err, r.spill, r.opts.Path, errNoStore)
		}
		hdr.Complete, hdr.Replace = false, false
	}
	// The spill's header is rewritten only when a dictionary changed since
	// it was last written: what Recover needs to read the records is then
	// on disk should the build below fail or the program die during it.
	// The end's clock pair and the filter counts go into the .pst only;
	// a recovered trace converts with the header's pair (Start's, or the
	// refresh's), as after a crash before Close. Writing it durably each
	// time was a tenth of a short recording's cost at exit.
	if err := r.writeHeaderIfChanged(); err != nil {
		return err
	}
	if err := build(create, r.opts.Path, r.opts.Force, hdr, filepath.Join(r.spill, spillFile), r.sp.chunks); err != nil {
		return err
	}
	return os.RemoveAll(r.spill)
}

// LeftUnbuilt reports whether Close left the recording in the spill
// directory, complete, for Recover or parscope to build into the .pst
// (Options.BuildLater), rather than building it. It is false before Close,
// and when Close built the .pst because the spill could not be completed.
func (r *Recorder) LeftUnbuilt() bool { return r != nil && r.leftUnbuilt }

// Abort stops recording and removes the spill directory without writing a
// trace.
func (r *Recorder) Abort() {
	if r == nil {
		return
	}
	r.closing.Lock()
	defer r.closing.Unlock()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stopRefresh()
	r.firstHeader() // nothing may still be writing into the spill directory
	r.sp.stop(false)
	os.RemoveAll(r.spill)
}

// stopRefresh stops the header's calibration refresh, if pending.
func (r *Recorder) stopRefresh() {
	if r.refresh != nil {
		r.refresh.Stop()
	}
}

// spillHeader is what the spill directory keeps besides the records:
// enough to build the trace's header and convert ticks to nanoseconds.
type spillHeader struct {
	Header     trace.Header `json:"header"`
	Start      clockPair    `json:"start"`
	Calibrated clockPair    `json:"calibrated"`
	Resolution int64        `json:"resolution_ns"`
	// Complete is set by a Close with BuildLater: the header is the one
	// Close builds with (the end's clock pair, the filter counts) and the
	// records are all written, so the spill is a whole recording to build,
	// not what a program that died left behind.
	Complete bool `json:"complete,omitempty"`
	// Replace is set with Complete when the recording was started with
	// Force: building it replaces a trace at its path.
	Replace bool `json:"replace,omitempty"`
}

func (r *Recorder) header(cal clockPair) *spillHeader {
	h := trace.Header{
		Meta: trace.Meta{
			ClockResolution: r.opts.ClockResolution,
			Source:          "instrument",
			Program:         r.opts.Program,
			CommandLine:     os.Args,
			Extra:           map[string]string{},
		},
		States:  append([]trace.StateDef(nil), r.opts.States...),
		Regions: append([]trace.RegionDef(nil), r.opts.Regions...),
	}
	if host, err := os.Hostname(); err == nil {
		h.Meta.Host = host
	}
	if r.opts.SimClock == nil {
		// The wall-clock start, in UTC: a trace is read on other
		// machines, and formatting in the local zone first loads the
		// zone's file (0.2-0.4 ms of a short recording). A simulated
		// trace has none, so that it depends only on the run's input.
		h.Meta.Extra["start"] = r.wall.UTC().Format(time.RFC3339Nano)
	}
	for k, v := range r.opts.Extra {
		h.Meta.Extra[k] = v
	}
	switch {
	case r.opts.SimClock != nil:
		r.opts.SimClock.meta(h.Meta.Extra)
		cal = clockPair{}
	case useTSC:
		h.Meta.Extra["clock"] = "tsc"
	default:
		h.Meta.Extra["clock"] = "monotonic"
	}
	r.mu.Lock()
	h.Events = append(h.Events, r.evDefs...)
	// A copy, taken under the lock: processes finishing concurrently
	// append to occIDs (addOccupancyStates).
	occIDs := slices.Clone(r.occIDs)
	procs := int32(0)
	for id := range r.procs {
		procs = max(procs, int32(id)+1)
	}
	r.mu.Unlock()
	slices.Sort(occIDs)
	h.Runs = []trace.RunInfo{{ID: 0, Name: r.opts.Program, Procs: procs}}
	for _, id := range occIDs {
		h.Counters = append(h.Counters, trace.CounterDef{ID: id, Name: "occupancy " + stateName(r.opts.States, id), Unit: "ns"})
	}
	return &spillHeader{Header: h, Start: r.start, Calibrated: cal, Resolution: r.opts.ClockResolution}
}

// writeHeaderIfChanged rewrites the spill header when a dictionary changed
// since it was last written (the calibration it holds is refreshed then).
func (r *Recorder) writeHeaderIfChanged() error {
	r.mu.Lock()
	dirty := r.hdrDirty
	r.mu.Unlock()
	if !dirty {
		return nil
	}
	return r.writeHeader(readPair())
}

func (r *Recorder) writeHeader(cal clockPair) error {
	r.hdrMu.Lock()
	defer r.hdrMu.Unlock()
	r.mu.Lock()
	r.hdrDirty = false
	r.mu.Unlock()
	return writeHeaderFile(filepath.Join(r.spill, headerFile), r.header(cal), r.opts.Sync)
}

// writeHeaderFile writes the spill's header, fsynced when sync is set;
// tests replace it to make the write fail.
var writeHeaderFile = func(path string, h *spillHeader, sync bool) error {
	return writeAtomic(path, h.appendJSON(nil), sync)
}

// writeAtomic writes data to path atomically (see package atomicfile):
// Recover needs the header, so the program's death must leave the old one
// or the new one, never a torn one; with sync, so must a power failure.
func writeAtomic(path string, data []byte, sync bool) error {
	write := atomicfile.WriteFileUnsynced
	if sync {
		write = atomicfile.WriteFile
	}
	if err := write(path, data, atomicfile.RegularFile); err != nil {
		return fmt.Errorf("instrument: %w", err)
	}
	return nil
}

// appendJSON appends h as JSON: the bytes json.Marshal gives, without the
// reflection that made the first Marshal of a recording cost 0.7 ms
// (trace.Header.AppendJSON).
func (h *spillHeader) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"header":`...)
	dst = h.Header.AppendJSON(dst)
	dst = h.Start.appendJSON(append(dst, `,"start":`...))
	dst = h.Calibrated.appendJSON(append(dst, `,"calibrated":`...))
	dst = strconv.AppendInt(append(dst, `,"resolution_ns":`...), h.Resolution, 10)
	if h.Complete {
		dst = append(dst, `,"complete":true`...)
	}
	if h.Replace {
		dst = append(dst, `,"replace":true`...)
	}
	return append(dst, '}')
}

// addOccupancyStates notes the states for which occupancy counters were
// written, so that the header defines their counters.
func (r *Recorder) addOccupancyStates(ids []int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if !r.occSet[id] {
			r.occSet[id] = true
			r.occIDs = append(r.occIDs, id)
			r.hdrDirty = true
		}
	}
}

// stateName returns the name of state id in defs, or its number.
func stateName(defs []trace.StateDef, id int32) string {
	for _, d := range defs {
		if d.ID == id && d.Name != "" {
			return d.Name
		}
	}
	return fmt.Sprint(id)
}
