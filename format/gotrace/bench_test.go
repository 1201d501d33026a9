package gotrace

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// countWriter is a trace.Writer that only counts what it is given.
type countWriter struct {
	h trace.Header
	n int64
}

func (c *countWriter) Header() *trace.Header { return &c.h }
func (c *countWriter) Add(r trace.Record) error {
	c.n++
	return nil
}

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
				w := &countWriter{}
				err := Import(context.Background(), []string{path}, format.Options{Params: map[string]string{ParamBy: by}}, w)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := strconv.ParseInt(w.h.Meta.Extra["gotrace.events"], 10, 64)
				events += n
				records += w.n
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
