package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/trace"
)

// passwd stands for a file outside the .pst that a hostile manifest names.
const passwd = "root:x:0:0:root:/root:/bin/bash\n"

// TestOpenConfinesTables checks that a manifest cannot make Open read a
// file outside the .pst, and that no error quotes the bytes of a file.
func TestOpenConfinesTables(t *testing.T) {
	m, streams := randomTrace(3, 1, 2, 40, 1)
	var recs []trace.Record
	for _, s := range streams {
		recs = append(recs, s...)
	}
	timed, _ := splitBBV(recs)
	outside := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(outside, []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := func(t *testing.T) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "t.pst")
		writeStore(t, dir, Options{}, m.H, recs)
		return dir
	}
	setFile := func(t *testing.T, dir, table, file string) {
		t.Helper()
		p := filepath.Join(dir, manifestFile)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		raw["tables"].(map[string]any)[table].(map[string]any)["file"] = file
		if data, err = json.Marshal(raw); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replace := func(t *testing.T, path string, with func(string) error) {
		t.Helper()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := with(path); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, dir string)
		want  []string // what the error must say
	}{
		{"relative escape", func(t *testing.T, dir string) { setFile(t, dir, "events", "../../../../"+outside) },
			[]string{"manifest.json", "tables.events.file", "../../../../" + outside}},
		{"absolute path", func(t *testing.T, dir string) { setFile(t, dir, "events", outside) },
			[]string{"manifest.json", "tables.events.file", outside}},
		{"sub-directory", func(t *testing.T, dir string) { setFile(t, dir, "states", "sub/states.parquet") },
			[]string{"manifest.json", "tables.states.file", "sub/states.parquet"}},
		{"dot-dot", func(t *testing.T, dir string) { setFile(t, dir, "states", "..") }, []string{"manifest.json", `".."`}},
		{"backslash", func(t *testing.T, dir string) { setFile(t, dir, "states", `..\states.parquet`) }, []string{"manifest.json", "tables.states.file"}},
		{"empty", func(t *testing.T, dir string) { setFile(t, dir, "states", "") }, []string{"manifest.json", "tables.states.file"}},
		{"table symlinked out", func(t *testing.T, dir string) {
			replace(t, filepath.Join(dir, "events.parquet"), func(p string) error { return os.Symlink(outside, p) })
		}, []string{"events.parquet"}},
		{"index symlinked out", func(t *testing.T, dir string) {
			replace(t, filepath.Join(dir, indexFile), func(p string) error { return os.Symlink(outside, p) })
		}, []string{indexFile}},
		{"manifest symlinked out", func(t *testing.T, dir string) {
			replace(t, filepath.Join(dir, manifestFile), func(p string) error { return os.Symlink(outside, p) })
		}, []string{manifestFile}},
		{"table is a directory", func(t *testing.T, dir string) {
			replace(t, filepath.Join(dir, "events.parquet"), func(p string) error { return os.Mkdir(p, 0o755) })
		}, []string{"events.parquet", "not a regular file"}},
		{"table is text", func(t *testing.T, dir string) {
			replace(t, filepath.Join(dir, "events.parquet"), func(p string) error { return os.WriteFile(p, []byte(passwd), 0o644) })
		}, []string{"events.parquet", "not a Parquet file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fresh(t)
			c.spoil(t, dir)
			s, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted the spoilt .pst")
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "root:x") || strings.Contains(msg, `"root"`) {
				t.Errorf("the error quotes the file's contents: %q", msg)
			}
		})
	}
	// A symbolic link that stays inside the .pst is followed.
	t.Run("symlink within", func(t *testing.T) {
		dir := fresh(t)
		if err := os.Rename(filepath.Join(dir, "events.parquet"), filepath.Join(dir, "events.data")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("events.data", filepath.Join(dir, "events.parquet")); err != nil {
			t.Fatal(err)
		}
		got := readRecords(t, dir)
		if want := len(timed); len(got) != want {
			t.Errorf("read %d records through the link, want %d", len(got), want)
		}
	})
}
