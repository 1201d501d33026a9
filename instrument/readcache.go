package instrument

import (
	"io"
)

// blockCache is an io.ReaderAt over a file that serves small reads (up to
// cacheMaxRead bytes) from the few blocks it last read, and passes larger
// ones to the file. Building a trace of many processes reads each one's
// chunks in turn; a recording of thousands of short-lived goroutines holds
// a chunk or two of a few records for each, next to one another in the
// spill file, and a read call for each was most of the build's system
// time. Reads that jump about the file (a merge of processes' streams)
// would make it read a block for each small read: build uses it only
// where it reads the processes one after another.
type blockCache struct {
	f      io.ReaderAt
	size   int64 // of the file
	blocks [cacheBlocks]cachedBlock
	clock  uint64
}

// cachedBlock is the block of the file at off (n bytes, shorter at the
// end of the file); used orders the blocks for eviction.
type cachedBlock struct {
	off  int64
	n    int
	data []byte
	used uint64
}

const (
	cacheBlockSize = 256 << 10
	cacheBlocks    = 4
	cacheMaxRead   = 4 << 10
)

func newBlockCache(f io.ReaderAt, size int64) *blockCache {
	c := &blockCache{f: f, size: size}
	for i := range c.blocks {
		c.blocks[i].off = -1
	}
	return c
}

// ReadAt implements io.ReaderAt.
func (c *blockCache) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > cacheMaxRead || off < 0 {
		return c.f.ReadAt(p, off)
	}
	done := 0
	for done < len(p) {
		at := off + int64(done)
		if at >= c.size {
			return done, io.EOF
		}
		b, err := c.block(at - at%cacheBlockSize)
		if err != nil {
			return done, err
		}
		k := copy(p[done:], b.data[at-b.off:b.n])
		if k == 0 {
			return done, io.EOF
		}
		done += k
	}
	return done, nil
}

// block returns the cached block at off, reading it in place of the
// least recently used one when it is not cached.
func (c *blockCache) block(off int64) (*cachedBlock, error) {
	c.clock++
	old := &c.blocks[0]
	for i := range c.blocks {
		b := &c.blocks[i]
		if b.off == off {
			b.used = c.clock
			return b, nil
		}
		if b.used < old.used {
			old = b
		}
	}
	if old.data == nil {
		old.data = make([]byte, cacheBlockSize)
	}
	n := int(min(cacheBlockSize, c.size-off))
	if got, err := c.f.ReadAt(old.data[:n], off); got < n {
		old.off, old.used = -1, 0
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF // the file is shorter than it was
		}
		return nil, err
	}
	old.off, old.n, old.used = off, n, c.clock
	return old, nil
}
