package instrument

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// TestBlockCache reads a file of a few blocks and an odd tail through the
// cache at random offsets and lengths, small and larger than a block,
// crossing blocks and the end, and compares every read with the file's
// own: the bytes, the count and whether it ended at the end of the file.
func TestBlockCache(t *testing.T) {
	data := make([]byte, 5*cacheBlockSize+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	file := bytes.NewReader(data)
	c := newBlockCache(file, int64(len(data)))
	for i := range 20000 {
		n := r.IntN(600)
		switch i % 50 {
		case 0:
			n = cacheBlockSize + r.IntN(1000)
		case 1:
			n = cacheMaxRead + 1 + r.IntN(1000)
		case 2:
			n = cacheMaxRead
		}
		off := r.Int64N(int64(len(data)) + 100)
		if i%7 == 0 { // near a block's end
			off = int64(r.IntN(6))*cacheBlockSize - int64(r.IntN(n+1))
			off = max(off, 0)
		}
		got, want := make([]byte, n), make([]byte, n)
		gn, gerr := c.ReadAt(got, off)
		wn, werr := file.ReadAt(want, off)
		if gn != wn || !bytes.Equal(got[:gn], want[:wn]) || (gerr == nil) != (werr == nil) || errors.Is(gerr, io.EOF) != errors.Is(werr, io.EOF) {
			t.Fatalf("read %d: %d bytes at %d: got %d, %v; the file gives %d, %v", i, n, off, gn, gerr, wn, werr)
		}
	}
}

// TestBlockCacheShortFile: a file that is shorter than the size the cache
// was given is an error, not stale bytes.
func TestBlockCacheShortFile(t *testing.T) {
	c := newBlockCache(bytes.NewReader(make([]byte, 100)), 1000)
	if _, err := c.ReadAt(make([]byte, 10), 500); err == nil {
		t.Fatal("read past the end of a shorter file succeeded")
	}
}
