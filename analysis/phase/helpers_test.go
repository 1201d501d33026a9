package phase

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedData is the shared BBV data folder, relative to this package.
const sharedData = "../../../shared/data/bbv"

// dataFile returns the path of a shared data file, skipping the test when
// the shared data is absent.
func dataFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(sharedData, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared BBV data not available (%v); it lives in %s", err, sharedData)
	}
	return p
}
