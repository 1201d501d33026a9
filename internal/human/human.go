// Package human formats numbers for people: counts with thousands
// separators, byte sizes in binary units and durations in the unit that
// suits them. Every command, report and example that prints such a number
// uses it, so the same quantity reads the same everywhere.
package human

import (
	"math"
	"strconv"
	"time"
)

// Count formats n with a comma every three digits: 51895935 is
// "51,895,935".
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return sign + string(out)
}

// Bytes formats a size in bytes with binary units: "512 B", "1.5 KiB",
// "12.3 MiB", "2.0 GiB".
func Bytes(n int64) string {
	const unit = 1024
	if n > -unit && n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	a := n
	if a < 0 {
		a = -a
	}
	div, exp := int64(unit), 0
	for m := a / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTPE"[exp]) + "iB"
}

// Nanos formats a time in nanoseconds with four significant digits in the
// largest unit it reaches among ns, µs, ms and s: 1234567 is "1.235ms".
func Nanos(ns float64) string {
	for _, u := range []struct {
		name  string
		scale float64
	}{{"s", 1e9}, {"ms", 1e6}, {"µs", 1e3}} {
		if math.Abs(ns) >= u.scale {
			return strconv.FormatFloat(ns/u.scale, 'g', 4, 64) + u.name
		}
	}
	return strconv.FormatFloat(ns, 'g', 4, 64) + "ns"
}

// Seconds formats a time in seconds as Nanos does: 0.0015 is "1.5ms".
func Seconds(s float64) string { return Nanos(math.Round(s * 1e9)) }

// Duration formats d as Nanos does: 1500*time.Microsecond is "1.5ms".
func Duration(d time.Duration) string { return Nanos(float64(d)) }
