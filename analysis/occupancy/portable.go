package occupancy

import (
	"encoding/json"
	"fmt"

	"github.com/parscope/parscope/trace"
)

// snapshot is what an occupancy accumulator holds once its runs end.
type snapshot struct {
	Runs     []RunReport    `json:"runs"`
	Counters []trace.Record `json:"counters,omitempty"`
}

// MarshalBinary implements engine.Portable. It ends the runs the
// accumulator holds (their reports made, as Merge does): the accumulator,
// and one decoded from it, take only other runs, so a distributed face
// cuts the trace by run for occupancy.
func (a *analysis) MarshalBinary() ([]byte, error) {
	if err := a.finish(); err != nil {
		return nil, err
	}
	return json.Marshal(snapshot{Runs: a.done, Counters: a.cntRecs})
}

// UnmarshalBinary implements engine.Portable.
func (a *analysis) UnmarshalBinary(data []byte) error {
	var s snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("occupancy: decoding an accumulator: %w", err)
	}
	a.done, a.cntRecs, a.acc, a.ser, a.run = s.Runs, s.Counters, nil, nil, -1
	return nil
}
