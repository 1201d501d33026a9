package comm

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"maps"
	"slices"

	"github.com/parscope/parscope/engine"
)

// MarshalBinary implements engine.Portable: the Accumulator of every run
// (Accumulator.MarshalBinary). An accumulator of other processes of the
// runs, or of other runs, merges into the decoded one, so a distributed
// face cuts the trace by process.
func (a *analysis) MarshalBinary() ([]byte, error) {
	runs := map[int32][]byte{}
	for _, run := range a.runs.Runs() {
		acc, _ := a.runs.Get(run)
		data, err := acc.MarshalBinary()
		if err != nil {
			return nil, err
		}
		runs[run] = data
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(runs); err != nil {
		return nil, fmt.Errorf("comm: encoding an accumulator: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary implements engine.Portable.
func (a *analysis) UnmarshalBinary(data []byte) error {
	var runs map[int32][]byte
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&runs); err != nil {
		return fmt.Errorf("comm: decoding an accumulator: %w", err)
	}
	in := engine.PerRun[*Accumulator]{New: func(run int32) (*Accumulator, error) { return UnmarshalAccumulator(runs[run], a.h) }}
	for _, run := range slices.Sorted(maps.Keys(runs)) {
		if _, err := in.Of(run); err != nil {
			return err
		}
	}
	a.runs = engine.PerRun[*Accumulator]{New: a.runs.New}
	return a.runs.Merge(&in, func(_ int32, x, y *Accumulator) error { return x.Merge(y) })
}
