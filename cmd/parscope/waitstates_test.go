package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// waitsRun runs parscope waitstates --json and returns its result.
func waitsRun(t *testing.T, args ...string) *waitstate.Result {
	t.Helper()
	var env struct {
		SchemaVersion int              `json:"schema_version"`
		Analysis      string           `json:"analysis"`
		Result        waitstate.Result `json:"result"`
	}
	out := mustRun(t, append([]string{"waitstates", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if env.SchemaVersion != 1 || env.Analysis != "waitstates" || len(env.Result.Runs) != 1 {
		t.Fatalf("envelope %d %q, %d runs", env.SchemaVersion, env.Analysis, len(env.Result.Runs))
	}
	return &env.Result
}

// waitsBounded checks that every process waits no longer than its MPI
// time, and that the totals add up.
func waitsBounded(t *testing.T, run waitstate.RunWaits) {
	t.Helper()
	var wait, mpi int64
	for _, p := range run.ByProcess {
		if p.WaitNS < 0 || p.WaitNS > p.MPINS {
			t.Errorf("process %d waits %d of %d ns of MPI time", p.Proc, p.WaitNS, p.MPINS)
		}
		wait += p.WaitNS
		mpi += p.MPINS
	}
	if wait != run.WaitNS || mpi != run.MPINS || run.WaitNS > run.MPINS {
		t.Errorf("wait %d (processes %d), MPI %d (processes %d)", run.WaitNS, wait, run.MPINS, mpi)
	}
}

// mpiInclusive sums the inclusive time of the MPI regions of parscope
// profile: the MPI time, counted independently.
func mpiInclusive(t *testing.T, path string) (total int64, by map[string]int64) {
	t.Helper()
	by = map[string]int64{}
	for _, e := range profileRun(t, "--top", "0", path).Runs[0].Flat {
		if trace.IsMPICall(e.Name) {
			total += e.InclusiveNS
			by[e.Name] += e.InclusiveNS
		}
	}
	return total, by
}

// TestWaitStatesPingPong: the OTF2 ping-pong (2 ranks, 8 messages each
// way, MPI_Send and MPI_Recv regions under main; the receive records hold
// only the completion, the regions give the calls' spans). The MPI time
// is the MPI regions' inclusive time of parscope profile; the late senders
// wait in MPI_Recv and the late receivers in MPI_Send, each no longer than
// that region's time, and equal to the waits recomputed from the regions
// around each message's records; no collectives, nothing left uncomputed.
func TestWaitStatesPingPong(t *testing.T) {
	dir := realTrace(t, "otf2/ping-pong-otf2")
	rw := waitsRun(t, dir).Runs[0]
	waitsBounded(t, rw)
	mpi, by := mpiInclusive(t, dir)
	if rw.MPINS != mpi || rw.Messages != 16 || rw.Collectives != 0 || rw.Uncomputed != (waitstate.Uncomputed{}) {
		t.Errorf("MPI %d (profile %d), messages %d, collectives %d, uncomputed %+v", rw.MPINS, mpi, rw.Messages, rw.Collectives, rw.Uncomputed)
	}
	ls, lr := rw.Patterns[waitstate.LateSender], rw.Patterns[waitstate.LateReceiver]
	if ls.WaitNS <= 0 || ls.WaitNS > by["MPI_Recv"] || lr.WaitNS <= 0 || lr.WaitNS > by["MPI_Send"] || ls.Calls+lr.Calls > 16 {
		t.Errorf("late sender %+v (MPI_Recv %d), late receiver %+v (MPI_Send %d)", ls, by["MPI_Recv"], lr, by["MPI_Send"])
	}
	for _, s := range rw.Sites {
		if want := map[string]string{"late_sender": "MPI_Recv", "late_receiver": "MPI_Send"}[s.Pattern]; s.Call != want || s.RegionName != "int main(int, char**)" {
			t.Errorf("site %+v", s)
		}
	}

	// Again from the records: each message's send and receive lie in an
	// MPI_Send and an MPI_Recv region; the k-th send of a rank to the
	// other with a tag is the k-th receive there (one message per call,
	// so no call is charged twice).
	pst := filepath.Join(t.TempDir(), "pp.pst")
	mustRun(t, "import", "-o", pst, dir)
	st := storetest.Open(t, pst)
	recs, err := trace.ReadAll(st.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindEnter, trace.KindExit, trace.KindSend, trace.KindRecv}}))
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ enter, exit int64 }
	mpiCall := map[int32]bool{}
	for _, r := range st.Header().Regions {
		mpiCall[r.ID] = r.Label == "MPI_Send" || r.Label == "MPI_Recv"
	}
	type lane struct{ src, dst, tag int32 }
	sends, recvs := map[lane][]*span{}, map[lane][]*span{}
	cur := map[int32]*span{} // process → its open MPI_Send or MPI_Recv
	for _, r := range recs {
		switch {
		case r.Kind == trace.KindEnter && mpiCall[r.ID]:
			cur[r.Proc] = &span{enter: r.T}
		case r.Kind == trace.KindExit && mpiCall[r.ID]:
			cur[r.Proc].exit = r.T
		case r.Kind == trace.KindSend:
			sends[lane{r.Proc, r.Peer, r.Tag}] = append(sends[lane{r.Proc, r.Peer, r.Tag}], cur[r.Proc])
		case r.Kind == trace.KindRecv:
			recvs[lane{r.Peer, r.Proc, r.Tag}] = append(recvs[lane{r.Peer, r.Proc, r.Tag}], cur[r.Proc])
		}
	}
	var wantLS, wantLR int64
	for l, ss := range sends {
		rs := recvs[l]
		if len(rs) != len(ss) {
			t.Fatalf("lane %+v: %d sends, %d receives", l, len(ss), len(rs))
		}
		for k, s := range ss {
			r := rs[k]
			wantLS += max(0, min(s.enter, r.exit)-r.enter)
			wantLR += max(0, min(r.enter, s.exit)-s.enter)
		}
	}
	if ls.WaitNS != wantLS || lr.WaitNS != wantLR {
		t.Errorf("late sender %d, late receiver %d; from the records %d and %d", ls.WaitNS, lr.WaitNS, wantLS, wantLR)
	}
}

// TestWaitStatesDUMPI: the DUMPI ring of 4 ranks (Barrier, Isend to r+1,
// Recv from r−1, Wait, Allreduce). The waits at the barrier and the
// allreduce, and the late senders of the receives, are computed here
// again from the records (DUMPI's records span their calls) and must be
// the analysis' to the nanosecond.
func TestWaitStatesDUMPI(t *testing.T) {
	meta := realTrace(t, "dumpi/testtrace.meta")
	pst := filepath.Join(t.TempDir(), "ring.pst")
	mustRun(t, "import", "-o", pst, meta)
	rw := waitsRun(t, pst).Runs[0]
	waitsBounded(t, rw)
	mpi, _ := mpiInclusive(t, pst)
	if rw.MPINS != mpi || rw.Messages != 4 || rw.Collectives != 2 || rw.Uncomputed != (waitstate.Uncomputed{}) {
		t.Errorf("MPI %d (profile %d), messages %d, collectives %d, uncomputed %+v", rw.MPINS, mpi, rw.Messages, rw.Collectives, rw.Uncomputed)
	}

	s := storetest.Open(t, pst)
	recs, err := trace.ReadAll(s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindSend, trace.KindRecv, trace.KindCollective}}))
	if err != nil {
		t.Fatal(err)
	}
	colls := map[trace.CollectiveOp][]trace.Record{}
	sendT := map[int32]int64{} // sender → its Isend's enter
	var recvs []trace.Record
	for _, r := range recs {
		switch r.Kind {
		case trace.KindCollective:
			colls[trace.CollectiveOp(r.ID)] = append(colls[trace.CollectiveOp(r.ID)], r)
		case trace.KindSend:
			sendT[r.Proc] = r.T
		case trace.KindRecv:
			recvs = append(recvs, r)
		}
	}
	want := make([]int64, 6)
	for op, p := range map[trace.CollectiveOp]waitstate.Pattern{trace.OpBarrier: waitstate.WaitBarrier, trace.OpAllreduce: waitstate.WaitNxN} {
		cs := colls[op]
		if len(cs) != 4 {
			t.Fatalf("%s: %d records", op, len(cs))
		}
		var last int64
		for _, c := range cs {
			last = max(last, c.T)
		}
		for _, c := range cs {
			want[p] += min(last-c.T, c.End-c.T)
		}
	}
	for _, r := range recvs {
		if w := min(sendT[r.Peer]-r.T, r.End-r.T); w > 0 {
			want[waitstate.LateSender] += w
		}
	}
	for _, p := range waitstate.Patterns {
		if got := rw.Patterns[p].WaitNS; got != want[p] {
			t.Errorf("%s: %d ns, computed from the records %d", p, got, want[p])
		}
	}
	if want[waitstate.WaitBarrier] == 0 || want[waitstate.LateSender] == 0 {
		t.Errorf("the ring's barrier and receives wait: %v", want)
	}

	// The text names the patterns and the call sites; the CSV has a row
	// per process and pattern.
	out := mustRun(t, "waitstates", pst)
	for _, w := range []string{"wait_barrier", "MPI_Barrier", "MPI_Allreduce", "late_sender", "MPI_Recv", "of MPI time"} {
		if !strings.Contains(out, w) {
			t.Errorf("text lacks %q:\n%s", w, out)
		}
	}
	csv := mustRun(t, "waitstates", "--csv", pst)
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 1+4*6 || lines[0] != "run,proc,pattern,wait_ns,calls,mpi_ns" {
		t.Errorf("csv:\n%s", csv)
	}
	if _, stderr, code := run(t, "waitstates", "--json", "--csv", pst); code != 2 || !strings.Contains(stderr, "--csv") {
		t.Errorf("--json --csv: exit %d, %q", code, stderr)
	}
}

// TestWaitStatesParaver: Extrae's and MPItrace's Paraver traces. LULESH's
// messages are stamped at the instants their MPI_Isend and MPI_Irecv
// return and arrive inside the MPI_Wait or MPI_Waitall that completes
// them: every one is measured there, late senders only. The quicksort's
// blocking MPI_Send and MPI_Recv and its collectives are all measured.
// The MPI time is at most the MPI regions' inclusive time of parscope
// profile (equal but for MPI regions nested in others, counted once
// here: the quicksort's MPI_Allreduce holds an MPI_Reduce and an
// MPI_Bcast).
func TestWaitStatesParaver(t *testing.T) {
	for _, c := range []struct {
		file              string
		messages, colls   int64
		equalMPI          bool
		patterns, waiters string
	}{
		{"lulesh_7+1_with_uncores_sockets1+2.chop8.prv", 160, 0, true, "late_sender", "MPI_Wait MPI_Waitall"},
		{"qsort_beo3.prv", 33, 15, false, "late_sender late_receiver wait_nxn late_broadcast early_reduce", "MPI_Recv MPI_Send MPI_Allreduce MPI_Bcast MPI_Reduce"},
	} {
		path := realTrace(t, "paraver/"+c.file)
		rw := waitsRun(t, path).Runs[0]
		waitsBounded(t, rw)
		mpi, _ := mpiInclusive(t, path)
		if rw.Messages != c.messages || rw.Collectives != c.colls || rw.Uncomputed != (waitstate.Uncomputed{}) ||
			rw.MPINS > mpi || (c.equalMPI && rw.MPINS != mpi) || rw.MPINS == 0 {
			t.Errorf("%s: messages %d, collectives %d, uncomputed %+v, MPI %d (profile %d)", c.file, rw.Messages, rw.Collectives, rw.Uncomputed, rw.MPINS, mpi)
		}
		var waited []string
		for _, a := range rw.Patterns {
			if a.WaitNS > 0 {
				waited = append(waited, a.Pattern)
			}
		}
		if strings.Join(waited, " ") != c.patterns {
			t.Errorf("%s: patterns with waits %v, want %s", c.file, waited, c.patterns)
		}
		for _, s := range rw.Sites {
			if !strings.Contains(" "+c.waiters+" ", " "+s.Call+" ") {
				t.Errorf("%s: a wait in %s", c.file, s.Call)
			}
		}
	}
}

// TestWaitStatesClock: process 1's clock is 1000 ns behind (records
// spanning their calls, as DUMPI's):
//
//	p0  [Send→p1 10100..10110]            [Recv←p1 10150 ...... 10230]
//	p1  [Recv←p0 10040 ... 10105]  [Send→p0 10200..10210]    (true times)
//
// As read, p1's receive completes at 9105, 995 ns before its send: the
// text and the JSON say so. With --clock-correction and a least latency of
// 5 ns (that of p0 → p1), p1 moves 1000 ns forward and the waits are the
// true ones: late senders of 60 (p1) and 50 (p0).
func TestWaitStatesClock(t *testing.T) {
	pst := filepath.Join(t.TempDir(), "skew.pst")
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: 2}}}
	storetest.Create(t, pst, h, []trace.Record{
		trace.Recv(0, 1, 9040, 9105, 0, 8, 0, 0), trace.Send(0, 1, 9200, 9210, 0, 8, 0, 0),
		trace.Send(0, 0, 10100, 10110, 1, 8, 0, 0), trace.Recv(0, 0, 10150, 10230, 1, 8, 0, 0),
	})

	out := mustRun(t, "waitstates", pst)
	for _, want := range []string{
		"\nclock condition violated: 1 messages received before they were sent, by up to 995ns (sender→receiver: 0→1: 1 (up to 995ns))\n",
		"--clock-correction shifts each process's clock",
		"\n  late_sender_wrong_order ",
		"\n    late_sender_wrong_order_same_source ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	rw := waitsRun(t, pst).Runs[0]
	if c := rw.Clock; c.Violations != 1 || c.MaxNS != 995 || len(c.Pairs) != 1 || c.Pairs[0] != (waitstate.ClockPair{Sender: 0, Receiver: 1, Violations: 1, MaxNS: 995}) || c.Correction != nil {
		t.Errorf("clock %+v", c)
	}
	if rw.Patterns[waitstate.LateSender].WaitNS != 65 || rw.Patterns[waitstate.LateReceiver].WaitNS != 10 {
		t.Errorf("skewed: %+v", rw.Patterns)
	}

	rw = waitsRun(t, "--clock-correction", "--clock-min-latency", "5", pst).Runs[0]
	waitsBounded(t, rw)
	cc := rw.Clock.Correction
	if cc == nil || !cc.Applied || cc.MinLatencyNS != 5 || len(cc.Offsets) != 1 || cc.Offsets[0] != (waitstate.ProcOffset{Proc: 1, OffsetNS: 1000}) || cc.Violations != 0 || rw.Clock.Violations != 1 {
		t.Fatalf("correction %+v", cc)
	}
	if rw.WaitNS != 110 || rw.Patterns[waitstate.LateSender].WaitNS != 110 || rw.ByProcess[0].WaitNS != 50 || rw.ByProcess[1].WaitNS != 60 {
		t.Errorf("corrected: wait %d, %+v, %+v", rw.WaitNS, rw.Patterns, rw.ByProcess)
	}
	out = mustRun(t, "waitstates", "--clock-correction", "--clock-min-latency", "5", pst)
	if !strings.Contains(out, "clock correction (least latency 5ns): 1 processes moved forward (1 +1µs); 0 violations left") {
		t.Errorf("text:\n%s", out)
	}
}
