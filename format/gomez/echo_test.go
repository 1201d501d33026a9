package gomez

import (
	"strings"
	"testing"
	"time"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
)

// TestErrorEchoAndUnit checks that an over-long field is echoed as its
// first 64 bytes and its length, not whole, and that a time out of range is
// bounded in the input's own unit.
func TestErrorEchoAndUnit(t *testing.T) {
	long := strings.Repeat("9", 100_000)
	head := strings.Repeat("9", format.MaxEcho) + "… (100000 bytes)"
	for _, tc := range []struct {
		name, content string
		unit          time.Duration
		want          string
	}{
		{"long time", long + " 1 0\n", 0, "time " + head + " is out of range (at most 9223372036854775.807 µs)"},
		{"long pid", "0 1 " + long + "\n", 0, "pid " + head + " is out of range"},
		{"long garbage", "0 1 x" + long + "\n", 0, `got "x` + strings.Repeat("9", format.MaxEcho-1) + `… (100001 bytes)"`},
		{"10 µs unit", "922337203685478 1 0\n", 10 * time.Microsecond, "time 922337203685478 is out of range (at most 922337203685477.5807 × 10µs)"},
		{"ms unit", "9223372036855 1 0\n", time.Millisecond, "time 9223372036855 is out of range (at most 9223372036854.775807 ms)"},
	} {
		path := formattest.WriteFile(t, "", "mg.srt", tc.content)
		_, err := formattest.Import(t, Importer{}, []string{path}, format.Options{TimeUnit: tc.unit})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %.300v\nwant it to contain %q", tc.name, err, tc.want)
			continue
		}
		if n := len(err.Error()); n > 400 {
			t.Errorf("%s: a %d-byte error message", tc.name, n)
		}
	}
}

// TestDictLongIDClipped checks that an over-long block id in a --dict file
// is echoed as its first bytes and its length, not whole.
func TestDictLongIDClipped(t *testing.T) {
	long := strings.Repeat("9", 100_000)
	head := strings.Repeat("9", format.MaxEcho) + "… (100000 bytes)"
	for _, tc := range []struct{ name, content, want string }{
		{"not an integer", "1 a\n" + long + "x b\n", `got "` + head[:format.MaxEcho] + `… (100001 bytes)"`},
		{"negative", "1 a\n-" + long + " b\n", "block id -" + strings.Repeat("9", format.MaxEcho-1) + "… (100001 bytes) is negative"},
		{"out of range", "1 a\n" + long + " b\n", "block id " + head + " is out of range"},
	} {
		path := formattest.WriteFile(t, "", "blocks.txt", tc.content)
		_, err := ReadDict(path)
		if err == nil || !strings.Contains(err.Error(), path+":2: ") || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 400 {
			t.Errorf("%s: %.300v\nwant a short message at line 2 containing %q", tc.name, err, tc.want)
		}
	}
}
