// Command gen regenerates the synthetic example traces in testdata/examples
// (run from the repository root: go run ./testdata/examples/gen). The
// output is deterministic: the same code writes the same bytes.
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/parscope/parscope/format/annotated"
	"github.com/parscope/parscope/format/gomez"
)

func main() {
	dir := filepath.Join("testdata", "examples")
	write := func(name string, gen func(f *os.File) error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			log.Fatal(err)
		}
		if err := gen(f); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
	// Five runs of an amoeba-simplex-like program on 17 processes, as in Gomez, Cai & Schubert 2017.
	write("amoeba.srt", func(f *os.File) error { return gomez.Generate(f, 5, 17, 200, 2015) })
	// A 4-rank ring exchange in the annotated format of Jones et al. 2007, one file per rank.
	for r := 0; r < 4; r++ {
		write(fmt.Sprintf("ring/ring.%d.trace", r), func(f *os.File) error { return annotated.Generate(f, r, 4, 64) })
	}
}
