package gomez

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/formattest"
)

// FuzzReadDict feeds arbitrary bytes as a block dictionary, starting from
// the amoeba sample's (Gomez, Cai & Schubert 2017): ReadDict must return
// an error naming the file, or one definition per distinct non-negative
// id, each with a short name taken from its description.
func FuzzReadDict(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "examples", "amoeba_blocks.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("# blocks\n\n7\tx\n-1 y\n"))
	f.Add([]byte("1 a\n1 b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := formattest.WriteFile(t, "", "d.txt", string(data))
		defs, err := ReadDict(path)
		if err != nil {
			formattest.ErrorNames(t, err, path)
			return
		}
		seen := map[int32]bool{}
		for _, d := range defs {
			if d.ID < 0 || seen[d.ID] {
				t.Fatalf("block id %d negative or given twice", d.ID)
			}
			seen[d.ID] = true
			if len(d.Name) > nameLimit || !strings.HasPrefix(strings.Join(strings.Fields(d.Description), " "), d.Name) {
				t.Fatalf("block %d: name %q is not a short form of %q", d.ID, d.Name, d.Description)
			}
		}
	})
}
