package main

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/examples/internal/tracecheck"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/trace"
)

func TestDims(t *testing.T) {
	for n, want := range map[int][3]int{1: {1, 1, 1}, 8: {2, 2, 2}, 12: {3, 2, 2}, 16: {4, 2, 2}, 27: {3, 3, 3}, 64: {4, 4, 4}, 7: {7, 1, 1}} {
		if got := Dims(n); got != want {
			t.Errorf("Dims(%d) = %v, want %v", n, got, want)
		}
	}
}

// TestMG16 records 16 ranks (4x2x2). The partners are written out by hand
// for two ranks; the totals are those of examples/mpi/mg.c run under the
// MPI shim with the same parameters (1,574,912 bytes in 1,424 messages).
func TestMG16(t *testing.T) {
	tr, _ := tracecheck.RecordRun(t, instrument.Options{Regions: Regions}, Run, Config{Procs: 16, N: 16, Levels: 4, Iter: 4})
	if n := tr.CheckMessages(t); n != 1424 {
		t.Errorf("%d messages, want 1424", n)
	}
	res, err := comm.Analyze(context.Background(), tr.Header, trace.NewSliceReader(tr.Merged), comm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := res.Nodes[0]
	if root.Aggregate.Bytes != 1574912 || root.Aggregate.Messages != 1424 {
		t.Errorf("whole program: %d bytes in %d messages", root.Aggregate.Bytes, root.Aggregate.Messages)
	}
	sel := func(name string) *comm.Matrix {
		m, err := res.Select(res.Find(name), true)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	partners := func(m *comm.Matrix, r int) []int {
		s := map[int]bool{}
		for j := range m.N {
			if _, c := m.At(r, j); c > 0 {
				s[j] = true
			}
			if _, c := m.At(j, r); c > 0 {
				s[j] = true
			}
		}
		return slices.Sorted(maps.Keys(s))
	}
	whole := root.AggregateMatrix()
	for _, c := range []struct {
		rank                int
		fine, coarse, group []int
		wholeSet            []int
	}{
		// rank 0 at (0,0,0): face neighbours (1,0,0)=4, (3,0,0)=12,
		// (0,1,0)=2, (0,0,1)=1; on the active grid (2,0,0)=8; it holds the
		// coarse levels of ranks 1..7.
		{0, []int{1, 2, 4, 12}, []int{8}, []int{1, 2, 3, 4, 5, 6, 7}, []int{1, 2, 3, 4, 5, 6, 7, 8, 12}},
		// rank 5 at (1,0,1): (0,0,1)=1, (2,0,1)=9, (1,1,1)=7, (1,0,0)=4;
		// inactive, owned by rank 0.
		{5, []int{1, 4, 7, 9}, nil, []int{0}, []int{0, 1, 4, 7, 9}},
	} {
		for _, k := range []struct {
			what string
			got  []int
			want []int
		}{{"loop 151", partners(sel("loop 151"), c.rank), c.fine}, {"loop 159", partners(sel("loop 159"), c.rank), c.coarse},
			{"block agglomerate", partners(sel("block agglomerate"), c.rank), c.group},
			{"block distribute", partners(sel("block distribute"), c.rank), c.group},
			{"whole program", partners(whole, c.rank), c.wholeSet}} {
			if !slices.Equal(k.got, k.want) && !(len(k.got) == 0 && len(k.want) == 0) {
				t.Errorf("rank %d %s: partners %v, want %v", c.rank, k.what, k.got, k.want)
			}
		}
	}
	// The program needs 9 partners; no innermost structure more than 7.
	if root.Aggregate.Degree != 9 {
		t.Errorf("whole-program degree %d, want 9", root.Aggregate.Degree)
	}
	for i, n := range res.Nodes {
		if len(n.Children) == 0 && n.Aggregate.Degree >= root.Aggregate.Degree {
			t.Errorf("%s: degree %d, not below the whole program's", res.Path(i), n.Aggregate.Degree)
		}
	}
}
