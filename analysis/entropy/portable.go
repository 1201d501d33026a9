package entropy

import (
	"encoding/json"
	"errors"
	"fmt"
)

// accSnapshot is an Accumulator's state in exported fields.
type accSnapshot struct {
	Opts    Options                  `json:"opts"`
	P       int                      `json:"p"`
	N       int                      `json:"n"`
	Rows    int64                    `json:"rows"`
	Weight  float64                  `json:"weight"`
	HistSum float64                  `json:"hist_sum"`
	Classes map[uint64]classSnapshot `json:"classes"`
}

type classSnapshot struct {
	LnW    float64 `json:"ln_w"`
	Weight float64 `json:"weight"`
	Procs  int     `json:"procs"`
}

// snapshot returns the accumulator's state, every class in it, those
// spilled to runs included.
func (a *Accumulator) snapshot() (accSnapshot, error) {
	s := accSnapshot{Opts: a.opts, P: a.p, N: a.n, Rows: a.rows, Weight: a.weight, HistSum: a.histSum, Classes: map[uint64]classSnapshot{}}
	_, err := a.each(func(k uint64, c classStat) {
		s.Classes[k] = classSnapshot{LnW: c.lnW, Weight: c.weight, Procs: c.procs}
	})
	return s, err
}

// fromSnapshot returns the accumulator of a snapshot, its classes past the
// budget spilled.
func fromSnapshot(s accSnapshot) (*Accumulator, error) {
	a := NewAccumulator(s.Opts)
	a.p, a.n, a.rows, a.weight, a.histSum = s.P, s.N, s.Rows, s.Weight, s.HistSum
	for k, c := range s.Classes {
		if err := a.addClass(k, c.LnW, c.Weight, c.Procs); err != nil {
			return nil, errors.Join(err, a.Close())
		}
	}
	return a, nil
}

// analysisSnapshot is what an entropy accumulator holds once its runs
// end: their measures, the sums over them, the series and the subset
// ranking of run 0 when it is among them.
type analysisSnapshot struct {
	Runs    []RunResult    `json:"runs"`
	All     accSnapshot    `json:"all"`
	Mixed   bool           `json:"mixed"`
	Series  []WindowPoint  `json:"series,omitempty"`
	Ranked  bool           `json:"ranked"`
	Subsets []SubsetResult `json:"subsets"`
}

// MarshalBinary implements engine.Portable. It ends the runs the
// accumulator holds (and ranks the subsets of run 0 when it holds run 0):
// the accumulator, and one decoded from it, take only later runs, so a
// distributed face cuts the trace by run for entropy.
func (a *analysis) MarshalBinary() ([]byte, error) {
	if err := a.EndPass(); err != nil {
		return nil, err
	}
	// The measures of all runs take the last run now: the decoded
	// accumulator holds them, and takes only later runs.
	if err := errors.Join(a.flush(), a.fold()); err != nil {
		return nil, err
	}
	all, err := a.all.snapshot()
	if err != nil {
		return nil, err
	}
	s := analysisSnapshot{Runs: a.rep.Runs, All: all, Mixed: a.mixed}
	if a.win != nil {
		s.Series = a.win.Result()
	}
	if err := a.rankNow(); err != nil {
		return nil, err
	}
	s.Ranked, s.Subsets = a.rankDone, a.ranked
	return json.Marshal(s)
}

// rankNow ranks the subsets once run 0 has been read.
func (a *analysis) rankNow() error {
	if a.rank == nil || a.rankDone || !a.rank.Seen() {
		return nil
	}
	res, err := a.rank.Result()
	if err != nil {
		return err
	}
	a.ranked, a.rankDone = res, true
	return nil
}

// UnmarshalBinary implements engine.Portable.
func (a *analysis) UnmarshalBinary(data []byte) error {
	var s analysisSnapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("entropy: decoding an accumulator: %w", err)
	}
	if len(s.Series) > 0 && a.win == nil || s.Ranked && a.rank == nil {
		return errors.New("entropy: decoding an accumulator of other options")
	}
	all, err := fromSnapshot(s.All)
	if err != nil {
		return err
	}
	if err := a.close(); err != nil {
		return err
	}
	a.cur, a.last, a.rep.Runs, a.all, a.mixed = nil, nil, s.Runs, all, s.Mixed
	if a.win != nil {
		a.win.points = s.Series
	}
	a.ranked, a.rankDone = s.Subsets, s.Ranked
	return nil
}
