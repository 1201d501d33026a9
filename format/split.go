package format

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/parscope/parscope/internal/regular"
)

// minSplit is the smallest file ScanLinesParallel splits: below it one
// reader is as fast as several, and a goroutine per part is overhead.
const minSplit = 4 << 20

// splitCtxEvery is how many lines a part reads between checks of the
// context.
const splitCtxEvery = 1 << 16

// ScanLinesParallel reads the plain (not gzipped) text file at path in up
// to parts byte ranges at once, each starting at the start of a line and
// read by its own goroutine, and calls visit(part, line) for every line of
// part. Lines are those LineReader.Next returns, without their "\n" or
// "\r\n"; within a part they come in file order, and visit is called
// concurrently for different parts, so that it must keep what it learns
// per part. It is for passes whose result does not depend on the order of
// the lines across parts, such as collecting the set of values a column
// takes.
//
// It reports split=false, having called visit for no line, when the file
// is gzipped (a gzip stream is read from its start only), when it is
// smaller than a few megabytes, or when parts < 2: the caller reads it
// with a LineReader then. The first error of visit, of a read or of ctx
// stops every part; a read error is an *Error naming the file and the
// byte offset where it happened.
func ScanLinesParallel(ctx context.Context, path string, parts int, visit func(part int, line []byte) error) (split bool, err error) {
	return scanLinesParallel(ctx, path, parts, minSplit, visit)
}

// scanLinesParallel is ScanLinesParallel splitting files of at least
// minSize bytes.
func scanLinesParallel(ctx context.Context, path string, parts int, minSize int64, visit func(part int, line []byte) error) (split bool, err error) {
	if parts < 2 {
		return false, nil
	}
	f, err := regular.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, &Error{File: path, Offset: -1, Msg: "cannot read", Err: err}
	}
	size := fi.Size()
	if size < max(minSize, 2) {
		return false, nil
	}
	var magic [2]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return false, &Error{File: path, Offset: 0, Msg: "read error", Err: err}
	}
	if IsGzip(magic[:]) {
		return false, nil
	}
	starts, err := lineStarts(f, path, size, parts)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(starts))
	var wg sync.WaitGroup
	for p, start := range starts {
		end := size
		if p+1 < len(starts) {
			end = starts[p+1]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[p] = scanPart(ctx, f, path, start, end, func(line []byte) error { return visit(p, line) }); errs[p] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	// The first error by part that is not the cancellation another part's
	// error caused; otherwise the context's own.
	var first error
	for _, e := range errs {
		if e != nil && !errors.Is(e, context.Canceled) {
			return true, e
		}
		if first == nil {
			first = e
		}
	}
	return true, first
}

// lineStarts returns the offsets at which the parts of a file of size
// bytes start: 0, then for each later part the byte after the first "\n"
// at or after its even share. Parts that would be empty are dropped.
func lineStarts(f *os.File, path string, size int64, parts int) ([]int64, error) {
	starts := []int64{0}
	buf := make([]byte, 64<<10)
	for p := 1; p < parts; p++ {
		from := max(size*int64(p)/int64(parts)-1, starts[len(starts)-1])
		at := int64(-1)
		for off := from; off < size && at < 0; off += int64(len(buf)) {
			n, err := f.ReadAt(buf, off)
			if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
				at = off + int64(i)
			} else if err != nil && !errors.Is(err, io.EOF) {
				return nil, &Error{File: path, Offset: off, Msg: "read error", Err: err}
			} else if n == 0 {
				break
			}
		}
		if at < 0 || at+1 >= size {
			break // the rest is one line
		}
		starts = append(starts, at+1)
	}
	return starts, nil
}

// scanPart calls visit for each line of the bytes [start, end) of f, the
// last line ending at end with or without its "\n".
func scanPart(ctx context.Context, f *os.File, path string, start, end int64, visit func(line []byte) error) error {
	br := bufio.NewReaderSize(io.NewSectionReader(f, start, end-start), 256<<10)
	var long []byte
	off := start // offset of the line being read
	for untilCtx := splitCtxEvery; ; {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			line, err = joinLong(br, line, &long)
		}
		if err != nil && err != io.EOF {
			return &Error{File: path, Offset: off, Msg: "read error", Err: err}
		}
		if len(line) == 0 {
			return nil // end of the part
		}
		off += int64(len(line))
		if verr := visit(trimEOL(line)); verr != nil {
			return verr
		}
		if err == io.EOF {
			return nil
		}
		if untilCtx--; untilCtx == 0 {
			untilCtx = splitCtxEvery
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}
