package phasespace

import (
	"errors"
	"fmt"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the phasespace analysis' name in the engine's registry.
const Name = "phasespace"

// DefaultMaxPoints is the default of Params.MaxPoints (the pca analysis'
// default, so that both keep the same states).
const DefaultMaxPoints = 2000

// Params are the options of the phasespace analysis: the flags of
// `parscope phasespace` and the "options" of its envelope.
type Params struct {
	state.Params
	// Elevation is "diagonal" or "paper" (ParseElevation).
	Elevation string `json:"elevation" flag:"elevation" help:"axis elevation: diagonal (a true cube on its corner) or paper (π/3)"`
	// MaxPoints bounds the states of each run projected (evenly spaced,
	// state.Sample).
	MaxPoints int `json:"max_points" flag:"max-points" help:"project at most this many evenly spaced states of each run"`
}

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{Elevation: "diagonal", MaxPoints: DefaultMaxPoints} }

// Report is the result of the phasespace analysis: the projected points
// of evenly spaced states of each run.
type Report struct {
	// Elevation is the elevation of the axes.
	Elevation string `json:"elevation"`
	// Runs are the runs with states, in run order.
	Runs []RunPoints `json:"runs"`
}

// RunPoints are the projected states of one run.
type RunPoints struct {
	Run int32 `json:"run"`
	// Procs is the number of columns of a state; States the states of the
	// run.
	Procs  int   `json:"procs"`
	States int64 `json:"states"`
	// Index are the state numbers projected (at most Params.MaxPoints,
	// evenly spaced, the first and last included).
	Index []int64 `json:"index"`
	// TNS is each projected state's start (ns).
	TNS []int64 `json:"t_ns"`
	// Points is [x, y, z] per projected state; z is the lockstep axis.
	Points [][3]float64 `json:"points"`
}

func init() {
	engine.Register(&engine.Analysis{
		Name:    Name,
		Doc:     "the parallel states projected into 3D, the hypercube standing on its diagonal",
		Needs:   []trace.Kind{trace.KindState},
		Options: func() any { return DefaultParams() },
		Limit:   func(t *engine.Trace, req engine.Request, o any) error { return o.(*Params).Limit(t, req) },
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return newAnalysis(t, o.(*Params)) },
	})
}

// analysis is the phasespace analysis' accumulator: one pass counts the
// states of each run, a second projects the sampled ones (engine.Repeater;
// it shares its stage with the pca analysis' score pass when both run).
type analysis struct {
	state.Reading
	p      *Params
	el     Elevation
	pass   int
	counts []RunPoints
	runs   []RunPoints
	proj   *Projector
	keep   []int64
	next   int
}

func newAnalysis(t *engine.Trace, p *Params) (*analysis, error) {
	el, err := ParseElevation(p.Elevation)
	if err != nil {
		return nil, err
	}
	if p.MaxPoints < 0 {
		return nil, fmt.Errorf("max points %d: want 0 or more", p.MaxPoints)
	}
	a := &analysis{p: p, el: el}
	a.Reading, err = state.NewReading(t.Header, &p.Params, a)
	return a, err
}

// Row implements state.RowReader.
func (a *analysis) Row(r *state.Row) error {
	switch a.pass {
	case 0:
		if n := len(a.counts); n == 0 || a.counts[n-1].Run != r.Run {
			a.counts = append(a.counts, RunPoints{Run: r.Run, Procs: r.P()})
		}
		a.counts[len(a.counts)-1].States++
		return nil
	case 1:
		if n := len(a.runs); n == 0 || a.runs[n-1].Run != r.Run {
			cur := RunPoints{Run: r.Run, Procs: r.P(), Index: []int64{}, TNS: []int64{}, Points: [][3]float64{}}
			for _, c := range a.counts {
				if c.Run == r.Run {
					cur.States = c.States
				}
			}
			a.runs = append(a.runs, cur)
			a.proj = NewProjector(r.P(), a.el)
			a.keep, a.next = state.Sample(cur.States, a.p.MaxPoints), 0
		}
		if a.next >= len(a.keep) || a.keep[a.next] != r.Index {
			return nil
		}
		a.next++
		cur := &a.runs[len(a.runs)-1]
		cur.Index = append(cur.Index, r.Index)
		cur.TNS = append(cur.TNS, r.T)
		cur.Points = append(cur.Points, a.proj.Project(r.X))
		return nil
	}
	return errors.New("phasespace: a state row after the last pass")
}

// Again implements engine.Repeater: the points need a second pass.
func (a *analysis) Again() (bool, error) {
	if err := a.EndPass(); err != nil {
		return false, err
	}
	a.pass++
	return a.pass == 1, nil
}

// Merge implements engine.Accumulator for the states of later runs: the
// counts of a first pass, or the points of a second.
func (a *analysis) Merge(o engine.Accumulator) error {
	b, ok := o.(*analysis)
	if !ok {
		return fmt.Errorf("phasespace: merging a %T", o)
	}
	if err := errors.Join(a.EndPass(), b.EndPass()); err != nil {
		return err
	}
	if a.pass != b.pass {
		return fmt.Errorf("phasespace: merging pass %d into pass %d", b.pass+1, a.pass+1)
	}
	x, y := &a.counts, b.counts
	if a.pass > 0 {
		x, y = &a.runs, b.runs
	}
	if len(*x) > 0 && len(y) > 0 && y[0].Run <= (*x)[len(*x)-1].Run {
		return fmt.Errorf("phasespace: merging run %d after run %d (only later runs merge)", y[0].Run, (*x)[len(*x)-1].Run)
	}
	*x = append(*x, y...)
	if a.pass > 0 {
		a.counts = append(a.counts, b.counts...)
	}
	return nil
}

// Result implements engine.Accumulator.
func (a *analysis) Result() (any, error) {
	if err := a.EndPass(); err != nil {
		return nil, err
	}
	if a.pass < 2 {
		return nil, errors.New("phasespace: the result needs the second pass the analysis asks for (engine.Run makes it)")
	}
	runs := a.runs
	if runs == nil {
		runs = []RunPoints{}
	}
	return &Report{Elevation: a.p.Elevation, Runs: runs}, nil
}
