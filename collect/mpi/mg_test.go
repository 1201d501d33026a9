package mpi

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/parscope/parscope/analysis/comm"
)

// mgGrid is the process grid of examples/mpi/mg.c: MPI_Dims_create's
// dimensions, ranks numbered row-major (MPI_Cart_create without reorder).
type mgGrid [3]int

func (g mgGrid) rank(c [3]int) int { return (c[0]*g[1]+c[1])*g[2] + c[2] }

func (g mgGrid) coords(r int) [3]int { return [3]int{r / (g[1] * g[2]), r / g[2] % g[1], r % g[2]} }

func active(c [3]int) bool { return c[0]%2 == 0 && c[1]%2 == 0 && c[2]%2 == 0 }

// face returns the ranks r exchanges faces with at the fine levels: its
// periodic neighbours along the 3 axes in both directions (not itself).
func (g mgGrid) face(r int) map[int]bool {
	c := g.coords(r)
	out := map[int]bool{}
	for a := range 3 {
		for _, d := range []int{-1, 1} {
			n := c
			n[a] = (c[a] + d + g[a]) % g[a]
			if x := g.rank(n); x != r {
				out[x] = true
			}
		}
	}
	return out
}

// coarse returns the ranks an active rank exchanges with on the grid of
// active ranks (none for an inactive one).
func (g mgGrid) coarse(r int) map[int]bool {
	c := g.coords(r)
	out := map[int]bool{}
	if !active(c) {
		return out
	}
	for a := range 3 {
		q := (g[a] + 1) / 2
		for _, d := range []int{-1, 1} {
			n := c
			n[a] = 2 * ((c[a]/2 + d + q) % q)
			if x := g.rank(n); x != r {
				out[x] = true
			}
		}
	}
	return out
}

// group returns the ranks r sends its coarse levels to or receives them
// from: an inactive rank's owner, or an active rank's members.
func (g mgGrid) group(r int) map[int]bool {
	c := g.coords(r)
	out := map[int]bool{}
	if !active(c) {
		out[g.rank([3]int{c[0] - c[0]%2, c[1] - c[1]%2, c[2] - c[2]%2})] = true
		return out
	}
	for x := 0; x < g[0]*g[1]*g[2]; x++ {
		o := g.coords(x)
		if x != r && o[0]-o[0]%2 == c[0] && o[1]-o[1]%2 == c[1] && o[2]-o[2]%2 == c[2] {
			out[x] = true
		}
	}
	return out
}

// partners returns, per rank, the ranks m exchanges messages with (sent to
// or received from).
func partners(m *comm.Matrix) []map[int]bool {
	out := make([]map[int]bool, m.N)
	for i := range out {
		out[i] = map[int]bool{}
	}
	for i := range m.N {
		for j := range m.N {
			if _, c := m.At(i, j); c > 0 {
				out[i][j] = true
				out[j][i] = true
			}
		}
	}
	return out
}

func sorted(s map[int]bool) []int { return slices.Sorted(maps.Keys(s)) }

// TestMGWorkload runs examples/mpi/mg.c on 8, 16 and 27 MPICH ranks. Its
// fine-level halo exchange ("loop 151") uses exactly the 3D face
// neighbours, symmetrically; the coarse exchange ("loop 159") the
// neighbours on the grid of active ranks; the agglomeration each inactive
// rank's owner. Point-to-point only (Jones et al. 2007, section 5), the
// whole-program degree is the union of these, and on 16 and 27 ranks it is
// higher than the degree of every innermost structure, the paper's
// finding: the program needs more partners than any of its loops.
func TestMGWorkload(t *testing.T) {
	for _, c := range []struct {
		np    int
		grid  mgGrid
		whole int
	}{{8, mgGrid{2, 2, 2}, 7}, {16, mgGrid{4, 2, 2}, 9}, {27, mgGrid{3, 3, 3}, 10}} {
		t.Run(fmt.Sprint(c.np), func(t *testing.T) {
			m, rep := record(t, mpichImpl, c.np, "../../examples/mpi/mg.c", Options{}, "-n", "8", "-iter", "2")
			if rep.UnmatchedSends != 0 || rep.UnmatchedRecvs != 0 || rep.OutsideComm != 0 || rep.AnySource != rep.AnySourceResolved {
				t.Errorf("report %+v", rep)
			}
			res := analyze(t, m, comm.Options{Selection: comm.Selection{NoCollectives: true}})
			sel := func(name string) *comm.Matrix {
				ids := res.Find(name)
				if len(ids) == 0 {
					t.Fatalf("no structure %q", name)
				}
				mx, err := res.Select(ids, true)
				if err != nil {
					t.Fatal(err)
				}
				return mx
			}
			fine, coarse := sel("loop 151"), sel("loop 159")
			agg, dist := sel("block agglomerate"), sel("block distribute")
			pf, pc, pa, pd := partners(fine), partners(coarse), partners(agg), partners(dist)
			whole := partners(res.Nodes[0].AggregateMatrix())
			maxWhole := 0
			for r := range c.np {
				checks := []struct {
					what      string
					got, want map[int]bool
				}{{"loop 151", pf[r], c.grid.face(r)}, {"loop 159", pc[r], c.grid.coarse(r)},
					{"block agglomerate", pa[r], c.grid.group(r)}, {"block distribute", pd[r], c.grid.group(r)}}
				union := map[int]bool{}
				for _, k := range checks {
					if !maps.Equal(k.got, k.want) {
						t.Errorf("rank %d %v: %s partners %v, want %v", r, c.grid.coords(r), k.what, sorted(k.got), sorted(k.want))
					}
					maps.Copy(union, k.want)
				}
				if !maps.Equal(whole[r], union) {
					t.Errorf("rank %d: whole-program partners %v, want %v", r, sorted(whole[r]), sorted(union))
				}
				maxWhole = max(maxWhole, len(union))
				for s := range c.np {
					if b1, _ := fine.At(r, s); b1 != func() int64 { b, _ := fine.At(s, r); return b }() {
						t.Errorf("loop 151: %d->%d and %d->%d differ", r, s, s, r)
					}
				}
			}
			wholeDeg := res.Nodes[0].Aggregate.Degree
			if wholeDeg != c.whole || maxWhole != c.whole {
				t.Errorf("whole-program degree %d (model %d), want %d", wholeDeg, maxWhole, c.whole)
			}
			for i, n := range res.Nodes {
				if len(n.Children) > 0 || n.Aggregate.Messages == 0 {
					continue
				}
				if c.np == 8 {
					// On 2x2x2 the one active rank gathers from all 7 others:
					// agglomeration alone already reaches the whole degree.
					if n.Aggregate.Degree > wholeDeg {
						t.Errorf("%s: degree %d above the whole program's %d", res.Path(i), n.Aggregate.Degree, wholeDeg)
					}
					continue
				}
				if n.Aggregate.Degree >= wholeDeg {
					t.Errorf("%s: degree %d, not below the whole program's %d", res.Path(i), n.Aggregate.Degree, wholeDeg)
				}
			}
		})
	}
}
