//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestModesWhateverTheUmask: every file written gets FileMode and every
// directory DirMode, a single file as well as each file and directory a
// caller wrote into a Dir with modes of its own, under a restrictive umask
// too, so that all of parscope's outputs have the same permissions.
func TestModesWhateverTheUmask(t *testing.T) {
	for _, umask := range []int{0o022, 0o077} {
		old := syscall.Umask(umask)
		dir := t.TempDir()
		file := filepath.Join(dir, "x.json")
		if err := WriteFile(file, []byte("{}"), nil); err != nil {
			t.Fatal(err)
		}
		d, err := CreateDir(filepath.Join(dir, "out.pst"), nil)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d.Path(), "manifest.json"), []byte("{}"), 0o600)
		os.Mkdir(filepath.Join(d.Path(), "sub"), 0o700)
		os.WriteFile(filepath.Join(d.Path(), "sub", "t.parquet"), nil, 0o640)
		err = d.Commit()
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]os.FileMode{
			file:                          FileMode,
			filepath.Join(dir, "out.pst"): DirMode,
			filepath.Join(dir, "out.pst", "manifest.json"):    FileMode,
			filepath.Join(dir, "out.pst", "sub"):              DirMode,
			filepath.Join(dir, "out.pst", "sub", "t.parquet"): FileMode,
		} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("umask %#o: %s has mode %#o, want %#o", umask, p, got, want)
			}
		}
	}
}
