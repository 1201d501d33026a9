package probe

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/format"
)

// Model machines: a deterministic target family. The worker runs under
// valgrind's callgrind with a simulated cache hierarchy (--cache-sim=yes,
// the machine's cache sizes); every reading of the worker's stopwatch asks
// callgrind to dump the events since the previous reading (a client
// request, see vgRequest), and the parent turns each dump's events into
// time with the machine's cost model. Valgrind runs the program's threads
// one at a time and the worker runs with GOMAXPROCS=1, so the same run
// gives the same events, and the modelled time of a run has no
// run-to-run noise: a prediction's error against it is the method's own.

// Cache is one simulated cache, as valgrind's --I1, --D1 and --LL take it.
type Cache struct {
	// Size in bytes, Assoc the associativity (ways) and Line the line
	// size in bytes. Valgrind wants Size/(Assoc·Line) sets to be a power
	// of two.
	Size, Assoc, Line int
}

// arg is the cache as valgrind's option value: "size,assoc,line".
func (c Cache) arg() string { return fmt.Sprintf("%d,%d,%d", c.Size, c.Assoc, c.Line) }

// Machine is a model machine: the caches callgrind simulates and the cost
// model that turns the simulated events into time:
//
//	cycles = CPI·Ir + L1Miss·(I1mr + D1mr + D1mw) + LLMiss·(ILmr + DLmr + DLmw)
//	time   = cycles / GHz (ns)
//
// Ir counts instructions executed; I1mr, D1mr and D1mw first-level misses
// (instruction reads, data reads, data writes), which all go to the
// last-level cache; ILmr, DLmr and DLmw the last-level misses, which go to
// memory and pay LLMiss on top of L1Miss. Events of every thread count
// (the machine runs them on one core, one after the other). Branch
// prediction, the overlap of misses and the prefetchers are not modelled.
type Machine struct {
	// Name names the machine in tables ("ref").
	Name string `json:"name"`
	// About describes the machine in a few words.
	About string `json:"about"`
	// I1, D1 and LL are the instruction, data and last-level caches.
	I1 Cache `json:"i1"`
	D1 Cache `json:"d1"`
	LL Cache `json:"ll"`
	// GHz is the clock frequency; CPI the cycles per instruction when
	// every access hits the first level.
	GHz float64 `json:"ghz"`
	CPI float64 `json:"cpi"`
	// L1Miss is the penalty (cycles) of a first-level miss, LLMiss the
	// additional penalty of a last-level miss.
	L1Miss float64 `json:"l1_miss_cycles"`
	LLMiss float64 `json:"ll_miss_cycles"`
}

// ModelMachines are the model machines of the deterministic validation:
// a reference and three targets whose caches and penalties differ, so
// that compute-bound and memory-bound phases change speed by different
// ratios between them.
var ModelMachines = []Machine{
	{Name: "ref", About: "reference: 3 GHz, 32 KiB L1, 2 MiB LL",
		I1: Cache{32 << 10, 8, 64}, D1: Cache{32 << 10, 8, 64}, LL: Cache{2 << 20, 16, 64},
		GHz: 3.0, CPI: 0.4, L1Miss: 14, LLMiss: 180},
	{Name: "small", About: "slow core, small caches: 2 GHz, 16 KiB L1, 256 KiB LL",
		I1: Cache{16 << 10, 4, 64}, D1: Cache{16 << 10, 4, 64}, LL: Cache{256 << 10, 8, 64},
		GHz: 2.0, CPI: 0.6, L1Miss: 10, LLMiss: 120},
	{Name: "bigcache", About: "large caches, far memory: 2.5 GHz, 64 KiB L1, 16 MiB LL",
		I1: Cache{32 << 10, 8, 64}, D1: Cache{64 << 10, 8, 64}, LL: Cache{16 << 20, 16, 64},
		GHz: 2.5, CPI: 0.35, L1Miss: 16, LLMiss: 250},
	{Name: "slowmem", About: "fast core, slow memory: 3.5 GHz, 32 KiB L1, 512 KiB LL",
		I1: Cache{32 << 10, 8, 64}, D1: Cache{32 << 10, 8, 64}, LL: Cache{512 << 10, 8, 64},
		GHz: 3.5, CPI: 0.3, L1Miss: 12, LLMiss: 420},
}

// Events are the counts callgrind's cache simulation reports.
type Events struct {
	Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw int64
}

// Add returns the sum of e and f.
func (e Events) Add(f Events) Events {
	return Events{e.Ir + f.Ir, e.Dr + f.Dr, e.Dw + f.Dw, e.I1mr + f.I1mr, e.D1mr + f.D1mr, e.D1mw + f.D1mw,
		e.ILmr + f.ILmr, e.DLmr + f.DLmr, e.DLmw + f.DLmw}
}

// Cycles is the machine's cost of events e (see Machine).
func (m Machine) Cycles(e Events) float64 {
	return m.CPI*float64(e.Ir) + m.L1Miss*float64(e.I1mr+e.D1mr+e.D1mw) + m.LLMiss*float64(e.ILmr+e.DLmr+e.DLmw)
}

// Time is the machine's time for events e, rounded to the nanosecond.
func (m Machine) Time(e Events) time.Duration {
	return time.Duration(math.Round(m.Cycles(e) / m.GHz))
}

// check reports a machine that valgrind or the cost model cannot use.
func (m Machine) check() error {
	for _, c := range []struct {
		name string
		c    Cache
	}{{"I1", m.I1}, {"D1", m.D1}, {"LL", m.LL}} {
		if c.c.Size <= 0 || c.c.Assoc <= 0 || c.c.Line <= 0 || c.c.Size%(c.c.Assoc*c.c.Line) != 0 {
			return fmt.Errorf("machine %q: %s cache %s: want positive size, associativity and line, the size a multiple of their product", m.Name, c.name, c.c.arg())
		}
		if sets := c.c.Size / (c.c.Assoc * c.c.Line); sets&(sets-1) != 0 {
			return fmt.Errorf("machine %q: %s cache %s has %d sets: valgrind wants a power of two", m.Name, c.name, c.c.arg(), sets)
		}
	}
	if !(m.GHz > 0) || !(m.CPI > 0) || m.L1Miss < 0 || m.LLMiss < 0 {
		return fmt.Errorf("machine %q: GHz %g, CPI %g, penalties %g/%g: want positive GHz and CPI, non-negative penalties", m.Name, m.GHz, m.CPI, m.L1Miss, m.LLMiss)
	}
	return nil
}

// Valgrind client requests (valgrind.h, callgrind.h).
const (
	vgRunningOnValgrind = 0x1001
	vgCallgrindDump     = 0x43540000 // VG_USERREQ_TOOL_BASE('C','T') + 0: CALLGRIND_DUMP_STATS
)

// runningOnValgrind reports whether the process runs under valgrind.
func runningOnValgrind() bool { return vgRequest(&[6]uintptr{vgRunningOnValgrind}) != 0 }

// callgrindDump asks callgrind to dump the events since its last dump
// (and start counting afresh).
func callgrindDump() { vgRequest(&[6]uintptr{vgCallgrindDump}) }

// ModelEnv is the environment a model-machine run gives the worker, to
// keep the Go runtime's own work out of the timed stretches as far as it
// can be: one P, so goroutines take turns on one thread as the model
// machine's one core; no garbage collection, whose pacing and background
// work follow the host's clock; no preemption signals, which arrive when
// the host's clock says so. (The driver also passes through the scheduler
// after every step; see yieldingTask.) And no RDTSCP: the runtime reads
// the time-stamp counter with it when a thread waits for a runtime lock
// (sysmon against the worker, say), and valgrind 3.19 does not decode it
// on AMD processors, where it reports it in CPUID: the worker died with
// SIGILL in runtime.cputicks when such a wait happened.
//
// And EnvMainThread: the driver stays on the process's first thread (see
// mainThread).
var ModelEnv = []string{"GOMAXPROCS=1", "GOGC=off", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off", EnvMainThread + "=1"}

// EnvMainThread, set to 1 in a worker's environment (ModelEnv sets it),
// keeps the worker's main goroutine, which runs the driver, on the
// process's first thread (see mainThread).
const EnvMainThread = "PARSCOPE_PROBE_MAIN_THREAD"

// mainThread is true when the worker's main goroutine was locked to the
// process's first thread by this package's initialisation
// (EnvMainThread). A system call that blocks a while (reading the
// snapshots, under valgrind's slowness) otherwise lets the monitor hand
// the one P to another thread, and the driver's goroutine resumes there,
// with its scheduler stack and thread state elsewhere in memory, in other
// simulated cache sets: replays of one probe of sweep on the small machine
// took 230.5 µs for phase 0 when the driver stayed on the first thread and
// 234.4 µs when it had moved to the third, and which one happened depended
// on the host's timing. The lock is lifted during each step and the pass
// through the scheduler after it (yieldingTask), which with one P resume
// the goroutine on the same thread: a locked goroutine that yields or
// waits hands the P to another thread and back.
var mainThread = lockMainThread()

// lockMainThread locks the calling goroutine, the main one during package
// initialisation, to its thread if EnvMainThread is 1, and reports whether
// it did.
func lockMainThread() bool {
	if os.Getenv(EnvMainThread) != "1" {
		return false
	}
	runtime.LockOSThread()
	return true
}

// Valgrind is the backend of the model machines: it runs the worker under
// valgrind's callgrind with Machine's caches, with the model clock, and
// turns the dumps of the worker's stopwatch into Machine's time. The
// vector pass counts blocks, which do not depend on the machine, and runs
// natively (Local). Every replay makes exactly one round: a second one
// would measure the same events.
type Valgrind struct {
	Machine Machine
	// Valgrind is the valgrind program ("" is "valgrind" from PATH).
	Valgrind string
	// TempDir is where work and dump directories are made ("" for
	// os.TempDir).
	TempDir string
	// Env is added to the worker's environment after ModelEnv.
	Env []string
}

// wrap returns the command that runs c under callgrind, dumping into dir.
func (v Valgrind) wrap(c Command, dir string) Command {
	m := v.Machine
	if !strings.Contains(c.Path, "/") {
		// The worker does not get this process's PATH (see padLayout).
		if p, err := exec.LookPath(c.Path); err == nil {
			c.Path = p
		}
	}
	args := []string{"--tool=callgrind", "-q", "--cache-sim=yes", "--separate-threads=yes",
		"--I1=" + m.I1.arg(), "--D1=" + m.D1.arg(), "--LL=" + m.LL.arg(),
		"--dump-line=no", "--dump-instr=no", "--callgrind-out-file=" + filepath.Join(dir, "cg.%p"),
		c.Path}
	env := append(slices.Clone(ModelEnv), c.Env...)
	env = append(env, v.Env...)
	prog := v.Valgrind
	if prog == "" {
		prog = "valgrind"
	}
	return Command{Path: prog, Args: append(args, c.Args...), Env: env, Output: c.Output,
		clientArgv: append([]string{c.Path}, c.Args...)}
}

// layoutPadVar is the variable that padLayout adds to a model-machine
// worker's environment.
const layoutPadVar = "PARSCOPE_LAYOUT_PAD"

// layoutBytes is the size to which padLayout brings what a model-machine
// worker's stack starts with.
const layoutBytes = 8 << 10

// padLayout returns env, the whole environment of a model-machine worker
// whose command line is argv, with layoutPadVar added so that the strings
// the worker starts with (its command line, the program's name once more
// for AT_EXECFN, and its environment, each with its NUL) and the pointers
// to them (8 bytes each) take a multiple of layoutBytes. Valgrind places
// them at the top of the worker's stack, so their size decides where the
// stack the Go runtime's scheduler runs on (g0's) begins, and with it which
// simulated cache sets its accesses fall in. Without the padding, the
// replays of one probe of sweep on the small machine took 229.2 to
// 231.0 µs for phase 0 as the environment grew by 1 to 33 bytes, so the
// length of a work directory's random name, or of the caller's own
// environment (which the worker no longer inherits), moved the times from
// run to run. The number of variables still counts: one variable fewer
// gave 240.7 µs against 238.2 µs (perhaps through the runtime's copy of
// the environment, a heap allocation of that size): keep Env's length.
func padLayout(argv, env []string) []string {
	n := len(argv[0]) + 1 + len(layoutPadVar) + 2 // AT_EXECFN; the padding's "=" and NUL
	for _, list := range [][]string{argv, env} {
		for _, s := range list {
			n += len(s) + 1
		}
	}
	n += 8 * (len(argv) + len(env) + 1)
	n = (layoutBytes - n%layoutBytes) % layoutBytes
	return append(env, layoutPadVar+"="+strings.Repeat("x", n))
}

// run runs f with c wrapped, and returns the events of every dump of the
// one worker process, by tick (index 0 unused).
func (v Valgrind) run(c Command, f func(Command) error) ([]Events, error) {
	if err := v.Machine.check(); err != nil {
		return nil, err
	}
	if !vgSupported {
		return nil, fmt.Errorf("the model clock's client requests are implemented on amd64 only")
	}
	dir, err := os.MkdirTemp(v.TempDir, "parscope-callgrind-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := f(v.wrap(c, dir)); err != nil {
		return nil, err
	}
	return readDumps(dir)
}

func (v Valgrind) local() Local { return Local{TempDir: v.TempDir, Clock: ModelClock} }

// dumpName matches callgrind's numbered dumps with --separate-threads=yes:
// cg.<pid>.<n>-<thread>.
var dumpName = regexp.MustCompile(`^cg\.(\d+)\.(\d+)-(\d+)$`)

// readDumps reads the numbered dumps of the one process that wrote into
// dir: events[n] is dump n's (summed over the threads it holds).
//
// The dumps are per thread (--separate-threads=yes): a client request
// dumps the events of the thread that made it, the thread running the
// driver's goroutine, since that thread's previous dump. The other
// threads' events are left out: the Go runtime's monitor thread (sysmon)
// wakes on the host's clock (every 20 µs to 10 ms of real time), so how
// much it executes between two readings depends on how fast valgrind ran,
// not on the program; summed into the dumps, it made the same run's
// modelled time vary. (The simulated caches are shared by all threads, so
// the monitor's few accesses can still evict a line of the worker's.)
func readDumps(dir string) ([]Events, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	pids := map[string]bool{}
	byTick := map[int][]string{}
	last := 0
	for _, e := range ents {
		m := dumpName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		pids[m[1]] = true
		n, _ := strconv.Atoi(m[2])
		byTick[n] = append(byTick[n], filepath.Join(dir, e.Name()))
		last = max(last, n)
	}
	if len(pids) > 1 {
		return nil, fmt.Errorf("%s: dumps of %d processes: the model backend measures in one worker process (did a phase crash?)", dir, len(pids))
	}
	events := make([]Events, last+1)
	for n := 1; n <= last; n++ {
		paths, ok := byTick[n]
		if !ok {
			return nil, fmt.Errorf("%s: dump %d of %d is missing", dir, n, last)
		}
		slices.Sort(paths)
		for _, path := range paths {
			e, err := ReadCallgrindTotals(path)
			if err != nil {
				return nil, err
			}
			events[n] = events[n].Add(e)
		}
	}
	return events, nil
}

// ReadCallgrindTotals reads the events of a callgrind profile from its
// "events:" and "totals:" lines (events the file does not name are 0; a
// totals line may omit trailing zeros).
func ReadCallgrindTotals(path string) (Events, error) {
	f, err := os.Open(path)
	if err != nil {
		return Events{}, err
	}
	defer f.Close()
	var names []string
	var e Events
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		switch {
		case strings.HasPrefix(t, "events:"):
			names = strings.Fields(strings.TrimPrefix(t, "events:"))
		case strings.HasPrefix(t, "totals:"):
			if names == nil {
				return e, fmt.Errorf("%s:%d: a totals line before the events line", path, line)
			}
			vals := strings.Fields(strings.TrimPrefix(t, "totals:"))
			if len(vals) > len(names) {
				return e, fmt.Errorf("%s:%d: %d totals for %d events", path, line, len(vals), len(names))
			}
			for i, s := range vals {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil || n < 0 {
					return e, fmt.Errorf("%s:%d: total %q of event %s: want a non-negative integer", path, line, format.Excerpt([]byte(s)), format.Excerpt([]byte(names[i])))
				}
				if p := e.field(names[i]); p != nil {
					*p = n
				}
			}
			return e, nil
		}
	}
	if err := sc.Err(); err != nil {
		return e, fmt.Errorf("%s: %w", path, err)
	}
	return e, fmt.Errorf("%s:%d: no totals line (want a callgrind profile)", path, line)
}

// field returns the count named name, or nil for an event the model does
// not use.
func (e *Events) field(name string) *int64 {
	switch name {
	case "Ir":
		return &e.Ir
	case "Dr":
		return &e.Dr
	case "Dw":
		return &e.Dw
	case "I1mr":
		return &e.I1mr
	case "D1mr":
		return &e.D1mr
	case "D1mw":
		return &e.D1mw
	case "ILmr":
		return &e.ILmr
	case "DLmr":
		return &e.DLmr
	case "DLmw":
		return &e.DLmw
	}
	return nil
}

// timeline turns ticks into the machine's time: at(t) is the modelled time
// from the stopwatch's start (tick 1) to tick t, the ticks of paused work
// excluded; cost(t) is the time of tick t's dump alone.
type timeline struct {
	m      Machine
	events []Events
	paused map[int64]bool
}

func (tl *timeline) tick(t int64) (Events, error) {
	if t < 1 || t >= int64(len(tl.events)) {
		return Events{}, fmt.Errorf("model clock: tick %d, but the worker made %d dumps", t, len(tl.events)-1)
	}
	return tl.events[t], nil
}

func (tl *timeline) cost(t int64) (time.Duration, error) {
	e, err := tl.tick(t)
	return tl.m.Time(e), err
}

func (tl *timeline) at(t int64) (time.Duration, error) {
	if _, err := tl.tick(t); err != nil {
		return 0, err
	}
	cycles := 0.0
	for j := int64(2); j <= t; j++ {
		if !tl.paused[j] {
			cycles += tl.m.Cycles(tl.events[j])
		}
	}
	return time.Duration(math.Round(cycles / tl.m.GHz)), nil
}

// Plain implements Backend: the modelled time of the uninstrumented run.
func (v Valgrind) Plain(ctx context.Context, c Command) (RunStats, error) {
	var rs RunStats
	ev, err := v.run(c, func(w Command) (err error) {
		rs, err = v.local().Plain(ctx, w)
		return err
	})
	if err != nil {
		return rs, err
	}
	tl := &timeline{m: v.Machine, events: ev}
	rs.Elapsed, err = tl.at(int64(rs.Elapsed))
	return rs, err
}

// PlainEvents runs the worker uninstrumented under the machine's caches
// and returns the events of its timed run (the steps, Init excluded) with
// its RunStats (Elapsed in the machine's time).
func (v Valgrind) PlainEvents(ctx context.Context, c Command) (RunStats, Events, error) {
	var rs RunStats
	ev, err := v.run(c, func(w Command) (err error) {
		rs, err = v.local().Plain(ctx, w)
		return err
	})
	if err != nil {
		return rs, Events{}, err
	}
	end := int64(rs.Elapsed)
	tl := &timeline{m: v.Machine, events: ev}
	if rs.Elapsed, err = tl.at(end); err != nil {
		return rs, Events{}, err
	}
	var sum Events
	for j := int64(2); j <= end; j++ {
		sum = sum.Add(ev[j])
	}
	return rs, sum, nil
}

// Vectors implements Backend: the blocks do not depend on the machine, so
// the vectors are counted natively.
func (v Valgrind) Vectors(ctx context.Context, c Command, interval int64) (*VectorStats, error) {
	return Local{TempDir: v.TempDir}.Vectors(ctx, c, interval)
}

// Capture implements Backend: the counted run's marks and snapshot times
// in the machine's time.
func (v Valgrind) Capture(ctx context.Context, c Command, interval int64, at []int64) (*CaptureStats, error) {
	var cs *CaptureStats
	ev, err := v.run(c, func(w Command) (err error) {
		cs, err = v.local().Capture(ctx, w, interval, at)
		return err
	})
	if err != nil {
		return nil, err
	}
	tl := &timeline{m: v.Machine, events: ev, paused: map[int64]bool{}}
	for _, s := range cs.Snapshots {
		tl.paused[int64(s.Time)] = true
	}
	for i := range cs.Snapshots {
		if cs.Snapshots[i].Time, err = tl.cost(int64(cs.Snapshots[i].Time)); err != nil {
			return nil, err
		}
	}
	for i := range cs.Marks {
		if cs.Marks[i].Time, err = tl.at(int64(cs.Marks[i].Time)); err != nil {
			return nil, err
		}
	}
	if cs.Elapsed, err = tl.at(int64(cs.Elapsed)); err != nil {
		return nil, err
	}
	return cs, nil
}

// Replay implements Backend with one round, whatever o asks (the events
// of a replay repeat exactly), and no budget.
func (v Valgrind) Replay(ctx context.Context, c Command, p *Probe, phases []int, o ReplayOptions) ([]PhaseRun, error) {
	o.Rounds, o.Budget, o.MaxRounds, o.Units = 1, 0, 0, nil
	var runs []PhaseRun
	ev, err := v.run(c, func(w Command) (err error) {
		runs, err = v.local().Replay(ctx, w, p, phases, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	tl := &timeline{m: v.Machine, events: ev}
	if c := o.Costs; c != nil && len(c.stages) == 1 {
		// The worker's stages in the machine's time: tick 1 holds the
		// process's start up to the stopwatch, and each stage the ticks
		// after the previous stage's reading up to its own.
		s := c.stages[0]
		c.Instructions = map[string]int64{}
		for _, st := range []struct {
			name     string
			from, to int64
			d        *time.Duration
		}{{"Start", 1, 1, &c.Start}, {"Init", 2, s.Init, &c.Init}, {"Load", s.Init + 1, s.Load, &c.Load},
			{"FirstRound", s.Load + 1, s.FirstRound, &c.FirstRound}, {"Rounds", s.FirstRound + 1, s.End, &c.Rounds}} {
			var sum Events
			for t := st.from; t <= st.to; t++ {
				e, err := tl.tick(t)
				if err != nil {
					return nil, err
				}
				sum = sum.Add(e)
			}
			*st.d = v.Machine.Time(sum)
			c.Instructions[st.name] = sum.Ir
		}
	}
	for i := range runs {
		r := &runs[i]
		if r.Err != nil {
			continue
		}
		if r.Warm, err = tl.cost(int64(r.Warm)); err != nil {
			return nil, err
		}
		for k, t := range r.Probed {
			if r.Probed[k], err = tl.cost(int64(t)); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(runs, func(a, b PhaseRun) int { return a.Phase - b.Phase })
	return runs, nil
}
