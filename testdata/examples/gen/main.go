// Command gen regenerates the synthetic example traces in testdata/examples
// (run from the repository root: go run ./testdata/examples/gen). The
// output is deterministic: the same code writes the same bytes.
//
// With -ring N -o DIR it writes instead the ring exchange of
// testdata/examples/ring on N ranks (the same program, 64 steps per rank)
// into DIR, one file per rank: the traces docs/compare.md sets side by
// side at 16 and 64 ranks.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/parscope/parscope/format/annotated"
	"github.com/parscope/parscope/format/gomez"
)

// ringSteps is the number of steps of every rank of a ring.
const ringSteps = 64

func main() {
	ranks := flag.Int("ring", 0, "write the ring exchange on this many ranks into -o instead")
	out := flag.String("o", "", "with -ring: the directory to write the ring's files into (made if needed)")
	flag.Parse()
	dir := filepath.Join("testdata", "examples")
	if *ranks != 0 || *out != "" {
		if *ranks <= 0 || *out == "" || flag.NArg() > 0 {
			log.Fatal("usage: gen [-ring N -o DIR], N > 0")
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			log.Fatal(err)
		}
		dir = *out
	}
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
	if *ranks > 0 {
		for r := range *ranks {
			write(fmt.Sprintf("ring.%d.trace", r), func(f *os.File) error { return annotated.Generate(f, r, *ranks, ringSteps) })
		}
		return
	}
	// Five runs of an amoeba-simplex-like program on 17 processes, as in Gomez, Cai & Schubert 2017.
	write("amoeba.srt", func(f *os.File) error { return gomez.Generate(f, 5, 17, 200, 2015) })
	// A 4-rank ring exchange in the annotated format of Jones et al. 2007, one file per rank.
	for r := 0; r < 4; r++ {
		write(fmt.Sprintf("ring/ring.%d.trace", r), func(f *os.File) error { return annotated.Generate(f, r, 4, ringSteps) })
	}
}
