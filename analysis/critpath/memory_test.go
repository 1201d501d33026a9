package critpath

import (
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// pingPong feeds add the records of iterations of a two-process exchange,
// made as they go, in batches. Iteration i, from b = 100i:
//
//	p0  compute b..b+40, MPI_Send b+40..b+50 (send at 45), MPI_Recv b+50..b+100 (receive at 95)
//	p1  MPI_Recv b..b+60 (receive at 55), compute b+60..b+80, MPI_Send b+80..b+90 (send at 85)
//
// Each receive waits for a send begun later: p1 depends at b+60 on p0 at
// b+40, p0 at b+100 on p1 at b+80.
func pingPong(tb testing.TB, add func([]trace.Record) error, iterations int) {
	tb.Helper()
	const (
		compute int32 = 0
		send    int32 = 1
		recv    int32 = 2
	)
	batch := make([]trace.Record, 0, 4096)
	for i := range int64(iterations) {
		b := 100 * i
		it := []trace.Record{
			trace.Enter(0, 0, b, compute), trace.Exit(0, 0, b+40, compute),
			trace.Enter(0, 0, b+40, send), trace.Send(0, 0, b+45, b+45, 1, 8, 0, 0), trace.Exit(0, 0, b+50, send),
			trace.Enter(0, 0, b+50, recv), trace.Recv(0, 0, b+95, b+95, 1, 8, 0, 0), trace.Exit(0, 0, b+100, recv),
			trace.Enter(0, 1, b, recv), trace.Recv(0, 1, b+55, b+55, 0, 8, 0, 0), trace.Exit(0, 1, b+60, recv),
			trace.Enter(0, 1, b+60, compute), trace.Exit(0, 1, b+80, compute),
			trace.Enter(0, 1, b+80, send), trace.Send(0, 1, b+85, b+85, 0, 8, 0, 0), trace.Exit(0, 1, b+90, send),
		}
		slices.SortStableFunc(it, trace.Compare)
		batch = append(batch, it...)
		if len(batch) >= 4000 {
			if err := add(batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := add(batch); err != nil {
		tb.Fatal(err)
	}
}

// pingPongTrace is the header of pingPong's trace.
func pingPongTrace() *engine.Trace {
	return &engine.Trace{Name: "pingpong", Header: &trace.Header{
		Runs: []trace.RunInfo{{ID: 0, Procs: 2}},
		Regions: []trace.RegionDef{{ID: 0, Label: "compute", Parent: -1}, {ID: 1, Label: "MPI_Send", Parent: -1},
			{ID: 2, Label: "MPI_Recv", Parent: -1}},
	}}
}

// liveHeap returns the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestMemoryBounded feeds 10^6 messages (8·10^6 records) and checks that
// the accumulator's live heap stays under 32 MiB, by the records or not,
// and that the path is pingPong's: per iteration p0's compute (40 ns),
// the message to p1 (20), p1's compute (20) and the message back (20).
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("8·10^6 records")
	}
	const n = 500_000 // iterations: two messages each
	before := liveHeap()
	a, err := New(pingPongTrace(), DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	pingPong(t, a.Add, n)
	after := liveHeap()
	live := int64(after) - int64(before)
	t.Logf("live heap after %d records: %.1f MiB", 16*n, float64(live)/(1<<20))
	if live > 32<<20 {
		t.Errorf("live heap %d bytes after the records, want at most 32 MiB", live)
	}
	res, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(a)
	r := res.(*Result).Runs[0]
	const l = 100 * n
	want := RunPath{BeginNS: 0, EndNS: l, LengthNS: l, EndProc: 0, ComputationNS: 60 * n, CommunicationNS: 40 * n,
		MessageJumps: 2 * n, SegmentsTotal: 4 * n,
		Regions:   []RegionShare{{Region: 0, Name: "compute", NS: 60 * n, SharePct: 60}, {Region: CommRegion, Name: "(communication)", NS: 40 * n, SharePct: 40}},
		Processes: []ProcShare{{Proc: 0, NS: 40 * n, SharePct: 40}, {Proc: 1, NS: 20 * n, SharePct: 20}}}
	// The first segments: p0's compute 0..40, the message 40..60 on p1,
	// p1's compute 60..80, the message 80..100 on p0, and again.
	for i := range int64(DefaultSegments) {
		b := 100 * (i / 4)
		s := []Segment{
			{Proc: 0, FromNS: b, ToNS: b + 40, Kind: Computation, Region: 0, RegionName: "compute", Peer: -1},
			{Proc: 1, FromNS: b + 40, ToNS: b + 60, Kind: Communication, Region: CommRegion, RegionName: "(communication)", Peer: 0},
			{Proc: 1, FromNS: b + 60, ToNS: b + 80, Kind: Computation, Region: 0, RegionName: "compute", Peer: -1},
			{Proc: 0, FromNS: b + 80, ToNS: b + 100, Kind: Communication, Region: CommRegion, RegionName: "(communication)", Peer: 1},
		}[i%4]
		want.Segments = append(want.Segments, s)
	}
	r.Uncomputed = Uncomputed{}
	if !reflect.DeepEqual(r, want) {
		diffRun(t, r, want)
	}
}

// TestPingPongReference checks the analysis against the reference on a
// few thousand iterations of pingPong.
func TestPingPongReference(t *testing.T) {
	for _, p := range []Params{{}, *DefaultParams()} {
		ref, err := newRef(pingPongTrace(), &p)
		if err != nil {
			t.Fatal(err)
		}
		a, err := New(pingPongTrace(), &p)
		if err != nil {
			t.Fatal(err)
		}
		pingPong(t, ref.Add, 3000)
		pingPong(t, a.Add, 3000)
		got, _ := a.Result()
		want, _ := ref.Result()
		if !reflect.DeepEqual(got, want) {
			diffRun(t, got.(*Result).Runs[0], want.(*Result).Runs[0])
		}
	}
}
