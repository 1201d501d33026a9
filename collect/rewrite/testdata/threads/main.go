// Command threads exercises the rewriter's handle threading and its
// wrapping of go statements that call named functions.
package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

type shape interface{ area() float64 }

type square struct{ side float64 }

// area satisfies shape: it keeps its signature.
func (s square) area() float64 { return s.side * s.side }

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

// add is only ever called directly: it receives the handle.
func (c *counter) add(word string, k int) {
	c.mu.Lock()
	c.n[word] += k
	c.mu.Unlock()
}

// addDone is a method started by a go statement.
func (c *counter) addDone(word string, k int, wg *sync.WaitGroup) {
	defer wg.Done()
	c.add(word, k)
}

// weight is called directly, in a go statement and deferred.
func weight(word string) int { return len(word) % 3 }

// pair returns two values, and split is called with them: split keeps its
// signature (split(pair()) cannot take an extra argument).
func pair(s string) (string, string) { a, b, _ := strings.Cut(s, " "); return a, b }

func split(a, b string) string { return b + " " + a }

// asValue is used as a function value: it keeps its signature.
func asValue(s string) string { return strings.ToUpper(s) }

// inTests is named by the package's test file: it keeps its signature.
func inTests(x int) int { return x * 2 }

// initial runs in a package-level initialiser: it keeps its signature.
func initial() int { return 7 }

var seed = initial()

func work(id int, words []string, c *counter, wg *sync.WaitGroup, scale float64, opt *int, rest ...string) {
	defer wg.Done()
	for _, w := range words {
		c.add(w, weight(w)+id*0+len(rest))
	}
	_ = scale
	_ = opt
}

func sum(xs ...int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

func main() {
	c := &counter{n: map[string]int{}}
	var wg sync.WaitGroup
	words := strings.Fields("the quick brown fox jumps over the lazy dog again and again")
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go work(i, words[i*4:(i+1)*4], c, &wg, 1.5, nil, "x", "y")
	}
	wg.Add(1)
	go c.addDone("extra", 100, &wg)
	parts := []int{1, 2, 3}
	done := make(chan int, 1)
	go func(xs ...int) { done <- sum(xs...) }(parts...)
	f := asValue
	wg.Wait()
	keys := make([]string, 0, len(c.n))
	for k := range c.n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Println(k, c.n[k])
	}
	var s shape = square{3}
	fmt.Println(f("done"), split(pair("hello world")), s.area(), inTests(seed), <-done)
	defer fmt.Println("weight of end", weight("end"))
}
