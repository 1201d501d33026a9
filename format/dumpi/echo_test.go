package dumpi

import (
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
)

// TestMetaLongLinesClipped checks that an over-long line or numprocs value
// of a .meta file is echoed as its first bytes and its length, not whole.
func TestMetaLongLinesClipped(t *testing.T) {
	long := strings.Repeat("x", 60_000)
	for _, tc := range []struct{ name, content, want string }{
		{"no =", "numprocs=1\n" + long + "\n", `:2: expected key=value, got "` + long[:format.MaxEcho] + `… (60000 bytes)"`},
		{"numprocs", "fileprefix=a\nnumprocs=" + long + "\n", `expected numprocs=N (1..1048576), got "` + long[:format.MaxEcho] + `… (60000 bytes)"`},
	} {
		path := formattest.WriteFile(t, "", "t.meta", tc.content)
		_, err := readMeta(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+":") || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 400 {
			t.Errorf("%s: %.300v\nwant a short message containing %q", tc.name, err, tc.want)
		}
	}
}
