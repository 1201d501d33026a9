package mpi

import (
	"fmt"
	"testing"

	"github.com/parscope/parscope/analysis/comm"
)

// TestCGWorkload runs examples/mpi/cg.c on 8 (2x4, recursive doubling in
// the rows) and 27 (3x9, around the rows) MPICH ranks: every row-reduction
// message goes to the expected row partner, every transpose message to the
// rank at the transposed position, and the totals are exact.
func TestCGWorkload(t *testing.T) {
	for _, c := range []struct {
		np, rows, cols, msgs int
	}{{8, 2, 4, 240}, {27, 3, 9, 2430}} {
		t.Run(fmt.Sprint(c.np), func(t *testing.T) {
			m, rep := record(t, mpichImpl, c.np, "../../examples/mpi/cg.c", Options{}, "-n", "64", "-iter", "10")
			if rep.Sends != int64(c.msgs) || rep.Matched != int64(c.msgs) || rep.UnmatchedSends+rep.UnmatchedRecvs != 0 {
				t.Errorf("report %+v", rep)
			}
			res := analyze(t, m, comm.Options{Selection: comm.Selection{NoCollectives: true}})
			red := node(t, res, "loop reduce").OwnMatrix()
			tr := node(t, res, "block transpose").OwnMatrix()
			for i := range c.np {
				row, col := i/c.cols, i%c.cols
				want := map[int]bool{}
				if c.cols&(c.cols-1) == 0 {
					for s := 1; s < c.cols; s <<= 1 {
						want[row*c.cols+(col^s)] = true
					}
				} else {
					want[row*c.cols+(col+1)%c.cols] = true
				}
				td := (i%c.cols)*c.rows + i/c.cols
				for j := range c.np {
					if _, n := red.At(i, j); (n > 0) != want[j] {
						t.Errorf("loop reduce %d -> %d: %d messages", i, j, n)
					}
					if b, n := tr.At(i, j); (n > 0) != (j == td) || (n > 0 && (n != 10 || b != 10*64*8)) {
						t.Errorf("block transpose %d -> %d: %d bytes in %d messages", i, j, b, n)
					}
				}
			}
		})
	}
}
