package bbv

import (
	"bytes"
	"context"
	"errors"

	"github.com/parscope/parscope/format"
)

// errUnparsed stops a ScanFileParts whose input has a line that does not
// parse: the error is left to Scan, which can tell its line number.
var errUnparsed = errors.New("bbv: a line does not parse")

// ScanFileParts reads the plain basic block vector file at path as Scan
// does, but in up to parts byte ranges at once, each starting at a line
// and read on its own goroutine (see format.ScanLinesParallel). It calls
// fn(part, v) for each interval of each part, in file order within a
// part and concurrently across parts; every interval of part p comes
// before every interval of part p+1 in the file, so that concatenating
// what each part was given, in part order, gives Scan's sequence. v is
// valid only during the call. It returns the largest block id seen.
//
// It reports split=false when it did not read the whole file this way:
// when parts < 2, when the file is gzipped or smaller than a few
// megabytes, with SimPointQuirks (where whether a line ends the input
// depends on the lines before it), and when a line does not parse. fn may
// have been called for some intervals then: the caller discards what it
// was given and reads the file with ScanFile, which reports the first
// error at its line. An error of fn, of a read or of ctx is returned as
// it is, with split=true.
func ScanFileParts(ctx context.Context, path string, opts ParseOptions, parts int, fn func(part int, v Vector) error) (split bool, dim int32, err error) {
	if opts.SimPointQuirks || parts < 2 {
		return false, 0, nil
	}
	ps := make([]*parser, parts)
	for i := range ps {
		// A part's parser only parses lines: it never reads from its
		// LineReader, and its errors are dropped for Scan's.
		lr, err := format.NewLineReader(path, bytes.NewReader(nil))
		if err != nil {
			return false, 0, err
		}
		ps[i] = &parser{lr: lr, opts: opts, maxDim: opts.maxDim(), reuse: true}
	}
	split, err = format.ScanLinesParallel(ctx, path, parts, func(part int, line []byte) error {
		if len(line) == 0 || line[0] != 'T' {
			return nil // as read skips them in strict mode
		}
		p := ps[part]
		v, err := p.parseStrict(line)
		if err != nil {
			return errUnparsed
		}
		for _, b := range v.Blocks {
			p.dim = max(p.dim, b)
		}
		return fn(part, v)
	})
	switch {
	case errors.Is(err, errUnparsed):
		return false, 0, nil
	case !split || err != nil:
		return split, 0, err
	}
	for _, p := range ps {
		dim = max(dim, p.dim)
	}
	return true, dim, nil
}
