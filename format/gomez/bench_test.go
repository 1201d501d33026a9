package gomez

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/cputime"
)

// benchTrace writes a generated trace of 17 processes (the paper's 17
// dimensional runs) and 1,020,000 lines to a temporary file.
func benchTrace(b *testing.B) (path string, lines int64) {
	b.Helper()
	const runs, procs, per = 2, 17, 30_000
	path = filepath.Join(b.TempDir(), "bench.srt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	if err := Generate(bw, runs, procs, per, 1); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path, runs * procs * per
}

// BenchmarkParse imports a generated trace of over a million lines into a
// writer that discards the records.
func BenchmarkParse(b *testing.B) {
	path, lines := benchTrace(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var total int64
	cpu0 := cputime.Used()
	for b.Loop() {
		w := &formattest.Count{}
		if err := Import(context.Background(), []string{path}, format.Options{}, w); err != nil {
			b.Fatal(err)
		}
		if w.N != lines {
			b.Fatalf("%d records, want %d", w.N, lines)
		}
		total += w.N
	}
	cpu := cputime.Used() - cpu0
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/line")
	if cpu > 0 {
		// CPU time is steadier than wall time on a shared machine.
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(total), "cpu-ns/line")
	}
}

// BenchmarkGenerate measures the synthetic trace generator.
func BenchmarkGenerate(b *testing.B) {
	var total int64
	for b.Loop() {
		if err := Generate(io.Discard, 1, 17, 10_000, 1); err != nil {
			b.Fatal(err)
		}
		total += 17 * 10_000
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "records/s")
}
