// Package probe builds and runs performance probes of Go workers (Strube 2011,
// Strube, chapters 4–5): from a reference run it finds the worker's phases
// and their weights, saves the state at the start of each phase's
// representative interval (minus a warm-up), and on a target machine
// restores each state, runs the warm-up, times one interval and predicts
// the full run time with equations (4.3)–(4.7).
//
// # Workers
//
// A worker describes its computation as a Task — Init, Step, Snapshot,
// Restore: application-level checkpoints, the way long-running HPC codes
// write restart files — and calls Main. The task reports its basic blocks
// through the Blocks it receives in Init (an *instrument.Process also
// implements Blocks). Intervals are a fixed number of executed blocks, the
// analogue of the thesis's 100 million instructions; because a snapshot can
// only be taken between two steps, an interval's timing runs from the first
// step boundary at or after its first block to the first at or after its
// last, and steps must be small against an interval (Build makes an
// automatic interval at least 8 times the largest step).
//
// # Passes
//
// Build runs the worker three times through a Backend: a vector run in
// which the instrument library counts basic block vectors
// (instrument.Options.BBVInterval) into a .pst, read back with
// format/bbv; the phase engine of analysis/phase then chooses the phases,
// weights and representative intervals. An uninstrumented timed run gives
// ETuninstRef; a counted run (one increment per block, the same
// instrumentation as on the target) marks the time of every interval
// boundary — ETRef, TPhaseRef, and each phase's share of the time — and
// saves the snapshots. The time spent saving is excluded from every time.
//
// Run replays the snapshots on the target and computes the prediction
// (Predict, pure). By default Weight_i in eq. (4.7) is the phase's
// measured share of the reference run's time (TimeWeights); the thesis's
// SimPoint weight, the share of intervals, is IntervalWeights.
//
// # Protocol
//
// The Local backend starts the worker as a child process with
// PARSCOPE_PROBE_DIR naming a private work directory holding config.json;
// the driver answers in result.json (or, for a replay, one line per phase
// in replay.jsonl, appended as each phase is measured, so that phases
// measured before a crash survive it) and writes snapshots as files there.
// A native-process backend (CRIU) would implement Backend with a system
// checkpointer instead; nothing else changes. It is not built: Debian's
// CRIU does not work on these kernels.
//
// # Probe files
//
// A probe is one file: a magic, a JSON Manifest (worker identity —
// name, version, executable SHA-256, arguments —, clock, interval size,
// warm-up, reference times, phases), the zstd-compressed snapshots, and a
// SHA-256 of everything before it. Reduce keeps the heaviest phases;
// TrimTouched zeroes what each phase's replay does not read (the touched
// set, found by trial replays in the worker); Curve gives the prediction
// quality against the probe's size.
package probe
