package annotated

import (
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
)

// TestLongFieldsClipped checks that an over-long timestamp or rank is
// echoed as its first bytes and its length, not whole.
func TestLongFieldsClipped(t *testing.T) {
	long := strings.Repeat("1", 100_000)
	for _, tc := range []struct{ name, content, want string }{
		{"timestamp", "mpi_barrier_() [#1@f_@\"a.f\"] [ 1." + long + " 2.0 ]\n",
			`bad timestamp "1.` + strings.Repeat("1", format.MaxEcho-2) + `… (100002 bytes)"`},
		{"rank", "# rank " + long + "\n", `found rank "` + strings.Repeat("1", format.MaxEcho) + `… (100000 bytes)"`},
	} {
		paths := writeFiles(t, []string{"mg.0.trace"}, []string{tc.content})
		_, err := formattest.Import(t, Importer{}, paths, format.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 400 {
			t.Errorf("%s: %.300v\nwant a short message containing %q", tc.name, err, tc.want)
		}
	}
}
