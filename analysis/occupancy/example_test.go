package occupancy_test

import (
	"fmt"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/trace"
)

// Two processes in modes busy (state 0) and idle (state 1) for 10 ns.
func Example() {
	h := &trace.Header{States: []trace.StateDef{{ID: 0, Name: "busy"}, {ID: 1, Name: "idle"}}}
	recs := []trace.Record{
		trace.State(0, 0, 0, 0), trace.State(0, 1, 0, 0),
		trace.State(0, 1, 4, 1),
		trace.State(0, 0, 6, 1),
	}
	acc, err := occupancy.NewAccumulator(occupancy.StateModes(h), 2, 0, occupancy.Options{})
	if err != nil {
		panic(err)
	}
	for i := range recs {
		if err := acc.Add(&recs[i]); err != nil {
			panic(err)
		}
	}
	res, err := acc.Result(10)
	if err != nil {
		panic(err)
	}
	for _, m := range res.Table {
		fmt.Println(res.Modes, m.Counts, m.Occupancy)
	}
	fmt.Println("mean node occupancy:", res.Mean(), "local:", res.LocalMean())
	fmt.Println("possible macrostates:", res.Possible(), "observed:", len(res.Table))
	// Output:
	// [busy idle] [2 0] 4
	// [busy idle] [1 1] 2
	// [busy idle] [0 2] 4
	// mean node occupancy: [5 5] local: [5 5]
	// possible macrostates: 3 observed: 3
}

// Shards of one run, computed separately and merged, give the same result
// as one pass; the second shard does not know process 0's mode.
func ExampleAccumulator_Merge() {
	h := &trace.Header{States: []trace.StateDef{{ID: 0, Name: "U"}, {ID: 1, Name: "R"}}}
	modes := occupancy.StateModes(h)
	first, _ := occupancy.NewAccumulator(modes, 2, 0, occupancy.Options{})
	for _, r := range []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 1, 0, 1)} {
		_ = first.Add(&r)
	}
	second, _ := occupancy.NewAccumulator(modes, 2, 5, occupancy.Options{})
	for _, r := range []trace.Record{trace.State(0, 1, 5, 0), trace.State(0, 1, 8, 1)} {
		_ = second.Add(&r)
	}
	if err := first.Merge(second); err != nil {
		panic(err)
	}
	res, _ := first.Result(10)
	fmt.Println(res.Table, res.Mean())
	// Output:
	// [{[1 1] 7} {[2 0] 3}] [6.5 3.5]
}
