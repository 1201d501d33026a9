// Command bench is the short benchmark of the naive "global speed ratio"
// predictor in probe-validate: a fixed mix of floating-point arithmetic,
// a streaming pass over 4 MiB and a parallel part, about 50 ms on the
// reference machine. It prints its run time in seconds.
package main

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
)

func main() {
	start := time.Now()
	x := 0.0
	for i := range 2_000_000 {
		x += math.Sqrt(float64(i)) * 1.0000001
	}
	buf := make([]float64, 1<<19)
	for r := range 20 {
		for i := range buf {
			buf[i] = buf[i]*0.5 + float64(r)
		}
	}
	var wg sync.WaitGroup
	w := runtime.GOMAXPROCS(0)
	part := make([]float64, w)
	for g := range w {
		wg.Go(func() {
			s := 0.0
			for i := range 4_000_000 / w {
				s += float64(i%7) * 1.5
			}
			part[g] = s
		})
	}
	wg.Wait()
	fmt.Printf("%.6f %g\n", time.Since(start).Seconds(), x+buf[7]+part[0])
}
