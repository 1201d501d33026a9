package pca

import (
	"encoding/json"
	"errors"
	"fmt"
)

// snapshot is what a pca accumulator holds between passes.
type snapshot struct {
	Phase  int          `json:"phase"`
	Procs  int          `json:"procs"`
	Counts []countOfRun `json:"counts"`
	Exact  *Partial     `json:"exact,omitempty"`
	Result *Result      `json:"result,omitempty"`
	Prom   float64      `json:"prominence"`
	Runs   []RunScores  `json:"runs"`
}

type countOfRun struct {
	Run    int32 `json:"run"`
	States int64 `json:"states"`
}

// MarshalBinary implements engine.Portable for the exact method: after
// the pass of the moments, the sums of the runs read (an accumulator of
// later runs merges into it); between the passes, the components of the
// merged moments (every part's accumulator decoded from them scores its
// runs in the next pass); after the pass of the scores, the scores of the
// runs read, which end (an accumulator of later runs' scores merges into
// it). A distributed face thus cuts the trace by run and merges the
// parts between the two passes. The randomized method's passes (more than
// ExactMaxProcs processes) run on one machine: its accumulator travels only
// after the last.
func (a *analysis) MarshalBinary() ([]byte, error) {
	if err := a.EndPass(); err != nil {
		return nil, err
	}
	if a.iter != nil {
		return nil, errors.New("pca: the randomized method's passes run on one machine; its accumulator travels only after the last")
	}
	s := snapshot{Phase: a.phase, Procs: a.procs, Result: a.res, Prom: a.prom, Runs: a.runs}
	for _, c := range a.counts {
		s.Counts = append(s.Counts, countOfRun{Run: c.run, States: c.states})
	}
	switch a.phase {
	case phaseMoments:
		if a.exact != nil {
			p := a.exact.Partial()
			s.Exact = &p
		}
	case phaseScores:
		a.endRun()
	}
	return json.Marshal(s)
}

// UnmarshalBinary implements engine.Portable.
func (a *analysis) UnmarshalBinary(data []byte) error {
	var s snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("pca: decoding an accumulator: %w", err)
	}
	if s.Phase < phaseMoments || s.Phase > phaseDone || s.Phase == phaseIterate || s.Phase > phaseMoments && s.Result == nil ||
		s.Phase == phaseMoments && (s.Procs > 0) != (s.Exact != nil) {
		return errors.New("pca: decoding an accumulator: not one MarshalBinary made")
	}
	a.phase, a.procs, a.res, a.prom, a.runs = s.Phase, s.Procs, s.Result, s.Prom, s.Runs
	a.counts = nil
	for _, c := range s.Counts {
		a.counts = append(a.counts, runCount{run: c.Run, states: c.States})
	}
	a.exact, a.iter, a.sc, a.scoring = nil, nil, nil, false
	if s.Exact != nil {
		var err error
		if a.exact, err = FromPartial(*s.Exact); err != nil {
			return err
		}
	}
	if a.phase == phaseScores {
		if len(a.res.Components) == 0 {
			return errors.New("pca: decoding an accumulator: no components to score with")
		}
		a.sc = NewScorer(a.res)
	}
	return nil
}
