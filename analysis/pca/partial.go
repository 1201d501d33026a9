package pca

import "fmt"

// Partial is the state of an Accumulator with its sums settled, in
// exported fields: an accumulator of one shard of the states, computed on
// another machine, travels as a Partial and is merged with Merge after
// FromPartial.
type Partial struct {
	Procs        int     `json:"procs"`
	TimeWeighted bool    `json:"time_weighted"`
	Rows         int64   `json:"rows"`
	Weight       float64 `json:"weight"`
	// X is the current state and Seeded tells whether a state was added.
	X      []float64 `json:"x"`
	Seeded bool      `json:"seeded"`
	// Sum is Σ w x_i and Cross Σ w x_i x_j (the pair i ≠ j split between
	// [i][j] and [j][i]), P×P row-major.
	Sum   []float64 `json:"sum"`
	Cross []float64 `json:"cross"`
}

// Partial settles the sums and returns a copy of the accumulator's state.
// The accumulator stays usable.
func (a *Accumulator) Partial() Partial {
	a.settle()
	return Partial{Procs: a.p, TimeWeighted: a.timeW, Rows: a.n, Weight: a.cumW, Seeded: a.seeded,
		X: append([]float64(nil), a.x...), Sum: append([]float64(nil), a.sum...), Cross: append([]float64(nil), a.cross...)}
}

// FromPartial returns the accumulator p was taken from.
func FromPartial(p Partial) (*Accumulator, error) {
	if err := checkExact(p.Procs); err != nil {
		return nil, err
	}
	if len(p.X) != p.Procs || len(p.Sum) != p.Procs || len(p.Cross) != p.Procs*p.Procs {
		return nil, fmt.Errorf("pca: a partial of %d processes with %d, %d and %d values (want P, P and P×P)", p.Procs, len(p.X), len(p.Sum), len(p.Cross))
	}
	a, err := NewAccumulator(p.Procs, p.TimeWeighted)
	if err != nil {
		return nil, err
	}
	a.n, a.cumW, a.seeded = p.Rows, p.Weight, p.Seeded
	copy(a.x, p.X)
	copy(a.sum, p.Sum)
	copy(a.cross, p.Cross)
	for i := range a.last {
		a.last[i] = a.cumW
	}
	return a, nil
}
