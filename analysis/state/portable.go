package state

import (
	"encoding/json"
	"fmt"
)

// statesSnapshot is what a states accumulator holds once its runs end.
type statesSnapshot struct {
	Runs []RunSummary `json:"runs"`
}

// MarshalBinary implements engine.Portable. It ends the runs the
// accumulator holds (their last samples taken, as Merge does): the
// accumulator, and one decoded from it, take only later runs, so a
// distributed face cuts the trace by run for states.
func (a *statesAcc) MarshalBinary() ([]byte, error) {
	if err := a.EndPass(); err != nil {
		return nil, err
	}
	if err := a.end(); err != nil {
		return nil, err
	}
	a.prevX = nil
	return json.Marshal(statesSnapshot{Runs: a.runs})
}

// UnmarshalBinary implements engine.Portable.
func (a *statesAcc) UnmarshalBinary(data []byte) error {
	var s statesSnapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("states: decoding an accumulator: %w", err)
	}
	a.runs, a.prevX, a.next, a.counting = s.Runs, nil, 0, false
	return a.classes.Close()
}
