// Package gomez imports the "time block pid" block traces of Gomez, Cai &
// Schubert (2017, sections 5.4 and 5.5) into parscope's trace model.
//
// # The format
//
// Each line is one block entry: three whitespace-separated (spaces or tabs)
// non-negative integers,
//
//	time block pid
//
// meaning that process pid entered basic block block at time time. The time
// is in microseconds by default (the paper records "time in microseconds to
// 10µs resolution"); Options.TimeUnit overrides the unit (time.Millisecond,
// time.Nanosecond, ...). The time may carry a fractional part ("12.345"), which
// must be exact to the nanosecond: with the default unit at most 3
// fractional digits (trailing zeros do not count). Times are stored in
// nanoseconds and Header.Meta.ClockResolution is set to the unit in
// nanoseconds (1000 by default). Blank lines and lines whose first
// non-blank character is '#' are skipped. Each record becomes a
// trace.KindState record whose ID is the block.
//
// # Files and runs
//
// The inputs are either one merged file of all processes sorted on time
// (the paper's "name+ident.srt", made with sort -n), or one file per
// process, or any mix whose files do not overlap in time for a process.
// Several runs of the same program may be concatenated in one file; the
// paper keeps them apart "by noting the time dropping back to 0". The rule
// implemented here is:
//
//   - Within one input file, a line whose time is lower than the previous
//     record line's time starts the next run. Runs are counted per file from 0,
//     and run r of one file is run r of every other file, so per-process files
//     of the same ensemble line up. In a per-process file this is exactly a
//     process's time going backwards; in a merged file any drop of the
//     merged clock.
//   - A merged file must be sorted numerically (sort -n, or sort -s -n -k1,1
//     to keep equal times in file order): a plain lexicographic sort puts
//     "100" before "20", and each such drop would start a run.
//   - Consequently, within one run of one file every process's records are in
//     time order. A run whose first time is not lower than the last time of the
//     run before it cannot be told apart from it and is merged into it.
//   - A process that appears in several files for the same run must continue
//     in time order from one file to the next; going back is an error naming
//     the line.
//   - Records of one process with equal times (blocks shorter than the clock
//     resolution, which the paper says happens) keep their file order. In a
//     file produced by sort, that is the sort's order, not necessarily the
//     order of execution.
//
// Runs are numbered from 0 and Header.Runs[r].Procs is one more than the
// largest process number seen in run r, or the declared number of processes
// (see below) when one is given.
//
// # Process numbers
//
// Without a declared number of processes, the pids are renumbered densely
// when they are not already 0..P-1: the inputs are read once for the pids
// they use, and the n-th smallest pid becomes process n. A trace of pids
// 3, 70 and 1000000 has three processes, not 1000001. Each process of each
// run then keeps its pid in Header.Procs, as its name ("pid 1000000") and as
// Extra["pid"]; `parscope info` shows them. Pids that are already 0..P-1
// are kept as they are and get no entry. Declaring the number of
// processes (procs=N, below) keeps the pids as they are and skips that
// first read.
//
// When the writer can start again (a trace.Resetter, as the store's writer
// and trace.Memory are), the import skips the first read too: it takes the
// pids to be 0..P-1, as they nearly always are, and checks that as it
// goes, every 65,536 lines and at the end. At the first check that finds
// a pid missing below the largest seen, it discards what it wrote, reads
// the pids and imports again. The result is the same either way, errors
// included (the first error in the inputs is the one reported: the read
// of the pids stops at a read error, such as a corrupt gzip stream, and
// leaves it to the import, which may meet a bad line first). A trace with
// sparse pids costs the lines read before that check (or, when the gap
// appears only near the end, one import more), and every other trace one
// pass over its text instead of two.
//
// # Options
//
// Options.Params["procs"] = "N" declares the number of processes P; a pid
// of N or more is then an error ("unknown rank 12: the trace declares 10
// processes") and every run has Procs = N. Without it pids must be below
// MaxProcs. Other parameters are ignored.
//
// Options.Dict names an optional block dictionary: lines "id description",
// the id an integer and the rest of the line (after spaces or tabs) its
// description, like Table 1 of the paper. A first line that does not start
// with an integer is a column header ("Block #	Description") and is
// skipped; blank and '#' lines are skipped too. Each entry becomes a
// trace.StateDef whose Description is the full text and whose Name is a
// short label made of its first words. Every block the trace uses but the
// dictionary does not describe gets a StateDef with no name or description,
// so Header.States lists every state used.
//
// # Errors
//
// Bad input stops the import with a *format.Error naming the file, the line
// and what was expected, for example
//
//	mg.srt:17: expected "time block pid" (3 integers), got 2 fields
//
// Negative values, non-integer fields, wrong field counts, values out of
// range (times beyond int64 nanoseconds, blocks beyond int32) and truncated
// gzip streams are all reported that way. Inputs may be gzipped.
//
// # Speed
//
// Lines are parsed in place on the reader's buffer with a hand-written
// integer scanner; the common case allocates nothing per line. Generate
// writes realistic synthetic traces for benchmarks elsewhere.
package gomez
