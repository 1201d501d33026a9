// Command gengomez writes a synthetic merged "time block pid" trace of
// about the requested size, for benchmarks of the gomez import (see
// scripts/bench-import-memory.sh) and of the analyses. The trace is
// deterministic for a seed.
//
// By default the processes step through the amoeba simplex of Gomez, Cai &
// Schubert (gomez.Generate). With -random N every record instead puts a
// random process in a random one of the blocks 1..N, one record per
// microsecond: nearly every record makes a macrostate (and a class of
// parallel states) not seen before, the worst case of the occupancy and
// entropy tables.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/parscope/parscope/format/gomez"
)

func main() {
	procs := flag.Int("procs", 64, "processes")
	records := flag.Int64("records", 10_000_000, "total records")
	seed := flag.Uint64("seed", 1, "random seed")
	random := flag.Int("random", 0, "write random records among this many blocks instead of the amoeba program (0: the amoeba program)")
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
	var err error
	if *random > 0 {
		err = generateRandom(bw, *procs, *random, *records, *seed)
	} else {
		err = gomez.Generate(bw, 1, *procs, int(*records/int64(*procs)), *seed)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gengomez:", err)
		os.Exit(1)
	}
}

// generateRandom writes records "t block pid" at t = 0, 1, 2, ... µs, each
// a uniformly random pid in 0..procs-1 entering a uniformly random block in
// 1..blocks.
func generateRandom(w io.Writer, procs, blocks int, records int64, seed uint64) error {
	if procs <= 0 || blocks <= 0 || records < 0 {
		return fmt.Errorf("random trace of %d processes, %d blocks, %d records: want positive sizes", procs, blocks, records)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var line []byte
	for t := range records {
		line = strconv.AppendInt(line[:0], t, 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(1+rng.IntN(blocks)), 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, int64(rng.IntN(procs)), 10)
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}
