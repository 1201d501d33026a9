package gotrace

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
)

// BenchmarkImport imports stress.go1.26.trace (108,239 events) by goroutine
// and by P into a writer that discards the records, and reports trace
// events and records per second.
func BenchmarkImport(b *testing.B) {
	path := realFile(b, "stress.go1.26.trace")
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, by := range []string{"g", "p"} {
		b.Run("by="+by, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			var events, records int64
			for b.Loop() {
				w := &formattest.Count{}
				err := Import(context.Background(), []string{path}, format.Options{Params: map[string]string{ParamBy: by}}, w)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := strconv.ParseInt(w.H.Meta.Extra["gotrace.events"], 10, 64)
				events += n
				records += w.N
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
