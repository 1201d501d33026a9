package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
)

// TestLongFieldsClipped checks that an over-long total or event name of a
// callgrind profile, and an over-long snapshot checksum of a probe file,
// are echoed as their first bytes and their length, not whole.
func TestLongFieldsClipped(t *testing.T) {
	long := strings.Repeat("7", 100_000)
	head := strings.Repeat("7", format.MaxEcho) + "… (100000 bytes)"
	path := filepath.Join(t.TempDir(), "callgrind.out.1")
	if err := os.WriteFile(path, []byte("events: Ir"+long+"\ntotals: x"+long+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadCallgrindTotals(path)
	want := path + `:2: total "x` + head[:format.MaxEcho-1] + `… (100001 bytes)" of event Ir` + head[:format.MaxEcho-2] + "… (100002 bytes): want a non-negative integer"
	if err == nil || err.Error() != want {
		t.Errorf("callgrind: %.300v\nwant %q", err, want)
	}

	p := sampleProbe(t)
	p.Manifest.Phases[1].Snapshot.SHA256 = long
	b, err := p.Marshal()
	if err == nil {
		_, err = Unmarshal(b)
	}
	want = `phase 1: snapshot of 8000 bytes with checksum "` + head + `"`
	if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 400 {
		t.Errorf("probe file: %.300v\nwant a short message containing %q", err, want)
	}
}
