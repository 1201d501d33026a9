package phase

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/format/bbv"
)

// ownData is the folder of the BBV files made with parscope bbv.
const ownData = "../../testdata/bbv"

// dataSets are every BBV file we have: SimPoint's sample, the two shared
// real files and our own three.
var dataSets = []string{
	"shared:simpoint-3.2/sample/sample.bb", "shared:bzip2_rt_100M.bb.gz", "shared:phases.bb.gz",
	"own:seq.bb.gz", "own:cycle.bb.gz", "own:sort.bb.gz",
}

// loadDataSet parses a data set as SimPoint does.
func loadDataSet(t testing.TB, name string) *bbv.File {
	t.Helper()
	if rel, ok := cutPrefix(name, "shared:"); ok {
		return loadBB(t, rel)
	}
	rel, _ := cutPrefix(name, "own:")
	f, err := bbv.ReadFile(filepath.Join(ownData, rel), bbv.ParseOptions{SimPointQuirks: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// TestDefaultBICAtLeastCompat checks, on every data set, that Default mode
// clusters SimPoint's chosen k at least as well as SimPoint does (a BIC at
// least as high), with the same projection and number of restarts.
func TestDefaultBICAtLeastCompat(t *testing.T) {
	for _, name := range dataSets {
		t.Run(name, func(t *testing.T) {
			f := loadDataSet(t, name)
			opts := DefaultOptions()
			compat, err := Run(context.Background(), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Mode, opts.K = Default, []int{compat.K}
			def, err := Run(context.Background(), f, opts)
			if err != nil {
				t.Fatal(err)
			}
			cb, db := float64(compat.Evaluated[compat.Chosen].BIC), float64(def.Evaluated[0].BIC)
			t.Logf("k=%d: compat BIC %.2f, default BIC %.2f", compat.K, cb, db)
			if !(db >= cb) {
				t.Errorf("k=%d: Default BIC %v < SimPoint's %v", compat.K, db, cb)
			}
			if len(def.Phases) == 0 || def.Phases[0].Size == 0 {
				t.Errorf("no phases reported")
			}
		})
	}
}
