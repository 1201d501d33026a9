package report

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parscope/parscope/format"
)

// sourceTree makes dir/src (the source directory the user names) and
// dir/outside (a directory the trace must not reach), and returns both.
func sourceTree(t *testing.T) (src, outside string) {
	t.Helper()
	dir := t.TempDir()
	src, outside = filepath.Join(dir, "src"), filepath.Join(dir, "outside")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(src, "ring.f"), "ring source\n")
	write(filepath.Join(src, "sub", "a.f"), "a source\n")
	write(filepath.Join(outside, "secret.txt"), "SECRET\n")
	for _, l := range []struct{ target, name string }{
		{"ring.f", "link-in"},
		{filepath.Join("..", "outside", "secret.txt"), "link-out"},
		{filepath.Join(outside, "secret.txt"), "link-out-abs"},
		{filepath.Join("..", "outside"), "linkdir-out"},
	} {
		if err := os.Symlink(l.target, filepath.Join(src, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(src, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src, outside
}

func TestOpenSourceConfined(t *testing.T) {
	src, outside := sourceTree(t)
	for _, c := range []struct {
		name string
		want string // the contents read; "" when the name must be refused
	}{
		{"ring.f", "ring source\n"},
		{"sub/a.f", "a source\n"},
		{"sub/../ring.f", "ring source\n"},
		{filepath.Join(src, "sub", "a.f"), "a source\n"},
		// A path from the machine that recorded the trace is found by its
		// base name inside the source directory.
		{"/home/builder/ring/ring.f", "ring source\n"},
		{"link-in", "ring source\n"},
		{"../outside/secret.txt", ""},
		{"sub/../../outside/secret.txt", ""},
		{filepath.Join(outside, "secret.txt"), ""},
		{"link-out", ""},
		{"link-out-abs", ""},
		{"linkdir-out/secret.txt", ""},
		{"/etc/passwd", ""},
		{"fifo", ""},
		{"sub", ""},
		{"", ""},
	} {
		f, err := OpenSource([]string{src}, c.name)
		if c.want == "" {
			if err == nil {
				data, _ := io.ReadAll(f)
				f.Close()
				t.Errorf("%q: opened (it reads %q), want it refused", c.name, data)
			} else if c.name != "" && !strings.Contains(err.Error(), c.name) {
				t.Errorf("%q: the error %q does not name the file", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.name, err)
			continue
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil || string(data) != c.want {
			t.Errorf("%q: read %q (%v), want %q", c.name, data, err, c.want)
		}
	}
	// A source directory given through a symbolic link confines as well.
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(src, alias); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenSource([]string{alias}, filepath.Join(src, "ring.f")); err != nil {
		t.Errorf("absolute name under the resolved source directory: %v", err)
	} else {
		f.Close()
	}
	if f, err := OpenSource([]string{alias}, "link-out"); err == nil {
		f.Close()
		t.Error("link-out through an aliased source directory was opened")
	}
	// The directories are tried in order.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "b.f"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenSource([]string{src, other}, "b.f"); err != nil {
		t.Errorf("b.f in the second directory: %v", err)
	} else {
		f.Close()
	}
}

// hostileRing writes the ring example with its loop's file replaced by a
// relative escape and its if's file by the absolute path of a file outside
// the source directory, and imports it next to those files.
func hostileRing(t *testing.T, outside string) string {
	t.Helper()
	ring, _ := filepath.Glob(filepath.Join(examples, "ring", "ring.*.trace"))
	if len(ring) != 4 {
		t.Fatalf("the ring example has %d ranks, want 4", len(ring))
	}
	dir := filepath.Join(filepath.Dir(outside), "traces")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret.txt")
	var inputs []string
	for _, in := range ring {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.NewReplacer(
			`[#100@ring_@"ring.f"]`, `[#100@ring_@"../outside/secret.txt"]`,
			`[#110@ring_@"ring.f"]`, `[#110@ring_@"../outside/secret.txt"]`,
			`[#101@ring_@"ring.f"]`, `[#101@ring_@"`+secret+`"]`,
			`[#105@ring_@"ring.f"]`, `[#105@ring_@"`+secret+`"]`).Replace(string(data))
		if s == string(data) {
			t.Fatalf("%s: the regions to make hostile were not found", in)
		}
		p := filepath.Join(dir, filepath.Base(in))
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	return importExampleAt(t, filepath.Join(dir, "ring.pst"), "", inputs...)
}

// TestSourcesOnlyFromSourceDirs checks that the files a trace names are
// read only from the directories the user gives: neither the directory of
// the trace nor of its inputs, nor any absolute path or ".." escape.
func TestSourcesOnlyFromSourceDirs(t *testing.T) {
	dir := t.TempDir()
	src, outside := filepath.Join(dir, "src"), filepath.Join(dir, "outside")
	for _, d := range []string{src, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pst := hostileRing(t, outside)
	b, err := Build(context.Background(), pst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, r := range b.Comm.Report().Regions {
		files[r.File] = true
	}
	if !files["../outside/secret.txt"] || !files[filepath.Join(outside, "secret.txt")] {
		t.Fatalf("the trace does not name the hostile files: %v", files)
	}
	if b.Comm.Sources != nil {
		t.Errorf("without source directories, sources were read: %v", b.Comm.Sources)
	}
	noSecret(t, "no source directory", b)

	b, err = Build(context.Background(), pst, Options{SourceDirs: []string{src}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Comm.Sources != nil {
		t.Errorf("files outside the source directory were read: %v", b.Comm.Sources)
	}
	noSecret(t, "with a source directory", b)
}

func noSecret(t *testing.T, what string, b *Bundle) {
	t.Helper()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "SECRET") {
		t.Errorf("%s: the bundle holds the contents of a file outside the source directories", what)
	}
}

// TestOpenSourceLongNameClipped checks that a trace's over-long source file
// name is echoed as its first bytes and its length, not whole.
func TestOpenSourceLongNameClipped(t *testing.T) {
	src, _ := sourceTree(t)
	name := strings.Repeat("n", 100_000) + ".f"
	_, err := OpenSource([]string{src}, name)
	want := `source file "` + name[:format.MaxEcho] + `… (100002 bytes)": not found`
	if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 400+len(src) {
		t.Errorf("%.300v\nwant a short message containing %q", err, want)
	}
}
