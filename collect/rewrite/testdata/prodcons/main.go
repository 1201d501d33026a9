// Command prodcons is a producer/consumer program used to test the rewriter.
package main

import (
	"fmt"
	"sync"
)

type item struct {
	id    int
	value float64
}

func produce(n int, out chan<- item, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < n; i++ {
		if i%3 == 0 {
			out <- item{id: i, value: float64(i) * 1.5}
			continue
		}
		out <- item{id: i, value: float64(i)}
	}
}

func consume(in <-chan item, done chan<- float64) {
	sum := 0.0
	for it := range in {
		sum += it.value
	}
	done <- sum
}

func main() {
	items := make(chan item, 4)
	done := make(chan float64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := 0
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go produce(10, items, &wg)
	}
	go func() {
		mu.Lock()
		count++
		mu.Unlock()
		consume(items, done)
	}()
	go func() {
		wg.Wait()
		close(items)
	}()
	total := <-done
	select {
	case v, ok := <-done:
		fmt.Println("unexpected", v, ok)
	default:
	}
	mu.Lock()
	fmt.Printf("total %.1f consumers %d\n", total, count)
	mu.Unlock()
}
