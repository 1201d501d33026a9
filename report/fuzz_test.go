package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadProbe checks that a probe result file never makes ReadProbe
// panic, that what it accepts is the file's bytes and valid JSON, and that
// what it refuses is not valid JSON, with an error that names the file and
// stays short.
func FuzzReadProbe(f *testing.F) {
	for _, name := range []string{"../docs/probes-curves.json", "../docs/probes-wall.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{`{"phases": [1, 2.5e3, "x"], "ok": true}`, "", "{", `{"a": 1} {"b": 2}`, "\"\xff\"", "nul", "[1,]"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "probe.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadProbe(path)
		if err != nil {
			if json.Valid(data) {
				t.Fatalf("valid JSON refused: %v", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, path+": not a JSON probe result") || len(msg) > len(path)+400 {
				t.Fatalf("error %.500q: want one that names the file, at most 400 bytes more", msg)
			}
			return
		}
		if !json.Valid(got) || !bytes.Equal(got, data) {
			t.Fatalf("accepted %q as %q", data, got)
		}
	})
}
