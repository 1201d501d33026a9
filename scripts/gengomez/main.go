// Command gengomez writes a synthetic merged "time block pid" trace of
// about the requested size, for benchmarks of the gomez import (see
// scripts/bench-import-memory.sh). The trace is deterministic for a seed.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/parscope/parscope/format/gomez"
)

func main() {
	procs := flag.Int("procs", 64, "processes")
	records := flag.Int64("records", 10_000_000, "total records")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("o", "-", "output file (- for stdout)")
	flag.Parse()
	w := os.Stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gengomez:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := gomez.Generate(bw, 1, *procs, int(*records/int64(*procs)), *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gengomez:", err)
		os.Exit(1)
	}
	if err := bw.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gengomez:", err)
		os.Exit(1)
	}
}
