package mpi

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/trace"
)

func ev(typ RecType, t int64, fn Func, comm uint32, peer, tag int32, bytes int64) Event {
	return Event{Type: typ, T: t, End: t + 10, Func: fn, Comm: comm, Peer: peer, Tag: tag, Bytes: bytes, Src: PeerNull, StatusTg: PeerAny}
}

// writeRun writes the encoders' files into a directory and returns their paths.
func writeRun(t *testing.T, encs ...*encoder) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, e := range encs {
		p := filepath.Join(dir, "rank-"+string(rune('0'+i))+".psmpi")
		if err := os.WriteFile(p, e.b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestMergeBadInput: a run of 3 ranks with rank 2's file missing, a
// message to a rank outside its communicator, a collective whose root is
// outside, an unmatched send, a resolved and an unresolved MPI_ANY_SOURCE
// receive, a sub-communicator with reversed ranks, and rank 1 cut short.
func TestMergeBadInput(t *testing.T) {
	r0 := newEncoder(0, 3, 1_000_000, 0)
	r0.comm(0, 0, 1, 2)
	r0.comm(1, 1, 0) // comm 1: rank 0 of it is world rank 1
	// to communicator rank 7 of a 3-rank communicator: outside
	r0.event(ev(RecSend, 100, 1, 0, 7, 1, 8))
	// to rank 0 of comm 1 = world rank 1, tag 2
	r0.event(ev(RecSend, 200, 1, 1, 0, 2, 16))
	// MPI_ANY_SOURCE receive, resolved by the status to rank 1 (tag 3)
	any := ev(RecRecv, 300, 5, 0, PeerAny, 3, 32)
	any.Src, any.StatusTg = 1, 3
	r0.event(any)
	// a Bcast whose root 9 is outside
	r0.event(ev(RecColl, 400, 22, 0, 9, 0, 64))
	// an unmatched send to rank 1, tag 99
	r0.event(ev(RecSend, 500, 1, 0, 1, 99, 4))
	r0.final(1000)

	r1 := newEncoder(1, 3, 1_000_050, 10) // clock 50 ns later, monotonic base 10
	r1.comm(0, 0, 1, 2)
	r1.comm(1, 1, 0)
	r1.event(ev(RecRecv, 210, 5, 1, 1, 2, 16)) // from comm-1 rank 1 = world 0
	r1.event(ev(RecSend, 260, 1, 0, 0, 3, 32))
	irecv := ev(RecIrecv, 400, 10, 0, PeerAny, 4, 8)
	irecv.Request = 77
	r1.event(irecv) // never completed: the rank died
	// no final record: a partial file

	paths := writeRun(t, r0, r1)
	var m trace.Memory
	rep, err := Merge(context.Background(), paths, &m, Options{CallSites: CallSitesOff})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ranks != 3 || !slices.Equal(rep.MissingRanks, []int32{2}) {
		t.Errorf("ranks %d, missing %v", rep.Ranks, rep.MissingRanks)
	}
	if rep.OutsideComm != 2 || len(rep.Outside) != 2 || !strings.Contains(rep.Outside[0], "destination 7 is not a rank of communicator 0 (3 members)") ||
		!strings.Contains(rep.Outside[1], "root 9") {
		t.Errorf("outside %d %q", rep.OutsideComm, rep.Outside)
	}
	if rep.AnySource != 2 || rep.AnySourceResolved != 1 || rep.Uncompleted != 1 {
		t.Errorf("any source %d resolved %d, uncompleted %d", rep.AnySource, rep.AnySourceResolved, rep.Uncompleted)
	}
	if rep.Matched != 2 || rep.UnmatchedSends != 1 || rep.UnmatchedRecvs != 1 || len(rep.Unmatched) != 2 {
		t.Errorf("matched %d, unmatched %d/%d %q", rep.Matched, rep.UnmatchedSends, rep.UnmatchedRecvs, rep.Unmatched)
	}
	if len(rep.Files) != 2 || !rep.Files[0].Complete || rep.Files[1].Complete {
		t.Errorf("files %+v", rep.Files)
	}
	h := m.Header()
	if h.Repairs[RepairPartialFile] != 1 || h.Repairs[RepairAnySource] != 1 || h.Repairs[RepairUncompleted] != 1 {
		t.Errorf("repairs %v", h.Repairs)
	}
	if len(h.Comms) != 2 || !slices.Equal(h.Comms[1].Members, []int32{1, 0}) || h.Comms[0].Name != "MPI_COMM_WORLD" {
		t.Errorf("comms %+v", h.Comms)
	}
	if len(h.Runs) != 1 || h.Runs[0].Procs != 3 || len(h.Procs) != 3 || h.Procs[2].Extra["state"] != "missing" ||
		h.Procs[1].Extra["state"] != "partial" {
		t.Errorf("runs %+v procs %+v", h.Runs, h.Procs)
	}
	var got []string
	for _, r := range m.Records {
		got = append(got, r.String())
	}
	// Rank 1's times: (t - 10) + 50 ns; rank 0's: t.
	want := []trace.Record{
		trace.Send(0, 0, 200, 210, 1, 16, 2, 1),
		trace.Recv(0, 1, 250, 260, 0, 16, 2, 1),
		trace.Send(0, 1, 300, 310, 0, 32, 3, 0),
		trace.Recv(0, 0, 300, 310, 1, 32, 3, 0),
		func() trace.Record {
			r := trace.Recv(0, 1, 440, 0, trace.NoPeer, 8, 4, 0)
			r.Flags, r.Seq = trace.FlagAnySource, 0
			return r
		}(),
		trace.Send(0, 0, 500, 510, 1, 4, 99, 0),
	}
	var ws []string
	for _, r := range want {
		ws = append(ws, r.String())
	}
	slices.Sort(got)
	slices.Sort(ws)
	if !slices.Equal(got, ws) {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(ws, "\n"))
	}
}

// TestMergeRegionsAndCallSites: user regions become enter/exit records
// whose exits come after the messages inside them even at equal times, and
// CallSitesOn wraps every call in a region.
func TestMergeRegionsAndCallSites(t *testing.T) {
	r0 := newEncoder(0, 2, 0, 0)
	r0.comm(0, 0, 1)
	r0.str(1, "loop 5")
	r0.event(Event{Type: RecBegin, T: 10, Tag: 1, Func: 37})
	s := ev(RecSend, 20, 1, 0, 1, 0, 8)
	s.End = 20 // a send that took no time on the clock
	r0.event(s)
	r0.event(Event{Type: RecEnd, T: 20, Tag: 1, Func: 37})
	r0.final(30)
	r1 := newEncoder(1, 2, 0, 0)
	r1.comm(0, 0, 1)
	r1.event(ev(RecRecv, 20, 5, 0, 0, 0, 8))
	r1.final(40)
	paths := writeRun(t, r0, r1)
	for _, mode := range []CallSiteMode{CallSitesAuto, CallSitesOn} {
		var m trace.Memory
		rep, err := Merge(context.Background(), paths, &m, Options{CallSites: mode})
		if err != nil {
			t.Fatal(err)
		}
		if rep.CallSites != (mode == CallSitesOn) {
			t.Errorf("mode %d: call sites %v", mode, rep.CallSites)
		}
		var rank0 []string
		for _, r := range m.Records {
			if r.Proc == 0 {
				rank0 = append(rank0, r.Kind.String())
			}
		}
		want := []string{"enter", "send", "exit"}
		if mode == CallSitesOn {
			want = []string{"enter", "enter", "send", "exit", "exit"}
		}
		if !slices.Equal(rank0, want) {
			t.Errorf("mode %d: rank 0 %v, want %v", mode, rank0, want)
		}
		for _, r := range m.Records {
			if r.Kind == trace.KindExit && r.T <= 20 {
				t.Errorf("mode %d: exit at %d, not after the send at 20", mode, r.T)
			}
		}
		if m.Header().Regions[0].Label != "loop 5" || m.Header().Regions[0].Kind != trace.RegionLoop {
			t.Errorf("regions %+v", m.Header().Regions)
		}
	}
}

func TestMergeRejects(t *testing.T) {
	a := newEncoder(0, 2, 0, 0)
	b := newEncoder(0, 2, 0, 0)
	c := newEncoder(1, 3, 0, 0)
	for _, tc := range []struct {
		encs []*encoder
		msg  string
	}{
		{[]*encoder{a, b}, "rank 0 again"},
		{[]*encoder{a, c}, "world size 3"},
	} {
		_, err := Merge(context.Background(), writeRun(t, tc.encs...), &trace.Memory{}, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("error %v, want %q", err, tc.msg)
		}
	}
	if _, err := Merge(context.Background(), nil, &trace.Memory{}, Options{}); err == nil {
		t.Error("no files merged")
	}
}
