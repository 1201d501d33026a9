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
		{"integer value", "[D]mpi_send_(count=" + long + "x datatype=27 dst=1 tag=1 Communicator=91) [#1@f_@\"a.f\"] [ 1.0 2.0 ]\n",
			"count=" + strings.Repeat("1", format.MaxEcho) + "… (100001 bytes): expected an integer"},
		{"request value", "[D]mpi_wait_(request=" + long + "x) [#1@f_@\"a.f\"] [ 1.0 2.0 ]\n",
			"request=" + strings.Repeat("1", format.MaxEcho) + "… (100001 bytes): expected a request handle"},
		{"long key", "[D]mpi_send_(k" + long + ") [#1@f_@\"a.f\"] [ 1.0 2.0 ]\n",
			`expected "=" after k` + strings.Repeat("1", format.MaxEcho-1) + "… (100001 bytes) in the arguments of mpi_send_"},
		{"long call name", "[D]mpi_send" + long + "_(=1) [#1@f_@\"a.f\"] [ 1.0 2.0 ]\n",
			"mpi_send" + strings.Repeat("1", format.MaxEcho-8) + "… (100009 bytes)"},
		{"long region label", "+++ L" + long + " ends +++ [#1@f_@\"a.f\"]\n",
			`"+++ L` + strings.Repeat("1", format.MaxEcho-1) + `… (100001 bytes) ends +++" but no region is open`},
	} {
		paths := writeFiles(t, []string{"mg.0.trace"}, []string{tc.content})
		_, err := formattest.Import(t, Importer{}, paths, format.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 400 {
			t.Errorf("%s: %.300v\nwant a short message containing %q", tc.name, err, tc.want)
		}
	}
}
