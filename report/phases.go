package report

import (
	"context"
	"path/filepath"

	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/format/bbv"
	"github.com/parscope/parscope/store"
)

// Phases are the program phases of one basic block vector stream (one
// process), found by parscope's default k-means engine.
type Phases struct {
	Name      string `json:"name"`
	Run       int32  `json:"run"`
	Proc      int32  `json:"proc"`
	Intervals int    `json:"intervals"`
	K         int    `json:"k"`
	// Evaluated gives the BIC of each k tried.
	Evaluated []KBIC `json:"evaluated"`
	// Phases are the non-empty phases: weight, simulation point, size.
	Phases []PhaseSummary `json:"phases"`
	// Stretches are the maximal stretches of one phase along the run: the
	// colour strip.
	Stretches []phase.Stretch `json:"stretches"`
	InitEnd   int             `json:"init_end"`
	Period    int             `json:"period"`
	Cycle     []int           `json:"cycle,omitempty"`
}

// KBIC is the BIC of one k.
type KBIC struct {
	K   int     `json:"k"`
	BIC float64 `json:"bic"`
}

// PhaseSummary is one phase without its centre.
type PhaseSummary struct {
	ID             int     `json:"id"`
	Weight         float64 `json:"weight"`
	Representative int     `json:"representative"`
	Size           int     `json:"size"`
	Variance       float64 `json:"variance"`
}

func buildPhases(ctx context.Context, s *store.Store) ([]*Phases, error) {
	streams, err := bbv.FromRecords(ctx, filepath.Base(s.Dir()), s.BBV(store.ReadOptions{}), 0)
	if err != nil {
		return nil, err
	}
	opts := phase.DefaultOptions()
	opts.Mode = phase.Default
	var out []*Phases
	for _, st := range streams {
		res, err := phase.Run(ctx, st.File, opts)
		if err != nil {
			return nil, err
		}
		p := &Phases{Name: st.File.Name, Run: st.Run, Proc: st.Proc, Intervals: res.Intervals, K: res.K,
			Stretches: res.Hints.Runs, InitEnd: res.Hints.InitEnd, Period: res.Hints.Period, Cycle: res.Hints.Cycle}
		for _, e := range res.Evaluated {
			p.Evaluated = append(p.Evaluated, KBIC{K: e.K, BIC: float64(e.BIC)})
		}
		for _, ph := range res.Phases {
			p.Phases = append(p.Phases, PhaseSummary{ID: ph.ID, Weight: ph.Weight, Representative: ph.Representative, Size: ph.Size, Variance: ph.Variance})
		}
		out = append(out, p)
	}
	return out, nil
}
