package instrument

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// spillSeed is a spill file as the spill writer writes it: two processes,
// two chunks for process 0 and one for process 1, with states, a message,
// an event and a BBV entry.
func spillSeed(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), spillFile)
	s, err := newSpiller(path, 0, 1<<15)
	if err != nil {
		t.Fatal(err)
	}
	bufs := []spillReq{
		{proc: 0, buf: []entry{{T: 100, ID: 1, Kind: trace.KindState}, {T: 150, V: 64, Peer: 1, Tag: 3, Kind: trace.KindSend}}},
		{proc: 1, buf: []entry{{T: 120, ID: 2, Kind: trace.KindState}, {T: 170, V: 64, Peer: 0, Tag: 3, Kind: trace.KindRecv}, {T: 180, ID: 0, V: 5, Kind: trace.KindEvent}}},
		{proc: 0, buf: []entry{{T: 200, ID: 3, Kind: trace.KindState}, {T: 210, ID: 7, V: 2, Tag: 0, Kind: trace.KindBBV}}},
	}
	for _, r := range bufs {
		s.reqs <- r
	}
	if err := s.sync(); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// spillHeaderSeed is the header.json a recording leaves beside its spill file.
func spillHeaderSeed(t testing.TB) []byte {
	t.Helper()
	h := spillHeader{Resolution: 1}
	h.Header.Meta.Program = "fuzz"
	h.Header.States = []trace.StateDef{{ID: 1, Name: "a"}, {ID: 2, Name: "b"}, {ID: 3, Name: "c"}}
	h.Header.Events = []trace.EventDef{{ID: 0, Name: "e"}}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzRecover runs Recover over a spill directory whose records.bin is the
// fuzzer's bytes. The chunk scan must account for every byte of the file
// (intact chunks, skipped damaged stretches and a torn end), a recovered
// .pst holds exactly the entries of the intact chunks scanChunks finds, and
// a failed recovery names the spill file or the trace and leaves the spill
// directory as it was.
func FuzzRecover(f *testing.F) {
	seed := spillSeed(f)
	f.Add(seed)
	f.Add(seed[:len(seed)-5])                      // the last chunk cut short by a crash
	f.Add(append(bytes.Clone(seed), seed[:20]...)) // a second copy's header and a bit
	hdr := spillHeaderSeed(f)
	f.Fuzz(func(t *testing.T, data []byte) { recoverChecked(t, hdr, data) })
}

// TestRecoverSpillSeed checks the fuzz target's checks on the seed: all
// seven entries come back, and a cut-short last chunk loses just that chunk.
func TestRecoverSpillSeed(t *testing.T) {
	seed, hdr := spillSeed(t), spillHeaderSeed(t)
	if n := recoverChecked(t, hdr, seed); n != 7 {
		t.Errorf("recovered %d records from the seed, want 7", n)
	}
	if n := recoverChecked(t, hdr, seed[:len(seed)-5]); n != 5 {
		t.Errorf("recovered %d records from the cut seed, want 5", n)
	}
}

// recoverChecked recovers a spill directory holding hdr and data and checks
// the result as FuzzRecover describes. It returns the number of records
// recovered, or -1 when Recover failed.
func recoverChecked(t *testing.T, hdr, data []byte) int64 {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.pst")
	spill := SpillDir(path)
	if err := os.Mkdir(spill, 0o755); err != nil {
		t.Fatal(err)
	}
	spillPath := filepath.Join(spill, spillFile)
	if err := os.WriteFile(filepath.Join(spill, headerFile), hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spillPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sf, err := os.Open(spillPath)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scanChunks(sf)
	sf.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want, covered int64
	for _, cs := range sc.chunks {
		for _, c := range cs {
			want += int64(c.n)
			covered += chunkHeader + int64(c.n)*entrySize
			if c.off+int64(c.n)*entrySize > int64(len(data)) {
				t.Fatalf("chunk at %d with %d entries lies past the %d-byte file", c.off, c.n, len(data))
			}
		}
	}
	for _, r := range sc.skipped {
		if r.Offset < 0 || r.Bytes <= 0 || r.Offset+r.Bytes > int64(len(data)) {
			t.Fatalf("skipped range %+v lies outside the %d-byte file", r, len(data))
		}
		covered += r.Bytes
	}
	if covered+sc.torn != int64(len(data)) {
		t.Fatalf("chunks, skipped ranges and torn end cover %d+%d bytes of %d", covered, sc.torn, len(data))
	}
	if want != sc.records {
		t.Fatalf("the chunks hold %d entries, the scan counts %d", want, sc.records)
	}
	_, err = Recover(path, RecoverOptions{})
	if err != nil {
		if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), spill) {
			t.Fatalf("error %q names neither %s nor its spill directory", err, path)
		}
		if b, rerr := os.ReadFile(spillPath); rerr != nil || !bytes.Equal(b, data) {
			t.Fatalf("a failed Recover changed or removed the spill file: %v", rerr)
		}
		return -1
	}
	s, err := store.Open(path)
	if err != nil {
		t.Fatalf("Recover wrote a .pst that does not open: %v", err)
	}
	defer s.Close()
	timed, err := trace.ReadAll(s.Records(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	bbv, err := trace.ReadAll(s.BBV(store.ReadOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	got := int64(len(timed) + len(bbv))
	if got != want {
		t.Fatalf("recovered %d records, the spill file's whole chunks hold %d", got, want)
	}
	return got
}

// TestScanChunksBoundsAllocation checks that a chunk header claiming more
// entries than the file holds is a torn end, read without allocating room
// for them (64 M entries would be 2 GiB).
func TestScanChunksBoundsAllocation(t *testing.T) {
	seed := spillSeed(t)
	data := bytes.Clone(seed[:chunkHeader+entrySize])
	binary.LittleEndian.PutUint32(data[8:], 1<<26)
	path := filepath.Join(t.TempDir(), spillFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sc, err := scanChunks(f)
	runtime.ReadMemStats(&after)
	if err != nil || len(sc.chunks) != 0 || sc.torn != int64(len(data)) {
		t.Fatalf("scanChunks = %+v, %v; want no chunks and a %d-byte torn end", sc, err, len(data))
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
		t.Errorf("scanning a %d-byte file allocated %d bytes", len(data), a)
	}
}

// TestRecoverRefusesHugeProcess checks that a chunk claiming a process id
// the recorder cannot have written (at or above trace.MaxProcs; the
// checksum covers the payload only, so a flipped id still checks out) is
// skipped as damage instead of becoming a two-billion-process trace.
func TestRecoverRefusesHugeProcess(t *testing.T) {
	seed := spillSeed(t)
	for _, proc := range []uint32{trace.MaxProcs, 0x7fffffff} {
		data := bytes.Clone(seed)
		binary.LittleEndian.PutUint32(data[4:], proc)
		sc, err := scanChunks(writeTemp(t, data))
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.skipped) != 1 || sc.skipped[0].Offset != 0 || sc.records != 5 {
			t.Errorf("process %d: scan = skipped %v, %d records; want the first chunk skipped and 5 records", proc, sc.skipped, sc.records)
		}
		if n := recoverChecked(t, spillHeaderSeed(t), data); n != 5 {
			t.Errorf("process %d: recovered %d records, want 5", proc, n)
		}
	}
}

// writeTemp writes data to a temporary file and opens it.
func writeTemp(t *testing.T, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), spillFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
