package instrument

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parscope/parscope/trace"
)

// TestSpillBatches hands the spill writer buffers of many sizes, one
// larger than a write batch, with flush points between them, and checks
// that the file holds every chunk intact at the offset the writer
// recorded, with the entries handed over, and that the buffers pending
// at a flush point are written in one write call per batch.
func TestSpillBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), spillFile)
	s, err := newSpiller(path, 100, 1<<15)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{1, 5, 64, 3, 2, writeBatch/entrySize + 7, 1, 1024, 9, 1, 7}
	// Flush after buffers 4, 7 and 10: the first batch is 5 buffers in one
	// call; the second, the large buffer alone and then two more; the
	// third, three buffers in one call.
	flushAt := map[int]int{4: 1, 7: 3, 10: 4}
	var want [][]entry
	for i, n := range sizes {
		buf := make([]entry, n)
		for j := range buf {
			buf[j] = entry{T: int64(1000*i + j), V: int64(j), ID: int32(i), Peer: -1, Tag: int32(n), Kind: trace.KindSend}
		}
		want = append(want, slices.Clone(buf))
		s.reqs <- spillReq{proc: int32(i % 3), buf: buf}
		if calls, ok := flushAt[i]; ok {
			if err := s.sync(); err != nil {
				t.Fatal(err)
			}
			if s.writes != calls {
				t.Fatalf("after buffer %d: %d write calls, want %d", i, s.writes, calls)
			}
		}
	}
	chunks := s.chunks
	if err := s.stop(false); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc, err := scanChunks(f)
	if err != nil {
		t.Fatal(err)
	}
	if sc.count != len(sizes) || len(sc.skipped) != 0 || sc.torn != 0 {
		t.Fatalf("scan: %d chunks, skipped %v, torn %d; want %d intact", sc.count, sc.skipped, sc.torn, len(sizes))
	}
	next := map[int32]int{}
	for i, n := range sizes {
		p := int32(i % 3)
		got, mine := sc.chunks[p][next[p]], chunks[p][next[p]]
		next[p]++
		if got.n != n || got.off != mine.off || mine.mem != nil {
			t.Fatalf("buffer %d: scanned %d entries at %d; the writer says %d at %d (in memory: %v)", i, got.n, got.off, mine.n, mine.off, mine.mem != nil)
		}
		raw := make([]byte, n*entrySize)
		if _, err := f.ReadAt(raw, got.off); err != nil {
			t.Fatal(err)
		}
		for j, w := range want[i] {
			o := raw[j*entrySize:]
			e := entry{
				T: int64(binary.LittleEndian.Uint64(o[0:])), V: int64(binary.LittleEndian.Uint64(o[8:])),
				ID: int32(binary.LittleEndian.Uint32(o[16:])), Peer: int32(binary.LittleEndian.Uint32(o[20:])),
				Tag: int32(binary.LittleEndian.Uint32(o[24:])), Kind: trace.Kind(o[28]),
			}
			if e != w {
				t.Fatalf("buffer %d, entry %d: %+v, want %+v", i, j, e, w)
			}
		}
	}
}

// TestDoneDoesNotWake: Done hands a finished process's only buffer over
// without waking the spill writer, so a run of short-lived processes
// writes nothing until a flush point, which writes all of them; past the
// memory limit a Done wakes the writer after all. Every record is in the
// trace.
func TestDoneDoesNotWake(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.pst")
	// 64 KiB: 2,048 entries held before a Done wakes the writer.
	rec, err := Start(Options{Path: path, MemoryLimit: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	spill := filepath.Join(SpillDir(path), spillFile)
	size := func() int64 {
		fi, err := os.Stat(spill)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	for id := 0; id < 100; id++ {
		p := rec.Process(id)
		for i := 0; i < 10; i++ {
			p.Block(int32(i))
		}
		if err := p.Done(); err != nil {
			t.Fatal(err)
		}
	}
	if n := size(); n != 0 {
		t.Fatalf("the spill file holds %d bytes after 100 Dones of 1,000 entries in all: the writer was woken", n)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, want := size(), int64(100*(chunkHeader+10*entrySize)); n != want {
		t.Fatalf("after Flush the spill file holds %d bytes, want %d", n, want)
	}
	// 3,000 more entries in processes that finish: past the limit, a
	// Done wakes the writer without a flush point.
	for id := 100; id < 400; id++ {
		p := rec.Process(id)
		for i := 0; i < 10; i++ {
			p.Block(int32(i))
		}
		if err := p.Done(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() == int64(100*(chunkHeader+10*entrySize)) {
		if time.Now().After(deadline) {
			t.Fatal("held buffers past the memory limit were never written")
		}
		time.Sleep(time.Millisecond)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	_, by := readBack(t, path)
	for id := int32(0); id < 400; id++ {
		if n := len(by[id]); n != 10 {
			t.Fatalf("process %d: %d records, want 10", id, n)
		}
	}
}
