// Command genbbv writes a synthetic basic-block-vector file in SimPoint's
// .bb format (one "T:block:count :block:count ..." line per interval), for
// scripts/bench-peers, which times parscope phases and SimPoint 3.2 on it
// from 1,000 to 1,000,000 intervals. The file is deterministic for a seed.
//
// The intervals come in runs of -run intervals per phase, cycling through
// -phases phases. Phase p owns the blocks p·blocks/phases+1 …; an interval
// executes the phase's -nnz−5 hot blocks with the phase's counts ±10%, plus
// 5 blocks drawn at random from the next 100 of the phase, as the scale
// benchmark of analysis/phase does.
//
//	go run ./scripts/genbbv -intervals 100000 -o big.bb
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
)

func main() {
	intervals := flag.Int("intervals", 10_000, "intervals (lines)")
	blocks := flag.Int("blocks", 10_000, "distinct basic blocks")
	phases := flag.Int("phases", 12, "program phases")
	nnz := flag.Int("nnz", 30, "blocks executed per interval")
	run := flag.Int("run", 50, "intervals per run of one phase")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("o", "-", "output file (- for stdout)")
	flag.Parse()
	if *intervals < 1 || *phases < 1 || *nnz < 6 || *run < 1 || *blocks/(*phases) < *nnz+100 {
		fmt.Fprintln(os.Stderr, "genbbv: need intervals, phases, run ≥ 1, nnz ≥ 6 and blocks/phases ≥ nnz+100")
		os.Exit(2)
	}
	w := io.Writer(os.Stdout)
	var f *os.File
	if *out != "-" {
		var err error
		if f, err = os.Create(*out); err != nil {
			fmt.Fprintln(os.Stderr, "genbbv:", err)
			os.Exit(1)
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := write(bw, *intervals, *blocks, *phases, *nnz, *run, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "genbbv:", err)
		os.Exit(1)
	}
	err := bw.Flush()
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genbbv:", err)
		os.Exit(1)
	}
}

// write writes the intervals to w; see the command's documentation.
func write(w *bufio.Writer, intervals, blocks, phases, nnz, run int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	hot := nnz - 5
	profile := make([][]int, phases)
	for p := range profile {
		profile[p] = make([]int, hot)
		for j := range profile[p] {
			profile[p][j] = 100 + rng.IntN(10000)
		}
	}
	var line []byte
	cold := make([]int, 0, 5)
	for i := 0; i < intervals; i++ {
		p := (i / run) % phases
		base := p * (blocks / phases)
		line = append(line[:0], 'T')
		for j := 0; j < hot; j++ {
			line = appendPair(line, base+1+j, int(float64(profile[p][j])*(0.9+0.2*rng.Float64())))
		}
		cold = cold[:0]
		for len(cold) < 5 {
			id := base + 1 + hot + rng.IntN(100)
			dup := false
			for _, c := range cold {
				dup = dup || c == id
			}
			if !dup {
				cold = append(cold, id)
				line = appendPair(line, id, 1+rng.IntN(1000))
			}
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// appendPair appends ":block:count " as SimPoint's .bb lines separate them.
func appendPair(b []byte, block, count int) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(block), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(count), 10)
	return append(b, ' ')
}
