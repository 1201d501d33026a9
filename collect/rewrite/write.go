package rewrite

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Write writes the rewritten package into dir, which must exist: a copy of
// every file of the package directory (tests, testdata and subdirectories
// included, hidden entries excepted) with the rewritten files in place of
// the originals, RuntimeFile and the block dictionary DictFile.
func (r *Result) Write(dir string) error {
	err := filepath.WalkDir(r.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(r.Dir, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, src, 0o644)
	})
	if err != nil {
		return fmt.Errorf("copying %s: %w", r.Dir, err)
	}
	for _, f := range r.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Src, 0o644); err != nil {
			return err
		}
	}
	js, err := json.MarshalIndent(r.Dict, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, DictFile), append(js, '\n'), 0o644)
}
