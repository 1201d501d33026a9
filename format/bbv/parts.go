package bbv

import (
	"bytes"
	"context"
	"errors"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
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
// megabytes, when a line does not parse, and, with SimPointQuirks, when
// the input holds what makes SimPoint's parser depend on the lines
// around a line (a T line without pairs, which ends the input, or a
// last line without a newline, which is dropped). fn may have been
// called for some intervals then: the caller discards what it was given
// and reads the file with ScanFile, which reports the first error at its
// line. An error of fn, of a read or of ctx is returned as it is, with
// split=true.
func ScanFileParts(ctx context.Context, path string, opts ParseOptions, parts int, fn func(part int, v Vector) error) (split bool, dim int32, err error) {
	if parts < 2 {
		return false, 0, nil
	}
	if opts.SimPointQuirks {
		if ends, err := endsWithNewline(path); err != nil || !ends {
			return false, 0, nil // Scan reports the error, or drops the last line
		}
	}
	ps := make([]*parser, parts)
	for i := range ps {
		// A part's parser only parses lines: it never reads from its
		// LineReader, and its errors are dropped for Scan's.
		lr, err := format.NewLineReader(path, bytes.NewReader(nil))
		if err != nil {
			return false, 0, err
		}
		ps[i] = &parser{lr: lr, opts: opts, maxDim: opts.IDLimit(), reuse: true}
	}
	split, err = format.ScanLinesParallel(ctx, path, parts, func(part int, line []byte) error {
		if opts.SimPointQuirks && len(line) >= simPointMaxLine {
			return errUnparsed // too long for SimPoint
		}
		if len(line) == 0 || line[0] != 'T' {
			return nil // as read skips them
		}
		p := ps[part]
		var v Vector
		var perr error
		if opts.SimPointQuirks {
			var ok bool
			if v, ok, perr = p.parseQuirks(line); perr != nil || !ok {
				return errUnparsed // an error, or the end of SimPoint's input
			}
		} else if v, perr = p.parseStrict(line); perr != nil {
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

// endsWithNewline reports whether the file at path is not empty and ends
// with "\n".
func endsWithNewline(path string) (bool, error) {
	f, err := regular.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, err
	}
	return last[0] == '\n', nil
}
