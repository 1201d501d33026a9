package bbv

import (
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
)

// TestLongFieldsClipped checks that an over-long block id, count or
// address, in a vector file or a pc file, is echoed as its first bytes and
// its length, not whole.
func TestLongFieldsClipped(t *testing.T) {
	zeros := strings.Repeat("0", 100_000)
	ones := strings.Repeat("1", 100_000)
	head := func(s string) string { return s[:format.MaxEcho] + "… (100000 bytes)" }
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 400 {
			t.Errorf("%s: %.300v\nwant a short message containing %q", name, err, want)
		}
	}
	for _, tc := range []struct{ name, content, want string }{
		{"id 0", "T:" + zeros + ":1\n", "block id " + head(zeros) + ": ids are 1-based"},
		{"id too large", "T:" + ones + ":1\n", "block id " + head(ones) + " exceeds the limit"},
		{"count", "T:1:1." + ones[:99_996] + ".5\n", `bad count "1.` + ones[:format.MaxEcho-2] + `… (100000 bytes)"`},
	} {
		path := formattest.WriteFile(t, "", "bb.out", tc.content)
		_, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
		check(tc.name, err, tc.want)
	}
	for _, tc := range []struct{ name, content, want string }{
		{"pc id", "F:" + ones + ":400000:main\n", `bad block id "` + head(ones) + `"`},
		{"pc address", "F:1:" + strings.Repeat("z", 100_000) + ":main\n", `bad address "` + head(strings.Repeat("z", 100_000)) + `" of block 1`},
	} {
		path := formattest.WriteFile(t, "", "pc.out", tc.content)
		_, err := ReadPCFile(path)
		check(tc.name, err, tc.want)
	}
}
