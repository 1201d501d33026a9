package instrument

import (
	"errors"
	"sync"

	"github.com/parscope/parscope/trace"
)

// A TraceWriter is what a recording is built into: the trace store's .pst
// writer (store.Writer). The header is filled in before the first record;
// Close commits the trace, Abort discards it.
type TraceWriter interface {
	trace.Writer
	Close() error
	Abort()
}

// CreateTrace opens a TraceWriter for a new .pst at path, replacing a .pst
// already there when force is set.
type CreateTrace func(path string, force bool) (TraceWriter, error)

var (
	storeMu     sync.RWMutex
	createTrace CreateTrace
)

// RegisterStore links the trace store into the program, so that Close can
// build the .pst and Recover can build a spilled recording. Importing
// package github.com/parscope/parscope/instrument/pst registers the
// store's writer; parscope itself, the examples and the probe worker do.
//
// A program that records without it (a program rewritten by `parscope
// instrument`, by default) does not link the Parquet writer and its
// compressors: it starts faster and is a fraction of the size. Its Close
// leaves the complete recording in the spill directory, as with
// Options.BuildLater, and the first parscope command given the trace's
// path builds the .pst.
func RegisterStore(create CreateTrace) {
	storeMu.Lock()
	defer storeMu.Unlock()
	createTrace = create
}

// linkedStore returns the registered store's CreateTrace, or nil.
func linkedStore() CreateTrace {
	storeMu.RLock()
	defer storeMu.RUnlock()
	return createTrace
}

// errNoStore says that building was asked for in a program that does not
// link the trace store.
var errNoStore = errors.New("this program does not link the trace store, so it cannot build a .pst: import _ \"github.com/parscope/parscope/instrument/pst\", rewrite it with `parscope instrument --build-at-exit`, or build the recording with `parscope recover`")
