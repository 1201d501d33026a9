package phase

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"github.com/parscope/parscope/format/bbv"
)

// RunFile finds the phases of the basic block vector file at path, read
// with the parser options popts: the result, and the errors, are those of
// Run on the File bbv.ReadFile returns. With a projection, each interval
// is normalised and projected as it is read, so the memory taken is that
// of the projected rows (opts.Dim values per interval) rather than of the
// vectors; with NoProject the vectors are kept, as Run needs them.
func RunFile(ctx context.Context, path string, popts bbv.ParseOptions, opts Options) (*Result, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Dim == NoProject {
		f, err := bbv.ReadFile(path, popts)
		if err != nil {
			return nil, err
		}
		return Run(ctx, f, opts)
	}
	p, err := newProjector(&opts)
	if err != nil {
		// Run reports the input's errors before the seed's.
		if _, rerr := scanChecked(ctx, path, popts, nil, opts.Progress); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	if q, err := scanParts(ctx, path, popts, &opts); err != nil || q != nil {
		if err != nil {
			return nil, err
		}
		p = q
	} else if _, err := scanChecked(ctx, path, popts, p, opts.Progress); err != nil {
		return nil, err
	}
	ds := p.dataset(opts.VariableLength)
	return cluster(ctx, ds, opts)
}

// scanChecked reads the file at path, checks each interval as load does
// and hands it to p (when not nil), telling progress how many it has read.
// Its error is the one Run on the parsed file would give: the parser's
// first, then the first interval's that does not check, then having no
// intervals.
func scanChecked(ctx context.Context, path string, popts bbv.ParseOptions, p *projector, progress ProgressFunc) (int, error) {
	n := 0
	var bad error
	maxDim := popts.IDLimit()
	_, err := bbv.ScanFile(path, popts, func(v bbv.Vector, line int) error {
		if n%256 == 255 {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress.report(StageReading, int64(n), 0)
		}
		n++
		if bad != nil {
			return nil // read on: a later parse error comes first
		}
		// The parser keeps ids within 1..maxDim, so the largest id, not
		// yet known, cannot be exceeded.
		if err := checkVector(path, n-1, line, v, maxDim); err != nil {
			bad = err
			return nil
		}
		if p != nil {
			p.add(v)
		}
		return nil
	})
	switch {
	case err != nil:
		return n, err
	case bad != nil:
		return n, bad
	case n == 0:
		return 0, checkFile(nil)
	}
	return n, nil
}

// errRecheck stops a scanParts that met an interval scanChecked rejects:
// scanChecked reads the file again to report it at its line.
var errRecheck = errors.New("phase: an interval does not check")

// scanParts is scanChecked with a projector, reading the file in parts
// on the workers of opts (see bbv.ScanFileParts): each part normalises and
// projects its intervals into a projector of its own, and the parts' rows
// are joined in file order, so that the rows are those scanChecked gives.
// It returns nil, and no error, when the file was not read in parts, or
// when it holds an error or no interval: scanChecked reads it then, and
// reports the error at its line.
func scanParts(ctx context.Context, path string, popts bbv.ParseOptions, opts *Options) (*projector, error) {
	parts := opts.Workers
	if parts == 0 {
		parts = runtime.GOMAXPROCS(0)
	}
	if parts < 2 {
		return nil, nil
	}
	maxDim := popts.IDLimit()
	ps := make([]*projector, parts)
	for i := range ps {
		p, err := newProjector(opts)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	var mu sync.Mutex
	read := int64(0)
	split, _, err := bbv.ScanFileParts(ctx, path, popts, parts, func(part int, v bbv.Vector) error {
		p := ps[part]
		if p.n%256 == 255 {
			if err := ctx.Err(); err != nil {
				return err
			}
			mu.Lock()
			read += 256
			opts.Progress.report(StageReading, read, 0)
			mu.Unlock()
		}
		if checkVector(path, 0, 0, v, maxDim) != nil {
			return errRecheck
		}
		p.add(v)
		return nil
	})
	switch {
	case errors.Is(err, errRecheck) || !split:
		return nil, nil
	case err != nil:
		return nil, err
	}
	all := ps[0]
	for _, p := range ps[1:] {
		all.join(p)
	}
	if all.n == 0 {
		return nil, nil
	}
	return all, nil
}
