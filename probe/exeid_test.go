package probe

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoBuildID reads the test binary's Go build ID and compares it with
// what the go command itself reads from the file; a file that is not ELF
// has none.
func TestGoBuildID(t *testing.T) {
	id, err := GoBuildID(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", os.Args[0]).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	if want := strings.TrimSpace(string(out)); id != want || !strings.Contains(id, "/") {
		t.Fatalf("build ID %q, go tool buildid says %q", id, want)
	}
	script := filepath.Join(t.TempDir(), "worker.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if id, err := GoBuildID(script); id != "" || err != nil {
		t.Fatalf("a shell script: build ID %q, error %v; want none and no error", id, err)
	}
	if _, err := GoBuildID(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing executable gave no error")
	}
}

// TestParseGoBuildIDNote: only a well-formed note of type 4 named "Go"
// gives an ID, and a descriptor size past the end gives none.
func TestParseGoBuildIDNote(t *testing.T) {
	note := func(namesz, descsz, typ uint32, name, desc string) []byte {
		b := binary.LittleEndian.AppendUint32(nil, namesz)
		b = binary.LittleEndian.AppendUint32(b, descsz)
		b = binary.LittleEndian.AppendUint32(b, typ)
		return append(append(b, name...), desc...)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"well formed", note(4, 7, 4, "Go\x00\x00", "abc/def"), "abc/def"},
		{"padding after the descriptor", note(4, 3, 4, "Go\x00\x00", "abc\x00"), "abc"},
		{"other type", note(4, 7, 3, "Go\x00\x00", "abc/def"), ""},
		{"other name", note(4, 7, 4, "GNU\x00", "abc/def"), ""},
		{"descriptor past the end", note(4, 70, 4, "Go\x00\x00", "abc/def"), ""},
		{"huge descriptor size", note(4, 1<<32-1, 4, "Go\x00\x00", "abc/def"), ""},
		{"truncated header", note(4, 7, 4, "Go", ""), ""},
		{"empty", nil, ""},
	} {
		if got := parseGoBuildIDNote(tc.b, binary.LittleEndian); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// FuzzGoBuildIDNote: any section content parses without panicking, and an
// ID read is the descriptor that the header's size delimits.
func FuzzGoBuildIDNote(f *testing.F) {
	f.Add([]byte("\x04\x00\x00\x00\x07\x00\x00\x00\x04\x00\x00\x00Go\x00\x00abc/def"))
	f.Add([]byte("\x04\x00\x00\x00\xff\xff\xff\xff\x04\x00\x00\x00Go\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id := parseGoBuildIDNote(b, binary.LittleEndian)
		if id == "" {
			return
		}
		if n := binary.LittleEndian.Uint32(b[4:]); int(n) != len(id) || string(b[16:16+n]) != id {
			t.Fatalf("ID %q from %q", id, b)
		}
	})
}
