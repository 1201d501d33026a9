package mpi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// encoder writes rank files the way the shim does, for tests.
type encoder struct {
	b bytes.Buffer
}

func newEncoder(rank, size int32, realtime, mono int64) *encoder {
	e := &encoder{}
	h := make([]byte, HeaderSize)
	copy(h, Magic)
	le := binary.LittleEndian
	le.PutUint16(h[8:], Version)
	le.PutUint16(h[10:], HeaderSize)
	le.PutUint32(h[12:], uint32(rank))
	le.PutUint32(h[16:], uint32(size))
	le.PutUint32(h[20:], 4242)
	le.PutUint64(h[24:], uint64(realtime))
	le.PutUint64(h[32:], uint64(mono))
	e.b.Write(h)
	return e
}

func (e *encoder) rec(typ RecType, body []byte) {
	var w [4]byte
	binary.LittleEndian.PutUint32(w[:], uint32(typ)|uint32(4+len(body))<<8)
	e.b.Write(w[:])
	e.b.Write(body)
}

func (e *encoder) str(id uint32, s string) {
	b := binary.LittleEndian.AppendUint32(nil, id)
	e.rec(RecString, append(b, s...))
}

func (e *encoder) info(k, v string) { e.rec(RecInfo, []byte(k+"\x00"+v)) }

func (e *encoder) comm(id uint32, members ...int32) {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, id)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, uint32(len(members)))
	for _, m := range members {
		b = le.AppendUint32(b, uint32(m))
	}
	e.rec(RecComm, b)
}

func (e *encoder) event(v Event) {
	le := binary.LittleEndian
	b := le.AppendUint64(nil, uint64(v.T))
	b = le.AppendUint64(b, uint64(v.End))
	b = le.AppendUint64(b, v.Site)
	b = le.AppendUint64(b, v.Request)
	b = le.AppendUint32(b, v.Comm)
	b = le.AppendUint32(b, uint32(v.Peer))
	b = le.AppendUint32(b, uint32(v.Tag))
	b = le.AppendUint32(b, uint32(v.Func))
	b = le.AppendUint64(b, uint64(v.Bytes))
	b = le.AppendUint32(b, uint32(v.Src))
	b = le.AppendUint32(b, uint32(v.StatusTg))
	e.rec(v.Type, b)
}

func (e *encoder) final(t int64) {
	b := binary.LittleEndian.AppendUint64(nil, uint64(t))
	e.rec(RecFinal, binary.LittleEndian.AppendUint64(b, 0))
}

// sample is a two-record rank file: rank 1 of 2 sends 8 bytes to rank 0
// inside region "loop 7" and finalizes.
func sample() []byte {
	e := newEncoder(1, 2, 1_000_000, 500)
	e.info("mpi", "test MPI")
	e.comm(0, 0, 1)
	e.str(1, "loop 7")
	e.event(Event{Type: RecBegin, T: 600, End: 600, Tag: 1, Func: 37, Peer: PeerNull, Src: PeerNull})
	e.event(Event{Type: RecSend, T: 700, End: 750, Comm: 0, Peer: 0, Tag: 3, Func: 1, Bytes: 8, Src: PeerNull})
	e.event(Event{Type: RecEnd, T: 800, End: 800, Tag: 1, Func: 37, Peer: PeerNull, Src: PeerNull})
	e.final(900)
	return e.b.Bytes()
}

func TestReadRank(t *testing.T) {
	rf, err := ReadRank("r1", sample())
	if err != nil {
		t.Fatal(err)
	}
	if rf.Header.Rank != 1 || rf.Header.Size != 2 || rf.Header.PID != 4242 || rf.Header.Realtime != 1_000_000 ||
		rf.Header.Monotonic != 500 {
		t.Errorf("header %+v", rf.Header)
	}
	if !rf.Complete || rf.Truncated || rf.Info["mpi"] != "test MPI" || rf.Strings[1] != "loop 7" || len(rf.Comms) != 1 ||
		len(rf.Events) != 3 {
		t.Fatalf("decoded %+v", rf)
	}
	s := rf.Events[1]
	if s.Type != RecSend || s.T != 700 || s.End != 750 || s.Peer != 0 || s.Tag != 3 || s.Func.String() != "MPI_Send" || s.Bytes != 8 {
		t.Errorf("send %+v", s)
	}
}

// TestReadRankCut cuts the sample at every byte: inside the header it is an
// error naming the offset; after it, the events before the cut are kept.
func TestReadRankCut(t *testing.T) {
	full := sample()
	whole, _ := ReadRank("x", full)
	for n := 0; n < len(full); n++ {
		rf, err := ReadRank("x", full[:n])
		if n < HeaderSize {
			var fe *format.Error
			if !errors.As(err, &fe) || fe.File != "x" || fe.Offset != int64(n) {
				t.Fatalf("cut at %d: error %v, want one at offset %d", n, err, n)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if rf.Complete {
			t.Fatalf("cut at %d: complete", n)
		}
		for i, e := range rf.Events {
			if e != whole.Events[i] {
				t.Fatalf("cut at %d: event %d = %+v, want %+v", n, i, e, whole.Events[i])
			}
		}
		if rf.Size > int64(n) {
			t.Fatalf("cut at %d: size %d", n, rf.Size)
		}
	}
}

func TestReadRankErrors(t *testing.T) {
	good := sample()
	patch := func(off int, b ...byte) []byte {
		c := bytes.Clone(good)
		copy(c[off:], b)
		return c
	}
	for _, c := range []struct {
		data []byte
		off  int64
		msg  string
	}{
		{patch(0, 'X'), 0, "not a parscope MPI rank file"},
		{patch(8, 9), 8, "format version 9"},
		{patch(10, 40), 10, "header size 40"},
		{patch(12, 5), 12, "rank 5 of 2"},
		{patch(HeaderSize, 16, 2, 0, 0), HeaderSize, "record of type 16 has size 2"},
		{patch(HeaderSize, byte(RecComm), 5, 0, 0), HeaderSize, "has a 1-byte body, want 12"},
		{append(bytes.Clone(good), 16, 8, 0, 0, 1, 2, 3, 4), int64(len(good)), "after the final record"},
	} {
		_, err := ReadRank("f.psmpi", c.data)
		var fe *format.Error
		if !errors.As(err, &fe) || fe.Offset != c.off || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "f.psmpi") {
			t.Errorf("error %v, want %q at offset %d", err, c.msg, c.off)
		}
	}
}

func FuzzReadRank(f *testing.F) {
	f.Add(sample())
	f.Add(sample()[:HeaderSize+10])
	// A real rank file, recorded by the shim (testdata/README.md): it is
	// part of the repository, so its absence is a failure.
	b, err := os.ReadFile("testdata/rank-0.psmpi")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := ReadRank("fuzz", data)
		if err != nil {
			var fe *format.Error
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("error %v is not located in the input", err)
			}
			return
		}
		if rf.Size > int64(len(data)) || rf.Size < HeaderSize {
			t.Fatalf("size %d of %d bytes", rf.Size, len(data))
		}
		// Whatever decodes also merges without a panic.
		var w trace.Memory
		if _, err := mergeFiles(t.Context(), []*RankFile{rf}, &w, Options{}); err != nil {
			t.Fatalf("merging what decoded: %v", err)
		}
	})
}

// TestFuncsMatchHeader checks funcNames and the record types against
// shim.h, the C half of the format.
func TestFuncsMatchHeader(t *testing.T) {
	h, err := Sources.ReadFile("shim/shim.h")
	if err != nil {
		t.Fatal(err)
	}
	fns := regexp.MustCompile(`X\((\d+), (\w+)\)`).FindAllStringSubmatch(string(h), -1)
	if len(fns) != len(funcNames) {
		t.Errorf("shim.h lists %d functions, funcs.go %d", len(fns), len(funcNames))
	}
	for _, m := range fns {
		n, _ := strconv.Atoi(m[1])
		if funcNames[Func(n)] != m[2] {
			t.Errorf("function %d: shim.h %s, funcs.go %q", n, m[2], funcNames[Func(n)])
		}
	}
	want := map[string]RecType{"STRING": RecString, "INFO": RecInfo, "MAP": RecMap, "COMM": RecComm, "FREE": RecFree,
		"SEND": RecSend, "RECV": RecRecv, "ISEND": RecIsend, "IRECV": RecIrecv, "COMPLETE": RecComplete, "COLL": RecColl,
		"BEGIN": RecBegin, "END": RecEnd, "CALL": RecCall, "FINAL": RecFinal}
	recs := regexp.MustCompile(`PS_REC_(\w+) = (\d+)`).FindAllStringSubmatch(string(h), -1)
	if len(recs) != len(want) {
		t.Errorf("shim.h has %d record types, want %d", len(recs), len(want))
	}
	for _, m := range recs {
		n, _ := strconv.Atoi(m[2])
		if w, ok := want[m[1]]; !ok || int(w) != n {
			t.Errorf("PS_REC_%s = %d, Go has %d", m[1], n, w)
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"PS_VERSION", Version}, {"PS_HEADER_SIZE", HeaderSize}, {"PS_EVENT_SIZE", EventSize}} {
		if !strings.Contains(string(h), "#define "+c.name+" "+strconv.Itoa(c.v)+"\n") {
			t.Errorf("shim.h does not define %s as %d", c.name, c.v)
		}
	}
}
