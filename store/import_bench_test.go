package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/gomez"
	"github.com/parscope/parscope/store"
)

// BenchmarkImportGomez measures the whole import of a merged, time-sorted
// "time block pid" text trace into a .pst, and reports the size of the
// .pst relative to the text.
func BenchmarkImportGomez(b *testing.B) {
	for _, procs := range []int{17, 1024} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			dir := b.TempDir()
			src := filepath.Join(dir, "trace.srt")
			f, err := os.Create(src)
			if err != nil {
				b.Fatal(err)
			}
			bw := bufio.NewWriter(f)
			perProc := 5_000_000 / procs
			if err := gomez.Generate(bw, 1, procs, perProc, 1); err != nil {
				b.Fatal(err)
			}
			bw.Flush()
			f.Close()
			st, _ := os.Stat(src)
			n := int64(procs * perProc)
			var pstBytes int64
			b.SetBytes(st.Size())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out := filepath.Join(dir, fmt.Sprint(i, ".pst"))
				w, err := store.Create(out, store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := gomez.Import(context.Background(), []string{src}, format.Options{}, w); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				pstBytes = 0
				ents, _ := os.ReadDir(out)
				for _, e := range ents {
					fi, _ := e.Info()
					pstBytes += fi.Size()
				}
				os.RemoveAll(out)
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(st.Size())/float64(pstBytes), "text/pst")
		})
	}
}
