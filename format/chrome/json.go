package chrome

import "unicode/utf8"

// appendNS appends a time or duration given in nanoseconds as microseconds
// with exactly three decimals ("1793078.235"), computed on integers so that
// no precision is lost.
func appendNS(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u // also right for math.MinInt64
	}
	b = appendUint(b, u/1000)
	f := u % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// digitPairs holds "00" to "99", for formatting two digits at a time.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does, with
// a shorter path for the small and medium numbers that fill most fields.
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(b, '-'), -uint64(v))
	}
	return appendUint(b, uint64(v))
}

// appendUint appends u in decimal.
func appendUint(b []byte, u uint64) []byte {
	if u < 10 {
		return append(b, byte('0'+u))
	}
	var a [20]byte
	i := len(a)
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		a[i], a[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		a[i], a[i+1] = digitPairs[u*2], digitPairs[u*2+1]
	} else {
		i--
		a[i] = byte('0' + u)
	}
	return append(b, a[i:]...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a quoted JSON string. It escapes what JSON
// requires (quote, backslash, control characters), replaces invalid UTF-8
// with U+FFFD as encoding/json does, and escapes U+2028 and U+2029 so that
// the output is also valid JavaScript.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
