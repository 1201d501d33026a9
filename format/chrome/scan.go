package chrome

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/parscope/parscope/format"
)

// scanner is a streaming JSON tokenizer over an io.Reader: it holds one
// buffer of input, never the whole file, and knows the byte offset of
// every token for error messages. It decodes only what the importer
// needs (strings, numbers as text) and skips the rest.
type scanner struct {
	r    io.Reader
	file string
	buf  []byte
	pos  int   // next byte in buf
	end  int   // end of valid data in buf
	base int64 // offset of buf[0] in the input
	eof  bool
	rerr error // read error other than io.EOF
	str  []byte
}

func newScanner(file string, r io.Reader) *scanner {
	return &scanner{r: r, file: file, buf: make([]byte, 256<<10)}
}

// offset returns the byte offset of the next unread byte.
func (s *scanner) offset() int64 { return s.base + int64(s.pos) }

// errorf returns a located error at the next unread byte.
func (s *scanner) errorf(format_ string, args ...any) error {
	return format.OffsetError(s.file, s.offset(), format_, args...)
}

// fill reads more input, keeping nothing before pos. It reports whether
// there is at least one unread byte.
func (s *scanner) fill() bool {
	if s.pos < s.end {
		return true
	}
	if s.eof {
		return false
	}
	s.base += int64(s.end)
	s.pos, s.end = 0, 0
	for s.end == 0 {
		n, err := s.r.Read(s.buf)
		s.end = n
		if err != nil {
			s.eof = true
			if !errors.Is(err, io.EOF) {
				s.rerr = err
			}
			break
		}
	}
	return s.end > 0
}

// unexpected describes what stands at the next unread byte.
func (s *scanner) unexpected(want string) error {
	if s.rerr != nil {
		return &format.Error{File: s.file, Offset: s.offset(), Msg: "cannot read (expected " + want + ")", Err: s.rerr}
	}
	if !s.fill() {
		return s.errorf("expected %s, got the end of the input", want)
	}
	c := s.buf[s.pos]
	if c >= 0x20 && c < 0x7f {
		return s.errorf("expected %s, got %q", want, rune(c))
	}
	return s.errorf("expected %s, got byte 0x%02x", want, c)
}

// skipSpace skips white space and returns the next byte without
// consuming it; ok is false at the end of the input.
func (s *scanner) skipSpace() (byte, bool) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, true
			}
			s.pos++
		}
		if !s.fill() {
			return 0, false
		}
	}
}

// expect consumes byte c after white space.
func (s *scanner) expect(c byte, want string) error {
	b, ok := s.skipSpace()
	if !ok || b != c {
		return s.unexpected(want)
	}
	s.pos++
	return nil
}

// next consumes and returns the next byte after white space.
func (s *scanner) next() (byte, bool) {
	c, ok := s.skipSpace()
	if ok {
		s.pos++
	}
	return c, ok
}

// moreIn reads what follows an element of an array or an object: ',' (it
// returns true) or the closing byte (false).
func (s *scanner) moreIn(close byte, what string) (bool, error) {
	c, ok := s.next()
	switch {
	case ok && c == ',':
		return true, nil
	case ok && c == close:
		return false, nil
	}
	if ok {
		s.pos--
	}
	return false, s.unexpected(fmt.Sprintf("',' or '%c' in %s", close, what))
}

// closes consumes the closing byte of an array or an object whose opening
// byte is consumed, when it follows at once: it reports whether the array
// or object is empty.
func (s *scanner) closes(close byte) bool {
	if c, _ := s.skipSpace(); c == close {
		s.pos++
		return true
	}
	return false
}

// object reads an object whose '{' is the next byte: for each member it
// reads the key and the ':' after it and calls member, which reads the
// value; the key is valid until the next string is read. what names the
// object in errors.
func (s *scanner) object(what string, member func(key []byte) error) error {
	s.pos++
	if s.closes('}') {
		return nil
	}
	for {
		key, err := s.memberKey()
		if err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		more, err := s.moreIn('}', what)
		if err != nil || !more {
			return err
		}
	}
}

// memberKey reads the key of an object member and the ':' after it; the
// key is valid until the next string is read.
func (s *scanner) memberKey() ([]byte, error) {
	key, err := s.readString()
	if err != nil {
		return nil, err
	}
	if err := s.expect(':', "':' after an object key"); err != nil {
		return nil, err
	}
	return key, nil
}

// stringOrNumber reads a string or a number as its text, valid until the
// next string or number is read; num reports a number. found is false, and nothing is
// consumed, when the next value is neither.
func (s *scanner) stringOrNumber() (v []byte, num, found bool, err error) {
	c, ok := s.skipSpace()
	switch {
	case ok && c == '"':
		v, err = s.readString()
		return v, false, true, err
	case ok && (c == '-' || '0' <= c && c <= '9'):
		v, err = s.readNumber()
		return v, true, true, err
	}
	return nil, false, false, nil
}

// readString reads a JSON string (the opening quote not yet consumed) and
// returns its decoded bytes, valid until the next call.
func (s *scanner) readString() ([]byte, error) {
	if err := s.expect('"', "a string"); err != nil {
		return nil, err
	}
	return s.stringBody()
}

// stringBody reads the rest of a string whose opening quote is consumed.
func (s *scanner) stringBody() ([]byte, error) {
	s.str = s.str[:0]
	for {
		start := s.pos
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			s.pos++
		}
		s.str = append(s.str, s.buf[start:s.pos]...)
		if s.pos == s.end {
			if !s.fill() {
				return nil, s.unexpected("the end of a string")
			}
			continue
		}
		c := s.buf[s.pos]
		s.pos++
		switch {
		case c == '"':
			return s.str, nil
		case c < 0x20:
			s.pos--
			return nil, s.errorf("control character 0x%02x in a string (expected it escaped)", c)
		}
		// An escape.
		e, ok := s.rawByte()
		if !ok {
			return nil, s.unexpected("an escape sequence")
		}
		switch e {
		case '"', '\\', '/':
			s.str = append(s.str, e)
		case 'b':
			s.str = append(s.str, '\b')
		case 'f':
			s.str = append(s.str, '\f')
		case 'n':
			s.str = append(s.str, '\n')
		case 'r':
			s.str = append(s.str, '\r')
		case 't':
			s.str = append(s.str, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				// A pair is \uD8xx\uDCxx; a lone half becomes U+FFFD.
				r2 := utf8.RuneError
				if s.peekByte() == '\\' {
					s.pos++
					if u, _ := s.rawByte(); u == 'u' {
						if r2, err = s.hex4(); err != nil {
							return nil, err
						}
					} else {
						return nil, s.errorf("expected \\u after a surrogate half")
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			s.str = utf8.AppendRune(s.str, r)
		default:
			s.pos--
			return nil, s.errorf("invalid escape \\%c in a string", rune(e))
		}
	}
}

func (s *scanner) rawByte() (byte, bool) {
	if s.pos == s.end && !s.fill() {
		return 0, false
	}
	c := s.buf[s.pos]
	s.pos++
	return c, true
}

func (s *scanner) peekByte() byte {
	if s.pos == s.end && !s.fill() {
		return 0
	}
	return s.buf[s.pos]
}

func (s *scanner) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, ok := s.rawByte()
		switch {
		case !ok:
			return 0, s.unexpected("4 hex digits after \\u")
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			s.pos--
			return 0, s.errorf("expected a hex digit after \\u, got %q", rune(c))
		}
	}
	return r, nil
}

// readNumber reads a JSON number and returns its text, valid until the
// next call. It checks the JSON grammar.
func (s *scanner) readNumber() ([]byte, error) {
	if _, ok := s.skipSpace(); !ok {
		return nil, s.unexpected("a number")
	}
	s.str = s.str[:0]
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if !('0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
				goto done
			}
			s.str = append(s.str, c)
			s.pos++
		}
		if !s.fill() {
			break
		}
	}
done:
	if !validNumber(s.str) {
		return nil, format.OffsetError(s.file, s.offset()-int64(len(s.str)), "expected a number, got %q", format.Excerpt(s.str))
	}
	return s.str, nil
}

// validNumber checks the JSON number grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

// literal reads the rest of true, false or null.
func (s *scanner) literal(word string) error {
	for i := range len(word) {
		c, ok := s.rawByte()
		if !ok || c != word[i] {
			if ok {
				s.pos--
			}
			return s.unexpected(fmt.Sprintf("%q", word))
		}
	}
	return nil
}

// maxDepth bounds the nesting of skipped values, so that a hostile input
// cannot exhaust the stack.
const maxDepth = 10000

// skipValue reads and discards one JSON value of any kind.
func (s *scanner) skipValue(depth int) error {
	if depth > maxDepth {
		return s.errorf("values nested deeper than %d levels", maxDepth)
	}
	c, ok := s.skipSpace()
	if !ok {
		return s.unexpected("a value")
	}
	switch {
	case c == '"':
		s.pos++
		_, err := s.stringBody()
		return err
	case c == '{' || c == '[':
		close, what := byte('}'), "an object"
		if c == '[' {
			close, what = ']', "an array"
		}
		s.pos++
		if s.closes(close) {
			return nil
		}
		for {
			if c == '{' {
				if _, err := s.memberKey(); err != nil {
					return err
				}
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			more, err := s.moreIn(close, what)
			if err != nil || !more {
				return err
			}
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		_, err := s.readNumber()
		return err
	}
	return s.unexpected("a value")
}

// micros converts a JSON number of microseconds to nanoseconds, rounding
// half away from zero; exact for decimals with up to 3 fraction digits
// and magnitudes below 2^63 ns. frac reports digits below the microsecond.
func micros(b []byte) (ns int64, frac bool, ok bool) {
	neg := false
	i := 0
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var v uint64
	digits := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		if v > math.MaxInt64/10 {
			return floatMicros(b)
		}
		v = v*10 + uint64(b[i]-'0')
		digits++
	}
	if digits == 0 {
		return 0, false, false
	}
	if v > math.MaxInt64/1000 {
		return floatMicros(b)
	}
	v *= 1000
	if i < len(b) && b[i] == '.' {
		i++
		scale := uint64(100)
		round := false
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			d := uint64(b[i] - '0')
			switch {
			case scale > 0:
				v += d * scale
				scale /= 10
				frac = frac || d != 0
			case scale == 0 && !round:
				round = true
				if d >= 5 {
					v++
				}
			}
		}
	}
	if i < len(b) {
		return floatMicros(b) // an exponent
	}
	if v > math.MaxInt64 {
		return 0, false, false
	}
	if neg {
		return -int64(v), frac, true
	}
	return int64(v), frac, true
}

// floatMicros converts through float64 what micros cannot do exactly.
func floatMicros(b []byte) (int64, bool, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, false, false
	}
	ns := math.Round(f * 1000)
	if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return 0, false, false
	}
	return int64(ns), ns != math.Round(f)*1000, true
}
