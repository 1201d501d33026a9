// Package rewrite is the source-to-source pass behind `parscope
// instrument` (the analogue of the SUIF pass of Jones et al. 2007): it type-checks a Go
// package and rewrites it to record itself with the instrument library.
//
// # Blocks
//
// Basic blocks are numbered across the package in textual order (files by
// name, then position), as in Gomez, Cai & Schubert (2017), section 3.1: block 0 is a process's
// start and the highest block its end; in between, each function has an
// entry block (its lowest), its exit block (its highest) and a block at
// the start of every then
// and else branch, loop body and case clause, at the statement after a
// compound statement, and at the statement after one that communicates: a
// channel send or receive, a sync.WaitGroup.Wait, Mutex.Lock,
// RWMutex.Lock/RLock or Cond.Wait, or a call into the instrument library.
// Inserted code never contains a newline, so every line keeps its number
// and panics point at the original source.
//
// The exit block is recorded before each return and at the end of the
// body, which keeps a small function inlinable; a panic then leaves it
// unrecorded. A function with a defer of its own, or a return whose
// expressions call something that may record, records it by a defer
// instead (registered first, so it is still the function's last record).
//
// # Cost
//
// Tiny leaf functions (Options.LeafSize: no loop, nothing of the package
// called, nothing communicated) are left uninstrumented, so the compiler
// still inlines them, and so are the functions the compiler reports it
// can inline (go build -gcflags=-m on the package as written) in which
// nothing could record, loops and all (Options.InstrumentInlinable
// instruments them); functions Options.Exclude names (a filter file, see
// ReadFilter) record no blocks and no regions of their own. All are
// listed in the dictionary's uninstrumented functions. With recording
// switched off (PARSCOPE_OUT=off) a function's handle look-up and every
// recording call are one branch each, inlined; and an outermost loop whose
// rewrite adds nothing but blocks, region enters and exits and the handle
// passed to calls that take it (no message, no function literal, no
// label) is emitted twice, "if parscopeP == nil { the loop as written }
// else { the loop recording }", so that with recording off it costs one
// branch on entry (the copy is written on one line, and passes the handle
// to the calls that take it). The body of a function that takes the
// handle is emitted twice the same way when the same holds of all of it
// and its exit block is recorded at its returns: with recording off a
// call then costs one branch. Recording, a process
// records at most Options.Throttle blocks of one id and enters of one
// region (TAU's throttle, PARSCOPE_THROTTLE at run time); the trace's
// metadata says what was dropped.
//
// # Regions and messages
//
// Every for, range and if statement (an else-if chain is one region) is a
// region entered before it and exited after it; return, break and continue
// exit the regions they leave. goto and panics are not followed.
//
// Each channel is recorded as a process of its own (a mailbox, marked by
// the event "parscope.channel"): a send is a message from the sender to
// the channel's process, a receive one from the channel's process to the
// receiver, both of the element's size (types.Sizes; measured at run time
// when it depends on a type parameter) and tagged with the block of the
// operation. Both halves of each message are recorded at once, so every
// send has its receive. Not recorded as messages: select cases and range
// loops whose channel expression is not a plain variable, field or index
// (for example <-time.After(d)), and receives on a channel whose type is a
// type parameter. A single-valued receive from a closed channel is
// recorded as a message.
//
// # Processes
//
// A function whose doc comment holds "//parscope:process EXPR" (or, with
// Options.ProcessVar, that has an integer parameter of that name) records
// as process EXPR, and binds its goroutine to it. Otherwise each goroutine
// is a process: a go statement creates one (and records the end block
// when its function returns), whether it starts a function literal or a
// named function ("go f(x)" becomes a literal calling f, with f and x
// evaluated before the goroutine starts, as the go statement does).
//
// An unexported function or method that is only ever called directly from
// function bodies receives the caller's process as an extra first
// parameter (threading the handle). Any other function (exported ones,
// function values, methods an interface of the package may call, functions
// the package's test files name, callees of f(g()) with a multi-valued g,
// function literals) looks its goroutine's process up by goroutine id,
// creating one for a goroutine seen for the first time. That look-up
// reads the goroutine's id (instrument.Goid, a few nanoseconds where the
// runtime's goroutine descriptor can be read, a traceback of microseconds
// elsewhere) and finds it in a sync.Map.
//
// main ends the recording when it returns; a package's tests do, through
// a generated TestMain, when the package has tests and no TestMain of its
// own. The rewritten program does not link the trace store (package
// instrument/pst), so that recording adds little to its size and
// start-up: it leaves its whole recording in the spill directory
// (TRACE.spill) at exit, and the first parscope command given the trace
// builds the .pst (as `parscope recover` does). With Options.BuildAtExit
// (`parscope instrument --build-at-exit`) it links the store and builds
// the .pst itself at exit, unless PARSCOPE_BUILD=later. A program ending
// with os.Exit, or with goroutines still recording when main returns,
// loses what was not written to the spill (see the instrument package;
// `parscope recover` builds what reached it).
package rewrite
