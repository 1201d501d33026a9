// Package links connects goroutines that stand for message-passing ranks
// (examples/mg, examples/cg): one buffered channel per ordered pair of
// ranks, receives matched by source and tag as MPI matches them (messages
// of other tags from the same source wait their turn), and every message
// recorded as a Send and a Recv on the ranks' instrument.Process.
package links

import (
	"fmt"
	"sync"

	"github.com/parscope/parscope/instrument"
)

type msg struct {
	tag  int32
	data []float64
}

// Net is the links between n ranks.
type Net struct {
	n     int
	ch    [][]chan msg // ch[src][dst]
	held  [][][]msg    // held[dst][src]: received early, waiting for their tag
	procs []*instrument.Process
}

// New returns the links of n ranks recording on rec (nil: not recorded);
// depth is the capacity of each link, the messages a rank may send to one
// partner before it receives them.
func New(rec *instrument.Recorder, n, depth int) *Net {
	nt := &Net{n: n, ch: make([][]chan msg, n), held: make([][][]msg, n), procs: make([]*instrument.Process, n)}
	for i := range n {
		nt.ch[i] = make([]chan msg, n)
		for j := range n {
			nt.ch[i][j] = make(chan msg, depth)
		}
		nt.held[i] = make([][]msg, n)
		nt.procs[i] = rec.Process(i)
	}
	return nt
}

// Proc returns rank r's recording handle.
func (nt *Net) Proc(r int) *instrument.Process { return nt.procs[r] }

// Send sends a copy of data from src to dst with tag.
func (nt *Net) Send(src, dst int, tag int32, data []float64) {
	nt.procs[src].Send(dst, int64(8*len(data)), tag)
	nt.ch[src][dst] <- msg{tag, append([]float64(nil), data...)}
}

// Recv receives the next message from src to dst with tag into buf (which
// must be large enough) and returns its length.
func (nt *Net) Recv(dst, src int, tag int32, buf []float64) int {
	h := nt.held[dst][src]
	for i, m := range h {
		if m.tag == tag {
			nt.held[dst][src] = append(h[:i:i], h[i+1:]...)
			return nt.deliver(dst, src, m, buf)
		}
	}
	for m := range nt.ch[src][dst] {
		if m.tag == tag {
			return nt.deliver(dst, src, m, buf)
		}
		nt.held[dst][src] = append(nt.held[dst][src], m)
	}
	panic("links: closed link")
}

func (nt *Net) deliver(dst, src int, m msg, buf []float64) int {
	if len(m.data) > len(buf) {
		panic(fmt.Sprintf("links: %d values from %d to %d (tag %d) into a buffer of %d", len(m.data), src, dst, m.tag, len(buf)))
	}
	copy(buf, m.data)
	nt.procs[dst].Recv(src, int64(8*len(m.data)), m.tag)
	return len(m.data)
}

// Barrier is a reusable barrier for n goroutines that also sums a value
// across them (a reduction without messages: the instrumentation library
// records point-to-point messages only).
type Barrier struct {
	mu    sync.Mutex
	cond  *sync.Cond
	n     int
	count int
	gen   int
	sum   float64
	last  float64
}

// NewBarrier returns a barrier for n goroutines.
func NewBarrier(n int) *Barrier {
	b := &Barrier{n: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// Sum adds v, waits for the other goroutines, and returns the sum of
// everyone's v.
func (b *Barrier) Sum(v float64) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	gen := b.gen
	b.sum += v
	b.count++
	if b.count == b.n {
		b.last, b.sum, b.count = b.sum, 0, 0
		b.gen++
		b.cond.Broadcast()
		return b.last
	}
	for gen == b.gen {
		b.cond.Wait()
	}
	return b.last
}
