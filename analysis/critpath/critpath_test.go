package critpath_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/critpath"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// write stores recs (run 0, of procs processes, with the regions and
// communicators given) and opens it.
func write(t *testing.T, procs int32, regions []trace.RegionDef, comms []trace.CommDef, recs []trace.Record) *store.Store {
	t.Helper()
	h := &trace.Header{Regions: regions, Comms: comms, Runs: []trace.RunInfo{{ID: 0, Procs: procs}}}
	return storetest.New(t, "c.pst", h, recs)
}

// path runs the analysis with every segment and region kept and returns
// run 0's path, checked against the invariants.
func path(t *testing.T, s *store.Store) critpath.RunPath {
	t.Helper()
	r := enginetest.Result[*critpath.Result](t, s, engine.Request{Analysis: critpath.Name, Options: &critpath.Params{}})
	if len(r.Runs) != 1 {
		t.Fatalf("%d runs", len(r.Runs))
	}
	Check(t, r.Runs[0])
	return r.Runs[0]
}

// Check checks what holds of every complete path: it covers the run's
// span with contiguous, non-overlapping segments; the kinds, regions and
// processes add up; the region shares sum to 100%.
func Check(t *testing.T, r critpath.RunPath) {
	t.Helper()
	if r.LengthNS != r.EndNS-r.BeginNS {
		t.Errorf("length %d, span %d..%d", r.LengthNS, r.BeginNS, r.EndNS)
	}
	if len(r.Segments) != r.SegmentsTotal {
		t.Fatalf("%d of %d segments listed", len(r.Segments), r.SegmentsTotal)
	}
	at := r.BeginNS
	var comp, comm int64
	for i, s := range r.Segments {
		if s.FromNS != at || s.ToNS <= s.FromNS {
			t.Errorf("segment %d %+v: want it to begin at %d and not be empty", i, s, at)
		}
		at = s.ToNS
		if s.Kind == critpath.Communication {
			comm += s.ToNS - s.FromNS
		} else {
			comp += s.ToNS - s.FromNS
		}
	}
	if r.LengthNS > 0 && at != r.EndNS {
		t.Errorf("segments end at %d, the run at %d", at, r.EndNS)
	}
	if comp != r.ComputationNS || comm != r.CommunicationNS || comp+comm != r.LengthNS {
		t.Errorf("computation %d (%d) communication %d (%d), length %d", r.ComputationNS, comp, r.CommunicationNS, comm, r.LengthNS)
	}
	var regNS, procNS int64
	var share float64
	for _, g := range r.Regions {
		regNS += g.NS
		share += g.SharePct
	}
	for _, p := range r.Processes {
		procNS += p.NS
	}
	if regNS != r.LengthNS || procNS != r.ComputationNS {
		t.Errorf("regions sum to %d, processes to %d; length %d computation %d", regNS, procNS, r.LengthNS, r.ComputationNS)
	}
	if r.LengthNS > 0 && math.Abs(share-100) > 1e-9 {
		t.Errorf("region shares sum to %g%%", share)
	}
}

// segs formats the segments as proc:from-to:region (c: communication from peer).
func segs(r critpath.RunPath) string {
	var out []string
	for _, s := range r.Segments {
		if s.Kind == critpath.Communication {
			out = append(out, fmt.Sprintf("%d:%d-%d:c%d", s.Proc, s.FromNS, s.ToNS, s.Peer))
		} else {
			out = append(out, fmt.Sprintf("%d:%d-%d:%s", s.Proc, s.FromNS, s.ToNS, s.RegionName))
		}
	}
	return strings.Join(out, " ")
}

// regionNS returns the time of the region named name on the path.
func regionNS(r critpath.RunPath, name string) int64 {
	for _, g := range r.Regions {
		if g.Name == name {
			return g.NS
		}
	}
	return 0
}

const (
	rMain int32 = iota
	rCompute
	rSend
	rRecv
	rBarrier
)

var regions = []trace.RegionDef{
	{ID: rMain, Label: "main", Parent: -1}, {ID: rCompute, Label: "compute", Parent: -1},
	{ID: rSend, Label: "MPI_Send", Parent: -1}, {ID: rRecv, Label: "MPI_Recv", Parent: -1},
	{ID: rBarrier, Label: "MPI_Barrier", Parent: -1},
}

func enter(p int32, t int64, id int32) trace.Record { return trace.Enter(0, p, t, id) }
func exit(p int32, t int64, id int32) trace.Record  { return trace.Exit(0, p, t, id) }

// TestLateSender: p1 waits in MPI_Recv for p0, which computes first.
//
//	p0  main [compute 0..50][MPI_Send 50..60] main ..70
//	p1  main [MPI_Recv 10 ................. 65] main ..100
//
// Back from p1's end (100): p1's main 65..100, the receive's end 65;
// the send began at 50 (after the receive, 10): the message 50..65,
// then p0's compute 0..50.
func TestLateSender(t *testing.T) {
	recs := []trace.Record{
		enter(0, 0, rMain), enter(1, 0, rMain), enter(0, 0, rCompute), enter(1, 10, rRecv),
		exit(0, 50, rCompute), enter(0, 50, rSend), trace.Send(0, 0, 50, 0, 1, 8, 0, 0), exit(0, 60, rSend),
		trace.Recv(0, 1, 64, 0, 0, 8, 0, 0), exit(1, 65, rRecv),
		exit(0, 70, rMain), exit(1, 100, rMain),
	}
	r := path(t, write(t, 2, regions, nil, recs))
	if got, want := segs(r), "0:0-50:compute 1:50-65:c0 1:65-100:main"; got != want {
		t.Errorf("segments %s, want %s", got, want)
	}
	if r.LengthNS != 100 || r.EndProc != 1 || r.CommunicationNS != 15 || r.ComputationNS != 85 || r.MessageJumps != 1 {
		t.Errorf("%+v", r)
	}
	if regionNS(r, "compute") != 50 || r.Regions[0].Name != "compute" || r.Regions[0].SharePct != 50 {
		t.Errorf("regions %+v", r.Regions)
	}
	if fmt.Sprint(r.Processes) != "[{0 50 50} {1 35 35}]" {
		t.Errorf("processes %+v", r.Processes)
	}

	// The sender early: the receive did not wait, the path stays on p1.
	recs = []trace.Record{
		enter(0, 0, rMain), enter(1, 0, rMain), enter(0, 0, rSend), trace.Send(0, 0, 0, 0, 1, 8, 0, 0), exit(0, 5, rSend),
		enter(1, 10, rRecv), trace.Recv(0, 1, 12, 0, 0, 8, 0, 0), exit(1, 12, rRecv),
		exit(0, 70, rMain), exit(1, 100, rMain),
	}
	r = path(t, write(t, 2, regions, nil, recs))
	if got, want := segs(r), "1:0-10:main 1:10-12:MPI_Recv 1:12-100:main"; got != want {
		t.Errorf("early sender: segments %s, want %s", got, want)
	}
}

// TestBarrier: p2 arrives last at the barrier; the others wait for it.
//
//	p0  [compute 0..10][MPI_Barrier 10 ..... 42] ..50
//	p1  [compute 0..20][MPI_Barrier 20 ..... 41] ..60
//	p2  [compute 0........40][MPI_Barrier 40 40]..45
//
// Back from p1's end (60): p1 60..41, the barrier released at p2's
// entry, 40: communication 40..41, then p2's compute 0..40.
func TestBarrier(t *testing.T) {
	comms := []trace.CommDef{{ID: 0, Name: "world", Members: []int32{0, 1, 2}}}
	var recs []trace.Record
	for p, c := range []struct{ comp, exit, end int64 }{{10, 42, 50}, {20, 41, 60}, {40, 40, 45}} {
		pp := int32(p)
		recs = append(recs, enter(pp, 0, rCompute), exit(pp, c.comp, rCompute), enter(pp, c.comp, rBarrier),
			trace.Coll(0, pp, c.comp, c.exit, trace.OpBarrier, trace.NoPeer, 0, 0), exit(pp, c.exit, rBarrier),
			enter(pp, c.exit, rMain), exit(pp, c.end, rMain))
	}
	r := path(t, write(t, 3, regions, comms, recs))
	if got, want := segs(r), "2:0-40:compute 1:40-41:c2 1:41-60:main"; got != want {
		t.Errorf("segments %s, want %s", got, want)
	}
	if r.CollectiveJumps != 1 || r.EndProc != 1 || regionNS(r, "compute") != 40 {
		t.Errorf("%+v", r)
	}
}

// TestNoCommunication: three independent processes; the longest is the
// path, by its regions.
func TestNoCommunication(t *testing.T) {
	recs := []trace.Record{
		enter(0, 0, rMain), enter(1, 0, rMain), enter(2, 5, rMain),
		enter(1, 10, rCompute), exit(1, 80, rCompute),
		exit(0, 30, rMain), exit(1, 90, rMain), exit(2, 60, rMain),
	}
	r := path(t, write(t, 3, regions, nil, recs))
	if got, want := segs(r), "1:0-10:main 1:10-80:compute 1:80-90:main"; got != want {
		t.Errorf("segments %s, want %s", got, want)
	}
	if r.EndProc != 1 || r.CommunicationNS != 0 || regionNS(r, "main") != 20 || regionNS(r, "compute") != 70 ||
		r.Regions[0].SharePct != 70.0/90*100 || len(r.Processes) != 1 {
		t.Errorf("%+v", r)
	}
}

// TestChain: p0 → p1 → p2, each computing before passing the message on
// (records without regions: the calls are the records' spans, DUMPI's).
//
//	p0  send 30..31
//	p1  recv 0..33, send 50..52
//	p2  recv 0..55, ends 70
func TestChain(t *testing.T) {
	recs := []trace.Record{
		trace.Recv(0, 1, 0, 33, 0, 8, 0, 0), trace.Recv(0, 2, 0, 55, 1, 8, 0, 0),
		trace.Event(0, 0, 0, 1, 0), trace.Send(0, 0, 30, 31, 1, 8, 0, 0),
		trace.Send(0, 1, 50, 52, 2, 8, 0, 0), trace.Event(0, 2, 70, 1, 0),
	}
	r := path(t, write(t, 3, nil, nil, recs))
	if got, want := segs(r), "0:0-30:(none) 1:30-33:c0 1:33-50:(none) 2:50-55:c1 2:55-70:(none)"; got != want {
		t.Errorf("segments %s, want %s", got, want)
	}
	if r.MessageJumps != 2 || r.CommunicationNS != 8 || r.ComputationNS != 62 || r.LengthNS != 70 {
		t.Errorf("%+v", r)
	}
	if fmt.Sprint(r.Processes) != fmt.Sprint([]critpath.ProcShare{{Proc: 0, NS: 30, SharePct: 30.0 / 70 * 100},
		{Proc: 1, NS: 17, SharePct: 17.0 / 70 * 100}, {Proc: 2, NS: 15, SharePct: 15.0 / 70 * 100}}) {
		t.Errorf("processes %+v", r.Processes)
	}
}
