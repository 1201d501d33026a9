package instrument

import (
	"runtime"
	"sync"
	"unsafe"
)

// Goid returns the calling goroutine's id, the number runtime.Stack
// prints after "goroutine". Rewritten programs key their goroutines'
// processes by it.
//
// Parsing runtime.Stack costs a traceback (about a microsecond, more on a
// cold binary, and a stack large enough to grow a new goroutine's), paid
// twice by every goroutine a rewritten program starts. Where the
// runtime's goroutine descriptor can be reached (getg: amd64 and arm64),
// Goid reads the id from it instead, at an offset found once by checking
// the descriptors of several goroutines against what runtime.Stack
// prints; where none is found, or on other architectures, it parses
// runtime.Stack.
func Goid() int64 {
	goidOnce.Do(findGoidOffset)
	if goidOff >= 0 {
		return *(*int64)(unsafe.Add(getg(), goidOff))
	}
	return stackGoid()
}

// goidOff is the offset of the id in the goroutine descriptor, or -1 when
// Goid parses runtime.Stack.
var (
	goidOnce sync.Once
	goidOff  = -1
)

// goidSearch bounds the offsets searched: the runtime's g struct holds its
// id within its first 256 bytes in every release that has getg's layout
// (152 in Go 1.26), and is larger than that.
const goidSearch = 256

// goidWitnesses is how many goroutines must agree on the offset.
const goidWitnesses = 4

// findGoidOffset sets goidOff to the one offset at which each of
// goidWitnesses goroutines (with different ids) holds its own id, if
// there is exactly one.
func findGoidOffset() {
	if !haveGetg {
		return
	}
	counts := make([]int, goidSearch/8)
	ids := map[int64]bool{}
	for range goidWitnesses {
		ch := make(chan int64, 1)
		go func() {
			id := stackGoid()
			g := getg()
			for i := range counts {
				if *(*int64)(unsafe.Add(g, 8*i)) == id {
					counts[i]++
				}
			}
			ch <- id
		}()
		ids[<-ch] = true
	}
	if len(ids) != goidWitnesses {
		return
	}
	off := -1
	for i, c := range counts {
		if c == goidWitnesses {
			if off >= 0 {
				return // ambiguous: parse runtime.Stack
			}
			off = 8 * i
		}
	}
	goidOff = off
}

// stackGoid parses the calling goroutine's id from runtime.Stack.
func stackGoid() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	var id int64
	for i := len("goroutine "); i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		id = id*10 + int64(b[i]-'0')
	}
	return id
}
