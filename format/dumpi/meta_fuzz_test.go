package dumpi

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/realdata"
)

// FuzzMeta feeds arbitrary bytes as a .meta file, starting from the real
// sample's (testdata/real/traces/dumpi, written by libdumpi): readMeta must return
// an error naming the file, or a process count in range with one .bin per
// rank, each beside the .meta whatever directories fileprefix names.
func FuzzMeta(f *testing.F) {
	f.Add(realdata.Read(f, "traces/dumpi/testtrace.meta"))
	f.Add([]byte("numprocs=2\nfileprefix=../../etc/x\n"))
	f.Add([]byte("numprocs=1048577\nfileprefix=a\nnot a pair\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := formattest.WriteFile(t, "", "f.meta", string(data))
		dir := filepath.Dir(path)
		m, err := readMeta(path)
		if err != nil {
			formattest.ErrorNames(t, err, path)
			return
		}
		if m.procs < 1 || m.procs > 1<<20 || len(m.bins) != m.procs {
			t.Fatalf("%d processes, %d .bin files", m.procs, len(m.bins))
		}
		for r, bin := range m.bins {
			if filepath.Dir(bin) != dir || !strings.HasSuffix(bin, ".bin") {
				t.Fatalf("rank %d's file %s is not a .bin beside %s", r, bin, path)
			}
		}
	})
}
