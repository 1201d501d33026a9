package occupancy

import (
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// TestLongFieldsClipped checks that an over-long field of a modes file, a
// rates file or a fit file is echoed as its first bytes and its length,
// not whole.
func TestLongFieldsClipped(t *testing.T) {
	long := strings.Repeat("q", 100_000)
	head := `"` + long[:format.MaxEcho] + `… (100000 bytes)"`
	bare := head[1 : len(head)-1]
	h := &trace.Header{States: []trace.StateDef{{ID: 0, Name: "compute"}}}
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 400 {
			t.Errorf("%s: %.300v\nwant a short message containing %q", name, err, want)
		}
	}
	_, err := ParseModes(strings.NewReader("0 U\n"+long+" S\n"), "modes.txt", h)
	check("unknown state", err, "modes.txt:2: state "+head+" is neither")
	_, err = ParseModes(strings.NewReader("0 "+long+"\n0 "+long+"\n"), "modes.txt", h)
	check("mapped twice", err, "modes.txt:2: state 0 is mapped twice (to "+bare+" and "+bare+")")

	_, _, err = ParseRates(strings.NewReader("1,2 "+long+"\n"), "rates.txt")
	check("rate", err, "rates.txt:1: rate "+head+": expected a finite number")
	_, _, err = ParseRates(strings.NewReader("1,"+long+" 1\n"), "rates.txt")
	check("count", err, `rates.txt:1: macrostate "1,`+long[:format.MaxEcho-2]+`… (100002 bytes)": count 2 (`+head+`)`)
	_, _, err = ParseRates(strings.NewReader("1 1\n1,"+strings.Repeat("1,", 50_000)+"1 1\n"), "rates.txt")
	check("counts", err, `rates.txt:2: macrostate "1,1,1,`)

	_, err = ReadFits(strings.NewReader(`{"fits":[{"params":["n"],"modes":["U"],"equations":[{"mode":"`+long+`","terms":[]}]}]}`), "fit.json")
	check("fit mode", err, "fit.json: fit 1: equation 1 is for "+head+`, expected mode "U"`)
	_, err = ReadFits(strings.NewReader(`{"fits":[{"params":["n"],"modes":["U"],"equations":[{"mode":"U","terms":[{"term":"`+long+`","coef":1}]}]}]}`), "fit.json")
	check("fit term", err, "fit.json: fit 1, mode U: term "+head+": "+head+" is not a parameter")
	_, err = ReadFits(strings.NewReader(`{"fits":[],"`+long+`":1}`), "fit.json")
	check("unknown field", err, `fit.json: expected a fit file (JSON written by parscope fit): json: unknown field "qqq`)
}
