package dumpi

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parscope/parscope/trace"
)

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus under testdata/fuzz/")

// fuzzSeeds are small DUMPI files: the real sample's ranks 0 and 1
// without their footers (620 bytes each) and synthetic files with Testsome, Waitsome,
// Exscan and a label no writer produces. Seeds stay small because the fuzzer
// minimises every new input with O(n²) executions: the 2,960-byte
// originals made it spend its time minimising (0 executions/s reported).
func fuzzSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{
		"testsome": buildFile([]int32{0, 4, 8}, someCalls("MPI_Testsome")),
		"waitsome": buildFile([]int32{0, 4, 8}, someCalls("MPI_Waitsome")),
		"unknown": buildFile([]int32{0, 4}, []testCall{
			{"MPI_Barrier", 10, 20, false, []any{uint16(commWorld)}},
			{"MPI_Pcontrol", 30, 40, false, []any{int32(1)}},
		}),
		// A MPI_Init whose argc and argument lengths claim more than the file
		// holds; the decoder must stop at the first count that does not fit.
		"init-huge-argc": buildFile([]int32{0}, []testCall{
			{"MPI_Init", 10, 20, false, []any{uint32(0x7fffffff), uint32(0xffffffff)}},
		}),
	}
	seeds["group-8.1.0"] = setVersion(buildFile([]int32{0, 4}, groupTrace(2)), 8, 1, 0)
	seeds["sample-rank0"] = compactSample(t, "0000")
	seeds["sample-rank1"] = compactSample(t, "0001")
	return seeds
}

// TestFuzzCorpus writes the seeds as the checked-in corpus with -update,
// and otherwise checks that every seed decodes without a panic.
func TestFuzzCorpus(t *testing.T) {
	for name, b := range fuzzSeeds(t) {
		if *update {
			dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			data := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := decodeRank(b, 0, 2, 0, &trace.Header{}, newCommSet(2), map[int]bool{})
		if wantErr := name == "unknown" || name == "init-huge-argc"; (err != nil) != wantErr {
			t.Errorf("seed %s: error %v, want error %v", name, err, wantErr)
		}
	}
}

// FuzzDecode feeds arbitrary bytes as one rank's file: the decoder must
// return records in time order or an *offsetErr inside the input, never
// panic or hang.
func FuzzDecode(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := &trace.Header{}
		recs, err := decodeRank(data, 0, 2, 0, h, newCommSet(2), map[int]bool{})
		if err != nil {
			var oe *offsetErr
			if !errors.As(err, &oe) || oe.off < 0 || oe.off > int64(len(data)) {
				t.Fatalf("error %v is not located in the %d-byte input", err, len(data))
			}
			return
		}
		var oc trace.OrderCheck
		for i := range recs {
			if err := oc.Check(&recs[i]); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		}
	})
}
