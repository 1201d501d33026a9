package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
)

// TestManifestLongFieldsClipped checks that an over-long format name, table
// name or table file of a manifest is echoed as its first bytes and its
// length, not whole.
func TestManifestLongFieldsClipped(t *testing.T) {
	long := strings.Repeat("m", 100_000)
	head := long[:format.MaxEcho] + "… (100000 bytes)"
	for _, tc := range []struct{ manifest, want string }{
		{`{"format":"` + long + `"}`, `format "` + head + `" is not`},
		{fmt.Sprintf(`{"format":%q,"version":%d,"time_unit_ns":1,"tables":{"states":{"file":"../%s"}}}`, FormatName, FormatVersion, long),
			`tables.states.file "../` + long[:format.MaxEcho-3] + `… (100003 bytes)": want the plain name`},
		{fmt.Sprintf(`{"format":%q,"version":%d,"time_unit_ns":1,"tables":{"%s":{"file":"/"}}}`, FormatName, FormatVersion, long),
			"tables." + head + `.file "/"`},
	} {
		dir := filepath.Join(t.TempDir(), "t.pst")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, manifestFile), []byte(tc.manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadManifest(dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 500 {
			t.Errorf("%.300v\nwant a short message containing %q", err, tc.want)
		}
	}
}
