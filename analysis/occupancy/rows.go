package occupancy

import (
	"context"
	"fmt"
	"slices"

	"github.com/parscope/parscope/trace"
)

// EachRow streams the macrostate trace (T2) of the one run r holds to fn,
// row by row, without keeping it: the rows Options.Trace would keep in the
// Result, in time order, in memory that does not grow with the run.
// Processes without a mode yet count in opts.Start (as Result puts them).
// row.Counts is valid only during the call. It returns the run's Result
// (without the trace).
func EachRow(ctx context.Context, h *trace.Header, r trace.Reader, modes *Modes, opts Options, fn func(row *Row)) (*Result, error) {
	start := int32(-1)
	if opts.Start != "" {
		start = int32(modes.Index(opts.Start))
	}
	var (
		row    = Row{Counts: make([]int32, len(modes.Names))}
		counts = make([]int32, len(modes.Names))
		has    bool
		micro  int64
	)
	opts.Trace = false
	opts.Micro = func(t, dur int64, pm []int32) {
		clear(counts)
		for _, k := range pm {
			if k < 0 {
				k = start
			}
			if k >= 0 {
				counts[k]++
			}
		}
		idx := micro
		micro++
		if has && slices.Equal(counts, row.Counts) {
			row.Dur += dur
			row.N++
			return
		}
		if has {
			fn(&row)
		}
		row.T, row.Dur, row.Micro, row.N, has = t, dur, idx, 1, true
		copy(row.Counts, counts)
	}
	res, err := Compute(ctx, h, r, modes, opts)
	if err != nil {
		return nil, err
	}
	if len(res) > 1 {
		return nil, fmt.Errorf("occupancy: the macrostate trace of %d runs streamed at once (runs %d and %d): read one run at a time", len(res), res[0].Run, res[1].Run)
	}
	if has {
		fn(&row)
	}
	if len(res) == 0 {
		return nil, nil
	}
	return res[0], nil
}
