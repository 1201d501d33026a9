package annotated

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"

	"github.com/parscope/parscope/format"
)

// itemKind is the kind of one logical record of an annotated trace.
type itemKind uint8

const (
	itemRegionStart itemKind = iota + 1 // --- LABEL starts --- [#line@function@"file"]
	itemRegionEnd                       // +++ LABEL ends +++ [#line@function@"file"]
	itemCall                            // [D]mpi_xxx_(k=v ...) [#line...] [ t1 t2 ] { typesize = N }
	itemElision                         // a ":" standing for elided lines, as in Figure 4
	itemRankHeader                      // # rank R [of N]
)

// Argument slots recognised in "(key=value ...)" and "{ key = value }".
const (
	argCount = iota
	argSendCount
	argRecvCount
	argSrc
	argDst
	argTag
	argSendTag
	argRecvTag
	argComm
	argRoot
	argFlag
	argTypesize
	numArgs
)

// argNames are the names used in error messages, indexed by slot.
var argNames = [numArgs]string{"count", "sendcount", "recvcount", "src", "dst", "tag",
	"sendtag", "recvtag", "Communicator", "root", "flag", "typesize"}

// args holds the arguments of a call record that the importer understands.
// Other arguments (datatype, op, status, ...) are skipped.
type args struct {
	has  [numArgs]bool
	v    [numArgs]int64
	reqs []int64 // request handles, from request=, requests= or array_of_requests=
}

func (a *args) reset() {
	a.has = [numArgs]bool{}
	a.reqs = a.reqs[:0]
}

// item is one parsed logical record. Its byte slices are owned by the
// parser and valid until the next call of next.
type item struct {
	kind itemKind
	line int // the line where the record starts

	// Regions and call locations.
	label   []byte
	fn      []byte
	file    []byte
	locLine int32
	hasLoc  bool

	// Calls.
	dynamic bool
	name    []byte
	args    args
	tPrev   int64 // t_end_prev in ns (absolute)
	tStart  int64 // t_start in ns (absolute)

	// Rank header.
	rank, size int64
	hasSize    bool
}

// parser splits an annotated trace into logical records. Records may be
// wrapped over several physical lines anywhere white space may appear.
type parser struct {
	lr   *format.LineReader
	name string
	unit time.Duration // the unit of the timestamps (time.Second by default)
	buf  []byte        // the current physical line (owned by lr)
	pos  int
	line int
	eof  bool
	rerr error  // a read error, reported in place of end of file
	key  []byte // scratch: the argument name being parsed
	it   item
}

func newParser(lr *format.LineReader, name string, unit time.Duration) *parser {
	if unit <= 0 {
		unit = time.Second
	}
	return &parser{lr: lr, name: name, unit: unit}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

func isIdent(c byte) bool {
	return c == '_' || c == '.' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skip moves past white space and line ends. It reports false at the end
// of the input (or on a read error, kept in p.rerr).
func (p *parser) skip() bool {
	for {
		for p.pos < len(p.buf) && isSpace(p.buf[p.pos]) {
			p.pos++
		}
		if p.pos < len(p.buf) {
			return true
		}
		if p.eof {
			return false
		}
		b, err := p.lr.Next()
		if err != nil {
			p.eof, p.buf, p.pos = true, nil, 0
			if err != io.EOF {
				p.rerr = err
			}
			return false
		}
		p.buf, p.pos, p.line = b, 0, p.lr.Line()
	}
}

// peek returns the current byte; call it only after skip returned true.
func (p *parser) peek() byte { return p.buf[p.pos] }

// lit consumes s if the current line continues with it.
func (p *parser) lit(s string) bool {
	if len(p.buf)-p.pos >= len(s) && string(p.buf[p.pos:p.pos+len(s)]) == s {
		p.pos += len(s)
		return true
	}
	return false
}

// run consumes and returns the longest run of bytes satisfying ok on the
// current line.
func (p *parser) run(ok func(byte) bool) []byte {
	i := p.pos
	for p.pos < len(p.buf) && ok(p.buf[p.pos]) {
		p.pos++
	}
	return p.buf[i:p.pos]
}

func notSpace(c byte) bool { return !isSpace(c) }

// errorf returns an error located at the line where the current record starts.
func (p *parser) errorf(msg string, args ...any) error {
	return format.LineError(p.name, p.it.line, msg, args...)
}

// where names the part of a record that something comes after, for error
// messages; it is only formatted when an error is reported.
type where uint8

const (
	afterRegionLine where = iota // "--- LABEL starts ---" or "+++ LABEL ends +++"
	afterCallName                // the call name NAME
	afterArgs                    // the arguments of NAME
	afterStamps                  // the timestamps of NAME
	afterLocation                // the call location
)

// after formats w with the parts of the current record it names.
func (p *parser) after(w where) string {
	it := &p.it
	switch w {
	case afterRegionLine:
		if it.kind == itemRegionStart {
			return fmt.Sprintf(`"--- %s starts ---"`, format.Excerpt([]byte(it.label)))
		}
		return fmt.Sprintf(`"+++ %s ends +++"`, format.Excerpt([]byte(it.label)))
	case afterCallName:
		return "the call name " + format.Excerpt(it.name)
	case afterArgs:
		return "the arguments of " + format.Excerpt(it.name)
	case afterStamps:
		return "the timestamps of " + format.Excerpt(it.name)
	}
	return "the call location"
}

// expected reports that the record does not go on as it should: what was
// expected, after what, and what was found instead (or the end of the file).
func (p *parser) expected(what, after string) error {
	if p.rerr != nil {
		return p.rerr
	}
	if p.pos >= len(p.buf) {
		return p.errorf("unexpected end of file in the record that starts here: expected %s after %s", what, after)
	}
	return p.errorf("expected %s after %s, found %q", what, after, snippet(p.buf[p.pos:]))
}

// snippet shortens the rest of a line for an error message.
func snippet(b []byte) string {
	const max = 24
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// next parses the next logical record into p.it. It returns false at the
// end of the input.
func (p *parser) next() (bool, error) {
	it := &p.it
	for {
		if !p.skip() {
			return false, p.rerr
		}
		it.line = p.line
		it.hasLoc = false
		c := p.peek()
		switch {
		case c == '#':
			rest := p.buf[p.pos+1:]
			p.pos = len(p.buf)
			ok, err := p.rankHeader(rest)
			if err != nil {
				return false, err
			}
			if ok {
				it.kind = itemRankHeader
				return true, nil
			}
			// Any other "#" line is a comment.
		case c == ':':
			p.run(func(c byte) bool { return c == ':' })
			it.kind = itemElision
			return true, nil
		case p.lit("---"):
			it.kind = itemRegionStart
			return true, p.region("---", "starts")
		case p.lit("+++"):
			it.kind = itemRegionEnd
			return true, p.region("+++", "ends")
		case isIdentStart(c) || c == '[':
			it.kind = itemCall
			return true, p.call()
		default:
			return false, p.errorf(`expected a region line ("--- LABEL starts ---" or "+++ LABEL ends +++"), an MPI call record or a "#" comment, found %q`, snippet(p.buf[p.pos:]))
		}
	}
}

// rankHeader parses the text after "#": "rank R" or "rank R of N".
// It reports false for any other comment.
func (p *parser) rankHeader(rest []byte) (bool, error) {
	f := bytes.Fields(rest)
	if len(f) == 0 || !bytes.EqualFold(f[0], []byte("rank")) {
		return false, nil
	}
	const want = `"# rank R" or "# rank R of N" with R and N non-negative integers`
	if len(f) != 2 && len(f) != 4 {
		return false, p.errorf("malformed rank header: expected %s", want)
	}
	r, ok := parseInt(f[1])
	if !ok || r < 0 || r >= math.MaxInt32 {
		return false, p.errorf("malformed rank header: expected %s, found rank %q", want, format.Excerpt([]byte(f[1])))
	}
	p.it.rank, p.it.hasSize = r, false
	if len(f) == 4 {
		n, ok := parseInt(f[3])
		if !bytes.EqualFold(f[2], []byte("of")) || !ok || n <= 0 || n > math.MaxInt32 {
			return false, p.errorf("malformed rank header: expected %s", want)
		}
		if r >= n {
			return false, p.errorf("rank %d is outside the %d processes the header declares", r, n)
		}
		p.it.size, p.it.hasSize = n, true
	}
	return true, nil
}

// region parses the rest of "--- LABEL starts --- [location]" or
// "+++ LABEL ends +++ [location]"; the opening mark has been consumed.
// The location is required on a start line and optional on an end line.
func (p *parser) region(mark, word string) error {
	it := &p.it
	p.run(func(c byte) bool { return c == mark[0] })
	if !p.skip() {
		return p.expected("a region label", `"`+mark+`"`)
	}
	it.label = append(it.label[:0], p.run(notSpace)...)
	if !p.skip() || !p.lit(word) || p.pos < len(p.buf) && !isSpace(p.buf[p.pos]) && p.buf[p.pos] != mark[0] {
		return p.expected(`"`+word+`"`, "the region label")
	}
	if !p.skip() || !p.lit(mark) {
		return p.expected(`"`+mark+`"`, `"`+word+`"`)
	}
	p.run(func(c byte) bool { return c == mark[0] })
	if !p.skip() || !p.lit("[#") {
		if word == "ends" {
			return nil
		}
		return p.expected(`a location such as [#1070@comm3_@"mg.f"]`, p.after(afterRegionLine))
	}
	return p.location(afterRegionLine)
}

// location parses a source location after its "[#": a line number, a
// function between separators ("@" or ":", the function possibly ending in
// "."), and a quoted file name, then "]". Both "[#1070@comm3_@"mg.f"]" and
// "[#1167:ready.: "mg.f"]" are accepted.
func (p *parser) location(w where) error {
	it := &p.it
	const what = `a location such as [#1070@comm3_@"mg.f"]`
	if !p.skip() {
		return p.expected(what, p.after(w))
	}
	n, ok := parseInt(p.run(isDigit))
	if !ok || n > math.MaxInt32 {
		return p.expected("a line number in the location", p.after(w))
	}
	it.locLine = int32(n)
	if !p.skip() {
		return p.expected(what, p.after(w))
	}
	fn := p.run(func(c byte) bool { return !isSpace(c) && c != '"' && c != ']' })
	fn = bytes.Trim(fn, "@:")
	it.fn = append(it.fn[:0], fn...)
	if !p.skip() || !p.lit(`"`) {
		return p.expected(`a quoted file name in the location`, p.after(w))
	}
	end := bytes.IndexByte(p.buf[p.pos:], '"')
	if end < 0 {
		return p.errorf("unterminated file name in the location after %s", p.after(w))
	}
	it.file = append(it.file[:0], p.buf[p.pos:p.pos+end]...)
	p.pos += end + 1
	if !p.skip() || !p.lit("]") {
		return p.expected(`"]" to close the location`, p.after(w))
	}
	it.hasLoc = true
	return nil
}

// call parses an MPI call record.
func (p *parser) call() error {
	it := &p.it
	it.dynamic = p.lit("[D]")
	if it.dynamic && !p.skip() {
		return p.expected("a call name", `"[D]"`)
	}
	if !isIdentStart(p.peek()) {
		if it.dynamic {
			return p.expected("a call name", `"[D]"`)
		}
		return p.errorf(`expected a region line, an MPI call record ("[D]mpi_send_(...)") or a "#" comment, found %q`, snippet(p.buf[p.pos:]))
	}
	it.name = append(it.name[:0], p.run(isIdent)...)
	if !p.skip() || !p.lit("(") {
		return p.expected(`"("`, p.after(afterCallName))
	}
	it.args.reset()
	if err := p.pairs(')', afterArgs); err != nil {
		return err
	}
	if !p.skip() || !p.lit("[#") {
		return p.expected(`the call location, such as [#1167:ready.: "mg.f"],`, p.after(afterArgs))
	}
	if err := p.location(afterArgs); err != nil {
		return err
	}
	const stamps = `"[ t_end_prev t_start ]"`
	if !p.skip() || !p.lit("[") {
		return p.expected(stamps, "the call location")
	}
	var err error
	if it.tPrev, err = p.stamp(stamps); err != nil {
		return err
	}
	if it.tStart, err = p.stamp(stamps); err != nil {
		return err
	}
	if !p.skip() || !p.lit("]") {
		return p.expected(stamps, "the call location")
	}
	// The "{ typesize = N }" block is optional; a missing one is an error
	// only where a byte count needs it.
	if p.skip() && p.lit("{") {
		return p.pairs('}', afterStamps)
	}
	return nil
}

// stamp parses one timestamp: seconds with up to 9 decimals (more only if
// they are zeros), converted exactly to nanoseconds (in p.unit).
func (p *parser) stamp(what string) (int64, error) {
	if !p.skip() {
		return 0, p.expected(what, "the call location")
	}
	tok := p.run(func(c byte) bool { return isDigit(c) || c == '.' })
	if len(tok) == 0 {
		return 0, p.expected(what, "the call location")
	}
	t, ok := parseStamp(tok, p.unit)
	if !ok {
		return 0, p.errorf("bad timestamp %q: expected seconds with at most 9 decimals, such as 1793.078235000", format.Excerpt([]byte(tok)))
	}
	return t, nil
}

// pairs parses "key=value" pairs up to the closing byte. Values end at
// white space or the closing byte; a trailing comma is dropped.
func (p *parser) pairs(closing byte, w where) error {
	it := &p.it
	for {
		if !p.skip() {
			return p.expected(fmt.Sprintf(`"%c"`, closing), p.after(w))
		}
		c := p.peek()
		if c == closing {
			p.pos++
			return nil
		}
		if c == ',' {
			p.pos++
			continue
		}
		key := p.run(isIdent)
		if len(key) == 0 {
			return p.expected(fmt.Sprintf(`key=value or "%c"`, closing), p.after(w))
		}
		slot, isReq := argSlot(key)
		p.key = append(p.key[:0], key...) // key lives in the current line, which skip may replace
		if !p.skip() || !p.lit("=") {
			return p.expected(`"="`, fmt.Sprintf("%s in %s", format.Excerpt(p.key), p.after(w)))
		}
		if !p.skip() {
			return p.expected("a value", fmt.Sprintf("%s= in %s", format.Excerpt(p.key), p.after(w)))
		}
		val := p.run(func(c byte) bool { return !isSpace(c) && c != closing })
		val = bytes.TrimRight(val, ",")
		switch {
		case isReq:
			if err := p.requests(val, p.key); err != nil {
				return err
			}
		case slot == argFlag:
			f, ok := parseFlag(val)
			if !ok {
				return p.errorf("%s=%s: expected a logical value (1, 0, .true., .false.)", format.Excerpt(p.key), format.Excerpt(val))
			}
			it.args.v[slot], it.args.has[slot] = f, true
		case slot >= 0:
			v, ok := parseInt(val)
			if !ok {
				return p.errorf("%s=%s: expected an integer", format.Excerpt(p.key), format.Excerpt(val))
			}
			it.args.v[slot], it.args.has[slot] = v, true
		}
	}
}

// requests parses a request handle or a comma-separated list of them,
// optionally in brackets.
func (p *parser) requests(val, key []byte) error {
	list := bytes.Trim(val, "[]{}")
	for len(list) > 0 {
		i := bytes.IndexByte(list, ',')
		f := list
		if i >= 0 {
			f, list = list[:i], list[i+1:]
		} else {
			list = nil
		}
		if len(f) == 0 {
			continue
		}
		v, ok := parseInt(f)
		if !ok {
			return p.errorf("%s=%s: expected a request handle or a comma-separated list of them", format.Excerpt(key), format.Excerpt(val))
		}
		p.it.args.reqs = append(p.it.args.reqs, v)
	}
	return nil
}

// argSlot maps an argument name (any case) to its slot, or -1 when the
// argument is not used; isReq marks request handles.
func argSlot(key []byte) (slot int, isReq bool) {
	var b [24]byte
	if len(key) > len(b) {
		return -1, false
	}
	for i, c := range key {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	switch string(b[:len(key)]) {
	case "count":
		return argCount, false
	case "sendcount", "scount", "sendcnt":
		return argSendCount, false
	case "recvcount", "rcount", "recvcnt":
		return argRecvCount, false
	case "src", "source":
		return argSrc, false
	case "dst", "dest":
		return argDst, false
	case "tag":
		return argTag, false
	case "sendtag", "stag":
		return argSendTag, false
	case "recvtag", "rtag":
		return argRecvTag, false
	case "communicator", "comm":
		return argComm, false
	case "root":
		return argRoot, false
	case "flag":
		return argFlag, false
	case "typesize":
		return argTypesize, false
	case "request", "req", "requests", "array_of_requests":
		return -1, true
	}
	return -1, false
}

// parseInt parses a decimal integer with an optional sign, without
// allocating; it reports false on anything else or on overflow.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		if n > (math.MaxInt64+1)/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > math.MaxInt64+1 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// parseFlag parses a Fortran or C logical value.
func parseFlag(b []byte) (int64, bool) {
	switch string(bytes.ToLower(b)) {
	case "1", "t", "true", ".true.":
		return 1, true
	case "0", "f", "false", ".false.":
		return 0, true
	}
	return 0, false
}

// parseStamp converts "S.FFFFFFFFF" (seconds, at most 9 significant
// decimals) in the given unit to integer nanoseconds, exactly: the
// decimal digits are never rounded through a float.
func parseStamp(b []byte, unit time.Duration) (int64, bool) {
	dot := bytes.IndexByte(b, '.')
	intPart, frac := b, []byte(nil)
	if dot >= 0 {
		intPart, frac = b[:dot], b[dot+1:]
		if bytes.IndexByte(frac, '.') >= 0 {
			return 0, false
		}
	}
	if len(intPart) == 0 && len(frac) == 0 {
		return 0, false
	}
	var sec uint64
	for _, c := range intPart {
		if sec > math.MaxInt64/10 {
			return 0, false
		}
		sec = sec*10 + uint64(c-'0')
	}
	var nano uint64 // fraction in units of 1e-9
	for i, c := range frac {
		if i >= 9 {
			if c != '0' {
				return 0, false
			}
			continue
		}
		nano = nano*10 + uint64(c-'0')
	}
	for i := len(frac); i < 9; i++ {
		nano *= 10
	}
	u := uint64(unit)
	hi, whole := bits.Mul64(sec, u)
	if hi != 0 || whole > math.MaxInt64 {
		return 0, false
	}
	fh, fl := bits.Mul64(nano, u)
	part, _ := bits.Div64(fh, fl, 1e9) // fh < 1e9 because nano < 1e9
	sum := whole + part
	if sum > math.MaxInt64 {
		return 0, false
	}
	return int64(sum), true
}
