package probe

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
)

// BenchmarkCounterBlock is the instrumentation of the counted runs and of
// the probe: one Block call through the Blocks interface.
func BenchmarkCounterBlock(b *testing.B) {
	var blk Blocks = &counter{}
	for b.Loop() {
		blk.Block(3)
	}
}

// benchState is 1 MiB of float64s with some redundancy, like a worker's
// state.
func benchState() []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	for range 1 << 17 {
		var f [8]byte
		f[0], f[1], f[7] = byte(rng.IntN(256)), byte(rng.IntN(256)), 0x3f
		buf.Write(f[:])
	}
	return buf.Bytes()
}

// BenchmarkSnapshotCompress compresses a 1 MiB snapshot (Build).
func BenchmarkSnapshotCompress(b *testing.B) {
	state := benchState()
	p := &Probe{Manifest: Manifest{Phases: []Phase{{}}}}
	b.SetBytes(int64(len(state)))
	for b.Loop() {
		if err := p.SetSnapshot(0, state); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.Manifest.Phases[0].Snapshot.Size)/float64(len(state)), "ratio")
}

// BenchmarkSnapshotDecompress decompresses and checks it (Run).
func BenchmarkSnapshotDecompress(b *testing.B) {
	state := benchState()
	p := &Probe{Manifest: Manifest{Phases: []Phase{{}}}}
	if err := p.SetSnapshot(0, state); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(state)))
	for b.Loop() {
		if _, err := p.SnapshotBytes(0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorkerIdentity is what `probe run` spends checking that the
// worker is the probe's executable, on the test binary: reading its Go
// build ID, against hashing the whole file (what a probe without a build
// ID needs; the bytes per second are the file's).
func BenchmarkWorkerIdentity(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("go-build-id", func(b *testing.B) {
		for b.Loop() {
			if id, err := GoBuildID(exe); err != nil || id == "" {
				b.Fatalf("build ID %q, %v", id, err)
			}
		}
	})
	b.Run("sha256", func(b *testing.B) {
		if fi, err := os.Stat(exe); err == nil {
			b.SetBytes(fi.Size())
		}
		for b.Loop() {
			if _, err := FileSHA256(exe); err != nil {
				b.Fatal(err)
			}
		}
	})
}
