package prv

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// TestEndsBeforeHeaderEnd checks that a trace whose records stop before the
// end time of its header (a file cut on a line boundary) is counted as
// RepairEndsEarly and warned about with the file, both times and the last
// line, and that a complete trace is not.
func TestEndsBeforeHeaderEnd(t *testing.T) {
	const full = "#Paraver (x):1000_ns:1:1:2(1:1,1:1)\n" +
		"1:1:1:1:1:0:400:1\n" +
		"1:1:1:2:1:0:500:1\n" +
		"1:1:1:1:1:400:1000:2\n" +
		"1:1:1:2:1:500:1000:2\n"
	for _, tc := range []struct {
		name, content string
		warn          string
	}{
		{"full.prv", full, ""},
		{"cut.prv", strings.Join(strings.SplitAfter(full, "\n")[:3], ""), "the records end at 500 ns, before the end time the header declares (1000 ns): the file may be cut short after line 3"},
	} {
		path := filepath.Join(t.TempDir(), tc.name)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		m := &trace.Memory{}
		if err := (Importer{}).Import(context.Background(), []string{path}, format.Options{}, m); err != nil {
			t.Fatal(err)
		}
		h := m.Header()
		warns := format.Warnings(h)
		if tc.warn == "" {
			if len(warns) != 0 || h.Repairs[RepairEndsEarly] != 0 {
				t.Errorf("%s: warnings %q, repairs %v; want none", tc.name, warns, h.Repairs)
			}
			continue
		}
		if want := []string{path + ": " + tc.warn}; !slices.Equal(warns, want) {
			t.Errorf("%s: warnings %q, want %q", tc.name, warns, want)
		}
		if h.Repairs[RepairEndsEarly] != 1 {
			t.Errorf("%s: repairs %v, want %s 1", tc.name, h.Repairs, RepairEndsEarly)
		}
	}
}
