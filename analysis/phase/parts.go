package phase

import (
	"context"
	"fmt"

	"github.com/parscope/parscope/format/bbv"
)

// Part is the normalised, projected form of consecutive intervals of one
// BBV stream: what Run computes from the vectors before clustering. Parts
// of a stream can be projected in parallel (on different machines: every
// field is exported) and clustered together with RunParts; a projected
// row depends only on its own vector and the projection seed, so the
// rows are those Run builds.
type Part struct {
	// First is the index of the part's first interval in the stream.
	First int `json:"first"`
	// InDim is the dimension of the whole stream (its largest block id).
	InDim int32 `json:"in_dim"`
	// Dim is the number of columns of a row; Projected tells whether
	// they are projected dimensions or the block ids.
	Dim       int  `json:"dim"`
	Projected bool `json:"projected"`
	// X holds the rows, row-major; Sums each interval's total count.
	X    []float64 `json:"x"`
	Sums []float64 `json:"sums"`
}

// ProjectPart normalises and projects the vectors of f, the intervals
// first, first+1, ... of a stream whose largest block id is f.Dim (set
// f.Dim to the whole stream's dimension, not the part's).
func ProjectPart(ctx context.Context, f *bbv.File, first int, opts Options) (*Part, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	ds, err := load(ctx, f, &opts)
	if err != nil {
		return nil, err
	}
	return &Part{First: first, InDim: ds.inDim, Dim: ds.d, Projected: ds.project, X: ds.x, Sums: ds.sums}, nil
}

// RunParts clusters the intervals of parts, which must be the consecutive
// parts of one stream in order, projected with the same options; the
// result is Run's on the whole stream.
func RunParts(ctx context.Context, parts []*Part, opts Options) (*Result, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("phase: no intervals to cluster")
	}
	ds := &dataset{d: parts[0].Dim, inDim: parts[0].InDim, project: parts[0].Projected}
	for i, p := range parts {
		if p.First != ds.n {
			return nil, fmt.Errorf("phase: part %d begins at interval %d, want %d (parts must be consecutive, in order)", i, p.First, ds.n)
		}
		if p.Dim != ds.d || p.InDim != ds.inDim || p.Projected != ds.project {
			return nil, fmt.Errorf("phase: part %d has %d columns of dimension %d, part 0 %d of %d", i, p.Dim, p.InDim, ds.d, ds.inDim)
		}
		if len(p.X) != len(p.Sums)*p.Dim {
			return nil, fmt.Errorf("phase: part %d has %d values for %d rows of %d columns", i, len(p.X), len(p.Sums), p.Dim)
		}
		ds.x = append(ds.x, p.X...)
		ds.sums = append(ds.sums, p.Sums...)
		ds.n += len(p.Sums)
	}
	if wantDim := int(ds.inDim); !ds.project && ds.d != wantDim {
		return nil, fmt.Errorf("phase: unprojected parts of %d columns for dimension %d", ds.d, ds.inDim)
	}
	ds.setRows(ds.x)
	ds.w = make([]float64, ds.n)
	setWeights(ds, opts.VariableLength)
	return cluster(ctx, ds, opts)
}
