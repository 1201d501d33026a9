package comm

import (
	"context"
	"testing"

	"github.com/parscope/parscope/trace"
)

// FuzzAccumulator feeds arbitrary record streams (every 8 bytes one record:
// kind, process, region/peer/op, bytes, comm, root) and checks that the
// accumulator never panics and that the matrices add up: the program's
// aggregate matrix is the sum of every structure's own matrix.
func FuzzAccumulator(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 8, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 5, 1, 0, 8, 0, 0, 0, 0})
	f.Add([]byte{6, 0, 4, 8, 0, 255, 0, 0, 6, 1, 4, 8, 0, 255, 0, 0, 6, 2, 2, 8, 1, 1, 0, 0, 3, 2, 9, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m trace.Memory
		m.H.Runs = []trace.RunInfo{{ID: 0, Procs: 3}}
		m.H.Regions = []trace.RegionDef{{ID: 0, Label: "A", Parent: 1}, {ID: 1, Label: "B", Parent: 0}, {ID: 2, Label: "C", Parent: -1}}
		m.H.Comms = []trace.CommDef{{ID: 1, Members: []int32{2, 0}}}
		t0 := int64(0)
		for i := 0; i+8 <= len(data); i += 8 {
			d := data[i : i+8]
			p := int32(d[1] % 4) // process 3 is outside the run
			t0++
			x := int32(int8(d[2]))
			root := int32(int8(d[5]))
			var r trace.Record
			switch d[0] % 7 {
			case 0, 1:
				r = trace.Enter(0, p, t0, x%4)
			case 2:
				r = trace.Exit(0, p, t0, x%4)
			case 3:
				r = trace.Send(0, p, t0, t0, x%5, int64(d[3]), int32(d[6]%2), int32(d[4]%2))
			case 4:
				r = trace.Recv(0, p, t0, t0, x%5, int64(d[3]), int32(d[6]%2), int32(d[4]%2))
			case 5:
				r = trace.Coll(0, p, t0, t0, trace.CollectiveOp(d[2]%14), root%4, int64(d[3]), int32(d[4]%3))
			default:
				r = trace.Event(0, p, t0, 0, 0)
			}
			if err := m.Add(r); err != nil {
				return
			}
		}
		for _, alg := range []trace.Decomposition{trace.Linear, trace.BinomialTree, trace.Ring} {
			res, err := Analyze(context.Background(), &m.H, m.Reader(), Options{Selection: Selection{Decompose: alg}, WorkingSets: true})
			if err != nil {
				continue // a record of process 3: reported as an error
			}
			sum, err := res.Select([]int{}, false)
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.Nodes {
				sum.AddMatrix(res.Nodes[i].own)
			}
			b, c := res.Nodes[0].agg.Totals()
			sb, sc := sum.Totals()
			if b != sb || c != sc || res.Nodes[0].Aggregate.Bytes != b {
				t.Fatalf("program %d B/%d, sum of structures %d B/%d", b, c, sb, sc)
			}
		}
	})
}
