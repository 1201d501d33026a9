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

func (a *Accumulator) snapshot() accSnapshot {
	s := accSnapshot{Opts: a.opts, P: a.p, N: a.n, Rows: a.rows, Weight: a.weight, HistSum: a.histSum, Classes: make(map[uint64]classSnapshot, len(a.classes))}
	for k, c := range a.classes {
		s.Classes[k] = classSnapshot{LnW: c.lnW, Weight: c.weight, Procs: c.procs}
	}
	return s
}

func fromSnapshot(s accSnapshot) *Accumulator {
	a := &Accumulator{opts: s.Opts, p: s.P, n: s.N, rows: s.Rows, weight: s.Weight, histSum: s.HistSum, classes: make(map[uint64]classStat, len(s.Classes))}
	for k, c := range s.Classes {
		a.classes[k] = classStat{lnW: c.LnW, weight: c.Weight, procs: c.Procs}
	}
	return a
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
	a.flush()
	s := analysisSnapshot{Runs: a.rep.Runs, All: a.all.snapshot(), Mixed: a.mixed}
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
	a.cur, a.rep.Runs, a.all, a.mixed = nil, s.Runs, fromSnapshot(s.All), s.Mixed
	if a.win != nil {
		a.win.points = s.Series
	}
	a.ranked, a.rankDone = s.Subsets, s.Ranked
	return nil
}
