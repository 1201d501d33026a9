// Package pst links the trace store into a program that records with
// package instrument, so that the recorder's Close builds the .pst at exit
// and instrument.Recover can build a spilled recording:
//
//	import _ "github.com/parscope/parscope/instrument/pst"
//
// Without it a recording program does not link the Parquet writer and its
// compressors (a rewritten hello-world is a few megabytes instead of
// twenty, and starts without their initialisation), and its Close leaves
// the complete recording in the spill directory for parscope to build:
// the first parscope command given the trace's path builds it.
package pst

import (
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/store"
)

func init() { instrument.RegisterStore(Create) }

// Create opens the store's writer for a new .pst at path (store.Create),
// replacing a .pst already there when force is set: the CreateTrace this
// package registers.
func Create(path string, force bool) (instrument.TraceWriter, error) {
	w, err := store.Create(path, store.Options{Force: force})
	if err != nil {
		return nil, err
	}
	return w, nil
}
