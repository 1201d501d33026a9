package chrome

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
			switch r.Kind {
			case trace.KindSend, trace.KindRecv, trace.KindCollective:
				// A receive from an unknown source and a collective
				// without a root have no peer; a send always has one.
				if r.Peer == trace.NoPeer && r.Kind != trace.KindSend {
					continue
				}
				if r.Peer < 0 || r.Peer >= m.H.Runs[r.Run].Procs {
					t.Fatalf("message %v has a peer outside the run", r)
				}
			}
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestParscopeLayoutPeerOutsideRun checks that a file in parscope's own
// layout keeps a receive from an unknown source and drops, counting the
// repair, a send to a process its run does not have (found by FuzzImport).
func TestParscopeLayoutPeerOutsideRun(t *testing.T) {
	data := `{"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"run 0 · proc 0"}},
{"name":"process_name","ph":"M","pid":2,"args":{"name":"run 0 · proc 1"}},
{"name":"recv ← any","cat":"mpi","ph":"X","pid":1,"ts":0,"dur":1},
{"name":"send → 1","cat":"mpi","ph":"X","pid":1,"ts":2,"dur":1,"args":{"peer":1,"bytes":8}},
{"name":"send → 99","cat":"mpi","ph":"X","pid":1,"ts":4,"dur":1,"args":{"peer":99,"bytes":8}}
],"metadata":{"exporter":"parscope"}}`
	m := &trace.Memory{}
	if err := ImportReader(context.Background(), "peer.json", bytesReader([]byte(data)), 0, m); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range m.Records {
		kinds = append(kinds, fmt.Sprintf("%s peer=%d", r.Kind, r.Peer))
	}
	if got, want := strings.Join(kinds, ", "), "recv peer=-1, send peer=1"; got != want {
		t.Errorf("records %s, want %s", got, want)
	}
	if n := m.H.Repairs[RepairPeerOutsideRun]; n != 1 {
		t.Errorf("repair %s counted %d times, want 1", RepairPeerOutsideRun, n)
	}
}
