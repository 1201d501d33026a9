package report

import (
	"context"

	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phasespace"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// PCAComponents is the number of principal components the report's pca
// analysis keeps.
const PCAComponents = pca.DefaultComponents

// PhaseSpace is the 3D projection of the sampled states (Gomez, Cai & Schubert 2017, section 3.3).
type PhaseSpace struct {
	Elevation string          `json:"elevation"`
	Runs      []PhaseSpaceRun `json:"runs"`
}

// PhaseSpaceRun holds the projected points of one run's sampled states.
type PhaseSpaceRun struct {
	Run   int32   `json:"run"`
	Index []int64 `json:"index"`
	// T is each state's start (ns); X, Y, Z its position.
	T []int64 `json:"t_ns"`
	// Points is [x, y, z] per state, the form the charts take.
	Points [][3]float64 `json:"points"`
}

// buildPhaseSpace projects the sampled states: a first pass counts the
// states of each run, a second projects the sampled ones (the states the
// pca analysis keeps the scores of).
func buildPhaseSpace(ctx context.Context, s *store.Store, opts Options) (*PhaseSpace, error) {
	h := s.Header()
	open := func() trace.Reader {
		return s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}})
	}
	rows := map[int32]int64{}
	err := state.Reconstruct(ctx, h, open(), state.Options{}, func(r *state.Row) error {
		rows[r.Run]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	ps := &PhaseSpace{Elevation: "diagonal"}
	var (
		proj *phasespace.Projector
		keep []int64
		k    int
	)
	err = state.Reconstruct(ctx, h, open(), state.Options{}, func(r *state.Row) error {
		if len(ps.Runs) == 0 || ps.Runs[len(ps.Runs)-1].Run != r.Run {
			ps.Runs = append(ps.Runs, PhaseSpaceRun{Run: r.Run})
			proj = phasespace.NewProjector(r.P(), phasespace.Diagonal)
			keep, k = state.Sample(rows[r.Run], opts.MaxPoints), 0
		}
		if k >= len(keep) || keep[k] != r.Index {
			return nil
		}
		k++
		sr := &ps.Runs[len(ps.Runs)-1]
		sr.Index = append(sr.Index, r.Index)
		sr.T = append(sr.T, r.T)
		sr.Points = append(sr.Points, proj.Project(r.X))
		return nil
	})
	return ps, err
}
