// Package gotrace imports Go runtime execution traces (the files written by
// runtime/trace.Start, `go test -trace` and the flight recorder) into
// parscope's trace model, with the reader of golang.org/x/exp/trace. It
// reads every version that reader reads: the Go 1.22+ format (headers
// go 1.22, 1.23, 1.25 and 1.26) and the older
// go 1.11, 1.19 and 1.21 formats, which the reader converts. A file whose
// header names another version is rejected with an error naming the
// version. Gzipped traces are decompressed on the fly.
//
// The importer is registered with the format package as "gotrace"; Detect
// accepts a file whose first 16 bytes start with "go 1." and contain
// " trace" (for example "go 1.26 trace\x00\x00\x00").
//
// # Processes
//
// By default each goroutine is a process. Processes are numbered densely
// 0..P-1 in the order in which the goroutines first appear in the trace (as
// the subject of a state transition or as the goroutine executing an
// event). Each has a ProcInfo whose Extra["goid"] is the runtime's
// goroutine id and whose Name is the goroutine's function: the function a
// goroutine created inside the trace starts in, otherwise the outermost
// frame of the first stack seen for it (often runtime.main or a worker's
// function), or "goroutine N" when the trace has no stack for it.
//
// With Params["by"]="p" each P (logical processor) is a process instead,
// numbered the same way, named "P<id>" with Extra["pid"].
//
// Each input file is one run, named after the file. Times are nanoseconds
// from the run's first event (the reader's first Sync). The runtime's clock
// is coarser than a nanosecond (64 ns ticks on amd64) and the reader moves
// equal timestamps 1 ns apart so that every event has its own time;
// Meta.ClockResolution is 1.
//
// # States
//
// The state dictionary is fixed:
//
//	id  name          by goroutine                      by P
//	0   running       GoRunning                         ProcRunning
//	1   runnable      GoRunnable                        -
//	2   waiting       GoWaiting (blocked)               -
//	3   syscall       GoSyscall                         -
//	4   not-exist     GoNotExist (the goroutine ended)  ProcNotExist (P removed by GOMAXPROCS)
//	5   undetermined  GoUndetermined                    ProcUndetermined
//	6   idle          -                                 ProcIdle
//
// Every state transition of the process's resource becomes a state record
// at the transition time, entering the transition's "to" state. The
// "from" state of a goroutine's first transition is Undetermined when the
// goroutine existed before the trace started (the reader's rendering of a
// status event of the first generation) and NotExist when it is created in
// the trace; neither is written. A goroutine that existed before the trace
// is shown from the trace's start: the state record of its first
// transition is at time 0, in the state its status gives, however late the
// reader reaches that status in the first generation (unless an event was
// already put on it, whose time is then kept so that its records stay in
// order). A goroutine created in the trace has no record before its
// creation. A P's first status is placed the same way. The header lists
// only the states of the chosen mode.
//
// not-exist is marked Absent in the dictionary (trace.StateDef.Absent): a
// goroutine exists from its first record (the trace's start, for one that
// existed before it; its creation, for one created in the trace) until it
// enters not-exist (it ended), and a P until GOMAXPROCS removes it. Before and after, the analyses count it in no state, so that
// at no time do more goroutines run than there are Ps.
//
// # Events
//
// Events get names, and EventDefs, as they first appear:
//
//   - "block: <reason>" when a goroutine blocks (Running→Waiting) for a
//     reason the runtime gives: "chan receive", "chan send", "select",
//     "sync" (sync.Mutex, RWMutex, WaitGroup), "sync.(*Cond).Wait",
//     "sleep", "network" (I/O), "GC mark assist wait for work", "system
//     goroutine wait", "forever", "synctest", "preempted" (suspended by the
//     GC), ... The event is on the goroutine that blocks, at the time it
//     blocks, with value 0.
//   - "stop: <reason>" when a running goroutine is descheduled but stays
//     runnable ("preempted", "runtime.Gosched").
//   - other transitions that carry a reason give "<from>-><to>: <reason>".
//   - "task begin: <type>" and "task end: <type>" (runtime/trace.NewTask and
//     Task.End), value the task id, on the goroutine that calls them.
//   - "log: <category>" (runtime/trace.Log), value the task id; the message
//     text is not kept.
//   - "<range> begin", "<range> end" and "<range> active" for the runtime's
//     ranges (GC phases, GC mark assist, stop-the-world, incremental sweep):
//     on the goroutine (or P) the range is scoped to, and for ranges scoped
//     to a P (by goroutine) or to nothing (global, such as "GC concurrent
//     mark phase") on the goroutine (or P) executing the event.
//   - "label: <label>" when the runtime labels a goroutine (GC workers get
//     "GC (dedicated)", "GC (fractional)", "GC (idle)").
//
// By P, every goroutine event above is written on the P the goroutine runs
// on when it happens.
//
// # Regions
//
// User regions (runtime/trace.WithRegion, StartRegion) become Enter and Exit
// records on their goroutine, with one RegionDef (kind user, parent -1) per
// region type. Regions still open when their goroutine ends are closed
// then, and those open at the end of the trace at the trace's last time;
// both are counted as the repair RepairUnendedRegion. An end
// that matches no open region is dropped and counted as RepairUnmatchedEnd;
// an end that matches an outer open region closes the regions inside it
// first, counted as RepairImplicitExit. By P, regions cannot nest on a
// processor (goroutines migrate), so they become the events "region begin:
// <type>" and "region end: <type>" instead.
//
// # What is skipped
//
// Nothing is dropped silently: Meta.Extra counts, as decimal strings, every
// trace event that produced no record, under "gotrace.skipped.<what>":
// "metric" (runtime/metrics samples: heap goal, heap size, GOMAXPROCS, ...), "stack-sample"
// (CPU profile samples), "sync" (generation boundaries),
// "experimental", "proc-transition" (by goroutine) or
// "goroutine-transition" (by P; their reasons are still kept as events),
// "other" (event kinds this package does not know), and "unattributed"
// (an event with neither goroutine nor P to put it on). Meta.Extra also
// holds "gotrace.events", the number of events read. Each run's
// RunInfo.Extra holds "go_version" (the header's, such as "go 1.26") and
// "duration_ns" (the time of its last event).
//
// # Bad input
//
// An input that is not a trace, names an unsupported version, or cannot be
// decoded stops the import with a *format.Error naming the file. The
// reader does not say where in the stream a problem lies, so the error's
// byte offset is how many bytes the reader had consumed when it failed
// (it reads a whole generation at a time, so the problem lies before that
// offset, in the last generation read; offsets are of the decompressed
// stream for gzipped files). A trace that ends early (for example one
// copied while still being written) fails the same way; with
// Params["partial"]="true" the import instead keeps the events read before
// the error, closes open regions, counts the repair RepairTruncated and
// records Meta.Extra["gotrace.truncated-at-byte"]. Since the reader decodes
// a whole generation (about a second of execution) before it returns its
// first event, what is kept is the complete generations before the cut; a
// trace cut inside its first generation still fails. The x/exp/trace reader
// may panic on malformed input; Import recovers such a panic and returns
// it as a located error like the above.
package gotrace
