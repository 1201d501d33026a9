package report

import (
	"context"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// CommMaxSide is the largest side of a matrix in the bundle: larger
// matrices are summed into blocks of adjacent processes.
const CommMaxSide = 128

// Comm is the communication per code structure of run 0 (Jones et al. 2007), with
// collectives decomposed linearly.
type Comm struct {
	*comm.Result
	// Ranking orders the structures alone and with nested structures.
	RankOwn       comm.Ranking `json:"ranking_own"`
	RankAggregate comm.Ranking `json:"ranking_aggregate"`
	// Matrices holds, per node (same index as Nodes), its matrices alone
	// and with nested structures.
	Matrices []NodeMatrices `json:"matrices"`
	// Group is the number of processes summed into one row/column of the
	// matrices (1 when n ≤ CommMaxSide).
	Group int `json:"group"`
	// Regions gives the source location of the nodes' regions, by region id.
	Regions map[int32]trace.RegionDef `json:"regions"`
	// Sources holds the lines of the source files the regions name that
	// were found inside the source directories the user gave
	// (Options.SourceDirs), by the file name the trace gives.
	Sources map[string][]string `json:"sources,omitempty"`
}

// NodeMatrices are one structure's matrices.
type NodeMatrices struct {
	Own       *comm.Matrix `json:"own"`
	Aggregate *comm.Matrix `json:"aggregate"`
}

func buildComm(ctx context.Context, s *store.Store, _ Options) (*Comm, error) {
	h := s.Header()
	rd := s.Records(store.ReadOptions{Runs: []int32{0},
		Kinds: []trace.Kind{trace.KindEnter, trace.KindExit, trace.KindSend, trace.KindRecv, trace.KindCollective}})
	res, err := comm.Analyze(ctx, h, rd, comm.Options{Run: 0, Decompose: trace.Linear, WorkingSets: true})
	if err != nil {
		return nil, err
	}
	c := &Comm{Result: res, RankOwn: res.Rank(false), RankAggregate: res.Rank(true), Group: 1, Regions: map[int32]trace.RegionDef{}}
	for c.Group*CommMaxSide < res.Procs {
		c.Group *= 2
	}
	for i := range res.Nodes {
		n := &res.Nodes[i]
		c.Matrices = append(c.Matrices, NodeMatrices{Own: coarsen(n.OwnMatrix(), c.Group), Aggregate: coarsen(n.AggregateMatrix(), c.Group)})
	}
	for _, r := range h.Regions {
		c.Regions[r.ID] = r
	}
	return c, nil
}

// coarsen sums g×g blocks of m.
func coarsen(m *comm.Matrix, g int) *comm.Matrix {
	if g <= 1 {
		return m
	}
	out := comm.NewMatrix((m.N + g - 1) / g)
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			k := (i/g)*out.N + j/g
			out.Bytes[k] += m.Bytes[i*m.N+j]
			out.Count[k] += m.Count[i*m.N+j]
		}
	}
	return out
}
