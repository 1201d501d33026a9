package chrome

import (
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

// TestRegionClashClipped checks that two parscope exports that give one
// region id over-long different labels are refused with both labels
// echoed as their first bytes and their length, not whole.
func TestRegionClashClipped(t *testing.T) {
	var paths []string
	for _, c := range []string{"a", "b"} {
		m := &trace.Memory{}
		h := m.Header()
		h.Meta.ClockResolution = 1
		h.EnsureRun(0, 1)
		h.Regions = []trace.RegionDef{{ID: 2, Kind: trace.RegionUser, Label: strings.Repeat(c, 100_000), Parent: -1}}
		for _, r := range []trace.Record{trace.Enter(0, 0, 10, 2), trace.Exit(0, 0, 20, 2)} {
			if err := m.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		out, _ := export(t, m, Options{})
		paths = append(paths, formattest.WriteFile(t, "", c+".json", string(out)))
	}
	_, err := formattest.Import(t, Importer{}, paths, format.Options{})
	clip := func(c string) string { return `"` + strings.Repeat(c, format.MaxEcho) + `… (100000 bytes)"` }
	want := "region 2 is " + clip("b") + " here and " + clip("a") + " in an earlier input"
	if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 400 {
		t.Errorf("%.300v\nwant a short message containing %q", err, want)
	}
}
