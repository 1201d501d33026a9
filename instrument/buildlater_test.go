package instrument

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
	writeHeaderFile = func(p string, h *spillHeader, sync bool) error {
		if h.Complete {
			return errors.New("disk full")
		}
		return orig(p, h, sync)
	}
	recordSim(t, path, true, false)
	if _, by := readBack(t, path); len(by) != 3 {
		t.Fatalf("%d processes in the trace built after the header failed", len(by))
	}
	if _, err := os.Lstat(SpillDir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the spill directory is still there: %v", err)
	}
}

// TestWithoutStore: a program that does not link the trace store (a
// program rewritten by parscope instrument, by default) leaves every
// recording complete in its spill directory whatever BuildLater says,
// refuses PARSCOPE_BUILD=now at Start, and cannot Recover; once the store
// is linked, Recover builds from the spill the trace Close would have
// built, header and records alike.
func TestWithoutStore(t *testing.T) {
	linked := linkedStore()
	if linked == nil {
		t.Fatal("no store linked: this package's tests link it (example_test.go imports instrument/pst)")
	}
	defer RegisterStore(linked)
	dir := t.TempDir()
	now, lean := filepath.Join(dir, "now.pst"), filepath.Join(dir, "lean.pst")
	recordSim(t, now, false, false)
	RegisterStore(nil)
	recordSim(t, lean, false, false) // BuildLater not set
	if _, err := os.Lstat(lean); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a program without the store wrote %s (%v)", lean, err)
	}
	if !Unbuilt(lean) {
		t.Fatal("the recording left by a program without the store is not a complete one to build")
	}
	if _, err := Recover(lean, RecoverOptions{}); err == nil || !strings.Contains(err.Error(), "instrument/pst") {
		t.Fatalf("Recover without the store: %v", err)
	}
	t.Setenv("PARSCOPE_BUILD", "now")
	x := filepath.Join(dir, "x.pst")
	if _, err := Start(Options{Path: x}); err == nil || !strings.Contains(err.Error(), "does not link the trace store") {
		t.Fatalf("PARSCOPE_BUILD=now without the store: %v", err)
	}
	if _, err := os.Lstat(SpillDir(x)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused Start left %s (%v)", SpillDir(x), err)
	}
	t.Setenv("PARSCOPE_BUILD", "")
	RegisterStore(linked)
	if _, err := Recover(lean, RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	hn, rn := readBack(t, now)
	hl, rl := readBack(t, lean)
	if _, ok := hl.Meta.Extra["recovered"]; ok {
		t.Errorf("the trace built from the spill is marked recovered")
	}
	if !reflect.DeepEqual(hn, hl) {
		t.Errorf("headers differ:\nbuilt at Close %+v\nbuilt later    %+v", hn, hl)
	}
	if len(rn) != 3 || !reflect.DeepEqual(rn, rl) {
		t.Errorf("records differ (%d and %d processes)", len(rn), len(rl))
	}
}

// TestWithoutStoreSpillFails: when the spill file cannot be written in a
// program without the store, Close cannot build the records it still holds
// and says so, naming the spill directory and how to build what it has.
func TestWithoutStoreSpillFails(t *testing.T) {
	linked := linkedStore()
	defer RegisterStore(linked)
	RegisterStore(nil)
	path := filepath.Join(t.TempDir(), "t.pst")
	rec, err := Start(Options{Path: path, BufferRecords: 16, MemoryLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec.sp.f.Close() // every write of the spill file fails from here on
	p := rec.Process(0)
	for i := 0; i < 1000; i++ {
		p.Block(int32(i % 7))
	}
	err = rec.Close()
	if err == nil || !strings.Contains(err.Error(), "writing spill file") || !strings.Contains(err.Error(), "parscope recover "+path) {
		t.Fatalf("Close with a failing spill and no store: %v", err)
	}
	if rec.LeftUnbuilt() {
		t.Error("LeftUnbuilt after a spill that could not be completed")
	}
	if _, err := os.Lstat(SpillDir(path)); err != nil {
		t.Errorf("the spill directory is gone: %v", err)
	}
}

// TestSyncOption: PARSCOPE_SYNC=on records (with fsyncs) the same complete
// recording that the default leaves, and other values are refused.
func TestSyncOption(t *testing.T) {
	dir := t.TempDir()
	plain, synced := filepath.Join(dir, "plain.pst"), filepath.Join(dir, "synced.pst")
	recordSim(t, plain, true, false)
	t.Setenv("PARSCOPE_SYNC", "on")
	recordSim(t, synced, true, false)
	for _, p := range []string{plain, synced} {
		if !Unbuilt(p) {
			t.Fatalf("%s: no complete recording left", p)
		}
		if _, err := Recover(p, RecoverOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hp, rp := readBack(t, plain)
	hs, rs := readBack(t, synced)
	if !reflect.DeepEqual(hp, hs) || len(rp) != 3 || !reflect.DeepEqual(rp, rs) {
		t.Errorf("the recordings with and without PARSCOPE_SYNC=on differ")
	}
	t.Setenv("PARSCOPE_SYNC", "yes")
	if _, err := Start(Options{Path: filepath.Join(dir, "x.pst")}); err == nil || !strings.Contains(err.Error(), "PARSCOPE_SYNC") {
		t.Fatalf("PARSCOPE_SYNC=yes: %v", err)
	}
}

// TestSpillHeaderJSON checks that the spill's header is written as
// json.Marshal would write it (the encoder is hand-written, to spare a
// recording the reflection of the first Marshal), for a recorder's header
// before and after records, complete or not.
func TestSpillHeaderJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.pst")
	states := []trace.StateDef{{ID: 1, Name: "compute <&>", File: "main.go", Line: 3}, {ID: 2, Name: "ended", Absent: true}}
	regions := []trace.RegionDef{{ID: 0, Kind: trace.RegionLoop, Label: "for \"i\"", Line: 4, EndLine: 9, Parent: -1}}
	rec, err := Start(Options{Path: path, Program: "héllo\n", States: states, Regions: regions, Occupancy: true,
		Throttle: 10, Extra: map[string]string{"z": "last", "a": "first\u2028"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Abort()
	check := func(h *spillHeader) {
		t.Helper()
		want, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.appendJSON(nil); string(got) != string(want) {
			t.Fatalf("appendJSON and json.Marshal differ:\n got  %s\n want %s", got, want)
		}
	}
	check(rec.header(readPair()))
	p := rec.Process(0)
	p.Block(1)
	p.Event(rec.EventID("tick"))
	p.Block(2)
	p.Done()
	h := rec.header(readPair())
	rec.addFilterStats(h.Header.Meta.Extra)
	if len(h.Header.Events) == 0 || len(h.Header.Counters) == 0 {
		t.Fatalf("the header lacks the events or counters the test is for: %+v", h.Header)
	}
	check(h)
	h.Complete, h.Replace = true, true
	check(h)
	h.Replace = false
	check(h)
}

// TestForceClearsSpill: a recording started with Force over the spill of
// an earlier one keeps the directory and its records file (clearSpill) but
// nothing of what they held: the trace built from it has the records of a
// recording made into a fresh path, and only the two files of a spill are
// left. A spill path that is a file is replaced; without Force nothing is
// touched.
func TestForceClearsSpill(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.pst")
	recordSim(t, fresh, false, false)
	_, want := readBack(t, fresh)

	path := filepath.Join(dir, "t.pst")
	spill := SpillDir(path)
	junk := map[string]string{
		"records.bin":                       strings.Repeat("PSC1 junk of an earlier recording ", 20000),
		"header.json":                       `{"header":{"meta":{"program":"earlier"}}}`,
		".header.json.parscope-tmp-1-2":     "torn",
		"leftover/inside/records.bin":       "deep",
		"records.bin.parscope-tmp-not-ours": "x",
	}
	for name, data := range junk {
		p := filepath.Join(spill, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Start(Options{Path: path}); err == nil {
		t.Fatal("Start without Force accepted a spill left over")
	}
	if data, err := os.ReadFile(filepath.Join(spill, "records.bin")); err != nil || string(data) != junk["records.bin"] {
		t.Fatalf("Start without Force changed the spill: %v", err)
	}
	recordSim(t, path, true, true)
	ents, err := os.ReadDir(spill)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "header.json records.bin" {
		t.Fatalf("the spill holds %q after a forced recording, want the header and the records only", names)
	}
	if data, err := os.ReadFile(filepath.Join(spill, "records.bin")); err != nil || strings.Contains(string(data), "junk") {
		t.Fatalf("the records file still holds the earlier recording's bytes (%d bytes, %v)", len(data), err)
	}
	if _, err := Recover(path, RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, got := readBack(t, path); !reflect.DeepEqual(got, want) {
		t.Fatalf("the trace built over an earlier spill differs from a fresh recording's:\n got  %v\n want %v", got, want)
	}

	// A file where the spill directory goes is replaced too.
	other := filepath.Join(dir, "o.pst")
	if err := os.WriteFile(SpillDir(other), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	recordSim(t, other, true, true)
	if _, err := Recover(other, RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, got := readBack(t, other); !reflect.DeepEqual(got, want) {
		t.Fatal("the trace built where a file was differs from a fresh recording's")
	}
}
