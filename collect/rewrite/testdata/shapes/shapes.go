// Package shapes exercises the statement forms the rewriter handles.
package shapes

import (
	"sync"
	"time"
)

// Counter is a mutex-protected counter.
type Counter struct {
	sync.Mutex
	n int
}

// Add adds d under the lock (an embedded Mutex's Lock ends a block).
func (c *Counter) Add(d int) {
	c.Lock()
	c.n += d
	c.Unlock()
}

// Search returns the first (i, j) with grid[i][j] == want, using labeled
// loops, continue, break and returns inside nested regions.
func Search(grid [][]int, want int) (int, int) {
outer:
	for i, row := range grid {
		for j, v := range row {
			if v < 0 {
				continue outer
			}
			if v == want {
				return i, j
			}
			if v > 100 {
				break outer
			}
		}
	}
	return -1, -1
}

// Classify uses a switch and an else-if chain.
func Classify(x int) string {
	switch {
	case x < 0:
		return "negative"
	case x == 0:
		return "zero"
	}
	if x < 10 {
		return "small"
	} else if x < 100 {
		return "medium"
	} else {
		return "large"
	}
}

// Relay forwards values from in to out until in is closed or quit fires.
func Relay(in <-chan int, out chan<- int, quit <-chan struct{}) int {
	n := 0
	for {
		select {
		case v, ok := <-in:
			if !ok {
				return n
			}
			out <- v * 2
			n++
		case <-quit:
			return n
		case <-time.After(time.Hour):
			return -1
		}
	}
}

// Pipe receives in several expression forms.
func Pipe(a chan int, b chan chan int) int {
	x := <-a + 1
	c := <-b
	c <- <-a
	v, ok := <-a
	if !ok {
		return x
	}
	return x + v
}

// Gather collects n values of any type (the element size depends on T).
func Gather[T any](ch chan T, n int) []T {
	out := make([]T, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, <-ch)
	}
	return out
}

// Fan starts workers and waits for them.
//
//parscope:process rank
func Fan(rank int, workers int, f func(int) int) int {
	var wg sync.WaitGroup
	results := make(chan int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			results <- f(w)
		}(w)
	}
	wg.Wait()
	close(results)
	sum := 0
	for r := range results {
		sum += r
	}
	return sum + rank
}
