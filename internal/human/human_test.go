package human

import (
	"math"
	"testing"
	"time"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {51895935, "51,895,935"},
		{-1234, "-1,234"}, {-999, "-999"}, {100000, "100,000"},
		{math.MaxInt64, "9,223,372,036,854,775,807"}, {math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := Count(c.n); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestDigits(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0", "0"}, {"850668", "850,668"}, {"-1234", "-1,234"}, {"+1000", "1,000"},
		{"123456789012345678901", "123,456,789,012,345,678,901"},
		{"1234567890123456789012", "about 1.23e+21"},
		{"99960000000000000000000", "about 1.00e+23"},
		{"-1235000000000000000000000", "about -1.24e+24"},
		{"", ""}, {"-", "-"}, {"12a", "12a"}, {"1e5", "1e5"},
	} {
		if got := Digits(c.in); got != c.want {
			t.Errorf("Digits(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{12_900_000, "12.3 MiB"}, {1 << 30, "1.0 GiB"}, {-2048, "-2.0 KiB"},
		{math.MaxInt64, "8.0 EiB"},
	} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for x, want := range map[float64]string{0: "0.0%", 0.1234: "12.3%", 1: "100.0%", -0.005: "-0.5%", 0.99999: "100.0%"} {
		if got := Percent(x); got != want {
			t.Errorf("Percent(%g) = %q, want %q", x, got, want)
		}
	}
}

func TestDurations(t *testing.T) {
	for _, c := range []struct {
		ns   float64
		want string
	}{
		{0, "0ns"}, {12, "12ns"}, {999, "999ns"}, {1000, "1µs"}, {1234567, "1.235ms"},
		{2.5e9, "2.5s"}, {3723e9, "3723s"}, {-1500, "-1.5µs"},
		{12345.6e9, "12346s"}, {-98765e9, "-98765s"}, {9999.4e9, "9999s"}, {9999.7e9, "10000s"},
	} {
		if got := Nanos(c.ns); got != c.want {
			t.Errorf("Nanos(%g) = %q, want %q", c.ns, got, c.want)
		}
	}
	if got := Seconds(0.0015); got != "1.5ms" {
		t.Errorf("Seconds(0.0015) = %q, want 1.5ms", got)
	}
	if got := Duration(1500 * time.Microsecond); got != "1.5ms" {
		t.Errorf("Duration(1.5ms) = %q, want 1.5ms", got)
	}
}
