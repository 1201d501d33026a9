package gomez

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
)

// amoebaBody is one iteration of the amoeba simplex loop of Gomez, Cai & Schubert's (2017)
// Table 1; 0 marks the two slots of the branch (blocks 5 and 6, or the
// shrink, blocks 7 and 8).
var amoebaBody = [...]int32{2, 3, 4, 0, 0, 9, 10, 11, 12}

// amoebaMean is the mean duration in µs of each block 1..13: the blocks
// that evaluate FUN (3, 5, 7, 12) dominate, the choice points are shorter
// than the 10 µs resolution.
var amoebaMean = [...]float64{0, 50, 20, 400, 8, 400, 8, 1600, 8, 20, 100, 50, 800, 0}

// amoebaShrink is the probability that an iteration shrinks the simplex
// (blocks 7 and 8) rather than extending it (blocks 5 and 6).
const amoebaShrink = 0.3

// genRes is the clock resolution of generated traces in µs, as in the paper.
const genRes = 10

type genRec struct {
	t     int64
	block int32
	pid   int32
}

// Generate writes a synthetic merged "time block pid" trace to w, sorted on
// time, of runs concatenated runs (each starting again at time 0) in which
// procs processes step through the 13 blocks of Gomez, Cai & Schubert's (2017) amoeba simplex
// (Table 1): block 1, then iterations of blocks 2, 3, 4, either 5 and 6 or
// 7 and 8, 9, 10, 11 and 12, and block 13 as the last record. Every process
// writes exactly recordsPerProc records per run. Durations are random
// around a per-block mean, scaled by a per-process speed, and rounded to
// 10 µs, so short blocks often share a timestamp with the next one; all
// processes synchronise on entry to block 11 (the broadcast). Ties in time
// are written in pid order. The output is deterministic for a seed (PCG of
// math/rand/v2). Runs can be told apart on import only when they last
// longer than 0, so several runs need recordsPerProc >= 2.
func Generate(w io.Writer, runs, procs, recordsPerProc int, seed uint64) error {
	switch {
	case runs < 0 || procs < 0 || recordsPerProc < 0:
		return fmt.Errorf("gomez: generate: negative size (runs %d, procs %d, records per process %d)", runs, procs, recordsPerProc)
	case procs > MaxProcs:
		return fmt.Errorf("gomez: generate: %d processes (at most %d)", procs, MaxProcs)
	case runs > 1 && recordsPerProc == 1:
		return errors.New("gomez: generate: several runs need at least 2 records per process to be told apart")
	}
	if runs == 0 || procs == 0 || recordsPerProc == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	bw := bufio.NewWriterSize(w, 64<<10)
	var (
		cur    = make([]int64, procs)   // time of each process's next record, µs
		speed  = make([]float64, procs) // per-process slowness factor
		shrink = make([]bool, procs)    // this iteration takes blocks 7 and 8
		seg    = make([]genRec, 0, len(amoebaBody)*procs+procs)
		line   []byte
	)
	flush := func() error {
		slices.SortStableFunc(seg, func(a, b genRec) int {
			if c := cmp.Compare(a.t, b.t); c != 0 {
				return c
			}
			return cmp.Compare(a.pid, b.pid)
		})
		for _, r := range seg {
			line = strconv.AppendInt(line[:0], r.t, 10)
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(r.block), 10)
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(r.pid), 10)
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return fmt.Errorf("gomez: generate: %w", err)
			}
		}
		seg = seg[:0]
		return nil
	}
	for range runs {
		clear(cur)
		for p := range speed {
			speed[p] = 0.9 + 0.2*rng.Float64()
		}
		for pos := range recordsPerProc {
			var slot int
			if pos > 0 {
				slot = (pos - 1) % len(amoebaBody)
			}
			if slot == 3 {
				for p := range shrink {
					shrink[p] = rng.Float64() < amoebaShrink
				}
			}
			base := amoebaBody[slot]
			if base == 11 && pos != recordsPerProc-1 {
				// The broadcast: everybody enters it when the last one arrives.
				slowest := slices.Max(cur)
				for p := range cur {
					cur[p] = slowest
				}
			}
			for p := range procs {
				block := base
				switch {
				case pos == 0:
					block = 1
				case pos == recordsPerProc-1:
					block = 13
				case slot == 3 || slot == 4:
					block = int32(slot + 2) // 5 or 6
					if shrink[p] {
						block += 2 // 7 or 8
					}
				}
				seg = append(seg, genRec{t: cur[p], block: block, pid: int32(p)})
				d := int64(amoebaMean[block]*speed[p]*(0.5+rng.Float64())) / genRes * genRes
				if block == 1 || block == 11 {
					d = max(d, genRes)
				}
				cur[p] += d
			}
			if base == 11 && pos != recordsPerProc-1 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("gomez: generate: %w", err)
	}
	return nil
}
