// Package jsontext writes JSON strings the way encoding/json does, without
// reflection, for the writers that build their JSON by hand: the
// recorder's spill header (trace.Header.AppendJSON), which must cost
// little in the first milliseconds of the program it records, and the
// Perfetto export, which writes millions of strings.
package jsontext

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a quoted JSON string, escaped as
// encoding/json escapes it: " and \ with a backslash, the control
// characters \b, \f, \n, \r and \t by name and the others as \u00XX,
// each byte of invalid UTF-8 as \ufffd, and U+2028 and U+2029 as \u2028
// and \u2029 (so that the output is also valid JavaScript). With
// escapeHTML, <, > and & are written as \u003c, \u003e and \u0026, as
// json.Marshal writes them (json.Encoder.SetEscapeHTML(false) leaves
// them).
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || b != '<' && b != '>' && b != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
