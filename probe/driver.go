package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/parscope/parscope/instrument"
	_ "github.com/parscope/parscope/instrument/pst" // Close builds the .pst (see package pst)
	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/trace"
)

// Main runs task. Started by parscope (EnvDir set), it does what parscope
// asked — a timed reference run, a basic block vector run, a capture run
// with snapshots, or a probe replay — writes the answer into the work
// directory and exits the process. Otherwise it initialises the task, runs
// it to the end uninstrumented and returns, so the worker's main can print
// its results afterwards:
//
//	func main() {
//		t := parseFlags()
//		if err := probe.Main(probe.Info{Name: "matmul", Version: "1"}, t); err != nil {
//			log.Fatal(err)
//		}
//		fmt.Println(t.Checksum())
//	}
func Main(info Info, task Task) error {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		if err := task.Init(nop{}); err != nil {
			return err
		}
		for !task.Step() {
		}
		return nil
	}
	os.Exit(serve(dir, info, task))
	return nil
}

// processStart is when the process's Go code started (package
// initialisation): the stages line measures the worker's start from it.
var processStart = time.Now()

// serve answers parscope's request in dir and returns the exit status.
func serve(dir string, info Info, task Task) int {
	var cfg childConfig
	res := childResult{Worker: info}
	raw, err := os.ReadFile(filepath.Join(dir, configFile))
	if err == nil {
		err = json.Unmarshal(raw, &cfg)
	}
	if err != nil {
		res.Err = fmt.Sprintf("probe driver: reading %s: %v", configFile, err)
		return answer(dir, &res)
	}
	res.Mode = cfg.Mode
	if cfg.Clock == ModelClock {
		task = yieldingTask{task}
	}
	switch cfg.Mode {
	case modePlain:
		err = runPlain(task, &cfg, &res)
	case modeVectors:
		err = runVectors(info, task, &cfg, &res)
	case modeCapture:
		err = runCapture(dir, task, &cfg, &res)
	case modeReplay:
		return runReplay(dir, info, task, &cfg)
	case modeTouched:
		err = runTouched(dir, info, task, &cfg, &res)
	default:
		err = fmt.Errorf("unknown mode %q", cfg.Mode)
	}
	if err != nil {
		res.Err = err.Error()
	}
	return answer(dir, &res)
}

// answer writes result.json and returns the exit status.
func answer(dir string, res *childResult) int {
	if err := writeJSONFile(filepath.Join(dir, resultFile), res); err != nil {
		fmt.Fprintln(os.Stderr, "probe driver:", err)
		return 1
	}
	if res.Err != "" {
		return exitReported
	}
	return 0
}

// writeJSONFile writes v to path atomically (see package atomicfile).
func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b, atomicfile.RegularFile)
}

// runPlain is the uninstrumented timed run: ETuninstRef.
func runPlain(task Task, cfg *childConfig, res *childResult) error {
	if err := task.Init(nop{}); err != nil {
		return fmt.Errorf("task initialisation: %w", err)
	}
	sw, err := newStopwatch(cfg.Clock)
	if err != nil {
		return err
	}
	steps := int64(1)
	for !task.Step() {
		steps++
	}
	res.Elapsed = sw.now()
	res.Steps = steps
	return nil
}

// runVectors counts basic block vectors with the instrument library
// (Options.BBVInterval) into a .pst holding only the vectors.
func runVectors(info Info, task Task, cfg *childConfig, res *childResult) error {
	if cfg.Interval < 1 {
		return fmt.Errorf("interval %d: want at least 1 block", cfg.Interval)
	}
	rec, err := instrument.Start(instrument.Options{
		Path:        cfg.Trace,
		Force:       true,
		Program:     info.Name,
		Extra:       map[string]string{"probe_version": info.Version, "interval_size": fmt.Sprint(cfg.Interval)},
		BBVInterval: cfg.Interval,
		Filter:      instrument.DropKinds(trace.KindState),
	})
	if err != nil {
		return err
	}
	p := rec.Process(0)
	c := &counter{next: p}
	if err := task.Init(c); err != nil {
		rec.Abort()
		return fmt.Errorf("task initialisation: %w", err)
	}
	start := time.Now()
	var steps, last int64
	for done := false; !done; {
		done = task.Step()
		steps++
		res.MaxStep = max(res.MaxStep, c.n-last)
		last = c.n
	}
	res.Elapsed = time.Since(start).Nanoseconds()
	res.Steps, res.Blocks = steps, c.n
	if err := p.Done(); err != nil {
		rec.Abort()
		return err
	}
	return rec.Close()
}

// runCapture is the counted reference run: it marks the time of every
// interval boundary (ETRef, TPhaseRef, the phases' time shares) and saves
// a snapshot at the first step boundary at or after each SnapshotAt. The
// time spent saving snapshots is excluded from every time it reports. A
// snapshot that fails is reported and the run continues to the end.
func runCapture(dir string, task Task, cfg *childConfig, res *childResult) error {
	if cfg.Interval < 1 {
		return fmt.Errorf("interval %d: want at least 1 block", cfg.Interval)
	}
	if !slices.IsSorted(cfg.SnapshotAt) || len(cfg.SnapshotAt) != len(cfg.SnapshotFiles) {
		return errors.New("snapshot points must be sorted and each have a file")
	}
	c := &counter{}
	if err := task.Init(c); err != nil {
		return fmt.Errorf("task initialisation: %w", err)
	}
	res.Snapshots = make([]snapResult, len(cfg.SnapshotAt))
	sw, err := newStopwatch(cfg.Clock)
	if err != nil {
		return err
	}
	now := sw.now
	nextSnap := 0
	var steps int64
	boundary := func() {
		for int64(len(res.MarkNS))*cfg.Interval <= c.n {
			res.MarkNS = append(res.MarkNS, now())
			res.MarkSteps = append(res.MarkSteps, steps)
			res.MarkBlocks = append(res.MarkBlocks, c.n)
		}
		for nextSnap < len(cfg.SnapshotAt) && cfg.SnapshotAt[nextSnap] <= c.n {
			sr := &res.Snapshots[nextSnap]
			sr.Step, sr.Blocks = steps, c.n
			sr.NS = sw.pause(func() {
				state, err := snapshot(task)
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, cfg.SnapshotFiles[nextSnap]), state, 0o644)
				}
				sr.Bytes = int64(len(state))
				if err != nil {
					sr.Err = err.Error()
				}
			})
			nextSnap++
		}
	}
	for done := false; !done; {
		boundary()
		if cfg.StopAt > 0 && c.n >= cfg.StopAt {
			break
		}
		done = task.Step()
		steps++
	}
	res.Elapsed = now()
	res.Steps, res.Blocks = steps, c.n
	// Marks at or beyond the last block belong to no interval.
	for k := len(res.MarkNS) - 1; k > 0 && int64(k)*cfg.Interval >= c.n; k-- {
		res.MarkNS, res.MarkSteps, res.MarkBlocks = res.MarkNS[:k], res.MarkSteps[:k], res.MarkBlocks[:k]
	}
	for i := nextSnap; i < len(cfg.SnapshotAt) && cfg.StopAt <= 0; i++ {
		res.Snapshots[i].Err = fmt.Sprintf("the run ended after %d blocks, before snapshot point %d", c.n, cfg.SnapshotAt[i])
	}
	return nil
}

// snapshot calls task.Snapshot, turning a panic into an error.
func snapshot(task Task) (state []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Snapshot panicked: %v", r)
		}
	}()
	return task.Snapshot()
}

// runReplay measures the phases in rounds: in each round, for each phase,
// restore its snapshot, run the warm-up steps, time the interval's steps.
// Every measurement is appended to replay.jsonl as soon as it is taken; a
// phase that panics or fails is reported once and left out of the later
// rounds. Rounds continue up to cfg.Repeat, or with a budget while the
// next round fits it (see childConfig.Budget).
func runReplay(dir string, info Info, task Task, cfg *childConfig) int {
	start := time.Now()
	stages := replayStages{StartUnix: processStart.UnixNano()}
	f, err := os.OpenFile(filepath.Join(dir, replayFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe driver:", err)
		return 1
	}
	defer f.Close()
	emit := func(l replayLine) {
		l.Worker = info
		b, _ := json.Marshal(l)
		f.Write(append(b, '\n'))
	}
	if info != cfg.Expect {
		emit(replayLine{Phase: -1, Err: fmt.Sprintf("the probe is for worker %q version %q; this worker is %q version %q",
			cfg.Expect.Name, cfg.Expect.Version, info.Name, info.Version)})
		return exitReported
	}
	// The stopwatch starts before Init so that the stages line can say
	// what Init cost (the model clock: its first dump holds the process's
	// start up to here).
	sw, err := newStopwatch(cfg.Clock)
	if err != nil {
		emit(replayLine{Phase: -1, Err: err.Error()})
		return exitReported
	}
	c := &counter{}
	if err := task.Init(c); err != nil {
		emit(replayLine{Phase: -1, Err: fmt.Sprintf("Init: %v", err)})
		return exitReported
	}
	stages.Init = sw.now()
	minRounds := max(cfg.Repeat, 1)
	maxRounds := max(cfg.MaxRepeat, minRounds)
	failed := make([]bool, len(cfg.Replay))
	sums := make([]int64, len(cfg.Replay))
	status := 0
	states, errs := loadSnapshots(dir, cfg.Replay, sw.model)
	for i, err := range errs {
		if err != nil {
			failed[i], status = true, exitReported
			emit(replayLine{Phase: cfg.Replay[i].Phase, Err: fmt.Sprintf("snapshot %s: %v", cfg.Replay[i].File, err)})
		}
	}
	stages.Load = sw.now()
	defer func() {
		stages.End = sw.now()
		stages.EndUnix = time.Now().UnixNano()
		emit(replayLine{Phase: stagesLine, Stages: &stages})
	}()
	for round := 0; round < maxRounds; round++ {
		active := 0
		for i, ph := range cfg.Replay {
			if failed[i] {
				continue
			}
			l := measurePhase(task, c, sw, ph, states[i])
			l.Round = round
			if l.Err != "" {
				failed[i], status = true, exitReported
			} else {
				sums[i] += l.ProbedNS
				active++
			}
			emit(l)
		}
		stages.Rounds = round + 1
		if round == 0 {
			stages.FirstRound = sw.now()
		}
		if active == 0 || round+1 < minRounds {
			continue
		}
		if cfg.Budget <= 0 {
			break
		}
		// Another round only if it fits the budget.
		est := 0.0
		for i, ph := range cfg.Replay {
			if !failed[i] {
				est += ph.Unit * float64(sums[i]) / float64(round+1) / 1e9
			}
		}
		spent, tail := cfg.spent(start, time.Now())
		perRound := time.Since(start) / time.Duration(round+1)
		if !cfg.fits(spent+perRound+tail, est) {
			break
		}
	}
	return status
}

// budgetPlan is the share of the budget the rounds are planned to. The
// budget is a fraction of the run time, which the probe knows only by its
// own prediction; planning to 90% of it keeps the probe within the budget
// of the actual run when the prediction is up to 11% too high (on the
// validation's wall-clock targets, predictions 1–5% high ended probes at
// 1.00–1.01% of the run when they were planned to the whole budget).
const budgetPlan = 0.9

// fits reports whether the probe, having spent total by the end of the
// next round and its exit, stays within the planned share of its budget
// of a run estimated at est seconds.
func (cfg *childConfig) fits(total time.Duration, est float64) bool {
	return total.Seconds() <= budgetPlan*cfg.Budget*est
}

// spent returns what the probe has spent at now, for a driver that
// started at start: from the origin parscope gave, or (a parscope that
// gave none, or a clock that stepped) what parscope spent before the
// worker started plus the driver's time. tail is what the probe will
// still spend after the last round, estimated as the worker's start
// (process start to start): its exit and parscope's reading of its
// answers cost about as much. Both count against the budget.
func (cfg *childConfig) spent(start, now time.Time) (spent, tail time.Duration) {
	spent = time.Duration(cfg.SpentNS) + now.Sub(start)
	if cfg.OriginUnixNS == 0 {
		return spent, 0
	}
	spawn := cfg.OriginUnixNS + cfg.SpentNS
	started := start.UnixNano()
	if started < spawn || started-spawn > int64(time.Minute) {
		return spent, 0 // the wall clock stepped
	}
	tail = time.Duration(started - spawn)
	return spent + tail, tail
}

// loadSnapshots reads, decompresses and checks the phases' snapshots, on
// up to GOMAXPROCS goroutines (nothing is measured yet), or on the calling
// goroutine with the model clock (one P; the model clock's dumps count the
// calling goroutine's thread).
//
// The check is the size and the zstd frame's checksum of the content, not
// the manifest's SHA-256: parscope checked the SHA-256 of the whole probe
// file when it read it, and a snapshot damaged on its way through the work
// directory fails the frame checksum. Hashing the decompressed states
// again cost as much as decompressing them (36 MB of phasesize-large's
// snapshots: 31–46 ms of SHA-256 against 45 ms of decompression).
func loadSnapshots(dir string, phases []replayPhase, model bool) ([][]byte, []error) {
	states := make([][]byte, len(phases))
	errs := make([]error, len(phases))
	if model {
		for i, ph := range phases {
			blob, err := os.ReadFile(filepath.Join(dir, ph.File))
			if err == nil {
				states[i], err = decodeSnapshot(blob, ph.RawSize, "")
			}
			errs[i] = err
		}
		return states, errs
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, ph := range phases {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			blob, err := os.ReadFile(filepath.Join(dir, ph.File))
			if err == nil {
				states[i], err = decodeSnapshot(blob, ph.RawSize, "")
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return states, errs
}

// measurePhase measures one phase once: restore, warm up, time.
func measurePhase(task Task, c *counter, sw *stopwatch, ph replayPhase, state []byte) (l replayLine) {
	l.Phase = ph.Phase
	defer func() {
		if r := recover(); r != nil {
			l.Err = fmt.Sprintf("phase %d panicked: %v", ph.Phase, r)
		}
	}()
	if err := task.Restore(state); err != nil {
		l.Err = fmt.Sprintf("Restore: %v", err)
		return l
	}
	// A collection now keeps the restores' garbage from being collected
	// inside a timed interval. Not under the model clock: there the
	// worker runs with GOGC=off, so no collection starts by itself, and a
	// forced one wakes the runtime's scavenger, whose timer then fires on
	// the host's clock inside the timed intervals.
	if !sw.model {
		runtime.GC()
	}
	c.n = 0
	t0 := sw.now()
	if err := steps(task, ph.WarmSteps); err != nil {
		l.Err = fmt.Sprintf("warm-up: %v", err)
		return l
	}
	t1 := sw.now()
	warm := c.n
	if err := steps(task, ph.Steps); err != nil {
		l.Err = fmt.Sprintf("interval: %v", err)
		return l
	}
	l.ProbedNS = sw.between(t1, sw.now())
	l.WarmNS = sw.between(t0, t1)
	l.Blocks = c.n - warm
	if l.Blocks != ph.Blocks {
		l.Err = fmt.Sprintf("phase %d executed %d blocks, the reference %d: the worker is not deterministic", ph.Phase, l.Blocks, ph.Blocks)
	}
	return l
}

// steps runs n steps; the task must not finish before the last.
func steps(task Task, n int64) error {
	for i := int64(0); i < n; i++ {
		if task.Step() && i < n-1 {
			return fmt.Errorf("the task finished after %d of %d steps", i+1, n)
		}
	}
	return nil
}

// mean returns the mean of xs and the standard error of that mean (0 for
// fewer than two values).
func mean(xs []time.Duration) (m, stderr float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		m += x.Seconds()
	}
	m /= float64(len(xs))
	if len(xs) < 2 {
		return m, 0
	}
	ss := 0.0
	for _, x := range xs {
		d := x.Seconds() - m
		ss += d * d
	}
	return m, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// yieldingTask calls the scheduler after every step (model clock). The Go
// runtime's monitor preempts a goroutine that has not passed through the
// scheduler for 10 ms of real time; under valgrind that happens at places
// that depend on the host's speed, and each preemption executes scheduler
// code that the model would count. Passing through the scheduler at every
// step costs the same events in every run and leaves the monitor nothing
// to preempt, so the modelled times repeat exactly.
type yieldingTask struct{ Task }

// Step implements Task.
//
// The step runs with the main goroutine unlocked from its thread (see
// mainThread): a task's own goroutines then run on that thread while the
// driver waits for them, as the dumps, which count the driver's thread,
// need; locked, they ran on another thread and went uncounted (nbody's
// full run on the small machine came out at 116 ms instead of 180 ms).
func (t yieldingTask) Step() bool {
	if mainThread {
		runtime.UnlockOSThread()
		defer runtime.LockOSThread()
	}
	done := t.Task.Step()
	runtime.Gosched()
	return done
}
