// Package realdata gives tests the real sample files of the repository's
// testdata/real folder: traces and basic-block vectors written by real
// tools (valgrind, SimPoint, Score-P, Extrae, SST DUMPI, the Go runtime),
// whose origin and licence are in that folder's READMEs. Any package's
// tests find them here whatever their own folder, and a missing file fails
// the test, naming the path, instead of skipping it.
package realdata

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Module is the module path whose root holds testdata/real.
const Module = "github.com/parscope/parscope"

// Dir is the folder of the real sample files, relative to the module root.
const Dir = "testdata/real"

// Root returns the module root: the nearest folder, from the working
// directory (the package's folder under go test) upwards, whose go.mod
// declares Module.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	want := []byte("module " + Module + "\n")
	for dir := wd; ; dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, want) {
			return dir, nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod of module %s in %s or any folder above it", Module, wd)
		}
	}
}

// Path returns the path of rel (slash-separated, relative to testdata/real)
// in this module. The test fails when the module root cannot be found or
// the file is missing: a fixture that is not there is an error, never a
// reason to skip.
func Path(t testing.TB, rel string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatalf("real sample %s: %v", rel, err)
		return ""
	}
	p := filepath.Join(root, filepath.FromSlash(Dir), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real sample missing: %v (see %s/README.md)", err, Dir)
		return ""
	}
	return p
}

// Read returns the content of the real sample rel, failing the test when it
// cannot be read.
func Read(t testing.TB, rel string) []byte {
	t.Helper()
	p := Path(t, rel)
	if p == "" {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("real sample: %v", err)
	}
	return b
}
