package probe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/format/bbv"
	"github.com/parscope/parscope/store"
)

// Command is how to start the worker.
type Command struct {
	// Path is the program and Args its arguments.
	Path string
	Args []string
	// Env is added to the environment the worker inherits (under the
	// Valgrind backend the worker inherits nothing: its environment is
	// ModelEnv, Env and the backend's own, so that it starts the same
	// whoever runs it; see padLayout).
	Env []string
	// Output receives the worker's stdout and stderr (nil discards them).
	Output io.Writer
	// clientArgv, set by Valgrind's wrap, is the command line of the
	// program the wrapped one runs; the worker then starts with Env alone,
	// padded (see padLayout).
	clientArgv []string
}

// Backend runs a worker for the probe: the reference runs on the
// reference machine, and the replay of the snapshots on the target. The
// one implemented is Local, application-level snapshots through the
// driver protocol (Main). A native-process backend would implement the
// same methods with a system checkpointer (CRIU: dump the process at the
// snapshot points the counting driver stops at, restore the image on the
// target); the rest of the probe — phase selection, the archive, the
// prediction, the reduction — does not change.
type Backend interface {
	// Plain runs the worker to the end uninstrumented: ETuninstRef.
	Plain(ctx context.Context, c Command) (RunStats, error)
	// Vectors runs the worker to the end counting basic block vectors in
	// intervals of interval blocks.
	Vectors(ctx context.Context, c Command, interval int64) (*VectorStats, error)
	// Capture runs the worker to the end counting blocks: it marks every
	// interval boundary and saves a snapshot at the first step boundary at
	// or after each block count of at (ascending).
	Capture(ctx context.Context, c Command, interval int64, at []int64) (*CaptureStats, error)
	// Replay measures the given phases of p (indexes into its manifest)
	// in rounds, as o says. A phase that crashes the worker is reported
	// in its PhaseRun and the other phases are still measured.
	Replay(ctx context.Context, c Command, p *Probe, phases []int, o ReplayOptions) ([]PhaseRun, error)
}

// ReplayOptions say how often a replay measures each phase.
type ReplayOptions struct {
	// Rounds is the number of rounds (each phase measured once per
	// round); with a Budget, the least number. 0 means 1.
	Rounds int
	// Budget, when positive, keeps starting rounds (up to MaxRounds)
	// while the replay's own wall time, Spent included, stays within
	// this fraction of the run time the measurements predict; Units
	// gives, per phase (same order as the phases), the predicted run
	// time per second of its interval time.
	Budget    float64
	MaxRounds int
	Units     []float64
	Spent     time.Duration
	// BeforeStart, if set, is called before the worker starts (after the
	// snapshots are ready for it); an error stops the replay with it.
	BeforeStart func() error
	// Costs, if set, receives where the replay's own time went.
	Costs *ReplayCosts
	// Progress, if set, is told the measurements taken so far (a phase
	// measured once, or failed), while the worker runs, for a progress
	// line: from another goroutine, one call at a time, never after
	// Replay returns. Local reports them; Valgrind does not.
	Progress func(measured int)
}

// ReplayCosts is where a replay's own time went. Local measures the wall
// clock (a worker restarted after a crash adds to every stage); Valgrind
// replaces the worker's stages by the model machine's time of their events
// and adds their instruction counts.
type ReplayCosts struct {
	// Snapshots is the time spent writing the compressed snapshots into
	// the worker's work directory, Wait the time then spent in
	// BeforeStart (waiting for the executable's checksum).
	Snapshots, Wait time.Duration
	// Start runs from starting the worker to its driver's stopwatch
	// (process creation, the Go runtime's initialisation, reading the
	// configuration); Init is the task's Init; Load reading,
	// decompressing and checking the snapshots; FirstRound the first
	// round of measurements and Rounds the later ones; Exit from the
	// driver's end to parscope having read its answer.
	Start, Init, Load, FirstRound, Rounds, Exit time.Duration
	// RoundsMade is the number of rounds.
	RoundsMade int
	// Instructions, under the Valgrind backend, counts the instructions
	// the worker executed in Start, Init, Load, FirstRound and Rounds
	// (by those names).
	Instructions map[string]int64
	// stages holds the stages line of every worker process.
	stages []replayStages
}

// add adds the stages of one worker process, as its stages line reports
// them, to c: the wall clock's Start and Exit against the moments
// parscope started it (spawn) and had read its answer (done).
func (c *ReplayCosts) add(s *replayStages, spawn, done time.Time) {
	c.Start += time.Duration(max(0, s.StartUnix-spawn.UnixNano()))
	c.Init += time.Duration(s.Init)
	c.Load += time.Duration(s.Load - s.Init)
	c.FirstRound += time.Duration(s.FirstRound - s.Load)
	c.Rounds += time.Duration(s.End - s.FirstRound)
	c.Exit += time.Duration(max(0, done.UnixNano()-s.EndUnix))
	c.RoundsMade += s.Rounds
	c.stages = append(c.stages, *s)
}

// RunStats describes one run of the worker.
type RunStats struct {
	Worker  Info
	Elapsed time.Duration
	Steps   int64
	Blocks  int64
	// MaxStep is the most blocks one step executed (vector runs only).
	MaxStep int64
}

// VectorStats is a basic block vector run: one vector per interval.
type VectorStats struct {
	RunStats
	Vectors []bbv.Vector
	Dim     int32
}

// Mark is the first step boundary at or after an interval boundary.
type Mark struct {
	Time   time.Duration
	Step   int64
	Blocks int64
}

// CaptureStats is a counted reference run with snapshots.
type CaptureStats struct {
	RunStats
	// Marks holds the start of every interval.
	Marks []Mark
	// Snapshots holds one snapshot per requested point.
	Snapshots []SnapshotStats
}

// SnapshotStats is one snapshot of a capture run.
type SnapshotStats struct {
	Step, Blocks int64
	State        []byte
	Time         time.Duration
	// Err is set when the snapshot failed.
	Err error
}

// PhaseRun is one phase measured on the target.
type PhaseRun struct {
	// Phase is the index in the manifest's phases.
	Phase int
	// Probed holds the interval's time of each measurement.
	Probed []time.Duration
	// Warm is the time of the warm-up steps (all repetitions).
	Warm time.Duration
	// Err is set when the phase could not be measured (it crashed).
	Err error
}

// Local runs the worker as a child process on this machine and talks to
// its driver through a work directory (see EnvDir).
type Local struct {
	// TempDir is where work directories are made ("" for os.TempDir).
	TempDir string
	// Clock is what the worker's times measure ("" is WallClock).
	Clock Clock
}

// child runs the worker once in mode with cfg; it returns the work
// directory (removed by the caller) and the exit error.
func (l Local) child(ctx context.Context, c Command, cfg *childConfig, prepare func(dir string) error) (string, error, error) {
	dir, err := os.MkdirTemp(l.TempDir, "parscope-probe-")
	if err != nil {
		return "", nil, err
	}
	if prepare != nil {
		if err := prepare(dir); err != nil {
			return dir, nil, err
		}
	}
	cfg.Clock = l.Clock
	if err := writeJSONFile(filepath.Join(dir, configFile), cfg); err != nil {
		return dir, nil, err
	}
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	if c.clientArgv != nil {
		// Under a wrapper (Valgrind.wrap) the worker inherits nothing.
		cmd.Env = padLayout(c.clientArgv, append(slices.Clone(c.Env), EnvDir+"="+dir))
	} else {
		cmd.Env = append(append(os.Environ(), c.Env...), EnvDir+"="+dir)
	}
	var tail tailBuffer
	out := io.Writer(&tail)
	if c.Output != nil {
		out = io.MultiWriter(c.Output, &tail)
	}
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	if runErr != nil && tail.Len() > 0 {
		runErr = fmt.Errorf("%w; its last output: %s", runErr, strings.TrimSpace(tail.String()))
	}
	return dir, runErr, nil
}

// result runs a child and reads its result.json.
func (l Local) result(ctx context.Context, c Command, cfg *childConfig, prepare func(dir string) error) (*childResult, string, error) {
	dir, runErr, err := l.child(ctx, c, cfg, prepare)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	var res childResult
	raw, rerr := os.ReadFile(filepath.Join(dir, resultFile))
	if rerr == nil {
		rerr = json.Unmarshal(raw, &res)
	}
	switch {
	case rerr == nil && res.Err != "":
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("%s (%s run): %s", c.Path, cfg.Mode, res.Err)
	case rerr != nil && runErr != nil:
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("%s (%s run): %w", c.Path, cfg.Mode, runErr)
	case rerr != nil:
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("%s (%s run) exited without answering parscope: is it a worker that calls probe.Main? (%v)", c.Path, cfg.Mode, rerr)
	case runErr != nil:
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("%s (%s run): %w", c.Path, cfg.Mode, runErr)
	}
	return &res, dir, nil
}

func (r *childResult) stats() RunStats {
	return RunStats{Worker: r.Worker, Elapsed: time.Duration(r.Elapsed), Steps: r.Steps, Blocks: r.Blocks, MaxStep: r.MaxStep}
}

// Plain implements Backend.
func (l Local) Plain(ctx context.Context, c Command) (RunStats, error) {
	res, dir, err := l.result(ctx, c, &childConfig{Mode: modePlain}, nil)
	if err != nil {
		return RunStats{}, err
	}
	os.RemoveAll(dir)
	return res.stats(), nil
}

// Vectors implements Backend: the driver records the vectors with the
// instrument library into a .pst, read back here.
func (l Local) Vectors(ctx context.Context, c Command, interval int64) (*VectorStats, error) {
	cfg := &childConfig{Mode: modeVectors, Interval: interval}
	res, dir, err := l.result(ctx, c, cfg, func(dir string) error {
		cfg.Trace = filepath.Join(dir, "vectors.pst")
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := store.Open(cfg.Trace)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	streams, err := bbv.FromRecords(ctx, cfg.Trace, s.BBV(store.ReadOptions{}), 0)
	if err != nil {
		return nil, err
	}
	if len(streams) != 1 {
		return nil, fmt.Errorf("%s: %d basic block vector streams, want 1 (did the worker call Block?)", c.Path, len(streams))
	}
	return &VectorStats{RunStats: res.stats(), Vectors: streams[0].File.Vectors, Dim: streams[0].File.Dim}, nil
}

// Capture implements Backend.
func (l Local) Capture(ctx context.Context, c Command, interval int64, at []int64) (*CaptureStats, error) {
	return l.capture(ctx, c, &childConfig{Mode: modeCapture, Interval: interval, SnapshotAt: at})
}

// CapturePrefix is a counted run that stops at the first step boundary
// with at least stop blocks executed: the marks of the run's beginning,
// for a predictor that times the first part of a run and extrapolates.
func (l Local) CapturePrefix(ctx context.Context, c Command, interval, stop int64) (*CaptureStats, error) {
	if stop < 1 {
		return nil, fmt.Errorf("stop %d: want at least 1 block", stop)
	}
	return l.capture(ctx, c, &childConfig{Mode: modeCapture, Interval: interval, StopAt: stop})
}

func (l Local) capture(ctx context.Context, c Command, cfg *childConfig) (*CaptureStats, error) {
	at := cfg.SnapshotAt
	for i := range at {
		cfg.SnapshotFiles = append(cfg.SnapshotFiles, "snap-"+strconv.Itoa(i)+".bin")
	}
	res, dir, err := l.result(ctx, c, cfg, nil)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cs := &CaptureStats{RunStats: res.stats()}
	for k := range res.MarkNS {
		cs.Marks = append(cs.Marks, Mark{Time: time.Duration(res.MarkNS[k]), Step: res.MarkSteps[k], Blocks: res.MarkBlocks[k]})
	}
	if len(res.Snapshots) != len(at) {
		return nil, fmt.Errorf("%s (capture run): %d snapshots reported, %d requested", c.Path, len(res.Snapshots), len(at))
	}
	for i, s := range res.Snapshots {
		ss := SnapshotStats{Step: s.Step, Blocks: s.Blocks, Time: time.Duration(s.NS)}
		if s.Err != "" {
			ss.Err = errors.New(s.Err)
		} else if ss.State, err = os.ReadFile(filepath.Join(dir, cfg.SnapshotFiles[i])); err != nil {
			ss.Err = err
		}
		cs.Snapshots = append(cs.Snapshots, ss)
	}
	return cs, nil
}

// Replay implements Backend. All phases run in one worker process, in
// rounds; when it dies in a phase, that phase is reported as crashed and a
// new process measures the others again (so they may get more
// measurements than the rounds asked).
func (l Local) Replay(ctx context.Context, c Command, p *Probe, phases []int, o ReplayOptions) ([]PhaseRun, error) {
	start := time.Now()
	unit := map[int]float64{}
	for i, ix := range phases {
		if i < len(o.Units) {
			unit[ix] = o.Units[i]
		}
	}
	runs := map[int]*PhaseRun{}
	var order []int
	get := func(ix int) *PhaseRun {
		r := runs[ix]
		if r == nil {
			r = &PhaseRun{Phase: ix}
			runs[ix] = r
			order = append(order, ix)
		}
		return r
	}
	if l.TempDir == "" {
		l.TempDir = memoryTempDir()
	}
	measured := 0 // by the workers before this one (one restarts after a crash)
	for len(phases) > 0 {
		cfg := &childConfig{Mode: modeReplay, Expect: p.Manifest.Worker.Info, Repeat: o.Rounds, MaxRepeat: o.MaxRounds,
			Budget: o.Budget}
		for i, ix := range phases {
			rp := replayOf(p, ix, "phase-"+strconv.Itoa(i)+".bin")
			rp.Unit = unit[ix]
			cfg.Replay = append(cfg.Replay, rp)
		}
		var spawn time.Time
		unwatch := func() {}
		dir, runErr, err := l.child(ctx, c, cfg, func(dir string) error {
			// The compressed snapshots: the worker decompresses and
			// checks them itself, on all its cores, before measuring.
			t0 := time.Now()
			for i, ix := range phases {
				s := p.Manifest.Phases[ix].Snapshot
				if s == nil {
					return fmt.Errorf("phase %d has no snapshot (the probe was reduced)", p.Manifest.Phases[ix].ID)
				}
				cfg.Replay[i].RawSize = s.RawSize
				if err := os.WriteFile(filepath.Join(dir, cfg.Replay[i].File), p.blob(ix), 0o644); err != nil {
					return err
				}
			}
			t1 := time.Now()
			var err error
			if o.BeforeStart != nil {
				err = o.BeforeStart()
			}
			spawn = time.Now()
			// What the probe has spent up to the worker's start, for
			// its budget.
			spent := o.Spent + spawn.Sub(start)
			cfg.SpentNS, cfg.OriginUnixNS = int64(spent), spawn.Add(-spent).UnixNano()
			if o.Costs != nil {
				o.Costs.Snapshots += t1.Sub(t0)
				o.Costs.Wait += spawn.Sub(t1)
			}
			if err == nil && o.Progress != nil {
				unwatch = watchReplay(filepath.Join(dir, replayFile), measured, o.Progress)
			}
			return err
		})
		unwatch()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		lines, lerr := readReplay(filepath.Join(dir, replayFile))
		os.RemoveAll(dir)
		if lerr != nil && runErr == nil {
			return nil, lerr
		}
		done := time.Now()
		failed := map[int]bool{}
		last := -1 // position in phases of the last phase measured
		for _, ln := range lines {
			if ln.Phase == stagesLine {
				if ln.Stages != nil && o.Costs != nil {
					o.Costs.add(ln.Stages, spawn, done)
				}
				continue
			}
			if ln.Phase == -1 {
				if want := p.Manifest.Worker.Info; ln.Worker != want {
					return nil, &IdentityError{What: "name/version", Probe: want.Name + "/" + want.Version, Worker: ln.Worker.Name + "/" + ln.Worker.Version}
				}
				return nil, fmt.Errorf("%s: %s", c.Path, ln.Err)
			}
			measured++
			r := get(ln.Phase)
			if ln.Err != "" {
				r.Err, failed[ln.Phase] = errors.New(ln.Err), true
			} else {
				r.Probed = append(r.Probed, time.Duration(ln.ProbedNS))
				r.Warm += time.Duration(ln.WarmNS)
			}
			last = slices.Index(phases, ln.Phase)
		}
		if o.Progress != nil {
			o.Progress(measured)
		}
		var exit *exec.ExitError
		if runErr == nil || (errors.As(runErr, &exit) && exit.ExitCode() == exitReported) {
			break // the driver finished and reported every failure itself
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The worker died: in the phase after the last one measured (the
		// rounds go through the phases in order, skipping failed ones).
		var live []int
		for _, ix := range phases {
			if !failed[ix] {
				live = append(live, ix)
			}
		}
		if len(live) == 0 {
			break
		}
		crashed := live[0]
		if last >= 0 {
			for k := 1; k <= len(phases); k++ {
				if ix := phases[(last+k)%len(phases)]; !failed[ix] {
					crashed = ix
					break
				}
			}
		}
		if runErr == nil {
			runErr = errors.New("the worker exited without measuring it")
		}
		r := get(crashed)
		r.Err = fmt.Errorf("the worker crashed in phase %d: %w", p.Manifest.Phases[crashed].ID, runErr)
		phases = slices.DeleteFunc(live, func(ix int) bool { return ix == crashed })
	}
	out := make([]PhaseRun, 0, len(order))
	for _, ix := range order {
		out = append(out, *runs[ix])
	}
	return out, nil
}

// memoryTempDir returns a memory-backed directory for the replay's work
// directory (the snapshots pass through it on every probe run), or "" for
// the default temporary directory when there is none.
func memoryTempDir() string {
	const shm = "/dev/shm"
	if st, err := os.Stat(shm); err == nil && st.IsDir() {
		if f, err := os.CreateTemp(shm, "parscope-probe-check-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return shm
		}
	}
	return ""
}

// readReplay reads replay.jsonl; a torn last line (a crash while writing)
// is ignored.
func readReplay(path string) ([]replayLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []replayLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l replayLine
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// watchInterval is how often watchReplay reads the replay file.
const watchInterval = 100 * time.Millisecond

// watchReplay tells progress, every watchInterval until the returned stop
// is called, base plus the measurements in the replay file at path (the
// driver appends each as soon as it is taken), when that number changed.
// stop returns once the watching goroutine has ended.
func watchReplay(path string, base int, progress func(int)) (stop func()) {
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		last := 0
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			lines, err := readReplay(path)
			if err != nil {
				continue // not created yet
			}
			n := 0
			for _, l := range lines {
				if l.Phase >= 0 {
					n++
				}
			}
			if n != last {
				last = n
				progress(base + n)
			}
		}
	}()
	return func() {
		close(quit)
		<-ended
	}
}

// tailBuffer keeps the last 2 KiB written to it.
type tailBuffer struct{ bytes.Buffer }

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.Buffer.Write(p)
	if t.Len() > 4096 {
		b := t.Bytes()[t.Len()-2048:]
		t.Reset()
		t.Buffer.Write(b)
	}
	return n, nil
}

// FileSHA256 returns the hex SHA-256 of the program that path names
// (looked up in PATH when it has no slash).
func FileSHA256(path string) (string, error) {
	p, err := exec.LookPath(path)
	if err != nil {
		return "", err
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
