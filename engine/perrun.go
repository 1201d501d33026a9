package engine

import (
	"fmt"
	"maps"
	"slices"
)

// PerRun holds one value per run, made on the run's first record: the
// state of an analysis that computes each run on its own (one
// communication tree, one replay per run).
type PerRun[T any] struct {
	// New makes the value of a run.
	New  func(run int32) (T, error)
	runs map[int32]T
	last int32
	cur  T
	has  bool
	// finished: FinishRuns made a result of the values, which merge no
	// more.
	finished bool
}

// Of returns the value of run, made by New the first time.
func (p *PerRun[T]) Of(run int32) (T, error) {
	if p.has && p.last == run {
		return p.cur, nil
	}
	v, ok := p.runs[run]
	if !ok {
		var err error
		if v, err = p.New(run); err != nil {
			return v, err
		}
		if p.runs == nil {
			p.runs = map[int32]T{}
		}
		p.runs[run] = v
	}
	p.last, p.cur, p.has = run, v, true
	return v, nil
}

// Runs returns the runs that have a value, in order.
func (p *PerRun[T]) Runs() []int32 { return slices.Sorted(maps.Keys(p.runs)) }

// Get returns the value of run, if it has one.
func (p *PerRun[T]) Get(run int32) (T, bool) {
	v, ok := p.runs[run]
	return v, ok
}

// Values returns the values, in run order.
func (p *PerRun[T]) Values() []T {
	out := make([]T, 0, len(p.runs))
	for _, run := range p.Runs() {
		out = append(out, p.runs[run])
	}
	return out
}

// Each calls fn with every value, in no particular order and without
// allocating: for work on every run after each batch.
func (p *PerRun[T]) Each(fn func(T)) {
	for _, v := range p.runs {
		fn(v)
	}
}

// MergeWhole moves the values of other into p when no run is in both: the
// merge of an analysis that computes each run in one accumulator (its
// name starts the error). Once FinishRuns has finished either, it refuses.
func (p *PerRun[T]) MergeWhole(other *PerRun[T], analysis string) error {
	if p.finished || other.finished {
		return fmt.Errorf("%s: Merge after Result", analysis)
	}
	return p.Merge(other, func(run int32, _, _ T) error {
		return fmt.Errorf("%s: run %d is in both accumulators merged: a run must be computed in one (shard by run)", analysis, run)
	})
}

// Merge moves the values of other into p: a run only other has takes
// other's value; a run both have is merged by merge (into p's). other
// must not be used afterwards.
func (p *PerRun[T]) Merge(other *PerRun[T], merge func(run int32, into, from T) error) error {
	for run, y := range other.runs {
		x, ok := p.runs[run]
		if !ok {
			if p.runs == nil {
				p.runs = map[int32]T{}
			}
			p.runs[run] = y
			continue
		}
		if err := merge(run, x, y); err != nil {
			return err
		}
	}
	other.runs, other.has, p.has = nil, false, false
	return nil
}

// FinishRuns returns finish of every value of p, in run order, never nil
// (an empty result is an empty list): the runs of the result of an
// analysis that computes each run on its own. p merges no more after.
func FinishRuns[T, R any](p *PerRun[T], finish func(T) R) []R {
	out := make([]R, 0, len(p.runs))
	for _, v := range p.Values() {
		out = append(out, finish(v))
	}
	p.finished = true
	return out
}
