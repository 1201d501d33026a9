// Package bbv reads basic block vector files: the frequency-vector format
// written by valgrind's exp-bbv tool and read by SimPoint, one line per
// interval of execution:
//
//	T:<block id>:<count>   :<block id>:<count>   ...
//
// Block ids are 1-based; a count is the number of instructions (block
// executions times block length) executed in that block during the
// interval. Lines that do not start with 'T' (blank lines, '#' comments and
// the trailer exp-bbv writes after the last interval) are skipped. Files
// may be gzipped and lines may be of any length.
//
// The package offers two things: a library parser (Parse, ReadFile) that
// returns the vectors for analyses such as analysis/phase, and an importer
// registered with the format package under the name "bbv" that turns one
// file per process into trace.KindBBV records.
//
// The parser is strict by default: anything that is not a well-formed
// "T" line of ":id:count" pairs is an error located at its file and line.
// ParseOptions.SimPointQuirks instead reproduces SimPoint 3.2's own parser,
// quirks included, so that an analysis sees exactly the vectors SimPoint
// would see.
package bbv

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
)

// DefaultMaxDim is the largest block id accepted when ParseOptions.MaxDim
// is zero. Real programs have tens of thousands of blocks; an id beyond
// this limit is almost certainly a corrupt file, and analyses allocate
// per dimension.
const DefaultMaxDim = 1 << 24

// simPointMaxLine is the longest line SimPoint 3.2 accepts: it reads lines
// with fgets into a 1 MiB buffer and aborts on a line that fills it.
const simPointMaxLine = 1<<20 - 1

// Vector is the basic block vector of one interval: Counts[i] is the count
// of block Blocks[i]. Entries are in file order and block ids are 1-based,
// as in the file.
type Vector struct {
	Blocks []int32
	Counts []float64
}

// Sum returns the total count of the vector, added up in file order (the
// order SimPoint uses, which matters for bit-exact results).
func (v Vector) Sum() float64 {
	s := 0.0
	for _, c := range v.Counts {
		s += c
	}
	return s
}

// File is a parsed basic block vector file.
type File struct {
	// Name is the file name given to Parse or ReadFile.
	Name string
	// Vectors holds one vector per interval, in file order.
	Vectors []Vector
	// Dim is the largest block id seen (the number of dimensions, as
	// SimPoint counts them); ids need not be dense.
	Dim int32
	// Lines holds the 1-based line number of each vector's T line.
	Lines []int
}

// NNZ returns the total number of (block, count) entries.
func (f *File) NNZ() int {
	n := 0
	for _, v := range f.Vectors {
		n += len(v.Blocks)
	}
	return n
}

// ParseOptions control the parser.
type ParseOptions struct {
	// SimPointQuirks reproduces SimPoint 3.2's parser (docs/simpoint-3.2.md §1)
	// instead of checking the input strictly:
	//   - a T line with no pairs ends the input; later lines are ignored;
	//   - a final line without a trailing newline is dropped;
	//   - the separators are not checked: each pair is read as
	//     "<any char> <int> <any char> <double>" with blanks allowed
	//     anywhere, and reading a line stops at the first pair that does
	//     not parse, keeping the pairs before it;
	//   - counts are doubles and may be negative or fractional;
	//   - a line of 1 MiB − 1 bytes or more is an error, as in SimPoint.
	// Ids below 1 or above MaxDim are errors in both modes (SimPoint aborts
	// on ids below 1).
	SimPointQuirks bool
	// MaxDim is the largest block id accepted (0 means DefaultMaxDim). A
	// larger id is an error, never an allocation.
	MaxDim int32
}

// IDLimit returns the largest block id the parser accepts: MaxDim, or
// DefaultMaxDim when MaxDim is 0 (or below).
func (o ParseOptions) IDLimit() int32 {
	if o.MaxDim <= 0 {
		return DefaultMaxDim
	}
	return o.MaxDim
}

// ReadFile parses the basic block vector file at path, plain or gzipped.
func ReadFile(path string, opts ParseOptions) (*File, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bbv: %w", err)
	}
	defer f.Close()
	return Parse(path, f, opts)
}

// Parse reads a basic block vector file from r, plain or gzipped; name is
// used in errors. Errors in the input are *format.Error values located at
// the file and line.
func Parse(name string, r io.Reader, opts ParseOptions) (*File, error) {
	p, err := newParser(name, r, opts)
	if err != nil {
		return nil, err
	}
	f := &File{Name: name}
	for {
		v, line, err := p.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		f.Vectors = append(f.Vectors, v)
		f.Lines = append(f.Lines, line)
	}
	f.Dim = p.dim
	return f, nil
}

// ScanFile is Scan on the basic block vector file at path, plain or
// gzipped.
func ScanFile(path string, opts ParseOptions, fn func(v Vector, line int) error) (int32, error) {
	f, err := regular.Open(path)
	if err != nil {
		return 0, fmt.Errorf("bbv: %w", err)
	}
	defer f.Close()
	return Scan(path, f, opts, fn)
}

// Scan reads a basic block vector file from r as Parse does, but instead
// of keeping the vectors it calls fn with each interval's vector and the
// line of its T line, in file order, and returns the largest block id
// seen (File.Dim). v is valid only during the call: its slices are reused
// for later intervals. Scan stops at the first error of the input or of
// fn, and returns it. Reading a file this way takes memory independent of
// its length.
func Scan(name string, r io.Reader, opts ParseOptions, fn func(v Vector, line int) error) (int32, error) {
	p, err := newParser(name, r, opts)
	if err != nil {
		return 0, err
	}
	p.reuse = true
	for {
		v, line, err := p.next()
		if errors.Is(err, io.EOF) {
			return p.dim, nil
		}
		if err != nil {
			return 0, err
		}
		if err := fn(v, line); err != nil {
			return 0, err
		}
	}
}

// tailReader remembers the last byte that went through it, so that the
// parser can tell whether the input ended with a newline.
type tailReader struct {
	r    io.Reader
	last byte
	n    int64
}

func (t *tailReader) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if n > 0 {
		t.last = b[n-1]
		t.n += int64(n)
	}
	return n, err
}

// parser turns lines into vectors one at a time.
type parser struct {
	lr     *format.LineReader
	tail   *tailReader
	opts   ParseOptions
	maxDim int32
	dim    int32
	done   bool

	// scratch for the pairs of the current line
	blocks []int32
	counts []float64

	// duplicate detection (strict mode): seen[id] == stamp means id was
	// seen on the current line; ids beyond len(seen) go to seenBig.
	seen    []uint32
	seenBig map[int32]struct{}
	stamp   uint32

	// quirk mode: the last vector read, held back until the parser knows
	// it was not on an unterminated final line.
	pending     *Vector
	pendingLine int

	// reuse: vector copies the pairs into spare[turn] (alternating, since
	// one vector may be pending while the one before it is in use)
	// instead of new slices.
	reuse bool
	spare [2]Vector
	turn  int
}

// denseSeenLimit bounds the duplicate-detection table; larger ids use a map.
const denseSeenLimit = 1 << 22

func newParser(name string, r io.Reader, opts ParseOptions) (*parser, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var src io.Reader = br
	if magic, _ := br.Peek(2); format.IsGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &format.Error{File: name, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		src = zr
	}
	tail := &tailReader{r: src}
	lr, err := format.NewLineReader(name, tail)
	if err != nil {
		return nil, err
	}
	return &parser{lr: lr, tail: tail, opts: opts, maxDim: opts.IDLimit()}, nil
}

// next returns the next interval's vector and the line it came from, or
// io.EOF after the last one.
func (p *parser) next() (Vector, int, error) {
	v, line, err := p.read()
	if err == nil {
		for _, b := range v.Blocks {
			p.dim = max(p.dim, b)
		}
	}
	return v, line, err
}

// read does the work of next.
func (p *parser) read() (Vector, int, error) {
	for !p.done {
		line, err := p.lr.Next()
		if errors.Is(err, io.EOF) {
			p.done = true
			break
		}
		if err != nil {
			return Vector{}, 0, err
		}
		if len(line) == 0 || line[0] != 'T' {
			if p.opts.SimPointQuirks && len(line) >= simPointMaxLine {
				return Vector{}, 0, p.tooLong(len(line))
			}
			if p.pending != nil {
				return p.flush()
			}
			continue
		}
		if !p.opts.SimPointQuirks {
			v, err := p.parseStrict(line)
			if err != nil {
				return Vector{}, 0, err
			}
			return v, p.lr.Line(), nil
		}
		if len(line) >= simPointMaxLine {
			return Vector{}, 0, p.tooLong(len(line))
		}
		v, ok, err := p.parseQuirks(line)
		if err != nil {
			return Vector{}, 0, err
		}
		if !ok {
			// SimPoint: a T line without pairs ends the input.
			p.done = true
			break
		}
		prev, prevLine := p.pending, p.pendingLine
		p.pending, p.pendingLine = &v, p.lr.Line()
		if prev != nil {
			return *prev, prevLine, nil
		}
	}
	if p.pending != nil {
		// At the real end of the input, a vector read from a final line
		// without a newline is dropped, as SimPoint does. (When the input
		// ended at an empty T line, the pending line was terminated.)
		if p.pendingLine == p.lr.Line() && p.tail.n > 0 && p.tail.last != '\n' {
			p.pending = nil
			return Vector{}, 0, io.EOF
		}
		return p.flush()
	}
	return Vector{}, 0, io.EOF
}

func (p *parser) flush() (Vector, int, error) {
	v, l := *p.pending, p.pendingLine
	p.pending = nil
	return v, l, nil
}

func (p *parser) tooLong(n int) error {
	return p.lr.Errorf("line of %d bytes is too long for SimPoint 3.2 (its limit is %d)", n, simPointMaxLine-1)
}

// vector copies the scratch pairs into a new Vector of exact size.
func (p *parser) vector() Vector {
	if p.reuse {
		p.turn ^= 1
		v := &p.spare[p.turn]
		v.Blocks = append(v.Blocks[:0], p.blocks...)
		v.Counts = append(v.Counts[:0], p.counts...)
		return *v
	}
	v := Vector{Blocks: make([]int32, len(p.blocks)), Counts: make([]float64, len(p.counts))}
	copy(v.Blocks, p.blocks)
	copy(v.Counts, p.counts)
	return v
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// errAt returns a located error for column col (0-based index into line).
func (p *parser) errAt(col int, format string, args ...any) error {
	return p.lr.Errorf("column %d: %s", col+1, fmt.Sprintf(format, args...))
}

func describe(line []byte, i int) string {
	if i >= len(line) {
		return "end of line"
	}
	end := i + 12
	if end > len(line) {
		end = len(line)
	}
	return strconv.Quote(string(line[i:end]))
}

// parseStrict parses a T line: "T" followed by one or more ":id:count"
// pairs separated by optional blanks.
func (p *parser) parseStrict(line []byte) (Vector, error) {
	p.blocks, p.counts = p.blocks[:0], p.counts[:0]
	p.stamp++
	if p.stamp == 0 { // wrapped: clear the table
		clear(p.seen)
		p.stamp = 1
	}
	if p.seenBig != nil {
		clear(p.seenBig)
	}
	i := 1
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i >= len(line) {
			break
		}
		if line[i] != ':' {
			return Vector{}, p.errAt(i, "expected ':' before a block id, found %s", describe(line, i))
		}
		i++
		// block id: decimal digits, 1..maxDim
		start := i
		var id int64
		for i < len(line) && line[i] >= '0' && line[i] <= '9' {
			if id <= int64(p.maxDim) {
				id = id*10 + int64(line[i]-'0')
			}
			i++
		}
		if i == start {
			return Vector{}, p.errAt(i, "expected a block id (decimal digits), found %s", describe(line, i))
		}
		if id < 1 {
			return Vector{}, p.errAt(start, "block id %s: ids are 1-based", format.Excerpt(line[start:i]))
		}
		if id > int64(p.maxDim) {
			return Vector{}, p.errAt(start, "block id %s exceeds the limit %d", format.Excerpt(line[start:i]), p.maxDim)
		}
		if i >= len(line) || line[i] != ':' {
			return Vector{}, p.errAt(i, "expected ':' after block id %d, found %s", id, describe(line, i))
		}
		i++
		c, next, err := p.strictCount(line, i)
		if err != nil {
			return Vector{}, err
		}
		i = next
		if i < len(line) && !isBlank(line[i]) && line[i] != ':' {
			return Vector{}, p.errAt(i, "expected a blank or ':' after the count of block %d, found %s", id, describe(line, i))
		}
		if p.duplicate(int32(id)) {
			return Vector{}, p.errAt(start, "block id %d appears twice in this interval", id)
		}
		p.blocks = append(p.blocks, int32(id))
		p.counts = append(p.counts, c)
	}
	if len(p.blocks) == 0 {
		return Vector{}, p.lr.Errorf("T line with no :block:count pairs (expected \"T:<id>:<count> ...\")")
	}
	return p.vector(), nil
}

// strictCount parses a non-negative decimal count starting at line[i].
func (p *parser) strictCount(line []byte, i int) (float64, int, error) {
	start := i
	var u uint64
	for i < len(line) && line[i] >= '0' && line[i] <= '9' && u < 1<<59 {
		u = u*10 + uint64(line[i]-'0')
		i++
	}
	if i > start && (i >= len(line) || (line[i] != '.' && line[i] != 'e' && line[i] != 'E' && (line[i] < '0' || line[i] > '9'))) && u <= 1<<53 {
		return float64(u), i, nil
	}
	// General decimal number: digits, fraction, exponent.
	i = start
	if i < len(line) && line[i] == '-' {
		return 0, 0, p.errAt(i, "negative count %s", describe(line, i))
	}
	for i < len(line) && (line[i] >= '0' && line[i] <= '9' || line[i] == '.' || line[i] == 'e' || line[i] == 'E' ||
		(line[i] == '-' || line[i] == '+') && i > start && (line[i-1] == 'e' || line[i-1] == 'E')) {
		i++
	}
	if i == start {
		return 0, 0, p.errAt(i, "expected a count (a decimal number), found %s", describe(line, i))
	}
	c, err := strconv.ParseFloat(string(line[start:i]), 64)
	if err != nil || math.IsInf(c, 0) || math.IsNaN(c) {
		return 0, 0, p.errAt(start, "bad count %q (expected a finite decimal number)", format.Excerpt(line[start:i]))
	}
	return c, i, nil
}

// duplicate reports whether id was already seen on the current line, and
// marks it seen.
func (p *parser) duplicate(id int32) bool {
	if id < denseSeenLimit {
		if int(id) >= len(p.seen) {
			n := max(2*len(p.seen), int(id)+1, 1024)
			n = min(n, denseSeenLimit)
			s := make([]uint32, n)
			copy(s, p.seen)
			p.seen = s
		}
		if p.seen[id] == p.stamp {
			return true
		}
		p.seen[id] = p.stamp
		return false
	}
	if p.seenBig == nil {
		p.seenBig = map[int32]struct{}{}
	}
	if _, ok := p.seenBig[id]; ok {
		return true
	}
	p.seenBig[id] = struct{}{}
	return false
}

// isSpace is C's isspace in the "C" locale, which istream uses.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// parseQuirks reads a T line the way SimPoint 3.2 does: repeated
// ">> char >> int >> char >> double" from the text after the 'T', until an
// extraction fails. ok is false when no pair was read.
func (p *parser) parseQuirks(line []byte) (v Vector, ok bool, err error) {
	p.blocks, p.counts = p.blocks[:0], p.counts[:0]
	i := 1
	skip := func() {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
	}
	for {
		skip()
		if i >= len(line) { // >> char fails
			break
		}
		i++ // any separator
		skip()
		idStart := i
		id, n, good := istreamInt(line[i:])
		if !good {
			break
		}
		i += n
		skip()
		if i >= len(line) {
			break
		}
		i++ // any separator
		skip()
		c, n, good := istreamDouble(line[i:])
		if !good {
			break
		}
		i += n
		if id < 1 {
			return Vector{}, false, p.errAt(idStart, "block id %d: ids are 1-based (SimPoint aborts on it too)", id)
		}
		if id > int64(p.maxDim) {
			return Vector{}, false, p.errAt(idStart, "block id %d exceeds the limit %d", id, p.maxDim)
		}
		p.blocks = append(p.blocks, int32(id))
		p.counts = append(p.counts, c)
	}
	if len(p.blocks) == 0 {
		return Vector{}, false, nil
	}
	return p.vector(), true, nil
}

// istreamInt reads an int the way libstdc++'s num_get does: an optional
// sign and at least one decimal digit; a value outside the range of a
// 32-bit int fails the extraction.
func istreamInt(b []byte) (v int64, n int, ok bool) {
	neg := false
	if n < len(b) && (b[n] == '+' || b[n] == '-') {
		neg = b[n] == '-'
		n++
	}
	start := n
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if v <= math.MaxInt32+1 {
			v = v*10 + int64(b[n]-'0')
		}
		n++
	}
	if n == start {
		return 0, n, false
	}
	if neg {
		v = -v
	}
	if v > math.MaxInt32 || v < math.MinInt32 {
		return 0, n, false
	}
	return v, n, true
}

// istreamDouble reads a double the way libstdc++'s num_get does: it
// collects an optional sign, digits, a decimal point, digits and an
// exponent ('e' or 'E', an optional sign, digits), then converts the
// collected text with strtod, failing unless all of it converts.
func istreamDouble(b []byte) (v float64, n int, ok bool) {
	neg := false
	if n < len(b) && (b[n] == '+' || b[n] == '-') {
		neg = b[n] == '-'
		n++
	}
	digits := n
	var u uint64
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		u = u*10 + uint64(b[n]-'0')
		n++
	}
	if n > digits && n-digits <= 15 && (n == len(b) || b[n] != '.' && b[n] != 'e' && b[n] != 'E') {
		// Fast path: an integer of at most 15 digits is exact in a double.
		v = float64(u)
		if neg {
			v = -v
		}
		return v, n, true
	}
	if n < len(b) && b[n] == '.' {
		n++
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
	}
	if n < len(b) && (b[n] == 'e' || b[n] == 'E') {
		n++
		if n < len(b) && (b[n] == '+' || b[n] == '-') {
			n++
		}
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
	}
	// A malformed text ("", "-", ".", "1e") or an overflow fails the
	// extraction, as it does with libstdc++.
	f, err := strconv.ParseFloat(string(b[:n]), 64)
	if err != nil {
		return 0, n, false
	}
	return f, n, true
}
