package pca

import (
	"errors"
	"fmt"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the pca analysis' name in the engine's registry.
const Name = "pca"

// DefaultComponents is the default of Params.Components.
const DefaultComponents = 3

// DefaultMaxPoints is the default of Params.MaxPoints.
const DefaultMaxPoints = 2000

// Params are the options of the pca analysis: the flags of `parscope pca`
// and the "options" of its envelope.
type Params struct {
	state.Params
	// Components is the number of components reported (0: all, which only
	// the exact method gives).
	Components int `json:"components" flag:"components" help:"number of components to report (0: all; refused above 4096 processes, where the randomized method runs)"`
	// TimeWeighted weights each state by its duration instead of 1.
	TimeWeighted bool `json:"time_weighted" flag:"time-weighted" help:"weight each state by its duration instead of 1"`
	// MaxPoints bounds the states of each run whose scores the result
	// keeps (evenly spaced, state.Sample) for plots.
	MaxPoints int `json:"max_points" flag:"max-points" help:"keep the scores of at most this many evenly spaced states of each run, for plots"`
}

// DefaultParams returns the default options.
func DefaultParams() *Params {
	return &Params{Components: DefaultComponents, MaxPoints: DefaultMaxPoints}
}

// Methods of Report.Method.
const (
	MethodExact      = "exact"
	MethodRandomized = "randomized"
)

// Report is the result of the pca analysis: the components over every
// state of the runs analysed, and per run the scores of sampled states
// and the count of V shapes of PC1.
type Report struct {
	// Method is MethodExact (the P×P covariance, up to ExactMaxProcs
	// processes) or MethodRandomized (Randomized).
	Method string `json:"method"`
	// The components: procs, rows (states), weight (states, or ns when
	// time weighted), mean, total_variance, components.
	*Result
	// VShapeProminence is the rise of PC1 that makes a V shape
	// (VShapeProminence of PC1's variance).
	VShapeProminence float64 `json:"v_shape_prominence"`
	// Runs are the runs with states, in run order.
	Runs []RunScores `json:"runs"`
}

// RunScores are the scores of one run.
type RunScores struct {
	Run int32 `json:"run"`
	// States is the number of states of the run.
	States int64 `json:"states"`
	// VShapes counts the upward swings of PC1 against state number over
	// every state of the run (the V shapes of Figure 8 of Gomez, Cai &
	// Schubert 2017: one per iteration of a loop the processes go through
	// together); see Swings.
	VShapes int `json:"v_shapes"`
	// Index are the state numbers sampled (at most Params.MaxPoints,
	// evenly spaced, the first and last included).
	Index []int64 `json:"index"`
	// Scores holds, per component, the score of each sampled state.
	Scores [][]float64 `json:"scores"`
}

func init() {
	engine.Register(&engine.Analysis{
		Name:    Name,
		Doc:     "principal components of the state matrix, the scores of each run and the V shapes of PC1",
		Needs:   []trace.Kind{trace.KindState},
		Options: func() any { return DefaultParams() },
		Limit:   func(t *engine.Trace, req engine.Request, o any) error { return o.(*Params).limit(t, req) },
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return newAnalysis(t, o.(*Params)) },
	})
}

// The passes of the analysis.
const (
	phaseMoments = iota // the covariance (or the first randomized pass) and the states per run
	phaseIterate        // the further passes of the randomized method
	phaseScores         // the scores
	phaseDone
)

// runCount is the number of states of a run.
type runCount struct {
	run    int32
	states int64
}

// analysis is the pca analysis' accumulator: a pass for the moments (and
// for the randomized method, PowerIterations more), then a pass for the
// scores (engine.Repeater).
type analysis struct {
	state.Reading
	p      *Params
	phase  int
	procs  int
	exact  *Accumulator
	iter   *Iteration
	counts []runCount
	res    *Result
	sc     *Scorer
	prom   float64
	runs   []RunScores
	keep   []int64
	next   int
	swings SwingCounter
	// scoring is set while the last run of runs is being scored.
	scoring bool
}

func newAnalysis(t *engine.Trace, p *Params) (*analysis, error) {
	if p.Components < 0 || p.MaxPoints < 0 {
		return nil, fmt.Errorf("components %d, max points %d: want 0 or more", p.Components, p.MaxPoints)
	}
	a := &analysis{p: p}
	var err error
	a.Reading, err = state.NewReading(t.Header, &p.Params, a)
	return a, err
}

// Row implements state.RowReader.
func (a *analysis) Row(r *state.Row) error {
	switch a.phase {
	case phaseMoments:
		if a.procs == 0 {
			if err := a.start(r.P()); err != nil {
				return err
			}
		}
		if n := len(a.counts); n == 0 || a.counts[n-1].run != r.Run {
			a.counts = append(a.counts, runCount{run: r.Run})
		}
		a.counts[len(a.counts)-1].states++
		if a.exact != nil {
			return a.exact.Add(r)
		}
		return a.iter.Add(r)
	case phaseIterate:
		return a.iter.Add(r)
	case phaseScores:
		return a.score(r)
	}
	return fmt.Errorf("pca: a state row after the last pass")
}

// limit is the pca analysis' engine.Analysis.Limit: the states' (Limit of
// state.Params), and every component (Components 0) only for states the
// exact method handles.
func (p *Params) limit(t *engine.Trace, req engine.Request) error {
	if err := p.Params.Limit(t, req); err != nil {
		return err
	}
	if p.Components != 0 {
		return nil
	}
	run, n := t.LargestRun(req.Runs)
	if p.Procs != nil {
		n = len(p.Procs)
	}
	if !Exact(n) {
		return fmt.Errorf("run %d: %w", run, allComponents(n))
	}
	return nil
}

// allComponents is the error of asking for all the components of states
// of p processes, which the exact method cannot handle.
func allComponents(p int) error {
	return fmt.Errorf("all %d components of %d processes would need %s; ask for the top few (the randomized method gives them for more than %d processes)",
		p, p, humanBytes(ExactBytes(p)), ExactMaxProcs)
}

// start chooses the method for states of p processes.
func (a *analysis) start(p int) error {
	a.procs = p
	if Exact(p) {
		var err error
		a.exact, err = NewAccumulator(p, a.p.TimeWeighted)
		return err
	}
	if a.p.Components == 0 {
		return fmt.Errorf("pca: %w", allComponents(p))
	}
	var err error
	a.iter, err = NewIteration(p, a.p.Components, a.p.TimeWeighted, 1)
	return err
}

// score scores one row of the last pass.
func (a *analysis) score(r *state.Row) error {
	if n := len(a.runs); n == 0 || a.runs[n-1].Run != r.Run {
		a.endRun()
		var states int64
		for _, c := range a.counts {
			if c.run == r.Run {
				states = c.states
			}
		}
		a.runs = append(a.runs, RunScores{Run: r.Run, States: states, Index: []int64{}, Scores: make([][]float64, len(a.res.Components))})
		a.keep, a.next = state.Sample(states, a.p.MaxPoints), 0
		a.swings = SwingCounter{Prominence: a.prom}
		a.sc.Reset()
		a.scoring = true
	}
	if len(r.X) != a.procs {
		return fmt.Errorf("pca: a state of %d processes, want %d", len(r.X), a.procs)
	}
	v := a.sc.Scores(r)
	a.swings.Add(v[0])
	if a.next < len(a.keep) && a.keep[a.next] == r.Index {
		a.next++
		cur := &a.runs[len(a.runs)-1]
		cur.Index = append(cur.Index, r.Index)
		for c := range cur.Scores {
			cur.Scores[c] = append(cur.Scores[c], v[c])
		}
	}
	return nil
}

// endRun ends the run being scored.
func (a *analysis) endRun() {
	if n := len(a.runs); n > 0 && a.scoring {
		a.runs[n-1].VShapes = a.swings.Count()
	}
	a.scoring = false
}

// Again implements engine.Repeater: after the moments (and each pass of
// the randomized method) it asks for the next pass; after the scores it is
// done.
func (a *analysis) Again() (bool, error) {
	if err := a.EndPass(); err != nil {
		return false, err
	}
	switch a.phase {
	case phaseMoments, phaseIterate:
		if a.procs == 0 {
			return false, errors.New("no states to analyse")
		}
		var res *Result
		var err error
		if a.exact != nil {
			res, err = a.exact.Result(a.p.Components)
			a.exact = nil
		} else if res, err = a.iter.EndPass(); err == nil && res == nil {
			a.phase = phaseIterate
			return true, nil
		}
		if err != nil {
			return false, err
		}
		a.iter, a.res, a.sc = nil, res, NewScorer(res)
		a.prom = VShapeProminence(res.Components[0].Variance)
		a.phase = phaseScores
		return true, nil
	case phaseScores:
		a.endRun()
		a.phase = phaseDone
	}
	return false, nil
}

// Merge implements engine.Accumulator for the states of later runs, after
// the first pass of the exact method (the moments add up), or after the
// pass of the scores, each accumulator having scored its runs with the
// components of the merged moments (see MarshalBinary).
func (a *analysis) Merge(o engine.Accumulator) error {
	b, ok := o.(*analysis)
	if !ok {
		return fmt.Errorf("pca: merging a %T", o)
	}
	if err := errors.Join(a.EndPass(), b.EndPass()); err != nil {
		return err
	}
	if a.phase == phaseScores && b.phase == phaseScores {
		a.endRun()
		b.endRun()
		if len(a.runs) > 0 && len(b.runs) > 0 && b.runs[0].Run <= a.runs[len(a.runs)-1].Run {
			return fmt.Errorf("pca: merging the scores of run %d after run %d (only later runs merge)", b.runs[0].Run, a.runs[len(a.runs)-1].Run)
		}
		a.runs = append(a.runs, b.runs...)
		return nil
	}
	if a.phase != phaseMoments || b.phase != phaseMoments || a.iter != nil || b.iter != nil {
		return errors.New("pca: only the moments of the exact method's first pass, or the scores of the last, merge")
	}
	if b.procs == 0 {
		return nil
	}
	if a.procs == 0 {
		a.procs, a.exact, a.counts = b.procs, b.exact, b.counts
		return nil
	}
	if last := a.counts[len(a.counts)-1].run; b.counts[0].run <= last {
		return fmt.Errorf("pca: merging run %d after run %d (only later runs merge)", b.counts[0].run, last)
	}
	if err := a.exact.Merge(b.exact); err != nil {
		return err
	}
	a.counts = append(a.counts, b.counts...)
	return nil
}

// Result implements engine.Accumulator.
func (a *analysis) Result() (any, error) {
	if err := a.EndPass(); err != nil {
		return nil, err
	}
	if a.phase != phaseDone {
		return nil, errors.New("pca: the result needs the passes the analysis asks for (engine.Run makes them)")
	}
	method := MethodExact
	if !Exact(a.procs) {
		method = MethodRandomized
	}
	runs := a.runs
	if runs == nil {
		runs = []RunScores{}
	}
	return &Report{Method: method, Result: a.res, VShapeProminence: a.prom, Runs: runs}, nil
}
