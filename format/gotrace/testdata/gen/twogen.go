//go:build ignore

// twogen writes testdata/twogen.go1.26.trace, a small Go execution trace
// that spans more than one generation (the runtime starts a new one every
// second), for the partial-import test:
//
//	cd format/gotrace && GOMAXPROCS=2 go run testdata/gen/twogen.go > testdata/twogen.go1.26.trace
//
// Three goroutines pass a token round a ring of channels every 50 ms for
// 2.2 s, each pass inside a "pass" region.
package main

import (
	"context"
	"os"
	"runtime/trace"
	"sync"
	"time"
)

func main() {
	if err := trace.Start(os.Stdout); err != nil {
		panic(err)
	}
	const n = 3
	var ring [n]chan int
	for i := range ring {
		ring[i] = make(chan int)
	}
	stop := time.Now().Add(2200 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				tok, ok := <-ring[i]
				if !ok || time.Now().After(stop) {
					// Pass the end on round the ring.
					close(ring[(i+1)%n])
					return
				}
				trace.WithRegion(context.Background(), "pass", func() { time.Sleep(50 * time.Millisecond) })
				ring[(i+1)%n] <- tok + 1
			}
		}()
	}
	ring[0] <- 0
	wg.Wait()
	trace.Stop()
}
