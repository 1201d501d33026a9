package report

import (
	"context"
	"fmt"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phasespace"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/show/plot"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// EntropyWindows is the number of windows of the entropy series over the
// longest run.
const EntropyWindows = 200

// TimelineWindows is the number of samples per process of the state timeline.
const TimelineWindows = 256

// MaxTimelineProcs is the largest number of processes drawn in the state
// timeline (P×TimelineWindows samples); larger traces have none.
const MaxTimelineProcs = 4096

// PCAComponents is the number of principal components kept.
const PCAComponents = 3

// SubsetK is the size of the process windows the subset ranking searches.
const SubsetK = 3

// Entropy is the entropy of the parallel execution (Gomez, Cai & Schubert 2017).
type Entropy struct {
	// Blocks is N, the number of blocks of the phase space.
	Blocks int          `json:"blocks"`
	Runs   []RunEntropy `json:"runs"`
	// All is over every run (absent for one run).
	All *entropy.Result `json:"all,omitempty"`
	// Window is the width (ns) of the windows of Series.
	Window int64                 `json:"window_ns"`
	Series []entropy.WindowPoint `json:"series"`
	// Subsets ranks every window of SubsetK adjacent processes of run 0,
	// most anomalous first (absent when the trace has too few or too
	// many processes).
	Subsets *SubsetRanking `json:"subsets,omitempty"`
}

// RunEntropy is the entropy of one run.
type RunEntropy struct {
	Run int32 `json:"run"`
	entropy.Result
}

// SubsetRanking is the output of entropy.Subsets.
type SubsetRanking struct {
	K       int                    `json:"k"`
	Cyclic  bool                   `json:"cyclic"`
	Measure entropy.Measure        `json:"measure"`
	Results []entropy.SubsetResult `json:"results"`
}

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
	// Timeline samples, per run, the block of every process at the middle
	// of TimelineWindows windows: the overview's state chart. It is empty
	// for traces of more than MaxTimelineProcs processes.
	Timeline []Timeline `json:"timeline"`
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

// Timeline is the block of each process sampled over one run.
type Timeline struct {
	Run   int32 `json:"run"`
	Begin int64 `json:"begin_ns"`
	// Width is the sampling period (ns): sample w is taken at
	// Begin + (w+0.5)·Width.
	Width float64 `json:"width_ns"`
	// Blocks[p][w] is the block of process p at sample w.
	Blocks [][]int32 `json:"blocks"`
	// Names names the blocks by id.
	Names map[int32]string `json:"names"`
}

// buildStates runs the state analyses: a first pass for the entropies,
// the PCA and the timeline, a second for the scores and the phase space.
func buildStates(ctx context.Context, s *store.Store, b *Bundle, opts Options) error {
	h := s.Header()
	open := func() trace.Reader {
		return s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}})
	}
	var sopts state.Options
	blocks := len(h.States)
	eopts := entropy.Options{Blocks: blocks}
	var longest int64
	spans := map[int32]overview.RunSummary{}
	for _, r := range b.Runs {
		longest = max(longest, r.EndNS-r.BeginNS)
		spans[r.Run] = r
	}
	width := max(longest/EntropyWindows, 1)
	win, err := entropy.NewWindows(width)
	if err != nil {
		return err
	}
	ent := &Entropy{Blocks: blocks, Window: width}
	names := map[int32]string{}
	for _, st := range h.States {
		names[st.ID] = st.Name
		if st.Description != "" {
			names[st.ID] = st.Description
		}
	}
	var (
		cur   *entropy.Accumulator
		all   = entropy.NewAccumulator(eopts)
		allOK = true
		run   int32
		acc   *pca.Accumulator
		procs = -1 // the processes of the first row; -1 before it
		rows  = map[int32]int64{}
		tls   = []Timeline{} // never null in JSON
		prevX []int32
		next  int
	)
	flushTimeline := func() {
		if len(tls) == 0 || prevX == nil {
			return
		}
		tl := &tls[len(tls)-1]
		for ; next < TimelineWindows; next++ {
			for p := range tl.Blocks {
				tl.Blocks[p][next] = prevX[p]
			}
		}
	}
	flush := func() {
		if cur == nil {
			return
		}
		ent.Runs = append(ent.Runs, RunEntropy{run, cur.Result()})
		if allOK && all.Merge(cur) != nil {
			allOK = false
		}
	}
	err = state.Reconstruct(ctx, h, open(), sopts, func(r *state.Row) error {
		if cur == nil || r.Run != run {
			flush()
			flushTimeline()
			cur, run = entropy.NewAccumulator(eopts), r.Run
			if r.P() <= MaxTimelineProcs {
				sp := spans[r.Run]
				tl := Timeline{Run: r.Run, Begin: sp.BeginNS, Width: float64(sp.EndNS-sp.BeginNS+1) / TimelineWindows, Blocks: make([][]int32, r.P()), Names: names}
				for p := range tl.Blocks {
					tl.Blocks[p] = make([]int32, TimelineWindows)
				}
				tls = append(tls, tl)
			}
			prevX, next = nil, 0
		}
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
			if err := acc.Add(r); err != nil {
				return err
			}
		}
		if err := cur.Add(r); err != nil {
			return err
		}
		if err := win.Add(r); err != nil {
			return err
		}
		if r.P() > MaxTimelineProcs {
			return nil
		}
		tl := &tls[len(tls)-1]
		for ; prevX != nil && next < TimelineWindows && tl.Begin+int64((float64(next)+0.5)*tl.Width) < r.T; next++ {
			for p := range tl.Blocks {
				tl.Blocks[p][next] = prevX[p]
			}
		}
		prevX = append(prevX[:0], r.X...)
		return nil
	})
	if err != nil {
		return err
	}
	flush()
	flushTimeline()
	if procs < 0 {
		return fmt.Errorf("no states to analyse")
	}
	if allOK && len(ent.Runs) > 1 {
		a := all.Result()
		ent.All = &a
	}
	ent.Series = win.Result()
	if p := procs; p > SubsetK && p <= opts.SubsetProcs {
		res, err := entropy.Subsets(ctx, h, open, SubsetK, false, eopts, entropy.MeasureCombDistinct)
		if err != nil {
			return fmt.Errorf("%s: %w", analysisSubsetRank, err)
		}
		ent.Subsets = &SubsetRanking{K: SubsetK, Measure: entropy.MeasureCombDistinct, Results: res}
	}
	b.Entropy = ent

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
	ps := &PhaseSpace{Elevation: "diagonal", Timeline: tls}
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
