package probe

// The protocol between parscope (Build, Replay) and a worker that links the
// driver (Main). parscope starts the worker as a child process with the
// environment variable EnvDir set to a private work directory holding
// config.json (a childConfig). The worker's driver reads it, does the
// mode's work and writes its answer into the same directory:
//
//   - result.json (a childResult), written to a temporary name and renamed,
//     for the modes plain, vectors and capture; snapshots go to the files
//     config.json names;
//   - replay.jsonl for the mode replay: one replayLine per measurement of
//     a phase, appended as soon as it is taken, so the measurements taken
//     before a crash survive it.
//
// The worker's own stdout and stderr are passed to parscope's stderr. The
// driver exits with status 0 when it wrote its answer, and 3 when it wrote
// an error into it (childResult.Err or a replayLine.Err).

// EnvDir is the environment variable through which parscope hands the
// worker its work directory. Without it, Main runs the task plainly.
const EnvDir = "PARSCOPE_PROBE_DIR"

// Modes of a child run.
const (
	modePlain   = "plain"   // uninstrumented, timed: ETuninstRef
	modeVectors = "vectors" // basic block vectors through the instrument library
	modeCapture = "capture" // counted, timed, snapshots: ETRef, TPhaseRef
	modeReplay  = "replay"  // restore, warm up, time: TProbed
	modeTouched = "touched" // restore, warm up, run the interval: what it reads
)

const (
	configFile = "config.json"
	resultFile = "result.json"
	replayFile = "replay.jsonl"
	// exitReported is the driver's exit status after writing an error.
	exitReported = 3
)

// childConfig is config.json.
type childConfig struct {
	Mode string `json:"mode"`
	// Clock is what the times measure.
	Clock Clock `json:"clock,omitempty"`
	// Interval is the interval size in blocks: the vector pass's (fine)
	// interval, or the capture pass's timing interval.
	Interval int64 `json:"interval"`
	// Trace is the .pst the vector pass writes.
	Trace string `json:"trace,omitempty"`
	// SnapshotAt lists, ascending, the block counts at whose first step
	// boundary the capture pass saves a snapshot into SnapshotFiles[i].
	SnapshotAt    []int64  `json:"snapshot_at,omitempty"`
	SnapshotFiles []string `json:"snapshot_files,omitempty"`
	// StopAt, when positive, ends the capture pass at the first step
	// boundary with at least this many blocks executed.
	StopAt int64 `json:"stop_at,omitempty"`
	// Expect is the worker a replay must be.
	Expect Info `json:"expect"`
	// Replay lists the phases to measure, in order. A replay measures them
	// in rounds, each phase once per round, so that the measurements of a
	// phase are spread over the replay's time.
	Replay []replayPhase `json:"replay,omitempty"`
	// Repeat is the number of rounds; with a Budget it is the least
	// number, and MaxRepeat the most.
	Repeat    int `json:"repeat,omitempty"`
	MaxRepeat int `json:"max_repeat,omitempty"`
	// Budget, when positive, bounds the probe's own wall time to this
	// fraction of the run time it predicts: after each round the driver
	// estimates the run time (Σ Unit·mean of the phase's measurements)
	// and starts another round only if it fits, SpentNS (what parscope
	// spent before starting the worker) included. OriginUnixNS, when
	// set, is the wall-clock moment (Unix ns) the probe's time counts
	// from: the driver measures its spending from there, so that the
	// worker's start counts too.
	Budget       float64 `json:"budget,omitempty"`
	SpentNS      int64   `json:"spent_ns,omitempty"`
	OriginUnixNS int64   `json:"origin_unix_ns,omitempty"`
	// Chunk is the touched-set search's granularity in bytes, and
	// TouchedFiles[i] where it writes the trimmed state of Replay[i]
	// (mode touched).
	Chunk        int      `json:"chunk,omitempty"`
	TouchedFiles []string `json:"touched_files,omitempty"`
}

// replayPhase tells a replay how to measure one phase.
type replayPhase struct {
	Phase int `json:"phase"`
	// File holds the phase's compressed snapshot, which decompresses to
	// RawSize bytes (the zstd frame's checksum checks its content).
	File    string `json:"file"`
	RawSize int64  `json:"raw_size"`
	// WarmSteps steps run after the restore before timing starts; Steps
	// are timed, and should execute Blocks blocks.
	WarmSteps int64 `json:"warm_steps"`
	Steps     int64 `json:"steps"`
	Blocks    int64 `json:"blocks"`
	// Unit is the predicted run time (s) per second of the phase's
	// interval time: the budget's estimate of the run.
	Unit float64 `json:"unit,omitempty"`
}

// replayOf is how a replay, or a touched-set search, runs phase ix of p
// from the snapshot in file: the steps from the snapshot to the
// interval's start as warm-up, then the interval's steps.
func replayOf(p *Probe, ix int, file string) replayPhase {
	ph := p.Manifest.Phases[ix]
	return replayPhase{Phase: ix, File: file, WarmSteps: ph.StartStep - ph.SnapshotStep, Steps: ph.EndStep - ph.StartStep, Blocks: ph.Blocks}
}

// childResult is result.json.
type childResult struct {
	Worker Info   `json:"worker"`
	Mode   string `json:"mode"`
	Err    string `json:"error,omitempty"`
	// Elapsed is the run's time in ns, snapshot time excluded.
	Elapsed int64 `json:"elapsed_ns"`
	Steps   int64 `json:"steps"`
	Blocks  int64 `json:"blocks"`
	// MaxStep is the most blocks one step executed (vector run).
	MaxStep int64 `json:"max_step_blocks,omitempty"`
	// Capture: mark k is the first step boundary with at least k·Interval
	// blocks executed: its time (ns, snapshot time excluded), step index
	// and block count.
	MarkNS     []int64 `json:"mark_ns,omitempty"`
	MarkSteps  []int64 `json:"mark_steps,omitempty"`
	MarkBlocks []int64 `json:"mark_blocks,omitempty"`
	// Snapshots, one per SnapshotAt.
	Snapshots []snapResult `json:"snapshots,omitempty"`
	// Touched, one per phase of the touched-set search.
	Touched []touchedResult `json:"touched,omitempty"`
}

// touchedResult is the touched-set search of one phase: the bytes of its
// state it zeroed, in how many trial replays, or why it zeroed none.
type touchedResult struct {
	Phase  int    `json:"phase"`
	Zeroed int64  `json:"zeroed"`
	Tries  int    `json:"tries"`
	Err    string `json:"error,omitempty"`
}

// snapResult is one snapshot of the capture pass.
type snapResult struct {
	Step   int64  `json:"step"`
	Blocks int64  `json:"blocks"`
	Bytes  int64  `json:"bytes"`
	NS     int64  `json:"ns"`
	Err    string `json:"error,omitempty"`
}

// replayLine is one line of replay.jsonl: one measurement of a phase, a
// phase that failed (Err), (Phase -1) an error before any phase, or
// (Phase stagesLine) the driver's last line: where its time went.
type replayLine struct {
	Phase  int  `json:"phase"`
	Worker Info `json:"worker"`
	// Round is the round of the measurement (0 first).
	Round int `json:"round"`
	// ProbedNS is the interval's time (ns), WarmNS the warm-up's.
	ProbedNS int64  `json:"probed_ns,omitempty"`
	WarmNS   int64  `json:"warm_ns"`
	Blocks   int64  `json:"blocks"`
	Err      string `json:"error,omitempty"`
	// Stages is set on the stages line.
	Stages *replayStages `json:"stages,omitempty"`
}

// stagesLine is the Phase of the replay's stages line.
const stagesLine = -2

// replayStages are the driver's stopwatch readings at the ends of its
// stages (ns since the stopwatch started, read before Init; the model
// clock: ticks), the rounds it made, and the wall clock (Unix ns) at which
// the process's Go code started and at which the driver finished.
type replayStages struct {
	Init       int64 `json:"init"`
	Load       int64 `json:"load"`
	FirstRound int64 `json:"first_round"`
	End        int64 `json:"end"`
	Rounds     int   `json:"rounds"`
	StartUnix  int64 `json:"start_unix_ns"`
	EndUnix    int64 `json:"end_unix_ns"`
}
