package annotated

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
)

// BenchmarkImport imports a generated 4-rank trace of about 100,000
// records (8 MB of text) and reports records per second.
func BenchmarkImport(b *testing.B) {
	const procs, steps = 4, 5000
	dir := b.TempDir()
	var paths []string
	var size int64
	for r := 0; r < procs; r++ {
		p := filepath.Join(dir, fmt.Sprintf("gen.%d.trace", r))
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := Generate(f, r, procs, steps); err != nil {
			b.Fatal(err)
		}
		st, _ := f.Stat()
		size += st.Size()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var records, iters int64
	for b.Loop() {
		w := &formattest.Count{}
		if err := (Importer{}).Import(context.Background(), paths, format.Options{}, w); err != nil {
			b.Fatal(err)
		}
		records += w.N
		iters++
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(records/iters), "records/op")
}
