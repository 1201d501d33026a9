package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parscope/parscope/store/storetest"
)

// runTimeout runs parscope and fails the test if it has not ended within
// 30 seconds (a read of a named pipe without a writer blocks forever).
func runTimeout(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("parscope %s did not end: %s", strings.Join(args, " "), out.String())
	}
	return out.String(), exitCode(t, err)
}

// TestInfoChecksTables damages copies of a .pst in the ways info used to
// miss: a manifest whose row count disagrees with the Parquet footer, one
// whose record counts disagree with its tables, a table taken from another
// trace, and a named pipe in place of a table. Each is an error naming the
// file; the intact copy is not.
func TestInfoChecksTables(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pst")
	mustRun(t, "import", "-o", good, "--dict", filepath.Join(examples, "amoeba_blocks.txt"), filepath.Join(examples, "amoeba.srt"))
	small := filepath.Join(dir, "small.txt")
	if err := os.WriteFile(small, []byte("0 1 0\n5 2 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.pst")
	mustRun(t, "import", "--format", "gomez", "-o", other, small)

	editManifest := func(p string, edit func(m map[string]any)) {
		data, err := os.ReadFile(filepath.Join(p, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		data, err = json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "manifest.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(p string)
		want   string
	}{
		{"rows", func(p string) {
			editManifest(p, func(m map[string]any) {
				m["tables"].(map[string]any)["states"].(map[string]any)["rows"] = 7
				m["stats"].(map[string]any)["records"].(map[string]any)["state"] = 7
			})
		}, "states.parquet: has 17000 rows, the manifest says 7"},
		{"counts", func(p string) {
			editManifest(p, func(m map[string]any) {
				m["stats"].(map[string]any)["records"].(map[string]any)["state"] = 9
			})
		}, "manifest.json: the manifest lists"},
		{"swapped", func(p string) {
			data, err := os.ReadFile(filepath.Join(other, "states.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "states.parquet"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "states.parquet: index names row group 1 of 1 (the .pst is damaged)"},
		{"fifo", func(p string) {
			os.Remove(filepath.Join(p, "states.parquet"))
			if err := syscall.Mkfifo(filepath.Join(p, "states.parquet"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "states.parquet is a named pipe (FIFO), not a regular file"},
	} {
		p := filepath.Join(dir, tc.name+".pst")
		storetest.Copy(t, good, p)
		tc.damage(p)
		out, code := runTimeout(t, "info", p)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%s: info exit %d:\n%s\nwant an error containing %q", tc.name, code, out, tc.want)
		}
	}
	if out, code := runTimeout(t, "info", good); code != 0 {
		t.Errorf("info of the intact trace: exit %d\n%s", code, out)
	}
}

// TestImportRefusesFIFO checks that a named pipe given as the input is
// refused at once, with or without --format, instead of blocking.
func TestImportRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "trace.srt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"import", "-o", filepath.Join(dir, "a.pst"), fifo},
		{"import", "--format", "gomez", "-o", filepath.Join(dir, "b.pst"), fifo},
	} {
		out, code := runTimeout(t, args...)
		if code == 0 || !strings.Contains(out, fifo+" is a named pipe (FIFO), not a regular file") {
			t.Errorf("parscope %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
}
