package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadCallgrindTotals checks that a callgrind profile never makes
// ReadCallgrindTotals panic, that an error names the file and stays short,
// and that the events it accepts are non-negative and read back the same
// from a profile that gives them all.
func FuzzReadCallgrindTotals(f *testing.F) {
	for _, s := range []string{
		"version: 1\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nfn=(1) x\n0 5\nsummary: 9 9\ntotals: 6309 79 39 1 0 0 1\n",
		"# callgrind format\nversion: 1\ncreator: callgrind-3.22.0\npid: 4242\ncmd: ./worker\npart: 1\n\npositions: line\nevents: Ir\nsummary: 12\n\nfl=(1) w.go\nfn=(1) main\n3 12\n\ntotals: 12\n",
		"events: Ir\ntotals: 12 x\n",
		"events: Ir\nfn=x\n",
		"totals: 1\n",
		"events: Bogus Ir\ntotals: 5 -1\n",
		"events: Ir\ntotals: 99999999999999999999\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "callgrind.out.1")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := ReadCallgrindTotals(path)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, path+":") || len(msg) > len(path)+400 {
				t.Fatalf("error %.500q: want one that names the file, at most 400 bytes more", msg)
			}
			return
		}
		all := []int64{e.Ir, e.Dr, e.Dw, e.I1mr, e.D1mr, e.D1mw, e.ILmr, e.DLmr, e.DLmw}
		for _, n := range all {
			if n < 0 {
				t.Fatalf("events %+v: want non-negative counts", e)
			}
		}
		text := "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\ntotals:" + strings.Trim(fmt.Sprint(all), "[]") + "\n"
		back := filepath.Join(dir, "back.out")
		if err := os.WriteFile(back, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if again, err := ReadCallgrindTotals(back); err != nil || again != e {
			t.Fatalf("round trip: %v\n got  %+v\n want %+v", err, again, e)
		}
	})
}
