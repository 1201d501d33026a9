package waitstate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// write stores recs (run 0 and every run of the records, each of procs
// processes, with the regions and communicators given, and the header
// changed by edit) and opens it.
func write(t *testing.T, procs int32, regions []trace.RegionDef, comms []trace.CommDef, recs []trace.Record, edit ...func(*trace.Header)) *store.Store {
	t.Helper()
	h := &trace.Header{Regions: regions, Comms: comms}
	for _, e := range edit {
		e(h)
	}
	h.Runs = []trace.RunInfo{{ID: 0, Procs: procs}}
	for _, r := range recs {
		if r.Run > h.Runs[len(h.Runs)-1].ID {
			h.Runs = append(h.Runs, trace.RunInfo{ID: r.Run, Procs: procs})
		}
	}
	return storetest.New(t, "w.pst", h, recs)
}

// waits runs the analysis and returns run 0's result.
func waits(t *testing.T, s *store.Store) waitstate.RunWaits {
	t.Helper()
	r := enginetest.Result[*waitstate.Result](t, s, engine.Request{Analysis: waitstate.Name})
	if len(r.Runs) != 1 {
		t.Fatalf("%d runs", len(r.Runs))
	}
	checkBounds(t, r.Runs[0])
	return r.Runs[0]
}

// checkBounds checks what holds of every result: the patterns, processes
// and sites add up, and no process waits longer than its MPI time.
func checkBounds(t *testing.T, r waitstate.RunWaits) {
	t.Helper()
	var byPat, byProc, bySite, mpi int64
	for _, a := range r.Patterns {
		byPat += a.WaitNS
	}
	for _, p := range r.ByProcess {
		var sum int64
		for _, a := range p.Patterns {
			sum += a.WaitNS
		}
		if sum != p.WaitNS || p.WaitNS > p.MPINS || p.WaitNS < 0 {
			t.Errorf("process %d: waits %d (sum %d), MPI time %d", p.Proc, p.WaitNS, sum, p.MPINS)
		}
		byProc += p.WaitNS
		mpi += p.MPINS
	}
	for _, s := range r.Sites {
		bySite += s.WaitNS
	}
	if byPat != r.WaitNS || byProc != r.WaitNS || mpi != r.MPINS || (r.SitesOmitted == 0 && bySite != r.WaitNS) {
		t.Errorf("wait %d: by pattern %d, by process %d, by site %d; MPI %d, by process %d", r.WaitNS, byPat, byProc, bySite, r.MPINS, mpi)
	}
}

// pattern returns the total of pattern p as "ns/calls".
func pattern(r waitstate.RunWaits, p waitstate.Pattern) string {
	a := r.Patterns[p]
	if a.Pattern != p.String() {
		panic(a.Pattern)
	}
	return fmt.Sprintf("%d/%d", a.WaitNS, a.Calls)
}

// procWaits lists, per process, its waits of pattern p as "ns/calls".
func procWaits(r waitstate.RunWaits, p waitstate.Pattern) string {
	var out []string
	for _, pw := range r.ByProcess {
		out = append(out, fmt.Sprintf("%d:%d/%d", pw.Proc, pw.Patterns[p].WaitNS, pw.Patterns[p].Calls))
	}
	return strings.Join(out, " ")
}

// sites lists the sites as "pattern call@region ns/calls".
func sites(r waitstate.RunWaits) string {
	var out []string
	for _, s := range r.Sites {
		out = append(out, fmt.Sprintf("%s %s@%s %d/%d", s.Pattern, s.Call, s.RegionName, s.WaitNS, s.Calls))
	}
	return strings.Join(out, "; ")
}

// only checks that every pattern but those named is zero.
func only(t *testing.T, r waitstate.RunWaits, ps ...waitstate.Pattern) {
	t.Helper()
	for _, p := range waitstate.Patterns {
		if r.Patterns[p].WaitNS != 0 && !contains(ps, p) {
			t.Errorf("%s: %s, want 0", p, pattern(r, p))
		}
	}
}

func contains(ps []waitstate.Pattern, p waitstate.Pattern) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

const (
	rMain int32 = iota + 1
	rSolve
	rSend
	rRecv
	rIrecv
	rWait
	rWaitall
	rSendrecv
	rAllreduce
	rBarrier
	rIsend
)

var regions = []trace.RegionDef{
	{ID: rMain, Label: "main", Parent: -1}, {ID: rSolve, Label: "solve", Parent: -1},
	{ID: rSend, Label: "MPI_Send", Parent: -1}, {ID: rRecv, Label: "MPI_Recv", Parent: -1},
	{ID: rIrecv, Label: "MPI_Irecv", Parent: -1}, {ID: rWait, Label: "MPI_Wait", Parent: -1},
	{ID: rWaitall, Label: "MPI_Waitall", Parent: -1}, {ID: rSendrecv, Label: "MPI_Sendrecv", Parent: -1},
	{ID: rAllreduce, Function: "mpi_allreduce_", Parent: -1}, {ID: rBarrier, Label: "MPI_Barrier", Parent: -1},
	{ID: rIsend, Label: "MPI_Isend", Parent: -1},
}

func enter(p int32, t int64, id int32) trace.Record { return trace.Enter(0, p, t, id) }
func exit(p int32, t int64, id int32) trace.Record  { return trace.Exit(0, p, t, id) }

// irecv is a non-blocking receive of request req, posted at t and
// completed at end.
func irecv(p int32, t, end int64, src int32, req int32) trace.Record {
	r := trace.Recv(0, p, t, end, src, 8, 0, 0)
	r.Seq = req
	return r
}

// TestLateSender: the receive is entered before the send.
//
//	p0  main ───────[MPI_Send 50..60]────────────
//	p1  main ─[MPI_Recv 20 ......... 70]─────────   late sender 50−20 = 30
//
// The records are OTF2's: the send's at the call's start and the
// receive's at its completion, without End; the regions give the span.
func TestLateSender(t *testing.T) {
	recs := []trace.Record{
		enter(0, 0, rMain), enter(1, 0, rMain), enter(1, 10, rSolve), enter(1, 20, rRecv),
		enter(0, 50, rSend), trace.Send(0, 0, 51, 0, 1, 8, 0, 0), exit(0, 60, rSend),
		trace.Recv(0, 1, 69, 0, 0, 8, 0, 0), exit(1, 70, rRecv), exit(1, 80, rSolve),
		exit(0, 200, rMain), exit(1, 200, rMain),
	}
	r := waits(t, write(t, 2, regions, nil, recs))
	if pattern(r, waitstate.LateSender) != "30/1" || procWaits(r, waitstate.LateSender) != "0:0/0 1:30/1" {
		t.Errorf("late sender %s, by process %s", pattern(r, waitstate.LateSender), procWaits(r, waitstate.LateSender))
	}
	only(t, r, waitstate.LateSender)
	if s := sites(r); s != "late_sender MPI_Recv@solve 30/1" {
		t.Errorf("sites %s", s)
	}
	if r.MPINS != 10+50 || r.Messages != 1 || r.Uncomputed != (waitstate.Uncomputed{}) {
		t.Errorf("MPI %d messages %d uncomputed %+v", r.MPINS, r.Messages, r.Uncomputed)
	}

	// Without regions, the records' own spans (DUMPI's: call enter to
	// exit). The second receive ends (clock skew) before its send
	// starts: its wait is bounded by its duration. A blocking receive
	// without a completion time has no known start (OTF2's record
	// outside any region): it is counted, not guessed.
	recs = []trace.Record{
		trace.Recv(0, 1, 40, 115, 0, 8, 0, 0), trace.Send(0, 0, 100, 110, 1, 8, 0, 0),
		trace.Recv(0, 1, 200, 215, 0, 8, 0, 0), trace.Send(0, 0, 300, 310, 1, 8, 0, 0),
		trace.Send(0, 0, 400, 410, 1, 8, 0, 0), trace.Recv(0, 1, 420, 0, 0, 8, 0, 0),
	}
	r = waits(t, write(t, 2, nil, nil, recs))
	if pattern(r, waitstate.LateSender) != "75/2" || procWaits(r, waitstate.LateSender) != "0:0/0 1:75/2" {
		t.Errorf("late sender %s, want 60 + 15 (bounded) in 2 calls; %s", pattern(r, waitstate.LateSender), procWaits(r, waitstate.LateSender))
	}
	only(t, r, waitstate.LateSender)
	if s := sites(r); s != "late_sender (receive)@(none) 75/2" {
		t.Errorf("sites %s", s)
	}
	if r.Uncomputed != (waitstate.Uncomputed{UnknownSpan: 1}) || r.Messages != 3 || r.MPINS != 75+15+30 {
		t.Errorf("uncomputed %+v messages %d MPI %d", r.Uncomputed, r.Messages, r.MPINS)
	}
	// The second receive completes (215) before its send (300): one
	// clock condition violation of 85 ns, from p0 to p1.
	if c := r.Clock; c.Violations != 1 || c.MaxNS != 85 || fmt.Sprint(c.Pairs) != "[{0 1 1 85}]" || c.Correction != nil {
		t.Errorf("clock %+v", c)
	}
}

// TestLateReceiver: the blocking send is entered before its receive is
// posted.
//
//	p0  [MPI_Send 10 ............ 80]            late receiver 50−10 = 40
//	p1            [MPI_Recv 50 ..... 85]
//	p0  [Send 150 ......... 230]                 late receiver 200−150 = 50
//	p1        Irecv posted 200, completed 260 (no wait call in the trace)
func TestLateReceiver(t *testing.T) {
	recs := []trace.Record{
		trace.Send(0, 0, 10, 80, 1, 8, 0, 0), trace.Recv(0, 1, 50, 85, 0, 8, 0, 0),
		trace.Send(0, 0, 150, 230, 1, 8, 0, 0), irecv(1, 200, 260, 0, 7),
	}
	r := waits(t, write(t, 2, nil, nil, recs))
	if pattern(r, waitstate.LateReceiver) != "90/2" || procWaits(r, waitstate.LateReceiver) != "0:90/2 1:0/0" {
		t.Errorf("late receiver %s, by process %s", pattern(r, waitstate.LateReceiver), procWaits(r, waitstate.LateReceiver))
	}
	only(t, r, waitstate.LateReceiver)
	// The Irecv's completing call is not in the trace: its late sender
	// time (none here) cannot be computed, and is counted.
	if r.Uncomputed != (waitstate.Uncomputed{NoWaitCall: 1}) || r.Messages != 2 {
		t.Errorf("uncomputed %+v messages %d", r.Uncomputed, r.Messages)
	}
	// A non-blocking send is not a Late Receiver: it does not wait for
	// the receive in its call.
	isend := trace.Send(0, 0, 10, 80, 1, 8, 0, 0)
	isend.Seq = 3
	r = waits(t, write(t, 2, nil, nil, []trace.Record{isend, trace.Recv(0, 1, 50, 85, 0, 8, 0, 0)}))
	only(t, r)
}

// TestLateSenderAtWait: a non-blocking receive waits in the MPI_Wait that
// completes it; an MPI_Waitall completing two late messages waits for the
// later one only, once.
//
//	p1  [Irecv 10..12]        [MPI_Wait 60 .... 95]        late sender 80−60 = 20
//	p0                             [MPI_Send 80..90]
//	p1  [Irecv 100] [Irecv 102] [MPI_Waitall 110 .............. 200]
//	p0                                 [MPI_Send 150..160]       150−110 = 40
//	p2                                      [MPI_Send 170..175]  170−110 = 60
//	                                        → the Waitall waits 60, once
func TestLateSenderAtWait(t *testing.T) {
	recs := []trace.Record{
		enter(1, 10, rIrecv), irecv(1, 11, 95, 0, 1), exit(1, 12, rIrecv),
		enter(1, 60, rWait), enter(0, 80, rSend), trace.Send(0, 0, 80, 90, 1, 8, 0, 0), exit(0, 90, rSend), exit(1, 95, rWait),
		enter(1, 100, rIrecv), irecv(1, 100, 199, 0, 2), exit(1, 101, rIrecv),
		enter(1, 102, rIrecv), irecv(1, 102, 200, 2, 3), exit(1, 103, rIrecv),
		enter(1, 110, rWaitall),
		enter(0, 150, rSend), trace.Send(0, 0, 150, 160, 1, 8, 0, 0), exit(0, 160, rSend),
		enter(2, 170, rSend), trace.Send(0, 2, 170, 175, 1, 8, 0, 0), exit(2, 175, rSend),
		exit(1, 200, rWaitall),
	}
	r := waits(t, write(t, 3, regions, nil, recs))
	if pattern(r, waitstate.LateSender) != "80/2" || procWaits(r, waitstate.LateSender) != "0:0/0 1:80/2 2:0/0" {
		t.Errorf("late sender %s, by process %s", pattern(r, waitstate.LateSender), procWaits(r, waitstate.LateSender))
	}
	only(t, r, waitstate.LateSender)
	if s := sites(r); s != "late_sender MPI_Waitall@(none) 60/1; late_sender MPI_Wait@(none) 20/1" {
		t.Errorf("sites %s", s)
	}
	if r.Messages != 3 || r.Uncomputed != (waitstate.Uncomputed{}) {
		t.Errorf("messages %d uncomputed %+v", r.Messages, r.Uncomputed)
	}
}

// TestLogicalTimes: Paraver's records (from Extrae) stamp a message at
// the instant its MPI_Isend or MPI_Irecv returns and say nothing of
// blocking; the receive's End is the message's arrival. The record belongs
// to the call it returns from, the call's name makes it non-blocking, and
// the call containing the arrival is the one that waited.
//
//	p1  [MPI_Irecv 10..12] A posted        [MPI_Waitall 100 ....... 160]
//	p1  [MPI_Irecv 20..22] B posted, arrives at 50, in no MPI call
//	p0  [MPI_Isend 5..6] B                       [MPI_Isend 130..131] A, arrives 150
//	A: late sender 130−100 = 30 at the Waitall; B: its wait is not known;
//	neither Isend is a late receiver.
func TestLogicalTimes(t *testing.T) {
	recs := []trace.Record{
		enter(0, 5, rIsend), exit(0, 6, rIsend), trace.Send(0, 0, 6, 6, 1, 8, 2, 0),
		enter(1, 10, rIrecv), exit(1, 12, rIrecv), trace.Recv(0, 1, 12, 150, 0, 8, 1, 0),
		enter(1, 20, rIrecv), exit(1, 22, rIrecv), trace.Recv(0, 1, 22, 50, 0, 8, 2, 0),
		enter(1, 100, rWaitall), enter(0, 130, rIsend), exit(0, 131, rIsend), trace.Send(0, 0, 131, 131, 1, 8, 1, 0),
		exit(1, 160, rWaitall),
	}
	prv := func(h *trace.Header) { h.Meta.Source = "prv" }
	r := waits(t, write(t, 2, regions, nil, recs, prv))
	if pattern(r, waitstate.LateSender) != "30/1" || procWaits(r, waitstate.LateSender) != "0:0/0 1:30/1" {
		t.Errorf("late sender %s, by process %s", pattern(r, waitstate.LateSender), procWaits(r, waitstate.LateSender))
	}
	only(t, r, waitstate.LateSender)
	if s := sites(r); s != "late_sender MPI_Waitall@(none) 30/1" {
		t.Errorf("sites %s", s)
	}
	if r.Messages != 2 || r.Uncomputed != (waitstate.Uncomputed{NoWaitCall: 1}) {
		t.Errorf("messages %d uncomputed %+v", r.Messages, r.Uncomputed)
	}
	// Without the MPI call regions, a Paraver trace's records are not
	// calls: nothing is computed, every record is counted.
	var bare []trace.Record
	for _, x := range recs {
		if x.Kind == trace.KindSend || x.Kind == trace.KindRecv {
			bare = append(bare, x)
		}
	}
	r = waits(t, write(t, 2, nil, nil, bare, prv))
	if r.WaitNS != 0 || r.MPINS != 0 || r.Uncomputed != (waitstate.Uncomputed{UnknownSpan: 4}) {
		t.Errorf("wait %d MPI %d uncomputed %+v", r.WaitNS, r.MPINS, r.Uncomputed)
	}
}

// TestWaitAtBarrier: every member waits from its entry to the last
// member's, bounded by its own call.
//
//	p0  [Barrier 10 ............ 50]   waits 45−10 = 35
//	p1            [Barrier 30 .. 50]   waits 15
//	p2                   [B 45 . 50]   waits 0
//	on a communicator of p0 and p1:
//	p0  [B 100..105]                   waits min(120−100, 5) = 5
//	p1              [B 120..125]
func TestWaitAtBarrier(t *testing.T) {
	comms := []trace.CommDef{{ID: 0, Name: "world", Members: []int32{0, 1, 2}}, {ID: 1, Members: []int32{0, 1}}}
	recs := []trace.Record{
		trace.Coll(0, 0, 10, 50, trace.OpBarrier, trace.NoPeer, 0, 0),
		trace.Coll(0, 1, 30, 50, trace.OpBarrier, trace.NoPeer, 0, 0),
		trace.Coll(0, 2, 45, 50, trace.OpBarrier, trace.NoPeer, 0, 0),
		trace.Coll(0, 0, 100, 105, trace.OpBarrier, trace.NoPeer, 0, 1),
		trace.Coll(0, 1, 120, 125, trace.OpBarrier, trace.NoPeer, 0, 1),
	}
	r := waits(t, write(t, 3, nil, comms, recs))
	if pattern(r, waitstate.WaitBarrier) != "55/3" || procWaits(r, waitstate.WaitBarrier) != "0:40/2 1:15/1 2:0/0" {
		t.Errorf("wait at barrier %s, by process %s", pattern(r, waitstate.WaitBarrier), procWaits(r, waitstate.WaitBarrier))
	}
	only(t, r, waitstate.WaitBarrier)
	if s := sites(r); s != "wait_barrier barrier@(none) 55/3" {
		t.Errorf("sites %s", s)
	}
	if r.Collectives != 2 || r.MPINS != 40+20+5+5+5 {
		t.Errorf("collectives %d MPI %d", r.Collectives, r.MPINS)
	}
}

// TestWaitAtNxN: an allreduce (in regions named the Fortran way), then,
// in a trace without regions, an alltoall; a scan is of no pattern and
// counted.
//
//	allreduce  p0 [0 ........ 50]  waits 40
//	           p1   [10 ..... 50]  waits 30
//	           p2     [20 ... 50]  waits 20
//	           p3         [40  50] waits 0
//	alltoall   p0..p3 enter 100, 100, 101, 103: waits 3+3+2 = 8
func TestWaitAtNxN(t *testing.T) {
	var recs []trace.Record
	for p, e := range []int64{0, 10, 20, 40} {
		recs = append(recs, enter(int32(p), e, rAllreduce), trace.Coll(0, int32(p), e+1, 49, trace.OpAllreduce, trace.NoPeer, 8, 0),
			exit(int32(p), 50, rAllreduce))
	}
	r := waits(t, write(t, 4, regions, nil, recs))
	if pattern(r, waitstate.WaitNxN) != "90/3" || procWaits(r, waitstate.WaitNxN) != "0:40/1 1:30/1 2:20/1 3:0/0" {
		t.Errorf("wait at N×N %s, by process %s", pattern(r, waitstate.WaitNxN), procWaits(r, waitstate.WaitNxN))
	}
	only(t, r, waitstate.WaitNxN)
	if s := sites(r); s != "wait_nxn mpi_allreduce_@(none) 90/3" {
		t.Errorf("sites %s", s)
	}
	if r.Collectives != 1 || r.MPINS != 50+40+30+10 || r.Uncomputed != (waitstate.Uncomputed{}) {
		t.Errorf("collectives %d MPI %d uncomputed %+v", r.Collectives, r.MPINS, r.Uncomputed)
	}

	recs = nil
	for p, e := range []int64{100, 100, 101, 103} {
		recs = append(recs, trace.Coll(0, int32(p), e, 110, trace.OpAlltoall, trace.NoPeer, 8, 0))
	}
	for p := range int32(4) {
		recs = append(recs, trace.Coll(0, p, 200+int64(p), 210, trace.OpScan, trace.NoPeer, 8, 0))
	}
	r = waits(t, write(t, 4, nil, nil, recs))
	if pattern(r, waitstate.WaitNxN) != "8/3" || procWaits(r, waitstate.WaitNxN) != "0:3/1 1:3/1 2:2/1 3:0/0" {
		t.Errorf("wait at N×N %s, by process %s", pattern(r, waitstate.WaitNxN), procWaits(r, waitstate.WaitNxN))
	}
	only(t, r, waitstate.WaitNxN)
	if s := sites(r); s != "wait_nxn alltoall@(none) 8/3" {
		t.Errorf("sites %s", s)
	}
	if r.Collectives != 2 || r.Uncomputed != (waitstate.Uncomputed{OtherCollectives: 1}) {
		t.Errorf("collectives %d uncomputed %+v", r.Collectives, r.Uncomputed)
	}
}

// TestLateBroadcast: the non-roots of a broadcast or scatter that enter
// before the root wait for it.
//
//	bcast root 2:    p0 enters 5 (waits 15−5 = 10), p1 20 (0), p2 15
//	scatter root 0:  p0 enters 100, p1 90 (waits 10), p2 95 (waits 5)
func TestLateBroadcast(t *testing.T) {
	recs := []trace.Record{
		trace.Coll(0, 0, 5, 30, trace.OpBcast, 2, 8, 0), trace.Coll(0, 1, 20, 30, trace.OpBcast, 2, 8, 0),
		trace.Coll(0, 2, 15, 30, trace.OpBcast, 2, 8, 0),
		trace.Coll(0, 0, 100, 120, trace.OpScatter, 0, 8, 0), trace.Coll(0, 1, 90, 120, trace.OpScatter, 0, 8, 0),
		trace.Coll(0, 2, 95, 120, trace.OpScatter, 0, 8, 0),
	}
	r := waits(t, write(t, 3, nil, nil, recs))
	if pattern(r, waitstate.LateBroadcast) != "25/3" || procWaits(r, waitstate.LateBroadcast) != "0:10/1 1:10/1 2:5/1" {
		t.Errorf("late broadcast %s, by process %s", pattern(r, waitstate.LateBroadcast), procWaits(r, waitstate.LateBroadcast))
	}
	only(t, r, waitstate.LateBroadcast)
	// A root outside the communicator is counted.
	recs = []trace.Record{trace.Coll(0, 0, 5, 30, trace.OpBcast, 7, 8, 0), trace.Coll(0, 1, 20, 30, trace.OpBcast, 7, 8, 0)}
	r = waits(t, write(t, 2, nil, nil, recs))
	if r.Uncomputed != (waitstate.Uncomputed{NoRoot: 1}) || r.WaitNS != 0 {
		t.Errorf("uncomputed %+v wait %d", r.Uncomputed, r.WaitNS)
	}
}

// TestEarlyReduce: the root of a reduce or gather that enters before
// every other member waits until the first of them enters.
//
//	reduce root 0:  p0 enters 10, p1 30, p2 50: the root waits 30−10 = 20
//	gather root 1:  p1 enters last: no wait
func TestEarlyReduce(t *testing.T) {
	recs := []trace.Record{
		trace.Coll(0, 0, 10, 60, trace.OpReduce, 0, 8, 0), trace.Coll(0, 1, 30, 40, trace.OpReduce, 0, 8, 0),
		trace.Coll(0, 2, 50, 55, trace.OpReduce, 0, 8, 0),
		trace.Coll(0, 0, 100, 130, trace.OpGather, 1, 8, 0), trace.Coll(0, 1, 120, 130, trace.OpGather, 1, 8, 0),
		trace.Coll(0, 2, 110, 125, trace.OpGather, 1, 8, 0),
	}
	r := waits(t, write(t, 3, nil, nil, recs))
	if pattern(r, waitstate.EarlyReduce) != "20/1" || procWaits(r, waitstate.EarlyReduce) != "0:20/1 1:0/0 2:0/0" {
		t.Errorf("early reduce %s, by process %s", pattern(r, waitstate.EarlyReduce), procWaits(r, waitstate.EarlyReduce))
	}
	only(t, r, waitstate.EarlyReduce)
}

// TestMixed: every pattern in one trace of two processes with regions,
// a Sendrecv that is both late sender and late receiver (charged its
// longest wait once), and what cannot be computed.
//
//	p0 main: [MPI_Barrier 0..20] [MPI_Sendrecv 30 ........ 70] [MPI_Allreduce 100 .. 130] ──
//	p1 main: [MPI_Barrier 15..20]           [MPI_Sendrecv 50 .. 70] [MPI_Allreduce 125..130]
//	barrier: p0 waits 15; sendrecv: p0 sends to and receives from p1:
//	late sender 50−30 = 20 and late receiver 50−30 = 20: 20 once;
//	allreduce: p0 waits 25.
//	p1 solve: [MPI_Recv 200 .. 260], p0 main: [MPI_Send 240..250]: late sender 40
//	then, outside every MPI region (so their calls are not known): an
//	unmatched send, a collective on an unknown communicator, and an
//	allreduce p1 never enters.
func TestMixed(t *testing.T) {
	comms := []trace.CommDef{{ID: 0, Members: []int32{0, 1}}, {ID: 5, Unknown: true}}
	recs := []trace.Record{
		enter(0, 0, rMain), enter(1, 0, rMain),
		enter(0, 0, rBarrier), trace.Coll(0, 0, 0, 20, trace.OpBarrier, trace.NoPeer, 0, 0), exit(0, 20, rBarrier),
		enter(1, 15, rBarrier), trace.Coll(0, 1, 15, 20, trace.OpBarrier, trace.NoPeer, 0, 0), exit(1, 20, rBarrier),
		enter(0, 30, rSendrecv), trace.Send(0, 0, 30, 70, 1, 8, 1, 0), trace.Recv(0, 0, 30, 70, 1, 8, 2, 0), exit(0, 70, rSendrecv),
		enter(1, 50, rSendrecv), trace.Send(0, 1, 50, 70, 0, 8, 2, 0), trace.Recv(0, 1, 50, 70, 0, 8, 1, 0), exit(1, 70, rSendrecv),
		enter(0, 100, rAllreduce), trace.Coll(0, 0, 100, 130, trace.OpAllreduce, trace.NoPeer, 8, 0), exit(0, 130, rAllreduce),
		enter(1, 125, rAllreduce), trace.Coll(0, 1, 125, 130, trace.OpAllreduce, trace.NoPeer, 8, 0), exit(1, 130, rAllreduce),
		enter(1, 190, rSolve), enter(1, 200, rRecv), trace.Recv(0, 1, 200, 260, 0, 8, 0, 0), exit(1, 260, rRecv), exit(1, 270, rSolve),
		enter(0, 240, rSend), trace.Send(0, 0, 240, 250, 1, 8, 0, 0), exit(0, 250, rSend),
		trace.Send(0, 0, 300, 310, 1, 8, 9, 0),
		trace.Coll(0, 0, 320, 330, trace.OpBarrier, trace.NoPeer, 0, 5),
		trace.Coll(0, 0, 340, 350, trace.OpAllreduce, trace.NoPeer, 8, 0),
		exit(0, 400, rMain), exit(1, 400, rMain),
	}
	r := waits(t, write(t, 2, regions, comms, recs))
	want := map[waitstate.Pattern]string{waitstate.LateSender: "60/2", waitstate.LateReceiver: "0/0",
		waitstate.WaitBarrier: "15/1", waitstate.WaitNxN: "25/1", waitstate.LateBroadcast: "0/0", waitstate.EarlyReduce: "0/0"}
	for p, w := range want {
		if got := pattern(r, p); got != w {
			t.Errorf("%s: %s, want %s", p, got, w)
		}
	}
	// The Sendrecv's late sender (p0 receiving) and late receiver (p0
	// sending) are both 20: charged once, to the first computed (the
	// late sender: p1's send is matched first, in p1's record order).
	if r.WaitNS != 100 || fmt.Sprint(r.ByProcess[0].WaitNS, r.ByProcess[1].WaitNS) != "60 40" {
		t.Errorf("wait %d, by process %+v", r.WaitNS, r.ByProcess)
	}
	// MPI time: the MPI regions, p0 20+40+30+10, p1 5+20+5+60. The
	// records outside them are in no call the trace shows.
	if r.MPINS != 100+90 {
		t.Errorf("MPI %d", r.MPINS)
	}
	if s := sites(r); s != "late_sender MPI_Recv@solve 40/1; wait_nxn mpi_allreduce_@main 25/1; late_sender MPI_Sendrecv@main 20/1; wait_barrier MPI_Barrier@main 15/1" {
		t.Errorf("sites %s", s)
	}
	if r.Uncomputed != (waitstate.Uncomputed{UnknownSpan: 2, UnmatchedSends: 1, UnknownComm: 1, Incomplete: 1}) || r.Messages != 3 || r.Collectives != 2 {
		t.Errorf("uncomputed %+v messages %d collectives %d", r.Uncomputed, r.Messages, r.Collectives)
	}
}

// TestMergeRuns: accumulators of different runs merge into what one pass
// gives; of one run they refuse.
func TestMergeRuns(t *testing.T) {
	recs := []trace.Record{
		trace.Send(0, 0, 100, 110, 1, 8, 0, 0), trace.Recv(0, 1, 40, 115, 0, 8, 0, 0),
		trace.Send(1, 0, 10, 80, 1, 8, 0, 0), trace.Recv(1, 1, 50, 85, 0, 8, 0, 0),
	}
	slices.SortStableFunc(recs, trace.Compare)
	s := write(t, 2, nil, nil, recs)
	tr := engine.TraceOf(s)
	acc := func(run int32) engine.Accumulator {
		return enginetest.RunAccumulator(t, waitstate.Name, tr, waitstate.DefaultParams(), recs, run)
	}
	a := acc(0)
	if err := a.Merge(acc(1)); err != nil {
		t.Fatal(err)
	}
	merged, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	whole := enginetest.Result[*waitstate.Result](t, s, engine.Request{Analysis: waitstate.Name})
	if fmt.Sprint(merged) != fmt.Sprint(whole) || whole.Runs[0].WaitNS != 60 || whole.Runs[1].WaitNS != 40 {
		t.Errorf("merged\n%+v\nwhole\n%+v", merged, whole)
	}
	if err := acc(0).Merge(acc(0)); err == nil {
		t.Error("merging two accumulators of run 0 succeeded")
	}
	if _, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: waitstate.Name, Options: &waitstate.Params{Top: -1}}}); err == nil {
		t.Error("--top -1 accepted")
	}
}

// TestNeedsMessages: a trace without messages or collectives is refused.
func TestNeedsMessages(t *testing.T) {
	s := write(t, 1, regions, nil, []trace.Record{enter(0, 0, rMain), exit(0, 10, rMain)})
	_, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: waitstate.Name}})
	if err == nil || err.Error() != "w.pst: waitstates needs send or recv or collective records, and the trace has none" {
		t.Errorf("error %v", err)
	}
}
