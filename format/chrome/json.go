package chrome

import (
	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/jsontext"
)

// appendNS appends a time or duration given in nanoseconds as microseconds
// with exactly three decimals ("1793078.235"), computed on integers so that
// no precision is lost.
func appendNS(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u // also right for math.MinInt64
	}
	b = format.AppendUint(b, u/1000)
	f := u % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendString appends s as a quoted JSON string, escaped as encoding/json
// escapes it but without its HTML escaping (<, > and & as they are).
func appendString(b []byte, s string) []byte { return jsontext.AppendString(b, s, false) }
