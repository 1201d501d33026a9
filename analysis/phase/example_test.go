package phase_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/format/bbv"
)

// Two phases alternate: one runs blocks 1-3, the other blocks 4-6.
func ExampleRun() {
	var in strings.Builder
	for i := 0; i < 40; i++ {
		if (i/5)%2 == 0 {
			fmt.Fprintf(&in, "T:1:%d   :2:300   :3:200\n", 500+i%3)
		} else {
			fmt.Fprintf(&in, "T:4:%d   :5:100   :6:600\n", 300+i%4)
		}
	}
	f, err := bbv.Parse("example.bb", strings.NewReader(in.String()), bbv.ParseOptions{SimPointQuirks: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := phase.DefaultOptions() // SimPoint 3.2's defaults, Compat mode
	opts.MaxK = 5
	res, err := phase.Run(context.Background(), f, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("k =", res.K)
	res.WriteSimpoints(os.Stdout)
	res.WriteWeights(os.Stdout)
	for _, p := range res.Phases {
		fmt.Printf("phase %d: %d intervals, simulation point %d\n", p.ID, p.Size, p.Representative)
	}
	// Output:
	// k = 2
	// 1 0
	// 6 1
	// 0.5 0
	// 0.5 1
	// phase 0: 20 intervals, simulation point 1
	// phase 1: 20 intervals, simulation point 6
}
