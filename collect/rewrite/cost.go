package rewrite

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

// costEvents is the number of events of each kind a round of MeasureCosts
// records: below the rewritten program's throttle (DefaultThrottle), so
// that every one goes through the filter as in a first run.
const costEvents = 60000

// MeasureCosts measures what the recorder of a rewritten program pays, on
// this machine, for a block it keeps (the clock read, the entropy
// filter's meter, the throttle's count, the buffer and its hand-over to
// the spill writer) and for a block it drops (a low-entropy repeat: the
// clock read, the meter and the count of drops). It records with the
// rewritten program's defaults (the entropy filter, DefaultThrottle,
// 1,024-record buffers) into a temporary directory it removes, three
// rounds of 60,000 events of each kind in a fresh process each, and
// returns the fastest round's ns per event: the estimate least disturbed
// by anything else running. It takes a few tens of milliseconds.
//
// The costs depend on the machine: reading the time-stamp counter takes
// about 12 ns where it is invariant, the kernel's clock through the vDSO
// 30 ns or more on a virtual machine. `parscope filter suggest` uses
// them, unless given, for its estimate of what each function's records
// cost (SuggestOptions.RecordCostNs and DropCostNs).
func MeasureCosts() (recordNs, dropNs float64, err error) {
	dir, err := os.MkdirTemp("", "parscope-cost-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	states := make([]trace.StateDef, 8)
	for i := range states {
		states[i] = trace.StateDef{ID: int32(i), Name: fmt.Sprint("b", i)}
	}
	filter, err := instrument.NewEntropyFilter(instrument.EntropyOptions{
		Config: instrument.DefaultEntropyConfig(), Threshold: instrument.DefaultEntropyThreshold,
		Dynamic: true, Alphabet: len(states),
	})
	if err != nil {
		return 0, 0, err
	}
	rec, err := instrument.Start(instrument.Options{
		Path: filepath.Join(dir, "cost.pst"), Program: "cost", States: states,
		BufferRecords: 1024, Throttle: DefaultThrottle, Filter: filter, BuildLater: true,
	})
	if err != nil {
		return 0, 0, err
	}
	defer rec.Abort()
	recordNs, dropNs = -1, -1
	for round := 0; round < 3; round++ {
		// Kept: the block changes at every event, as in a loop of
		// several blocks, so the filter never finds a repeat.
		p := rec.Process(2 * round)
		t0 := time.Now()
		for i := 0; i < costEvents; i++ {
			p.Block(int32(i & 7))
		}
		ns := float64(time.Since(t0).Nanoseconds()) / costEvents
		if recordNs < 0 || ns < recordNs {
			recordNs = ns
		}
		// Dropped: one block over and over, after a first few that the
		// filter keeps while the repeats' entropy falls.
		q := rec.Process(2*round + 1)
		for i := 0; i < 64; i++ {
			q.Block(1)
		}
		t0 = time.Now()
		for i := 0; i < costEvents; i++ {
			q.Block(1)
		}
		ns = float64(time.Since(t0).Nanoseconds()) / costEvents
		if dropNs < 0 || ns < dropNs {
			dropNs = ns
		}
	}
	kept, dropped := filter.Counts(1)
	if dropped < costEvents || kept > 64 {
		// The filter is not dropping the repeats it should: the estimate
		// would be a recording's, not a drop's.
		return 0, 0, fmt.Errorf("measuring the recorder's costs: the entropy filter kept %d and dropped %d of a repeated block", kept, dropped)
	}
	return recordNs, dropNs, nil
}
