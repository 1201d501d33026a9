package instrument

import (
	"runtime"
	"sync"
	"testing"
)

// TestGoid checks Goid against runtime.Stack on many goroutines at once,
// and that on amd64 and arm64 it reads the runtime's descriptor rather
// than parsing runtime.Stack.
func TestGoid(t *testing.T) {
	if got, want := Goid(), stackGoid(); got != want {
		t.Fatalf("Goid() = %d on the test's goroutine, runtime.Stack says %d", got, want)
	}
	if haveGetg && goidOff < 0 {
		t.Fatalf("no offset of the goroutine id found on %s: Goid parses runtime.Stack", runtime.GOARCH)
	}
	const n = 2000
	var wg sync.WaitGroup
	type pair struct{ got, want int64 }
	res := make([]pair, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.Gosched()
			res[i] = pair{Goid(), stackGoid()}
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, p := range res {
		if p.got != p.want {
			t.Fatalf("goroutine %d: Goid() = %d, runtime.Stack says %d", i, p.got, p.want)
		}
		if seen[p.got] {
			t.Fatalf("goroutine %d: id %d seen twice", i, p.got)
		}
		seen[p.got] = true
	}
}

// BenchmarkGoid compares Goid with parsing runtime.Stack.
func BenchmarkGoid(b *testing.B) {
	b.Run("descriptor", func(b *testing.B) {
		for b.Loop() {
			Goid()
		}
	})
	b.Run("stack", func(b *testing.B) {
		for b.Loop() {
			stackGoid()
		}
	})
}
