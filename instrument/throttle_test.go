package instrument

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestThrottle checks TAU's throttle: after Throttle blocks of one id, or
// enters of one region, a process drops the later ones (a region's exits
// with its enters, so that regions stay balanced even when recursion
// crosses the limit), the drops are counted, and the trace's metadata
// reports per state and region what was kept and dropped and why.
func TestThrottle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.pst")
	rec, err := Start(Options{Path: path, Throttle: 3,
		States:  []trace.StateDef{{ID: 5, Name: "entry", Description: "entry of evalA"}},
		Regions: []trace.RegionDef{{ID: 1, Label: "for at x.go:3", Parent: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	p := rec.Process(0)
	for range 10 {
		p.Block(5)
	}
	p.Block(6)
	for range 5 { // recursion: nested enters crossing the limit
		p.Enter(1)
	}
	for range 5 {
		p.Exit(1)
	}
	p.Send(1, 8, 0) // messages are never throttled
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	h, got := described(t, path)
	want := fmt.Sprint([]string{"state 5", "state 5", "state 5", DroppedEvent + "=7", "state 6",
		"enter 1", "enter 1", "enter 1", DroppedEvent + "=4", "exit 1", "exit 1", "exit 1", "send 8"})
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	extra := h.Meta.Extra
	for k, v := range map[string]string{
		FilterStatsKey + ".state.000005":  "entry of evalA: kept 3, dropped 7: throttled after 3 calls",
		FilterStatsKey + ".region.000001": "for at x.go:3: kept 3, dropped 2: throttled after 3 calls",
		FilterStatsKey:                    "blocks and region enters kept 7, dropped 9 (filter 0, throttle 9 after 3 calls)",
	} {
		if extra[k] != v {
			t.Errorf("meta %s = %q, want %q", k, extra[k], v)
		}
	}
	if _, ok := extra[FilterStatsKey+".state.000006"]; ok {
		t.Errorf("state 6, never dropped, is reported: %q", extra[FilterStatsKey+".state.000006"])
	}
}
