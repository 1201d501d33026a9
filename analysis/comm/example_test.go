package comm_test

import (
	"context"
	"fmt"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/trace"
)

// Two processes exchange inside a loop; process 0 also sends once outside
// it. The loop's matrix holds the exchange alone; the program's, with
// aggregation, everything.
func ExampleAnalyze() {
	var m trace.Memory
	m.H.Runs = []trace.RunInfo{{ID: 0, Procs: 2}}
	m.H.Regions = []trace.RegionDef{{ID: 0, Kind: trace.RegionLoop, Label: "LOOP_1", Parent: -1}}
	for _, r := range []trace.Record{
		trace.Enter(0, 0, 1, 0), trace.Send(0, 0, 2, 3, 1, 800, 0, 0), trace.Exit(0, 0, 4, 0),
		trace.Send(0, 0, 5, 6, 1, 8, 1, 0),
		trace.Enter(0, 1, 1, 0), trace.Send(0, 1, 2, 3, 0, 800, 0, 0), trace.Exit(0, 1, 4, 0),
	} {
		if err := m.Add(r); err != nil {
			fmt.Println(err)
			return
		}
	}
	m.Sort()
	res, err := comm.Analyze(context.Background(), &m.H, m.Reader(), comm.Options{WorkingSets: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range res.Nodes {
		fmt.Printf("%s: alone %d B in %d messages, with nested %d B, degree %d\n",
			n.Name, n.Own.Bytes, n.Own.Messages, n.Aggregate.Bytes, n.Aggregate.Degree)
	}
	loop := res.Nodes[res.Find("LOOP_1")[0]]
	b, c := loop.OwnMatrix().At(0, 1)
	fmt.Printf("LOOP_1 0>1: %d B in %d message; working set %v\n", b, c, loop.WorkingSets.Sets[0].Pairs)
	fmt.Printf("unmatched: %d sends, %d receives\n", res.Problems.UnmatchedSends, res.Problems.UnmatchedRecvs)
	// Output:
	// program: alone 8 B in 1 messages, with nested 1608 B, degree 1
	// LOOP_1: alone 1600 B in 2 messages, with nested 1600 B, degree 1
	// LOOP_1 0>1: 800 B in 1 message; working set [[0 1] [1 0]]
	// unmatched: 3 sends, 0 receives
}
