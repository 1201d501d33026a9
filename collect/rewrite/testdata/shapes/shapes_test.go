package shapes

import "testing"

func TestShapes(t *testing.T) {
	if i, j := Search([][]int{{1, 2}, {-1, 7}, {3, 7}}, 7); i != 2 || j != 1 {
		t.Errorf("Search = %d, %d", i, j)
	}
	for x, want := range map[int]string{-1: "negative", 0: "zero", 5: "small", 50: "medium", 500: "large"} {
		if got := Classify(x); got != want {
			t.Errorf("Classify(%d) = %s", x, got)
		}
	}
	in, out, quit := make(chan int), make(chan int, 10), make(chan struct{})
	go func() { in <- 1; in <- 2; close(in) }()
	if n := Relay(in, out, quit); n != 2 || <-out != 2 || <-out != 4 {
		t.Errorf("Relay = %d", n)
	}
	a, b := make(chan int, 3), make(chan chan int, 1)
	c := make(chan int, 1)
	a <- 1
	a <- 2
	a <- 3
	b <- c
	if got := Pipe(a, b); got != 5 || <-c != 2 {
		t.Errorf("Pipe = %d", got)
	}
	g := make(chan string, 2)
	g <- "x"
	g <- "y"
	if got := Gather(g, 2); len(got) != 2 || got[1] != "y" {
		t.Errorf("Gather = %v", got)
	}
	if got := Fan(1, 4, func(w int) int { return w * w }); got != 15 {
		t.Errorf("Fan = %d", got)
	}
	var cn Counter
	cn.Add(3)
	if cn.n != 3 {
		t.Errorf("Counter = %d", cn.n)
	}
}
