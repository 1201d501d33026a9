package prv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/trace"
)

// fuzzSeeds are small .prv inputs: a synthetic trace with every record
// type, a header declaring the maximum number of threads, nested function
// and MPI regions with unbalanced exits (functionsPRV), and the first
// lines (up to 700 bytes) of each real trace of testdata/real. Seeds stay
// small: the fuzzer minimises each new input with
// O(n²) executions, and 3,000-byte seeds kept it minimising.
func fuzzSeeds(t testing.TB) map[string][]byte {
	t.Helper()
	seeds := map[string][]byte{
		"synthetic":   []byte("#Paraver (01/01/70 at 00:00):100_ns:1(2):1:2(1:1,1:1),1\nc:1:1:2:1:2\n1:1:1:1:1:0:10:1\n2:1:1:1:1:5:50000001:2:42000050:7\n3:1:1:1:1:6:7:2:1:2:1:3:8:64:5\n1:2:1:2:1:0:100:2\n4:2:1:2:1:9:1:8:0:1:0\n2:1:1:1:1:20:50000001:0\n"),
		"huge-header": []byte("#Paraver (01/01/70 at 00:00):100:1(1):1:2(4194303:1,1:1)\n1:1:1:2:1:0:10:1\n2:1:1:1:4194303:5:7:1\n"),
		"bad-order":   []byte("#Paraver (x):100_ns:1:1:1(1:1)\n1:1:1:1:1:50:60:1\n1:1:1:1:1:10:20:1\n"),
		"functions":   []byte(functionsPRV),
	}
	for name, file := range map[string]string{"qsort": "qsort_beo3.prv", "lulesh": "lulesh_7+1_with_uncores_sockets1+2.chop8.prv", "namd": "444.namd.prv"} {
		b := realdata.Read(t, "traces/paraver/"+file)
		b = b[:min(len(b), 700)]
		seeds[name] = b[:bytes.LastIndexByte(b, '\n')+1]
	}
	return seeds
}

// TestFuzzCorpus checks that the checked-in corpus testdata/fuzz/FuzzImport
// holds exactly the seeds, and rewrites it with -update.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzImport")
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range fuzzSeeds(t) {
		data := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
		path := filepath.Join(dir, name)
		if *update {
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v (go test -update writes the corpus)", err)
		} else if string(got) != data {
			t.Errorf("%s differs from its seed (go test -update rewrites the corpus)", path)
		}
	}
}

// FuzzImport feeds arbitrary bytes as a .prv without .pcf/.row: the importer
// must return a located *format.Error or records that pass trace.OrderCheck
// with a valid header.
func FuzzImport(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lr, err := format.NewLineReader("fuzz.prv", bytes.NewReader(data))
		if err != nil {
			return
		}
		m := &trace.Memory{}
		err = importLines(context.Background(), lr, "fuzz.prv", nil, nil, format.Options{Params: map[string]string{"window": "8"}}, m)
		if err != nil {
			var fe *format.Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *format.Error", err)
			}
			if errors.Is(err, trace.ErrOutOfOrder) {
				t.Fatalf("records added out of order: %v", err)
			}
			return
		}
		if err := m.H.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}
