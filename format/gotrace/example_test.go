package gotrace_test

import (
	"context"
	"fmt"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/gotrace"
	"github.com/parscope/parscope/trace"
)

func ExampleImport() {
	// A trace of the Go runtime's annotations test program (one task, five
	// user regions, one log), written by Go 1.26.8.
	var m trace.Memory
	err := gotrace.Import(context.Background(), []string{"../../testdata/real/traces/go/annotations.go1.26.trace"}, format.Options{}, &m)
	if err != nil {
		panic(err)
	}
	fmt.Println("goroutines:", m.H.Runs[0].Procs)
	for _, p := range m.H.Procs[:5] {
		fmt.Printf("process %d: goroutine %s %s\n", p.Proc, p.Extra["goid"], p.Name)
	}
	ix := trace.NewIndex(&m.H)
	for _, r := range m.Records {
		if r.Proc == 4 && r.Kind != trace.KindState {
			switch r.Kind {
			case trace.KindEvent:
				fmt.Println(r.T, ix.EventName(r.ID))
			default:
				fmt.Println(r.T, r.Kind, ix.RegionName(r.ID))
			}
		}
	}
	fmt.Println("repairs:", m.H.Repairs)
	// Output:
	// goroutines: 10
	// process 0: goroutine 1 main.main
	// process 1: goroutine 22 runtime.traceStartReadCPU.func1
	// process 2: goroutine 23 runtime.(*traceAdvancerState).start.func1
	// process 3: goroutine 24 runtime/trace.(*traceMultiplexer).startLocked.func1
	// process 4: goroutine 25 main.main.func1
	// 149888 enter unended region
	// 150592 enter region0
	// 150848 enter region1
	// 151488 log: key0
	// 151872 exit region1
	// 152128 exit region0
	// 152320 task end: task0
	// 154304 exit unended region
	// repairs: map[unended-region-closed-at-end:3]
}

func ExampleStates() {
	for _, s := range gotrace.States(false) {
		fmt.Println(s.ID, s.Name)
	}
	// Output:
	// 0 running
	// 1 runnable
	// 2 waiting
	// 3 syscall
	// 4 not-exist
	// 5 undetermined
}
