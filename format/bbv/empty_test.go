package bbv

import (
	"errors"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
)

// TestImportRefusesNoVectors checks that a file without a single basic
// block vector (empty, or only other text) is refused with an error naming
// the file and what was expected, in both parsing modes, instead of
// importing a trace of 0 records.
func TestImportRefusesNoVectors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"empty.bb", "", "the file is empty"},
		{"garbage.bb", "hello\nworld\n\n", "none of its 3 line(s) is one"},
	} {
		for _, quirks := range []string{"", "simpoint"} {
			path := formattest.WriteFile(t, dir, tc.name, tc.content)
			_, err := formattest.Import(t, Importer{}, []string{path}, format.Options{Params: map[string]string{"quirks": quirks}})
			var fe *format.Error
			if !errors.As(err, &fe) || fe.File != path {
				t.Fatalf("%s (quirks=%q): err = %v, want a *format.Error naming the file", tc.name, quirks, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.Contains(msg, `expected lines "T:block:count`) {
				t.Errorf("%s (quirks=%q): %v\nwant it to say %q and what was expected", tc.name, quirks, err, tc.want)
			}
		}
	}
}
