package annotated

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// FuzzImport feeds arbitrary bytes as a one-file trace. The importer must
// not panic; it either returns a located *format.Error or writes records
// that pass trace.OrderCheck, with a valid header, peers inside the run and
// completion times no earlier than post times.
func FuzzImport(f *testing.F) {
	for _, p := range []string{figure4, "testdata/ring4/ring4.1.trace"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The input is read from memory, twice (the first pass and the import).
		open := func(path string) (*format.LineReader, error) {
			return format.NewLineReader(path, bytes.NewReader(data))
		}
		m := &trace.Memory{}
		err := importFiles(context.Background(), []string{"fuzz.0.trace"}, format.Options{}, m, open)
		if err != nil {
			var fe *format.Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *format.Error", err)
			}
			if errors.Is(err, trace.ErrOutOfOrder) {
				t.Fatalf("the importer wrote records out of order: %v", err)
			}
			return
		}
		var oc trace.OrderCheck
		for i := range m.Records {
			r := &m.Records[i]
			if err := oc.Check(r); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			if r.End != 0 && r.End < r.T {
				t.Fatalf("record %v completes before it starts", r)
			}
			if (r.Kind == trace.KindSend || r.Kind == trace.KindRecv || r.Kind == trace.KindCollective) &&
				r.Peer != trace.NoPeer && (r.Peer < 0 || r.Peer >= m.H.Runs[0].Procs) {
				t.Fatalf("record %v has a peer outside the run's %d processes", r, m.H.Runs[0].Procs)
			}
		}
		if err := m.H.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}
