package phase

import (
	"testing"

	"github.com/parscope/parscope/internal/realdata"
)

// dataFile returns the path of a real BBV file or SimPoint output of
// testdata/real/bbv, failing the test when it is missing.
func dataFile(t testing.TB, rel string) string {
	t.Helper()
	return realdata.Path(t, "bbv/"+rel)
}
