package prv

import (
	"bytes"
	"context"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

// The seed corpora of FuzzPCF and FuzzRow under testdata/fuzz are the
// first lines of the shared Paraver samples' .pcf and .row files (qsort,
// LULESH, NAMD), cut at a line end to stay under about 700 bytes; the
// fuzzer also starts from the small synthetic files added below.

// namesPRV is the .prv the name-file targets import with the fuzzed .pcf
// or .row: two threads with states, an event and a message.
const namesPRV = "#Paraver (01/01/70 at 00:00):100_ns:1(2):1:2(1:1,1:1),1\n" +
	"1:1:1:1:1:0:10:1\n2:1:1:1:1:5:50000001:2:42000050:7\n" +
	"3:1:1:1:1:6:7:2:1:2:1:3:8:64:5\n1:2:1:2:1:0:100:3\n"

// importNames imports namesPRV with the given name files: it must succeed
// with a valid header, whatever names they give.
func importNames(t *testing.T, pc *pcf, rw *row) *trace.Memory {
	t.Helper()
	lr, err := format.NewLineReader("names.prv", bytes.NewReader([]byte(namesPRV)))
	if err != nil {
		t.Fatal(err)
	}
	m := &trace.Memory{}
	if err := importLines(context.Background(), lr, "names.prv", pc, rw, format.Options{}, m); err != nil {
		t.Fatalf("importing with the name files: %v", err)
	}
	if err := m.H.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// FuzzPCF feeds arbitrary bytes as a .pcf: readPCF must return an error
// naming the file and a line, or names that are consistent (every state
// listed once in file order) and that an import can use.
func FuzzPCF(f *testing.F) {
	f.Add([]byte("DEFAULT_OPTIONS\n\nUNITS NANOSEC\n\nSTATES\n1 Running\n3 Waiting a message\n\nEVENT_TYPE\n0 50000001 MPI point-to-point\nVALUES\n0 End\n2 MPI_Recv\n\n"))
	f.Add([]byte("EVENT_TYPE\n0 50100001 Bandwidth\nPRECISION 8\nVALUES\n0 End\n\nNEW_SECTION\nFOO 1\nDEFAULT_OPTIONS\nYMAX_SCALE 3\nNEW_OPT x\n"))
	f.Add([]byte("STATES\n1\n1 again\nEVENT_TYPE\n9 42000050\n7 Size\nVALUES\nx y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := formattest.WriteFile(t, "", "f.pcf", string(data))
		pc, err := readPCF(path)
		if err != nil {
			formattest.ErrorNames(t, err, path)
			return
		}
		if len(pc.stateOrder) != len(pc.states) {
			t.Fatalf("%d states in order, %d named", len(pc.stateOrder), len(pc.states))
		}
		for _, id := range pc.stateOrder {
			if _, ok := pc.states[id]; !ok {
				t.Fatalf("state %d in order but not named", id)
			}
		}
		for typ := range pc.gradient {
			if _, ok := pc.types[typ]; !ok {
				t.Fatalf("event type %d has a gradient but no entry", typ)
			}
		}
		importNames(t, pc, nil)
	})
}

// FuzzRow feeds arbitrary bytes as a .row: readRow must return an error
// naming the file and a line, or levels whose names are non-empty lines of
// the file and that an import can use.
func FuzzRow(f *testing.F) {
	f.Add([]byte("LEVEL CPU SIZE 2\n1.a\n2.a\n\nLEVEL NODE SIZE 1\na\n\nLEVEL THREAD SIZE 2\nTHREAD 1.1.1\nTHREAD 1.2.1\n"))
	f.Add([]byte("LEVEL THREAD SIZE 99999999999\nx\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := formattest.WriteFile(t, "", "f.row", string(data))
		rw, err := readRow(path)
		if err != nil {
			formattest.ErrorNames(t, err, path)
			return
		}
		for level, names := range rw.levels {
			for _, name := range names {
				if name == "" || !bytes.Contains(data, []byte(name)) {
					t.Fatalf("level %s has the name %q, not a line of the file", level, name)
				}
			}
		}
		m := importNames(t, nil, rw)
		if len(m.H.Procs) == 0 {
			t.Fatal("the import names no process")
		}
	})
}
