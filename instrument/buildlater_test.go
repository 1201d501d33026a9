package instrument

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parscope/parscope/trace"
)

// recordSim records a fixed, filtered program with messages, states,
// events and occupancy on the simulated clock (so that two runs give the
// same times) into path, with opts' BuildLater and Force.
func recordSim(t *testing.T, path string, later, force bool) {
	t.Helper()
	sim := DefaultSimClock()
	states := []trace.StateDef{{ID: 1, Name: "compute"}, {ID: 2, Name: "wait"}}
	rec, err := Start(Options{Path: path, Program: "later", States: states, SimClock: &sim, Occupancy: true,
		BufferRecords: 64, MemoryLimit: 1, Throttle: 300, BuildLater: later, Force: force,
		Extra: map[string]string{"seed": "7"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := rec.EventID("tick")
	for i := 0; i < 500; i++ {
		for p := 0; p < 3; p++ {
			pr := rec.Process(p)
			pr.Block(int32(1 + i%2))
			pr.Work(int64(100 + p))
			if i%10 == 0 {
				pr.EventValue(ev, int64(i))
			}
			if p > 0 {
				at := pr.SendStamped(0, 64, int32(i))
				rec.Process(0).RecvStamped(p, 64, int32(i), at)
			}
		}
	}
	rec.Process(2).Done()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = os.Lstat(SpillDir(path))
	if spill := err == nil; rec.LeftUnbuilt() != spill {
		t.Fatalf("LeftUnbuilt %v with the spill directory left %v", rec.LeftUnbuilt(), spill)
	}
}

// TestBuildLater records the same program built at Close and with
// BuildLater: the second leaves a complete spill and no trace, whose
// header is marked complete; Recover builds from it the trace Close built,
// header and records alike, not marked recovered, and removes the spill.
func TestBuildLater(t *testing.T) {
	dir := t.TempDir()
	now, later := filepath.Join(dir, "now.pst"), filepath.Join(dir, "later.pst")
	recordSim(t, now, false, false)
	recordSim(t, later, true, false)
	if _, err := os.Lstat(later); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("BuildLater wrote %s (%v): it should leave the spill only", later, err)
	}
	var h spillHeader
	b, err := os.ReadFile(filepath.Join(SpillDir(later), headerFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &h); err != nil || !h.Complete || h.Replace {
		t.Fatalf("the spill's header: complete %v, replace %v, %v", h.Complete, h.Replace, err)
	}
	// A second recording to the same path must not drop the unbuilt one.
	if _, err := Start(Options{Path: later}); err == nil {
		t.Fatal("Start over an unbuilt recording succeeded")
	}
	rc, err := Recover(later, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Complete || rc.Kept || len(rc.Skipped) != 0 || rc.TornTail != 0 {
		t.Fatalf("recovery %+v", rc)
	}
	if _, err := os.Lstat(SpillDir(later)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the spill directory is still there: %v", err)
	}
	hn, rn := readBack(t, now)
	hl, rl := readBack(t, later)
	if _, ok := hl.Meta.Extra["recovered"]; ok {
		t.Errorf("the trace built later is marked recovered")
	}
	if !reflect.DeepEqual(hn, hl) {
		t.Errorf("headers differ:\nnow   %+v\nlater %+v", hn, hl)
	}
	if len(rn) != 3 || !reflect.DeepEqual(rn, rl) {
		t.Errorf("records differ (%d and %d processes)", len(rn), len(rl))
	}
	n := 0
	for _, rs := range rn {
		n += len(rs)
	}
	if n < 3000 {
		t.Errorf("only %d records: the program should record thousands", n)
	}
}

// TestBuildLaterForce: a recording started with Force over an existing
// trace replaces it when it is built, and the environment's PARSCOPE_BUILD
// overrides the option both ways and refuses other values.
func TestBuildLaterForce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.pst")
	recordSim(t, path, false, false)
	t.Setenv("PARSCOPE_BUILD", "later")
	recordSim(t, path, false, true) // the environment asks for later
	if _, err := os.Lstat(SpillDir(path)); err != nil {
		t.Fatalf("PARSCOPE_BUILD=later left no spill: %v", err)
	}
	if _, err := Recover(path, RecoverOptions{}); err != nil {
		t.Fatalf("building over the trace the recording was forced to replace: %v", err)
	}
	if _, by := readBack(t, path); len(by) != 3 {
		t.Fatalf("%d processes", len(by))
	}
	t.Setenv("PARSCOPE_BUILD", "now")
	other := filepath.Join(dir, "o.pst")
	recordSim(t, other, true, false)
	if _, err := os.Lstat(other); err != nil {
		t.Fatalf("PARSCOPE_BUILD=now did not build at Close: %v", err)
	}
	t.Setenv("PARSCOPE_BUILD", "soon")
	if _, err := Start(Options{Path: filepath.Join(dir, "x.pst")}); err == nil {
		t.Fatal("PARSCOPE_BUILD=soon was accepted")
	}
}

// TestBuildLaterHeaderFails: when the complete header cannot be written,
// Close builds the .pst at once, so nothing is lost.
func TestBuildLaterHeaderFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.pst")
	orig := writeHeaderFile
	defer func() { writeHeaderFile = orig }()
	writeHeaderFile = func(p string, h *spillHeader) error {
		if h.Complete {
			return errors.New("disk full")
		}
		return orig(p, h)
	}
	recordSim(t, path, true, false)
	if _, by := readBack(t, path); len(by) != 3 {
		t.Fatalf("%d processes in the trace built after the header failed", len(by))
	}
	if _, err := os.Lstat(SpillDir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the spill directory is still there: %v", err)
	}
}
