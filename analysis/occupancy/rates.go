package occupancy

import (
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
)

// ParseRates reads a rate table r(·) from r (name is used in errors). Each
// non-blank line not starting with '#' is "C1,C2,...,Ck RATE": the counts of
// processes per mode of a macrostate (k = the number of modes for the
// occupancy table T3, or of the projected modes for a projection T4) and
// its rate, a finite number; "* RATE" gives the rate of every macrostate
// not listed. It returns the table and k (0 when only "*" is given).
func ParseRates(r io.Reader, name string) (Rates, int, error) {
	lr, err := format.NewLineReader(name, r)
	if err != nil {
		return nil, 0, err
	}
	rates := Rates{}
	k := 0
	err = eachLine(lr, func(line []byte) error {
		f := strings.Fields(string(line))
		if len(f) != 2 {
			return lr.Errorf("expected \"C1,...,Ck RATE\" (counts per mode, then a rate), got %d fields", len(f))
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return lr.Errorf("rate %q: expected a finite number", format.Excerpt([]byte(f[1])))
		}
		key := f[0]
		if key != DefaultRate {
			parts := strings.Split(key, ",")
			counts := make([]int32, len(parts))
			for j, p := range parts {
				c, err := strconv.ParseInt(p, 10, 32)
				if err != nil || c < 0 {
					return lr.Errorf("macrostate %q: count %d (%q) is not a non-negative integer", format.Excerpt([]byte(key)), j+1, format.Excerpt([]byte(p)))
				}
				counts[j] = int32(c)
			}
			if k != 0 && len(counts) != k {
				return lr.Errorf("macrostate %q has %d counts, the lines before have %d", format.Excerpt([]byte(key)), len(counts), k)
			}
			k = len(counts)
			key = Key(counts)
		}
		if _, dup := rates[key]; dup {
			return lr.Errorf("macrostate %s has a rate already", format.Excerpt([]byte(f[0])))
		}
		rates[key] = v
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(rates) == 0 {
		return nil, 0, &format.Error{File: name, Offset: -1, Msg: "expected at least one \"C1,...,Ck RATE\" line, found none"}
	}
	return rates, k, nil
}
