// Package human formats numbers for people: counts with thousands
// separators, byte sizes in binary units and durations in the unit that
// suits them. Every command, report and example that prints such a number
// uses it, so the same quantity reads the same everywhere.
package human

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Count formats n with a comma every three digits: 51895935 is
// "51,895,935".
func Count(n int64) string { return Digits(strconv.FormatInt(n, 10)) }

// Digits puts a comma every three digits into s, an integer written in
// decimal (an optional sign, then digits), of any size: "850668" is
// "850,668". A number of more than 21 digits reads better as a power of
// ten: it is written with three significant digits, "about 1.23e+40". s that is not such an
// integer is returned as it is.
func Digits(s string) string {
	sign, d := "", s
	if len(d) > 0 && (d[0] == '-' || d[0] == '+') {
		sign, d = d[:1], d[1:]
		if sign == "+" {
			sign = ""
		}
	}
	if d == "" {
		return s
	}
	for i := range len(d) {
		if d[i] < '0' || d[i] > '9' {
			return s
		}
	}
	if len(d) > 21 {
		lead, exp := 0, len(d)-1
		for _, c := range d[:4] {
			lead = 10*lead + int(c-'0')
		}
		lead = (lead + 5) / 10 // three significant digits, rounded
		if lead == 1000 {
			lead, exp = 100, exp+1
		}
		return fmt.Sprintf("about %s%d.%02de+%d", sign, lead/100, lead%100, exp)
	}
	out := make([]byte, 0, len(d)+len(d)/3)
	for i := range len(d) {
		if i > 0 && (len(d)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, d[i])
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
// largest unit it reaches among ns, µs, ms and s: 1234567 is "1.235ms";
// from 10,000 s on, whole seconds ("12346s"), never an exponent.
func Nanos(ns float64) string {
	if s := ns / 1e9; math.Abs(s) >= 9999.5 { // 4 digits would round to 1e+04
		return strconv.FormatFloat(s, 'f', 0, 64) + "s"
	}
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

// Percent formats a fraction as a percentage with one decimal: 0.1234 is
// "12.3%".
func Percent(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

// Seconds formats a time in seconds as Nanos does: 0.0015 is "1.5ms".
func Seconds(s float64) string { return Nanos(math.Round(s * 1e9)) }

// Duration formats d as Nanos does: 1500*time.Microsecond is "1.5ms".
func Duration(d time.Duration) string { return Nanos(float64(d)) }
