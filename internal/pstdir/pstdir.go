// Package pstdir tells a .pst trace directory from anything else at a path
// without opening the trace: what the trace store writes there first, and
// the rule every --force follows. It imports only the standard library, so
// that the recorder (package instrument) can apply the rule without linking
// the store.
package pstdir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Format is the name a .pst's manifest gives its layout (store.FormatName).
const Format = "parscope-pst"

// Manifest is the name of a .pst's manifest file.
const Manifest = "manifest.json"

// Replaceable allows replacing path only when it is a .pst: a directory
// (not a symbolic link) holding a parscope manifest. It is the rule for
// every --force: whatever else is at the path (a file, a directory of
// other things) is refused, never deleted.
func Replaceable(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a .pst trace directory; --force replaces only a .pst, refusing to replace it", path)
	}
	data, err := os.ReadFile(filepath.Join(path, Manifest))
	var m struct {
		Format string `json:"format"`
	}
	if err != nil || json.Unmarshal(data, &m) != nil || m.Format != Format {
		return fmt.Errorf("%s exists and is not a .pst trace (no parscope %s in it); --force replaces only a .pst, refusing to replace it", path, Manifest)
	}
	return nil
}
