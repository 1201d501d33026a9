package gomez

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/parscope/parscope/format"
)

// MaxProcs bounds the pids the importer accepts when the number of
// processes is not declared: pids must be below it. It keeps a stray huge
// number from sizing per-process tables.
const MaxProcs = 1 << 20

// lineKind classifies a line.
type lineKind uint8

const (
	lineSkip   lineKind = iota // blank or comment
	lineRecord                 // a "time block pid" record
	lineBad                    // malformed; the message says why
)

// parser holds what line parsing needs to know: the time unit and the pid bound.
type parser struct {
	unit     int64  // nanoseconds per time unit, > 0
	maxWhole uint64 // largest whole time that does not overflow int64 ns
	unitTZ   int    // decimal trailing zeros of unit: the fractional digits always exact
	procs    int32  // declared number of processes, 0 when not declared
	maxPid   uint64 // largest accepted pid
}

func newParser(unit time.Duration, procs int32) parser {
	p := parser{unit: int64(unit), maxWhole: uint64(math.MaxInt64 / int64(unit)), procs: procs, maxPid: MaxProcs - 1}
	for u := p.unit; u%10 == 0; u /= 10 {
		p.unitTZ++
	}
	if procs > 0 {
		p.maxPid = uint64(procs) - 1
	}
	return p
}

// fast parses the common case: three unsigned decimal integers separated by
// one space or tab, nothing else, all in range. Anything unusual (a
// fraction, more blanks, a comment, a value out of range, a malformed
// field) makes it return ok == false, and the caller falls back to slow,
// which gives the authoritative answer. When ok it agrees with slow.
func (p *parser) fast(line []byte) (t int64, block, pid int32, ok bool) {
	n := len(line)
	i := 0
	var tv uint64
	if n >= 8 {
		// Most times have at most 8 digits: take them in one step.
		i, tv = digits8(binary.LittleEndian.Uint64(line))
	}
	if i == 8 || n < 8 {
		for i < n {
			c := line[i] - '0'
			if c > 9 {
				break
			}
			tv = tv*10 + uint64(c)
			i++
		}
	}
	// uint(i-1) < 18: from 1 to 18 digits, which cannot wrap a uint64.
	if i >= n || uint(i-1) >= 18 || !isSep(line[i]) || tv > p.maxWhole {
		return 0, 0, 0, false
	}
	i++
	j := i
	var bv uint64
	for i < n {
		c := line[i] - '0'
		if c > 9 {
			break
		}
		bv = bv*10 + uint64(c)
		i++
	}
	if i >= n || uint(i-j-1) >= 10 || !isSep(line[i]) || bv > math.MaxInt32 {
		return 0, 0, 0, false
	}
	i++
	j = i
	var pv uint64
	for i < n {
		c := line[i] - '0'
		if c > 9 {
			break
		}
		pv = pv*10 + uint64(c)
		i++
	}
	if i != n || uint(i-j-1) >= 10 || pv > p.maxPid {
		return 0, 0, 0, false
	}
	return int64(tv) * p.unit, int32(bv), int32(pv), true
}

// lastPid reads the pid of a common record line from its end: a line that
// begins with a digit and ends with 1 to 7 digits after a space or a tab,
// at most maxPid. It skips the rest of the line, so it may take a pid from
// a line that is not a record; the pid scan uses it only for the set of
// pids, where such a line does not matter: the import fails at it anyway.
// For every line fast or slow accept as a record, a pid lastPid returns is
// theirs: the line's last field is exactly those digits, as a record line
// holds no blank at its end when it ends with a digit (a comment or a
// blank line never begins with a digit). When ok is false the caller asks
// fast and slow.
func (p *parser) lastPid(line []byte) (pid int32, ok bool) {
	n := len(line)
	if n < 5 || line[0]-'0' > 9 {
		return 0, false
	}
	var v uint64
	mul := uint64(1)
	i := n - 1
	for ; i > 0 && n-i <= 7; i-- {
		c := line[i] - '0'
		if c > 9 {
			break
		}
		v += uint64(c) * mul
		mul *= 10
	}
	if i == n-1 || !isSep(line[i]) || v > p.maxPid {
		return 0, false
	}
	return int32(v), true
}

// digits8 returns how many of the 8 bytes of v (little-endian: the first
// byte in the low bits) are leading ASCII digits, and their value.
func digits8(v uint64) (k int, val uint64) {
	const (
		hi  = 0xF0F0F0F0F0F0F0F0
		lo  = 0x0F0F0F0F0F0F0F0F
		x30 = 0x3030303030303030
		x06 = 0x0606060606060606
	)
	// A byte is a digit when its high nibble is 3 and stays 3 after adding
	// 6. A carry out of a byte (>= 0xFA, not a digit) only disturbs later
	// bytes, which are not counted anyway.
	notDigit := (v&hi ^ x30) | ((v+x06)&hi ^ x30)
	k = bits.TrailingZeros64(notDigit) >> 3 // 8 when all are digits
	if k == 0 {
		return 0, 0
	}
	// Move the k digits to the top, so that the missing ones count as
	// leading zeros, then combine pairs, quads and octets of digits.
	x := (v << (64 - 8*uint(k))) & lo
	x = (x * (10<<8 + 1)) >> 8
	x = ((x & 0x00FF00FF00FF00FF) * (100<<16 + 1)) >> 16
	x = ((x & 0x0000FFFF0000FFFF) * (10000<<32 + 1)) >> 32
	return k, x
}

// isSep reports whether c separates fields on the fast path: a space or a tab.
func isSep(c byte) bool {
	const mask = 1<<' ' | 1<<'\t'
	return c < 64 && (mask>>c)&1 != 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// slow parses any line and explains what is wrong with a bad one. It
// allocates only for the message of a bad line.
func (p *parser) slow(line []byte) (kind lineKind, t int64, block, pid int32, msg string) {
	var f [3][]byte
	nf := 0
	for i, n := 0, len(line); ; {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i >= n {
			break
		}
		if nf == 0 && line[i] == '#' {
			return lineSkip, 0, 0, 0, ""
		}
		start := i
		for i < n && !isSpace(line[i]) {
			i++
		}
		if nf < len(f) {
			f[nf] = line[start:i]
		}
		nf++
	}
	if nf == 0 {
		return lineSkip, 0, 0, 0, ""
	}
	if nf != 3 {
		s := "s"
		if nf == 1 {
			s = ""
		}
		return lineBad, 0, 0, 0, fmt.Sprintf(`expected "time block pid" (3 integers), got %d field%s`, nf, s)
	}
	t, msg = p.parseTime(f[0])
	if msg != "" {
		return lineBad, 0, 0, 0, msg
	}
	bv, msg := parseField(f[1], "block", 2, math.MaxInt32)
	if msg != "" {
		return lineBad, 0, 0, 0, msg
	}
	pv, msg := parseField(f[2], "pid", 3, math.MaxUint64)
	if msg != "" {
		return lineBad, 0, 0, 0, msg
	}
	switch {
	case p.procs > 0 && pv >= uint64(p.procs):
		return lineBad, 0, 0, 0, fmt.Sprintf("unknown rank %s: the trace declares %d processes", format.Excerpt(f[2]), p.procs)
	case pv > p.maxPid:
		return lineBad, 0, 0, 0, fmt.Sprintf("pid %s is out of range (at most %d; declare procs=N for the number of processes)", format.Excerpt(f[2]), p.maxPid)
	}
	return lineRecord, t, int32(bv), int32(pv), ""
}

// parseDigits reads an unsigned decimal integer, reporting overflow of uint64.
func parseDigits(s []byte) (v uint64, ok, overflow bool) {
	if len(s) == 0 {
		return 0, false, false
	}
	for _, c := range s {
		d := c - '0'
		if d > 9 {
			return 0, false, false
		}
		if v > (math.MaxUint64-uint64(d))/10 {
			overflow = true
			continue
		}
		v = v*10 + uint64(d)
	}
	return v, true, overflow
}

// parseField parses field number pos (1-based) named name as an integer in [0, max].
func parseField(s []byte, name string, pos int, max uint64) (uint64, string) {
	if len(s) > 1 && s[0] == '-' {
		if _, ok, _ := parseDigits(s[1:]); ok {
			return 0, fmt.Sprintf("%s %s is negative", name, format.Excerpt(s))
		}
	}
	v, ok, overflow := parseDigits(s)
	if !ok {
		return 0, fmt.Sprintf(`expected an integer %s (field %d of "time block pid"), got %q`, name, pos, format.Excerpt(s))
	}
	if overflow || v > max {
		return 0, fmt.Sprintf("%s %s is out of range (at most %d)", name, format.Excerpt(s), max)
	}
	return v, ""
}

// pow10 holds 10^0 .. 10^19, all of which fit in a uint64.
var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// parseTime parses a time field: an unsigned integer with an optional
// fractional part, in the parser's unit, to nanoseconds.
func (p *parser) parseTime(s []byte) (int64, string) {
	whole, frac := s, []byte(nil)
	for i, c := range s {
		if c == '.' {
			whole, frac = s[:i], s[i+1:]
			break
		}
	}
	bad := func() (int64, string) {
		return 0, fmt.Sprintf(`expected a non-negative number for the time (field 1 of "time block pid"), got %q`, format.Excerpt(s))
	}
	if len(s) > 1 && s[0] == '-' {
		if _, ok, _ := parseDigits(whole[1:]); ok {
			if _, ok2, _ := parseDigits(frac); ok2 || frac == nil {
				return 0, fmt.Sprintf("time %s is negative", format.Excerpt(s))
			}
		}
	}
	w, ok, overflow := parseDigits(whole)
	if !ok {
		return bad()
	}
	var fracNS uint64
	if frac != nil {
		if _, ok, _ := parseDigits(frac); !ok {
			return bad()
		}
		k := len(frac)
		for k > 0 && frac[k-1] == '0' {
			k--
		}
		if k > 0 {
			if k >= len(pow10) {
				return 0, p.tooFine(s)
			}
			f, _, _ := parseDigits(frac[:k]) // < 10^19: no overflow
			hi, lo := bits.Mul64(f, uint64(p.unit))
			q, rem := bits.Div64(hi, lo, pow10[k]) // hi < 10^k: f < 10^k and unit < 2^63
			if rem != 0 {
				return 0, p.tooFine(s)
			}
			fracNS = q
		}
	}
	if overflow || w > (math.MaxInt64-fracNS)/uint64(p.unit) {
		return 0, fmt.Sprintf("time %s is out of range (at most %s)", format.Excerpt(s), p.maxTime())
	}
	return int64(w)*p.unit + int64(fracNS), ""
}

func (p *parser) tooFine(s []byte) string {
	return fmt.Sprintf("time %s is finer than 1ns (the time unit is %v: at most %d fractional digits)", format.Excerpt(s), time.Duration(p.unit), p.unitTZ)
}

// maxTime is the largest time the input can give, in its own unit (the
// largest int64 number of nanoseconds): "9223372036854775.807 µs" for
// microseconds, "922337203685477.5807 × 10µs" for a unit of 10 µs.
func (p *parser) maxTime() string {
	whole, rem := uint64(math.MaxInt64)/uint64(p.unit), uint64(math.MaxInt64)%uint64(p.unit)
	num := strconv.FormatUint(whole, 10)
	if digits := len(strconv.FormatInt(p.unit-1, 10)); p.unit > 1 && rem > 0 {
		hi, lo := bits.Mul64(rem, pow10[digits])
		q, _ := bits.Div64(hi, lo, uint64(p.unit)) // q < 10^digits, so hi < unit
		frac := fmt.Sprintf("%0*d", digits, q)
		num += "." + strings.TrimRight(frac, "0")
	}
	label := time.Duration(p.unit).String()
	if len(label) > 1 && label[0] == '1' && (label[1] < '0' || label[1] > '9') && label[1] != '.' {
		return num + " " + label[1:]
	}
	return num + " × " + label
}
