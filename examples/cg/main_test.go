package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

func TestTransposeIsAPermutation(t *testing.T) {
	for _, n := range []int{8, 16, 27} {
		rows, cols := Layout(n)
		seen := map[int]bool{}
		for r := range n {
			d := Transpose(r, rows, cols)
			if Source(d, rows, cols) != r || seen[d] {
				t.Errorf("%d ranks: rank %d -> %d -> %d", n, r, d, Source(d, rows, cols))
			}
			seen[d] = true
		}
	}
}

// TestCG records 8, 16 and 27 ranks. Per iteration a rank sends
// log2(npcols) (or npcols-1) row messages and one transpose message of n
// doubles; the totals are those of examples/mpi/cg.c under the MPI shim
// with the same parameters (240, 480 and 2,430 messages).
func TestCG(t *testing.T) {
	for _, c := range []struct {
		procs, rows, cols, msgs, rowDegree int
	}{{8, 2, 4, 240, 2}, {16, 4, 4, 480, 2}, {27, 3, 9, 2430, 2}} {
		t.Run(fmt.Sprint(c.procs), func(t *testing.T) {
			if r, cl := Layout(c.procs); r != c.rows || cl != c.cols {
				t.Fatalf("layout %dx%d, want %dx%d", r, cl, c.rows, c.cols)
			}
			tr, _ := tracecheck.RecordRun(t, instrument.Options{Regions: Regions}, Run, Config{Procs: c.procs, Seg: 64, Iter: 10})
			if n := tr.CheckMessages(t); n != c.msgs {
				t.Errorf("%d messages, want %d", n, c.msgs)
			}
			res, err := comm.Analyze(context.Background(), tr.Header, trace.NewSliceReader(tr.Merged), comm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if b := res.Nodes[0].Aggregate.Bytes; b != int64(c.msgs)*64*8 {
				t.Errorf("%d bytes, want %d", b, c.msgs*64*8)
			}
			red := &res.Nodes[res.Find("loop reduce")[0]]
			if red.Aggregate.Degree != c.rowDegree {
				t.Errorf("loop reduce: degree %d, want %d", red.Aggregate.Degree, c.rowDegree)
			}
			// Every row message stays in its row.
			m := red.AggregateMatrix()
			for i := range c.procs {
				for j := range c.procs {
					if _, n := m.At(i, j); n > 0 && i/c.cols != j/c.cols {
						t.Errorf("loop reduce: %d -> %d crosses rows", i, j)
					}
				}
			}
		})
	}
}
