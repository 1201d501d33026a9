package waitstate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/trace"
)

// waitsWith runs the analysis with the options p and returns run 0's
// result.
func waitsWith(t *testing.T, recs []trace.Record, procs int32, p *waitstate.Params) waitstate.RunWaits {
	t.Helper()
	slices.SortStableFunc(recs, trace.Compare)
	s := write(t, procs, nil, nil, recs)
	r := enginetest.Result[*waitstate.Result](t, s, engine.Request{Analysis: waitstate.Name, Options: p})
	if len(r.Runs) != 1 {
		t.Fatalf("%d runs", len(r.Runs))
	}
	checkBounds(t, r.Runs[0])
	checkSubBounds(t, r.Runs[0])
	return r.Runs[0]
}

// checkSubBounds checks that the sub-patterns add up by process, that
// wrong order is the sum of its two parts and within Late Sender.
func checkSubBounds(t *testing.T, r waitstate.RunWaits) {
	t.Helper()
	var sum [3]int64
	for _, p := range r.ByProcess {
		s := p.SubPatterns
		if s[1].WaitNS+s[2].WaitNS != s[0].WaitNS || s[0].WaitNS > p.Patterns[waitstate.LateSender].WaitNS {
			t.Errorf("process %d: sub-patterns %+v, late sender %d", p.Proc, s, p.Patterns[waitstate.LateSender].WaitNS)
		}
		for i := range sum {
			sum[i] += s[i].WaitNS
		}
	}
	for i, a := range r.SubPatterns {
		if a.WaitNS != sum[i] || a.Pattern != waitstate.SubPatterns[i].String() || a.Parent != waitstate.SubPatterns[i].Parent() {
			t.Errorf("sub-pattern %+v, by process %d", a, sum[i])
		}
	}
}

// subs returns the sub-patterns as "ns/calls ns/calls ns/calls" (wrong
// order, same source, different source).
func subs(r waitstate.RunWaits) string {
	var out []string
	for _, a := range r.SubPatterns {
		out = append(out, fmt.Sprintf("%d/%d", a.WaitNS, a.Calls))
	}
	return strings.Join(out, " ")
}

// isend is a non-blocking send (no late receiver) spanning t..end.
func isend(p int32, t, end int64, dst, tag int32) trace.Record {
	r := trace.Send(0, p, t, end, dst, 8, tag, 0)
	r.Seq = 1
	return r
}

// recv is a blocking receive spanning t..end (DUMPI's records).
func recv(p int32, t, end int64, src, tag int32) trace.Record {
	return trace.Recv(0, p, t, end, src, 8, tag, 0)
}

// TestWrongOrderDifferentSource: p1 receives from p0 first, whose message
// is sent late, while p2's message had been sent long before.
//
//	p2  [Isend 20..25]
//	p0                      [Isend 60..65]
//	p1  [Recv from p0 10 ............ 100][Recv from p2 100..110]
//	late sender 60−10 = 50, all of it wrong order (p2's message, sent at
//	20 < 60, could have been received first), different source.
func TestWrongOrderDifferentSource(t *testing.T) {
	recs := []trace.Record{
		isend(2, 20, 25, 1, 0), isend(0, 60, 65, 1, 0),
		recv(1, 10, 100, 0, 0), recv(1, 100, 110, 2, 0),
	}
	r := waitsWith(t, recs, 3, waitstate.DefaultParams())
	if pattern(r, waitstate.LateSender) != "50/1" || subs(r) != "50/1 0/0 50/1" {
		t.Errorf("late sender %s, wrong order %s", pattern(r, waitstate.LateSender), subs(r))
	}
	only(t, r, waitstate.LateSender)
	if r.WaitNS != 50 || r.Clock.Violations != 0 || r.Clock.Correction != nil {
		t.Errorf("wait %d clock %+v", r.WaitNS, r.Clock)
	}
}

// TestWrongOrderSameSource: p0 sends tag 1 then tag 2; p1 receives tag 2
// first and waits for it, tag 1 having been sent before.
//
//	p0  [Isend t1 20..21]         [Isend t2 60..61]
//	p1  [Recv t2 10 .................... 100][Recv t1 100..110]
//	late sender 50, wrong order 50 from the same source.
func TestWrongOrderSameSource(t *testing.T) {
	recs := []trace.Record{
		isend(0, 20, 21, 1, 1), isend(0, 60, 61, 1, 2),
		recv(1, 10, 100, 0, 2), recv(1, 100, 110, 0, 1),
	}
	r := waitsWith(t, recs, 2, waitstate.DefaultParams())
	if pattern(r, waitstate.LateSender) != "50/1" || subs(r) != "50/1 50/1 0/0" {
		t.Errorf("late sender %s, wrong order %s", pattern(r, waitstate.LateSender), subs(r))
	}
	if r.ByProcess[1].SubPatterns[0].WaitNS != 50 || r.ByProcess[0].SubPatterns[0].WaitNS != 0 {
		t.Errorf("by process %+v", r.ByProcess)
	}
}

// TestWrongOrderNot: Late Senders in the right order are not wrong order.
//
//	p2  [Isend 20..25]
//	p0            [Isend 60..65]              [Isend 150..151]
//	p1  [Recv p2 10..30][Recv p0 40 .. 70]  [Recv p0 120 ...... 160][Recv p2 160..170]
//	p2                                                      [Isend 155..156]
//
// The first late sender (60−40 = 20) waits for a message sent after every
// message received later; the one received before it (sent at 20, also
// a late sender of 10) does not count: it was received first. The second
// (150−120 = 30) is followed by a receive of a message sent at 155, after
// 150. Late sender 60 in 3 calls, no wrong order.
func TestWrongOrderNot(t *testing.T) {
	recs := []trace.Record{
		isend(2, 20, 25, 1, 0), isend(0, 60, 65, 1, 0), isend(0, 150, 151, 1, 0), isend(2, 155, 156, 1, 0),
		recv(1, 10, 30, 2, 0), recv(1, 40, 70, 0, 0), recv(1, 120, 160, 0, 0), recv(1, 160, 170, 2, 0),
	}
	r := waitsWith(t, recs, 3, waitstate.DefaultParams())
	if pattern(r, waitstate.LateSender) != "60/3" || subs(r) != "0/0 0/0 0/0" {
		t.Errorf("late sender %s, wrong order %s", pattern(r, waitstate.LateSender), subs(r))
	}
}

// TestWrongOrderWindow: 101 late senders from p0 (5 ns each), then a
// receive of a message p0 sent before all of them: only the latest
// waitstate.WrongOrderWindow are compared with it.
func TestWrongOrderWindow(t *testing.T) {
	recs := []trace.Record{isend(0, 1, 2, 1, 0)}
	for k := int64(1); k <= 101; k++ {
		recs = append(recs, isend(0, 1000*k+5, 1000*k+6, 1, int32(k)), recv(1, 1000*k, 1000*k+10, 0, int32(k)))
	}
	recs = append(recs, recv(1, 200000, 200010, 0, 0))
	r := waitsWith(t, recs, 2, waitstate.DefaultParams())
	if pattern(r, waitstate.LateSender) != "505/101" || subs(r) != "500/100 500/100 0/0" {
		t.Errorf("late sender %s, wrong order %s", pattern(r, waitstate.LateSender), subs(r))
	}
}

// TestWrongOrderAtWaitall: p1's Waitall (100..200) completes receives
// from p0 (sent at 150, waited 50) and p2 (sent at 170, waited 70), then
// p1 receives from p3 a message sent at 90. The Waitall has one Late
// Sender wait, its longest (70, p2's message, as SCOUT's), and it is wrong
// order, different source: late sender 70 once, wrong order 70 once.
func TestWrongOrderAtWaitall(t *testing.T) {
	recs := []trace.Record{
		trace.Enter(0, 1, 10, rIrecv), irecv(1, 10, 190, 0, 1), trace.Exit(0, 1, 11, rIrecv),
		trace.Enter(0, 1, 12, rIrecv), irecv(1, 12, 195, 2, 2), trace.Exit(0, 1, 13, rIrecv),
		trace.Enter(0, 3, 90, rSend), trace.Send(0, 3, 90, 91, 1, 8, 0, 0), trace.Exit(0, 3, 91, rSend),
		trace.Enter(0, 1, 100, rWaitall),
		trace.Enter(0, 0, 150, rIsend), isend(0, 150, 151, 1, 0), trace.Exit(0, 0, 151, rIsend),
		trace.Enter(0, 2, 170, rIsend), isend(2, 170, 171, 1, 0), trace.Exit(0, 2, 171, rIsend),
		trace.Exit(0, 1, 200, rWaitall),
		trace.Enter(0, 1, 210, rRecv), trace.Recv(0, 1, 219, 0, 3, 8, 0, 0), trace.Exit(0, 1, 220, rRecv),
	}
	slices.SortStableFunc(recs, trace.Compare)
	r := enginetest.Result[*waitstate.Result](t, write(t, 4, regions, nil, recs), engine.Request{Analysis: waitstate.Name}).Runs[0]
	checkBounds(t, r)
	checkSubBounds(t, r)
	if pattern(r, waitstate.LateSender) != "70/1" || subs(r) != "70/1 0/0 70/1" {
		t.Errorf("late sender %s, wrong order %s", pattern(r, waitstate.LateSender), subs(r))
	}
}

// TestWrongOrderInsideWaitall: a Waitall (100..200) completes p2's
// message (sent at 170, completed first, at 190) and then p0's (sent at
// 150, completed at 195). Its Late Sender wait (70, p2's) becomes known as
// the call ends, after both receives: the earlier-sent message it
// completes itself does not make it wrong order (SCOUT notifies a
// Waitall's Late Sender when it is left). Late sender 70, no wrong order.
func TestWrongOrderInsideWaitall(t *testing.T) {
	recs := []trace.Record{
		trace.Enter(0, 1, 10, rIrecv), irecv(1, 10, 195, 0, 1), trace.Exit(0, 1, 11, rIrecv),
		trace.Enter(0, 1, 12, rIrecv), irecv(1, 12, 190, 2, 2), trace.Exit(0, 1, 13, rIrecv),
		trace.Enter(0, 1, 100, rWaitall),
		trace.Enter(0, 0, 150, rIsend), isend(0, 150, 151, 1, 0), trace.Exit(0, 0, 151, rIsend),
		trace.Enter(0, 2, 170, rIsend), isend(2, 170, 171, 1, 0), trace.Exit(0, 2, 171, rIsend),
		trace.Exit(0, 1, 200, rWaitall),
	}
	slices.SortStableFunc(recs, trace.Compare)
	r := enginetest.Result[*waitstate.Result](t, write(t, 3, regions, nil, recs), engine.Request{Analysis: waitstate.Name}).Runs[0]
	checkBounds(t, r)
	checkSubBounds(t, r)
	if pattern(r, waitstate.LateSender) != "70/1" || subs(r) != "0/0 0/0 0/0" {
		t.Errorf("late sender %s, wrong order %s", pattern(r, waitstate.LateSender), subs(r))
	}
}
