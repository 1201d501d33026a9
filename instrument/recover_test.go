package instrument

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// spillOf records steps states on each of two processes with small
// buffers, so that the spill file holds many chunks, and leaves the spill
// directory of a trace at path as a dead program would. It returns the
// offsets (of the headers) and lengths of the chunks in file order, and the
// states each process recorded.
func spillOf(t *testing.T, path string, steps int) (offs, lens []int64, want map[int32][]int32) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "live.pst")
	rec, err := Start(Options{Path: tmp, BufferRecords: 50, MemoryLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	want = map[int32][]int32{}
	for i := 0; i < steps; i++ {
		for p := 0; p < 2; p++ {
			id := int32(p*1000 + i)
			rec.Process(p).Block(id)
			want[int32(p)] = append(want[int32(p)], id)
		}
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	dst := SpillDir(path)
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{spillFile, headerFile} {
		b, err := os.ReadFile(filepath.Join(SpillDir(tmp), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec.Abort()
	f, err := os.Open(filepath.Join(dst, spillFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc, err := scanChunks(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.skipped) != 0 || sc.torn != 0 || sc.records != int64(2*steps) {
		t.Fatalf("the intact spill file scans as %+v", sc)
	}
	for _, cs := range sc.chunks {
		for _, c := range cs {
			offs = append(offs, c.off-chunkHeader)
		}
	}
	slices.Sort(offs)
	for _, o := range offs {
		for _, cs := range sc.chunks {
			for _, c := range cs {
				if c.off-chunkHeader == o {
					lens = append(lens, int64(chunkHeader+c.n*entrySize))
				}
			}
		}
	}
	return offs, lens, want
}

// states reads back the state ids of each process of the trace at path.
func states(t *testing.T, path string) map[int32][]int32 {
	t.Helper()
	_, by := readBack(t, path)
	got := map[int32][]int32{}
	for p, rs := range by {
		for _, r := range rs {
			got[p] = append(got[p], r.ID)
		}
	}
	return got
}

// flip inverts one bit of the file at byte off.
func flip(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x10
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecoverSkipsDamagedChunk flips one bit in the payload of a chunk in
// the middle of the spill file, and one in the magic of the first chunk:
// every other chunk is recovered, the two damaged stretches are reported
// with their offsets and lengths, and the spill directory is kept.
func TestRecoverSkipsDamagedChunk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.pst")
	offs, lens, want := spillOf(t, path, 1000)
	if len(offs) < 10 {
		t.Fatalf("only %d chunks; the test needs a middle one", len(offs))
	}
	mid := len(offs) / 2
	spill := filepath.Join(SpillDir(path), spillFile)
	flip(t, spill, offs[mid]+chunkHeader+100) // the payload: the checksum fails
	flip(t, spill, 1)                         // the magic of the first chunk
	rec, err := Recover(path, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSkipped := []SkippedRange{{0, lens[0]}, {offs[mid], lens[mid]}}
	if !slices.Equal(rec.Skipped, wantSkipped) || rec.Chunks != len(offs)-2 || rec.TornTail != 0 || !rec.Kept || rec.Spill != spill {
		t.Fatalf("recovery %+v, want skipped %v, %d chunks, kept", rec, wantSkipped, len(offs)-2)
	}
	if _, err := os.Stat(spill); err != nil {
		t.Fatalf("the spill file is gone after a lossy recovery: %v", err)
	}
	// What came back is every record but those of the two damaged chunks:
	// each process's states in order, with gaps exactly where they were.
	got := states(t, path)
	var n int64
	for p, ids := range got {
		n += int64(len(ids))
		j := 0
		for _, id := range ids {
			for j < len(want[p]) && want[p][j] != id {
				j++
			}
			if j == len(want[p]) {
				t.Fatalf("process %d: state %d recovered out of order or invented", p, id)
			}
		}
	}
	lost := (lens[0] - chunkHeader + lens[mid] - chunkHeader) / entrySize
	if n != 2000-lost || n != rec.Records {
		t.Fatalf("recovered %d records (report says %d), want %d", n, rec.Records, 2000-lost)
	}
}

// TestRecoverTornTail cuts the spill file in the middle of its last chunk,
// as a crash during a write does: that is the end of what was written, not
// damage, so everything before it is recovered and the directory removed.
func TestRecoverTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.pst")
	offs, lens, _ := spillOf(t, path, 300)
	last := len(offs) - 1
	spill := filepath.Join(SpillDir(path), spillFile)
	cut := offs[last] + lens[last]/2
	if err := os.Truncate(spill, cut); err != nil {
		t.Fatal(err)
	}
	rec, err := Recover(path, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRecords := (offs[last] - int64(last)*chunkHeader) / entrySize
	if len(rec.Skipped) != 0 || rec.TornTail != cut-offs[last] || rec.Chunks != last || rec.Records != wantRecords || rec.Kept {
		t.Fatalf("recovery %+v, want %d chunks, %d records, a torn tail of %d bytes, not kept", rec, last, wantRecords, cut-offs[last])
	}
	if _, err := os.Stat(SpillDir(path)); !os.IsNotExist(err) {
		t.Fatalf("the spill directory is still there after a full recovery: %v", err)
	}
}

// TestRecoverKeep keeps the spill directory on request although nothing was
// lost, and a missing header is named as such.
func TestRecoverKeep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.pst")
	spillOf(t, path, 100)
	rec, err := Recover(path, RecoverOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Kept || rec.Records != 200 {
		t.Fatalf("recovery %+v", rec)
	}
	if err := os.Remove(filepath.Join(SpillDir(path), headerFile)); err != nil {
		t.Fatal(err)
	}
	_, err = Recover(path, RecoverOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), "has no header.json") {
		t.Fatalf("recover without header.json: %v", err)
	}
}
