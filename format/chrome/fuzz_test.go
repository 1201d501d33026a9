package chrome

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/trace"
)

// FuzzImport feeds arbitrary bytes to the importer: it must return an
// error or a valid header and records in per-process time order (the
// trace.Memory checks the order), and never panic.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"import.json", "small.golden.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`[{"ph":"B","pid":1,"tid":1,"ts":1,"name":"a"},{"ph":"E","pid":1,"tid":1,"ts":0.5}]`))
	f.Add([]byte(`{"traceEvents":[{"ph":"s","id":"x","ts":2,"pid":"p"},{"ph":"f","id":"x","ts":1,"pid":"q","tid":3}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := &trace.Memory{}
		if err := ImportReader(context.Background(), "fuzz.json", bytesReader(data), 0, m); err != nil {
			return
		}
		if err := m.H.Validate(); err != nil {
			t.Fatalf("invalid header: %v", err)
		}
		for _, r := range m.Records {
			if r.Kind == trace.KindSend || r.Kind == trace.KindRecv {
				if r.Peer < 0 || r.Peer >= m.H.Runs[r.Run].Procs {
					t.Fatalf("message %v has a peer outside the run", r)
				}
			}
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
