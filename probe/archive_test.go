package probe

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sampleProbe is a probe with three phases and made-up snapshots.
func sampleProbe(t testing.TB) *Probe {
	p := &Probe{Manifest: Manifest{
		Format: FormatVersion, Clock: WallClock, Worker: Worker{Info: Info{Name: "w", Version: "1"}, Path: "./w", SHA256: strings.Repeat("ab", 32), Args: []string{"-n", "3"}},
		Interval: 100, WarmUp: 25, Intervals: 10, TotalBlocks: 1000, TotalSteps: 100, ETRef: 120, ETUninstRef: 100, K: 3,
		Phases: []Phase{
			{ID: 0, Weight: 0.5, TimeShare: 0.5, Size: 5, Representative: 1, SnapshotStep: 8, StartStep: 10, EndStep: 20, WarmBlocks: 20, Blocks: 100, TPhaseRef: 3},
			{ID: 1, Weight: 0.3, TimeShare: 0.3, Size: 3, Representative: 4, SnapshotStep: 38, StartStep: 40, EndStep: 50, WarmBlocks: 20, Blocks: 100, TPhaseRef: 2},
			{ID: 2, Weight: 0.2, TimeShare: 0.2, Size: 2, Representative: 9, SnapshotStep: 88, StartStep: 90, EndStep: 100, WarmBlocks: 20, Blocks: 100, TPhaseRef: 4},
		},
	}}
	for i := range p.Manifest.Phases {
		state := bytes.Repeat([]byte{byte(i), 1, 2, 3}, 1000*(i+1))
		if err := p.SetSnapshot(i, state); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestArchiveRoundTrip(t *testing.T) {
	p := sampleProbe(t)
	path := filepath.Join(t.TempDir(), "x.probe")
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	q, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if q.Manifest.Worker.Name != "w" || len(q.Manifest.Phases) != 3 || q.Manifest.ETRef != 120 {
		t.Fatalf("manifest %+v", q.Manifest)
	}
	for i := range 3 {
		raw, err := q.SnapshotBytes(i)
		if err != nil || !bytes.Equal(raw, bytes.Repeat([]byte{byte(i), 1, 2, 3}, 1000*(i+1))) {
			t.Fatalf("phase %d snapshot: %d bytes, %v", i, len(raw), err)
		}
	}
	c, r := q.Sizes()
	if r != 4000+8000+12000 || c >= r {
		t.Fatalf("sizes %d compressed, %d raw; want 24000 raw, compressed smaller", c, r)
	}
}

func TestArchiveCorrupted(t *testing.T) {
	b, err := sampleProbe(t).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{20, len(b) / 2, len(b) - 40, len(b) - 1} {
		c := bytes.Clone(b)
		c[off] ^= 0x40
		if _, err := Unmarshal(c); !errors.Is(err, ErrChecksum) {
			t.Errorf("byte %d flipped: error %v, want a checksum error", off, err)
		}
	}
	if _, err := Unmarshal(b[:len(b)-1]); err == nil {
		t.Error("truncated file: no error")
	}
	bad := append([]byte("NOTPROBE"), b[8:]...)
	if _, err := Unmarshal(bad); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("wrong magic: %v", err)
	}
	// A corrupted file on disk is named in the error.
	path := filepath.Join(t.TempDir(), "bad.probe")
	c := bytes.Clone(b)
	c[len(b)/2] ^= 1
	if err := os.WriteFile(path, c, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, ErrChecksum) {
		t.Errorf("corrupted file: %v", err)
	}
}

// TestArchiveBadManifest: a manifest that is well checksummed but wrong is
// refused with its offset.
func TestArchiveBadManifest(t *testing.T) {
	p := sampleProbe(t)
	p.Manifest.Phases[1].TPhaseRef = 0
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unmarshal(b); err == nil || !strings.Contains(err.Error(), "offset 12: manifest: phase 1: TPhaseRef 0") {
		t.Fatalf("error %v", err)
	}
}

func TestReduceAndCurve(t *testing.T) {
	p := sampleProbe(t)
	q := Reduce(p, 1, 0, TimeWeights)
	if !q.Kept(0) || q.Kept(1) || q.Kept(2) || !p.Kept(1) {
		t.Fatal("Reduce to the top phase: want phase 0 only, and the original untouched")
	}
	q = Reduce(p, 0, 0.25, TimeWeights)
	if !q.Kept(0) || !q.Kept(1) || q.Kept(2) {
		t.Fatal("Reduce to weight ≥ 0.25: want phases 0 and 1")
	}
	b, err := q.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Unmarshal(b)
	if err != nil || r.Kept(2) {
		t.Fatalf("reduced probe read back: %v", err)
	}
	if _, err := r.SnapshotBytes(2); err == nil {
		t.Fatal("snapshot of a dropped phase: no error")
	}
	// docs/paper-oracles.md §4: measured 1.5, 1.0, 2.5 → 30/1.2/0.5 = 50 (K=1), 40/0.8 = 50
	// (K=2), 52.5 (K=3).
	pts, err := Curve(p, map[int]float64{0: 1.5, 1: 1.0, 2: 2.5}, TimeWeights, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{50, 50, 52.5}
	for i, pt := range pts {
		if pt.K != i+1 || !near(pt.Predicted, want[i]) || !near(pt.Error, abs(want[i]-52.5)/52.5) {
			t.Errorf("point %d: %+v, want K %d predicting %g", i, pt, i+1, want[i])
		}
	}
	if pts[0].Bytes >= pts[2].Bytes || pts[2].RawBytes != 24000 {
		t.Errorf("sizes %+v", pts)
	}
}

func abs(x float64) float64 { return max(x, -x) }

func FuzzUnmarshal(f *testing.F) {
	b, err := sampleProbe(f).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:60])
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Unmarshal(data)
		if err != nil {
			return
		}
		for i := range p.Manifest.Phases {
			if p.Kept(i) {
				p.SnapshotBytes(i) // must not panic
			}
		}
		if _, err := p.Marshal(); err != nil {
			t.Fatalf("a probe that reads does not write: %v", err)
		}
	})
}

// FuzzManifest fuzzes what lies behind a valid checksum: the manifest and
// the snapshot bytes.
func FuzzManifest(f *testing.F) {
	b, err := sampleProbe(f).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	m := int(b[8]) | int(b[9])<<8 | int(b[10])<<16 | int(b[11])<<24
	f.Add(b[12:12+m], b[12+m:len(b)-32])
	f.Fuzz(func(t *testing.T, manifest, blobs []byte) {
		data := append([]byte(Magic), byte(len(manifest)), byte(len(manifest)>>8), byte(len(manifest)>>16), byte(len(manifest)>>24))
		data = append(append(data, manifest...), blobs...)
		sum := sha256.Sum256(data)
		p, err := Unmarshal(append(data, sum[:]...))
		if err != nil {
			return
		}
		for i, ph := range p.Manifest.Phases {
			// A declared size of gigabytes is legal and would be
			// decompressed up to that size: skip those to keep the
			// fuzzer fast.
			if p.Kept(i) && ph.Snapshot.RawSize <= 1<<20 {
				p.SnapshotBytes(i)
			}
		}
		if _, err := p.Marshal(); err != nil {
			t.Fatalf("a probe that reads does not write: %v", err)
		}
	})
}

// TestWriteFileReplacesOnlyAProbe: WriteFile replaces an existing probe
// file, but not a file of anything else or a directory.
func TestWriteFileReplacesOnlyAProbe(t *testing.T) {
	dir := t.TempDir()
	p := sampleProbe(t)
	path := filepath.Join(dir, "a.probe")
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteFile(path); err != nil {
		t.Fatalf("replacing a probe file: %v", err)
	}
	if _, err := ReadFile(path); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("important\n"), 0o644)
	if err := p.WriteFile(notes); err == nil || !strings.Contains(err.Error(), "is not a probe file") {
		t.Fatalf("WriteFile over notes.txt: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(notes); string(b) != "important\n" {
		t.Fatalf("notes.txt holds %q", b)
	}
	if err := p.WriteFile(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("WriteFile over a directory: %v, want a refusal", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("left %d entries, want a.probe and notes.txt", len(ents))
	}
}

// TestDecodeSnapshotFrameChecksum: without the SHA-256 (the replay's
// check), a snapshot whose compressed bytes changed is still refused by
// the zstd frame's checksum, and one of another size by its size.
func TestDecodeSnapshotFrameChecksum(t *testing.T) {
	p := &Probe{Manifest: Manifest{Phases: []Phase{{ID: 0}}}}
	state := []byte(strings.Repeat("parscope probe state ", 1000))
	if err := p.SetSnapshot(0, state); err != nil {
		t.Fatal(err)
	}
	blob := p.blob(0)
	if raw, err := decodeSnapshot(blob, int64(len(state)), ""); err != nil || string(raw) != string(state) {
		t.Fatalf("intact snapshot: %d bytes, %v", len(raw), err)
	}
	if _, err := decodeSnapshot(blob, int64(len(state))+1, ""); err == nil {
		t.Error("a snapshot of another size was accepted")
	}
	for _, off := range []int{len(blob) / 2, len(blob) - 5} {
		bad := append([]byte(nil), blob...)
		bad[off] ^= 0x40
		if _, err := decodeSnapshot(bad, int64(len(state)), ""); err == nil {
			t.Errorf("a snapshot with byte %d of %d changed was accepted", off, len(blob))
		}
	}
}

// TestManifestUnknownFieldClipped: a manifest with an unknown field of a
// megabyte gets an error that names the field's start and its length, not
// the whole field.
func TestManifestUnknownFieldClipped(t *testing.T) {
	manifest := []byte(`{"` + strings.Repeat("z", 1<<20) + `":1}`)
	data := append([]byte(Magic), byte(len(manifest)), byte(len(manifest)>>8), byte(len(manifest)>>16), byte(len(manifest)>>24))
	data = append(data, manifest...)
	sum := sha256.Sum256(data)
	_, err := Unmarshal(append(data, sum[:]...))
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), `manifest: json: unknown field "zzz`) || !strings.Contains(err.Error(), " bytes)") {
		t.Errorf("%.300v\nwant a short message naming the unknown field", err)
	}
}
