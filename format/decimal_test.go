package format

import (
	"math"
	"strconv"
	"testing"
)

// TestAppendInt checks AppendInt on an empty buffer and after a prefix,
// as the exporters (chrome, csv) call it, over every value from -1000 to
// 1000 and the edges of the int32 and int64 ranges.
func TestAppendInt(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 12345, -1, -10, -123456789, math.MaxInt64, math.MinInt64} {
		if got, want := string(AppendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Errorf("AppendInt(%d) = %q, want %q", v, got, want)
		}
	}
	vals := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 1793078235, -1, -9, -10, -100, -12345,
		math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32}
	for v := int64(-1000); v <= 1000; v++ {
		vals = append(vals, v)
	}
	for _, v := range vals {
		if got, want := string(AppendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("AppendInt(%d) = %s, want %s", v, got, want)
		}
	}
	if got := string(AppendUint([]byte("x"), math.MaxUint64)); got != "x"+strconv.FormatUint(math.MaxUint64, 10) {
		t.Errorf("AppendUint(max) = %q", got)
	}
}

func FuzzAppendInt(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(-987654321))
	f.Fuzz(func(t *testing.T, v int64) {
		if got, want := string(AppendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("AppendInt(%d) = %q, want %q", v, got, want)
		}
	})
}
