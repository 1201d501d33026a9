package prv

import (
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
)

// TestLongLinesClipped checks that an over-long line of a .pcf or .row
// file, or an over-long field of the .prv header, is echoed as its first
// bytes and its length, not whole, with the file and line.
func TestLongLinesClipped(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	head := strings.Repeat("x", format.MaxEcho) + "… (100000 bytes)"
	const prv = "#Paraver (x):1000_ns:1:1:1(1:1)\n1:1:1:1:1:0:1000:1\n"
	for _, tc := range []struct {
		name, ext, content, prv string
		line                    int
		want                    string
	}{
		{"pcf states", ".pcf", "STATES\n" + long + "\n", prv, 2, `expected "state-id name" in the STATES section, got "` + head + `"`},
		{"pcf precision", ".pcf", "EVENT_TYPE\n0 1 a\nPRECISION X" + long[:99_998] + "\n", prv, 3, `expected "PRECISION digits" in an EVENT_TYPE section, got "PRECISION X` + strings.Repeat("x", format.MaxEcho-11) + `… (100009 bytes)"`},
		{"pcf event type", ".pcf", "EVENT_TYPE\n" + long + "\n", prv, 2, `expected "gradient type name" in an EVENT_TYPE section, got "` + head + `"`},
		{"pcf event numbers", ".pcf", "EVENT_TYPE\n0 " + long + "\n", prv, 2, `expected "gradient type name" in an EVENT_TYPE section, got "0 ` + strings.Repeat("x", format.MaxEcho-2) + `… (100002 bytes)"`},
		{"pcf values", ".pcf", "EVENT_TYPE\n0 1 a\nVALUES\n" + long + "\n", prv, 4, `expected "value name" in a VALUES section, got "` + head + `"`},
		{"row level", ".row", "LEVEL THREAD SIZE " + long + "\n", prv, 1, `expected "LEVEL name SIZE n", got "LEVEL THREAD SIZE ` + strings.Repeat("x", format.MaxEcho-18) + `… (100018 bytes)"`},
		{"row name", ".row", long + "\n", prv, 1, `name "` + head + `" outside a LEVEL section`},
		{"header duration", "", "", "#Paraver (x):" + long + ":1:1:1(1:1)\n", 1, `expected the trace duration (an integer, optionally with _ns), got "` + head + `"`},
	} {
		dir := t.TempDir()
		path := formattest.WriteFile(t, dir, "t.prv", tc.prv)
		file := path
		if tc.ext != "" {
			file = formattest.WriteFile(t, dir, "t"+tc.ext, tc.content)
		}
		_, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
		if err == nil || !strings.HasPrefix(err.Error(), file+":"+strconv.Itoa(tc.line)+":") || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 400 {
			t.Errorf("%s: %.300v\nwant a short message at %s:%d containing %q", tc.name, err, file, tc.line, tc.want)
		}
	}
}
