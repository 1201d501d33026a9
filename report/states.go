package report

import (
	"context"
	"fmt"

	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phasespace"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/show/plot"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// PCAComponents is the number of principal components kept.
const PCAComponents = 3

// PCA is the principal component analysis of the state matrix with the
// scores of a thinned sample of the states of each run.
type PCA struct {
	*pca.Result
	Runs []PCARun `json:"runs"`
}

// PCARun holds the scores of one run's sampled states.
type PCARun struct {
	Run int32 `json:"run"`
	// States is the number of states of the run; Index the state numbers
	// sampled (at most Options.MaxPoints, evenly spaced).
	States int64   `json:"states"`
	Index  []int64 `json:"index"`
	// Scores holds, per component, the score of each sampled state.
	Scores [][]float64 `json:"scores"`
}

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

// buildStates runs the PCA and the phase space: a first pass for the
// covariance (and the states of each run), a second for the scores and the
// 3D points of the sampled states.
func buildStates(ctx context.Context, s *store.Store, b *Bundle, opts Options) error {
	h := s.Header()
	open := func() trace.Reader {
		return s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}})
	}
	var sopts state.Options
	var (
		acc   *pca.Accumulator
		procs = -1 // the processes of the first row; -1 before it
		rows  = map[int32]int64{}
	)
	err := state.Reconstruct(ctx, h, open(), sopts, func(r *state.Row) error {
		if procs < 0 {
			procs = r.P()
			if pca.Exact(procs) {
				var err error
				if acc, err = pca.NewAccumulator(procs, false); err != nil {
					return err
				}
			}
		}
		rows[r.Run]++
		if acc != nil {
			return acc.Add(r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if procs < 0 {
		return fmt.Errorf("no states to analyse")
	}
	var res *pca.Result
	if acc != nil {
		res, err = acc.Result(PCAComponents)
	} else {
		// Too many processes for the P×P covariance: the randomized
		// method, which reads the states a few more times.
		res, err = pca.Randomized(ctx, procs, PCAComponents, false, 1, func(fn func(*state.Row) error) error {
			return state.Reconstruct(ctx, h, open(), sopts, fn)
		})
	}
	if err != nil {
		return err
	}
	// Second pass: the scores and the 3D points of the sampled states.
	sc := pca.NewScorer(res)
	pc := &PCA{Result: res}
	ps := &PhaseSpace{Elevation: "diagonal"}
	var (
		proj *phasespace.Projector
		keep []int
		k    int
	)
	err = state.Reconstruct(ctx, h, open(), sopts, func(r *state.Row) error {
		if len(pc.Runs) == 0 || pc.Runs[len(pc.Runs)-1].Run != r.Run {
			pc.Runs = append(pc.Runs, PCARun{Run: r.Run, States: rows[r.Run], Scores: make([][]float64, len(res.Components))})
			ps.Runs = append(ps.Runs, PhaseSpaceRun{Run: r.Run})
			proj = phasespace.NewProjector(r.P(), phasespace.Diagonal)
			keep, k = plot.Thin(int(rows[r.Run]), opts.MaxPoints), 0
			sc.Reset()
		}
		v := sc.Scores(r)
		if k >= len(keep) || int64(keep[k]) != r.Index {
			return nil
		}
		k++
		pr := &pc.Runs[len(pc.Runs)-1]
		pr.Index = append(pr.Index, r.Index)
		for c := range pr.Scores {
			pr.Scores[c] = append(pr.Scores[c], v[c])
		}
		pt := proj.Project(r.X)
		sr := &ps.Runs[len(ps.Runs)-1]
		sr.Index = append(sr.Index, r.Index)
		sr.T = append(sr.T, r.T)
		sr.Points = append(sr.Points, pt)
		return nil
	})
	if err != nil {
		return err
	}
	b.PCA, b.PhaseSpace = pc, ps
	return nil
}
