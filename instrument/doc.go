// Package instrument is the library a Go program links to record itself
// into a parscope trace (.pst).
//
//	rec, err := instrument.Start(instrument.Options{Path: "out.pst", States: states})
//	if err != nil { ... }
//	defer rec.Close()
//	p := rec.Process(rank)   // once per process, from any goroutine
//	p.Block(3)               // hot path: no lock, no allocation
//	p.Send(dst, 8, tag)
//
// A process is whatever the program says it is: a rank, a worker goroutine,
// a node. Each Process buffers its records (32 bytes each) in memory with no
// lock; a full buffer is handed to one background goroutine that appends it
// to a spill file in Path+".spill", and the process continues in a second
// buffer, so memory stays at two buffers per process (Options.BufferRecords).
// Close merges the processes' streams and writes the .pst through the
// trace store, when the program links it (import _
// "github.com/parscope/parscope/instrument/pst"; see RegisterStore). A
// program that does not, or that sets Options.BuildLater (or
// PARSCOPE_BUILD=later in the environment), gets the complete recording
// left in the spill directory instead, and Recover (`parscope recover`, or
// any parscope command given the path) builds the same .pst afterwards:
// the program then pays neither the sorting and Parquet encoding of its
// records nor the creation of the .pst's files, and without the store it
// links no Parquet writer or compressor (a program rewritten by `parscope
// instrument` does not, by default).
//
// Timestamps come from the CPU's time-stamp counter where it is invariant
// (constant rate, synchronised, trusted by the kernel; about 12 ns a read
// against 30 ns for the runtime's monotonic clock on the machine we
// measured), otherwise from the runtime's monotonic clock (set
// PARSCOPE_CLOCK=monotonic to force it). Ticks are converted to nanoseconds
// since Start when the trace is built, calibrated against the monotonic
// clock between Start and Close; a tick that goes backwards on a process
// (a migration between cores whose counters differ) is raised to the
// previous time and counted as the "clock-backwards" repair.
//
// With Options.SimClock the records carry no measured time at all: each
// process keeps a virtual time advanced by a modelled cost per block,
// Process.Work and stamped messages (Process.SendStamped, RecvStamped),
// a discrete-event model of one core per process whose traces repeat
// exactly from run to run (see SimClock).
//
// # What survives a crash
//
// Records reach disk at flush points: when Process.Flush or Recorder.Flush
// returns, every record the process made before the call is in the spill
// file (in the kernel's page cache: it survives os.Exit, an unrecovered
// panic and SIGKILL, but not a power failure; so does the spill's header,
// unless Options.Sync asks for fsyncs). Full buffers and the records of a
// process that called Done are handed to the spill writer, which writes
// them when it next runs (at the latest once they pass Options.MemoryLimit,
// 128 KiB by default, or, for the buffers of finished processes, 1 MiB
// when MemoryLimit is left at 0; or at the next flush point). Precisely:
//
//   - Close (normally deferred in main) writes everything. A panic in the
//     main goroutine that unwinds through the deferred Close loses nothing,
//     provided no other goroutine is still recording (Close, like
//     Recorder.Flush, must not run concurrently with recording).
//   - os.Exit, or a panic in another goroutine (which kills the program
//     without running main's deferred calls), loses the records made after
//     each process's last flush point; a goroutine can protect its own
//     records with `defer p.Flush()` (deferred calls run while a panic
//     unwinds its goroutine). Occupancy counters and the last partial BBV
//     interval are made only by Done or Close. Buffers handed to the spill
//     writer (full ones, and those of processes that called Done) but not
//     yet written when the program died are lost too: up to about
//     Options.MemoryLimit of full buffers plus what finished processes
//     hold (Options.MemoryLimit, or 1 MiB when it is 0) beyond the last
//     flush point.
//   - After such an exit, Recover(path, RecoverOptions{}) turns the spill directory
//     into the .pst, skipping (and reporting) damaged chunks.
//
// # Plug-in points
//
// All are off by default. Options.Filter decides per event whether to keep
// it (dropped events are counted, see Filter). Options.Occupancy keeps per
// process the time spent in each state (Lyon's 1990 local occupancy
// counters o_i) and writes them at the process's end as counter records
// named "occupancy <state>" in nanoseconds, at the process's end time; with
// DropKinds(trace.KindState) as the filter, only the occupancies are kept.
// Options.BBVInterval counts per process the executions of each block in
// intervals of that many block entries (Strube 2011, Figure 4.2) and writes one
// BBV record per block executed in the interval when it ends (interval
// number in Seq, its end time in T); the last, partial interval is written
// at the process's end.
//
// A nil *Recorder and a nil *Process record nothing (Options.Disabled makes
// Start return nil), so a program can run uninstrumented at the cost of a
// nil check per call.
package instrument
