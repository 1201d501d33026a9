package instrument

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/parscope/parscope/trace"
)

// entry is one buffered record: 32 bytes, written on the hot path without
// allocation. T is in clock ticks (see clock.go); the meaning of the other
// fields follows trace.Record for the kind (BBV entries keep their interval
// in Tag).
type entry struct {
	T    int64
	V    int64
	ID   int32
	Peer int32
	Tag  int32
	Kind trace.Kind
	_    [3]byte
}

const entrySize = 32

// The spill file is a sequence of chunks, each a 16-byte header
// (magic "PSC1", process id, entry count, CRC-32C of the payload, all
// little-endian) followed by count 32-byte entries. Chunks of one process
// appear in that process's time order. A chunk cut short by a crash ends
// the readable part of the file; a damaged chunk elsewhere is skipped and
// reported (see scanChunks).
const (
	chunkMagic  = 0x31435350 // "PSC1"
	chunkHeader = 16
	spillFile   = "records.bin"
	headerFile  = "header.json"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// nativeLayout is true where an entry in memory is already its encoding
// (little-endian, the field offsets above, zero padding), so that a buffer
// is copied as it is.
var nativeLayout = binary.NativeEndian.Uint16([]byte{1, 0}) == 1 &&
	unsafe.Sizeof(entry{}) == entrySize && unsafe.Offsetof(entry{}.V) == 8 &&
	unsafe.Offsetof(entry{}.ID) == 16 && unsafe.Offsetof(entry{}.Peer) == 20 &&
	unsafe.Offsetof(entry{}.Tag) == 24 && unsafe.Offsetof(entry{}.Kind) == 28

// chunk is one buffer of a process's entries: in memory (mem) until the
// spill writer writes it, then at off in the spill file.
type chunk struct {
	mem  []entry
	off  int64
	n    int
	proc int32
}

// spillReq hands a process's full buffer to the spill writer, or (with
// ack set) asks it to write every buffer held in memory and to report.
type spillReq struct {
	proc int32
	buf  []entry
	ack  chan error
}

// spiller owns the buffers handed over by the processes. It keeps up to
// limit of them in memory and writes the oldest to the spill file beyond
// that, or all of them at a flush point; one goroutine does the writing, in
// hand-over order, so each process's chunks stay in time order and the ones
// still in memory are always the tail of its stream.
type spiller struct {
	f       *os.File
	reqs    chan spillReq
	free    chan []entry // written buffers, for reuse
	done    chan struct{}
	limit   int
	pending []*chunk // in memory, oldest first
	chunks  map[int32][]*chunk
	off     int64
	err     error
	enc     []byte
	writes  int // write calls made

	// held are the buffers of finished processes (Process.Done) handed
	// over without waking the writer, which takes them the next time it
	// runs; heldN counts their entries, and past holdLimit a Done wakes
	// it. Waking another thread at every goroutine's end slowed parallel
	// programs down (see hold).
	heldMu    sync.Mutex
	held      []spillReq
	heldN     int
	holdLimit int
}

// newSpiller starts the writer of the spill file at path, which keeps up
// to limit full buffers in memory, and up to holdLimit entries of finished
// processes' buffers without being woken for them.
func newSpiller(path string, limit, holdLimit int) (*spiller, error) {
	// The records file of an earlier recording that Start kept
	// (clearSpill) is emptied; nothing else may be at path.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	s := &spiller{f: f, reqs: make(chan spillReq, 64), free: make(chan []entry, 64), done: make(chan struct{}),
		limit: limit, chunks: map[int32][]*chunk{}, holdLimit: holdLimit}
	go s.run()
	return s, nil
}

// clearSpill empties the spill directory dir of an earlier recording that
// Force replaces, keeping the directory and its records file, which
// newSpiller empties: 0.12 ms less than removing both and making them
// again in a short recording on the machine of docs/performance.md (the
// unlink or truncation of files the kernel may still be writing back
// costs most of what is left). Anything at
// dir that is not a directory is removed, and so is every entry of it but
// a regular records file. fi is what os.Lstat said of dir.
func clearSpill(dir string, fi os.FileInfo) error {
	if !fi.IsDir() {
		return os.Remove(dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() == spillFile && e.Type().IsRegular() {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func (s *spiller) run() {
	defer close(s.done)
	var acks []chan error
	for {
		r, ok := <-s.reqs
		if !ok {
			s.takeHeld()
			return
		}
		acks = s.take(r, acks[:0])
		// Take what else is queued too, so that one write serves every
		// flush point among it: processes that end together (a goroutine
		// each, calling Done) share a write call instead of paying one
		// each.
	drain:
		for {
			select {
			case r, ok = <-s.reqs:
				if !ok {
					break drain
				}
				acks = s.take(r, acks)
			default:
				break drain
			}
		}
		s.takeHeld()
		switch {
		case len(acks) > 0:
			s.writeOldest(len(s.pending))
			for _, a := range acks {
				a <- s.err
			}
		case len(s.pending) > s.limit:
			s.writeOldest(len(s.pending) - s.limit)
		}
		if !ok {
			return
		}
	}
}

// take files a request: its buffer joins the pending ones, its ack the
// flush points to answer once they are written.
func (s *spiller) take(r spillReq, acks []chan error) []chan error {
	if r.buf != nil {
		c := &chunk{mem: r.buf, n: len(r.buf), proc: r.proc}
		s.chunks[r.proc] = append(s.chunks[r.proc], c)
		s.pending = append(s.pending, c)
	}
	if r.ack != nil {
		acks = append(acks, r.ack)
	}
	return acks
}

// hold hands over the only buffer of a finished process without waking
// the writer, which files it with the next request it takes (another
// process's full buffer, a flush point, Close); past holdLimit entries
// held it wakes the writer after all. Only a process that never handed a
// buffer over may be held: filed after requests sent before it, its
// chunk could otherwise come before its process's earlier ones.
func (s *spiller) hold(proc int32, buf []entry) {
	s.heldMu.Lock()
	s.held = append(s.held, spillReq{proc: proc, buf: buf})
	s.heldN += len(buf)
	wake := s.heldN > s.holdLimit
	s.heldMu.Unlock()
	if wake {
		s.reqs <- spillReq{}
	}
}

// takeHeld files the held buffers (see hold), in the order they were
// held.
func (s *spiller) takeHeld() {
	s.heldMu.Lock()
	held := s.held
	s.held, s.heldN = nil, 0
	s.heldMu.Unlock()
	for _, r := range held {
		s.take(r, nil)
	}
}

// writeBatch bounds the bytes of one write call (a larger chunk is
// written alone), and so the spill writer's scratch buffer: two of the
// default buffers, or thousands of a short-lived goroutine's few records.
const writeBatch = 256 << 10

// writeOldest writes the n oldest buffers held in memory, as few write
// calls as writeBatch allows, so that they are in the kernel (and survive
// the program's exit) once it returns, and recycles the buffers. After a
// write error the records stay in memory (Close still has them) and
// nothing more is written.
func (s *spiller) writeOldest(n int) {
	for n > 0 {
		if s.err != nil {
			s.pending = s.pending[n:]
			return
		}
		k, need := 0, 0
		for k < n && (k == 0 || need+chunkHeader+s.pending[k].n*entrySize <= writeBatch) {
			need += chunkHeader + s.pending[k].n*entrySize
			k++
		}
		if cap(s.enc) < need {
			s.enc = make([]byte, need)
		}
		b := s.enc[:need]
		at := 0
		for _, c := range s.pending[:k] {
			at += encodeChunk(b[at:], c)
		}
		s.writes++
		if _, err := s.f.Write(b); err != nil {
			s.err = fmt.Errorf("instrument: writing spill file: %w", err)
			continue
		}
		for _, c := range s.pending[:k] {
			buf := c.mem
			c.off, c.mem = s.off+chunkHeader, nil
			s.off += int64(chunkHeader + c.n*entrySize)
			select {
			case s.free <- buf[:0]:
			default:
			}
		}
		s.pending = s.pending[k:]
		n -= k
	}
}

// encodeChunk writes c's header and entries at the start of b and returns
// how many bytes that took.
func encodeChunk(b []byte, c *chunk) int {
	buf := c.mem
	need := chunkHeader + len(buf)*entrySize
	p := b[chunkHeader:need]
	if nativeLayout {
		copy(p, unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*entrySize))
	} else {
		for i := range buf {
			e := &buf[i]
			o := p[i*entrySize:]
			binary.LittleEndian.PutUint64(o[0:], uint64(e.T))
			binary.LittleEndian.PutUint64(o[8:], uint64(e.V))
			binary.LittleEndian.PutUint32(o[16:], uint32(e.ID))
			binary.LittleEndian.PutUint32(o[20:], uint32(e.Peer))
			binary.LittleEndian.PutUint32(o[24:], uint32(e.Tag))
			o[28], o[29], o[30], o[31] = byte(e.Kind), 0, 0, 0
		}
	}
	binary.LittleEndian.PutUint32(b[0:], chunkMagic)
	binary.LittleEndian.PutUint32(b[4:], uint32(c.proc))
	binary.LittleEndian.PutUint32(b[8:], uint32(len(buf)))
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(p, castagnoli))
	return need
}

// sync waits until every buffer handed over so far is written.
func (s *spiller) sync() error {
	ack := make(chan error, 1)
	s.reqs <- spillReq{ack: ack}
	return <-ack
}

// stop stops the goroutine (keeping in memory what it holds) and closes
// the file, first fsyncing it when sync is set.
func (s *spiller) stop(sync bool) error {
	close(s.reqs)
	<-s.done
	var err error
	if sync {
		err = s.f.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SkippedRange is a stretch of a spill file that recovery could not read:
// bytes between intact chunks that are not an intact chunk themselves (a
// flipped bit, a failed checksum, an overwritten block).
type SkippedRange struct {
	Offset int64 `json:"offset"`
	Bytes  int64 `json:"bytes"`
}

// chunkState is what readChunk finds at an offset.
type chunkState int

const (
	chunkIntact chunkState = iota // a whole chunk whose checksum matches
	chunkTorn                     // a sane header whose payload runs past the end of the file
	chunkBad                      // anything else
)

// readChunk looks for a chunk at off in a spill file of the given size,
// reading its payload into *payload.
func readChunk(f io.ReaderAt, off, size int64, hdr []byte, payload *[]byte) (proc int32, n int, st chunkState, err error) {
	if size-off < chunkHeader {
		return 0, 0, chunkTorn, nil
	}
	if _, err := f.ReadAt(hdr, off); err != nil {
		return 0, 0, chunkBad, err
	}
	if binary.LittleEndian.Uint32(hdr[0:]) != chunkMagic {
		return 0, 0, chunkBad, nil
	}
	proc = int32(binary.LittleEndian.Uint32(hdr[4:]))
	n = int(binary.LittleEndian.Uint32(hdr[8:]))
	sum := binary.LittleEndian.Uint32(hdr[12:])
	if proc < 0 || proc >= trace.MaxProcs || n <= 0 || n > 1<<26 {
		return 0, 0, chunkBad, nil
	}
	if off+chunkHeader+int64(n)*entrySize > size {
		return proc, n, chunkTorn, nil
	}
	if cap(*payload) < n*entrySize {
		*payload = make([]byte, n*entrySize)
	}
	p := (*payload)[:n*entrySize]
	if _, err := f.ReadAt(p, off+chunkHeader); err != nil {
		return 0, 0, chunkBad, err
	}
	if crc32.Checksum(p, castagnoli) != sum {
		return proc, n, chunkBad, nil
	}
	return proc, n, chunkIntact, nil
}

// scanned is the chunk index of a spill file and what could not be read.
type scanned struct {
	chunks  map[int32][]*chunk
	count   int   // intact chunks
	records int64 // entries in them
	skipped []SkippedRange
	torn    int64 // bytes at the end that a crash cut short
}

// scanChunks rebuilds the chunk index of a spill file. A chunk that a crash
// cut short at the end of the file (a sane header whose payload runs past
// the end, or less than a header) is the torn end of what was written and
// is not an error. Anything else that is not an intact chunk (a bad magic,
// header or checksum) is skipped: the scan resynchronises on the next
// offset holding an intact chunk, and reports the stretch it skipped.
func scanChunks(f *os.File) (*scanned, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	s := &scanned{chunks: map[int32][]*chunk{}}
	hdr := make([]byte, chunkHeader)
	var payload []byte
	var off int64
	for off < size {
		proc, n, cs, err := readChunk(f, off, size, hdr, &payload)
		if err != nil {
			return nil, fmt.Errorf("at byte %d: %w", off, err)
		}
		if cs == chunkIntact {
			s.chunks[proc] = append(s.chunks[proc], &chunk{off: off + chunkHeader, n: n, proc: proc})
			s.count++
			s.records += int64(n)
			off += int64(chunkHeader + n*entrySize)
			continue
		}
		next, err := nextIntact(f, off+1, size, hdr, &payload)
		if err != nil {
			return nil, err
		}
		if next < 0 {
			if cs == chunkTorn {
				s.torn = size - off
			} else {
				s.skipped = append(s.skipped, SkippedRange{off, size - off})
			}
			break
		}
		s.skipped = append(s.skipped, SkippedRange{off, next - off})
		off = next
	}
	return s, nil
}

// nextIntact returns the first offset at or after from where an intact
// chunk starts, or -1 if there is none.
func nextIntact(f io.ReaderAt, from, size int64, hdr []byte, payload *[]byte) (int64, error) {
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], chunkMagic)
	const window = 1 << 20
	// The buffer is no larger than what is left to search, so a small
	// damaged file costs no more than its size.
	buf := make([]byte, min(int64(window+len(magic)-1), max(size-from, 0)))
	for pos := from; pos+chunkHeader <= size; {
		m := min(int64(len(buf)), size-pos)
		b := buf[:m]
		if _, err := f.ReadAt(b, pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("at byte %d: %w", pos, err)
		}
		for i := 0; ; {
			j := bytes.Index(b[i:], magic[:])
			if j < 0 {
				break
			}
			cand := pos + int64(i+j)
			_, _, cs, err := readChunk(f, cand, size, hdr, payload)
			if err != nil {
				return 0, fmt.Errorf("at byte %d: %w", cand, err)
			}
			if cs == chunkIntact {
				return cand, nil
			}
			i += j + 1
		}
		if m < int64(len(buf)) {
			break
		}
		pos += window // the last len(magic)-1 bytes are searched again
	}
	return -1, nil
}

// procReader streams one process's entries back from the spill file as
// trace records, converting ticks to nanoseconds, rounding down to the
// clock resolution and keeping the stream monotone (a tick that goes back
// across cores is raised to the previous time and counted).
type procReader struct {
	f       io.ReaderAt
	proc    int32
	chunks  []*chunk
	pos     int // entries read from chunks[0]
	raw     []byte
	conv    timeConv
	last    int64
	clamped int64
}

// timeConv converts ticks to nanoseconds since the recorder's start,
// rounded down to a multiple of res.
type timeConv struct {
	t0    int64
	scale float64
	res   int64
}

func (c timeConv) ns(t int64) int64 {
	v := int64(float64(t-c.t0) * c.scale)
	if v < 0 {
		v = 0
	}
	if c.res > 1 {
		v -= v % c.res
	}
	return v
}

func (r *procReader) Read(buf []trace.Record) (int, error) {
	const batch = 512
	k := 0
	for k < len(buf) && len(r.chunks) > 0 {
		c := r.chunks[0]
		m := min(c.n-r.pos, len(buf)-k, batch)
		if cap(r.raw) < m*entrySize {
			r.raw = make([]byte, m*entrySize)
		}
		if c.mem != nil {
			for _, e := range c.mem[r.pos : r.pos+m] {
				buf[k] = r.record(e.T, e.V, e.ID, e.Peer, e.Tag, e.Kind)
				k++
			}
		} else {
			raw := r.raw[:m*entrySize]
			if _, err := r.f.ReadAt(raw, c.off+int64(r.pos)*entrySize); err != nil {
				return k, fmt.Errorf("instrument: reading spill file: %w", err)
			}
			for i := 0; i < m; i++ {
				o := raw[i*entrySize:]
				buf[k] = r.record(
					int64(binary.LittleEndian.Uint64(o[0:])),
					int64(binary.LittleEndian.Uint64(o[8:])),
					int32(binary.LittleEndian.Uint32(o[16:])),
					int32(binary.LittleEndian.Uint32(o[20:])),
					int32(binary.LittleEndian.Uint32(o[24:])),
					trace.Kind(o[28]))
				k++
			}
		}
		r.pos += m
		if r.pos == c.n {
			r.chunks, r.pos = r.chunks[1:], 0
		}
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

func (r *procReader) record(tk, v int64, id, peer, tag int32, kind trace.Kind) trace.Record {
	t := r.conv.ns(tk)
	if t < r.last {
		t = r.last
		r.clamped++
	}
	r.last = t
	switch kind {
	case trace.KindState:
		return trace.State(0, r.proc, t, id)
	case trace.KindEnter:
		return trace.Enter(0, r.proc, t, id)
	case trace.KindExit:
		return trace.Exit(0, r.proc, t, id)
	case trace.KindSend:
		return trace.Send(0, r.proc, t, 0, peer, v, tag, 0)
	case trace.KindRecv:
		return trace.Recv(0, r.proc, t, 0, peer, v, tag, 0)
	case trace.KindEvent:
		return trace.Event(0, r.proc, t, id, v)
	case trace.KindCounter:
		rec := trace.Counter(0, r.proc, t, id, 0)
		rec.Value, rec.Tag = v, tag // tag 1: a duration in ticks (see build)
		return rec
	case trace.KindBBV:
		return trace.BBV(0, r.proc, tag, t, id, v)
	}
	return trace.Record{Kind: kind, Proc: r.proc, T: t, ID: id, Peer: peer, Tag: tag, Value: v, Seq: trace.NoRequest}
}
