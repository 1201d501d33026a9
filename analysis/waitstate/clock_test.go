package waitstate_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/trace"
)

// clockTrace is a trace of 3 processes whose records span their calls,
// with p1's clock shifted by shift ns.
//
//	p0  [Send→p1 10100..10110]  [Recv←p1 10150 ......... 10230]
//	p1  [Recv←p0 10040 ... 10105] [Send→p0 10200..10210] [Recv←p2 10290..10320]
//	p2                                                  [Send→p1 10300..10305]
//	barrier: p0 10400, p1 10420, p2 10410, all leaving at 10450
//
// Late senders 60 (p1), 50 (p0), 10 (p1); wait at barrier 20 + 10. The
// message p0 → p1 takes 5 ns, the least of every message.
func clockTrace(shift int64) []trace.Record {
	recs := []trace.Record{
		trace.Send(0, 0, 10100, 10110, 1, 8, 0, 0), trace.Recv(0, 1, 10040, 10105, 0, 8, 0, 0),
		trace.Send(0, 1, 10200, 10210, 0, 8, 0, 0), trace.Recv(0, 0, 10150, 10230, 1, 8, 0, 0),
		trace.Send(0, 2, 10300, 10305, 1, 8, 0, 0), trace.Recv(0, 1, 10290, 10320, 2, 8, 0, 0),
		trace.Coll(0, 0, 10400, 10450, trace.OpBarrier, trace.NoPeer, 0, 0),
		trace.Coll(0, 1, 10420, 10450, trace.OpBarrier, trace.NoPeer, 0, 0),
		trace.Coll(0, 2, 10410, 10450, trace.OpBarrier, trace.NoPeer, 0, 0),
	}
	for i := range recs {
		if recs[i].Proc == 1 {
			recs[i].T += shift
			recs[i].End += shift
		}
	}
	slices.SortStableFunc(recs, trace.Compare)
	return recs
}

// clockWaits runs the analysis of recs with the options p.
func clockWaits(t *testing.T, recs []trace.Record, p *waitstate.Params) waitstate.RunWaits {
	t.Helper()
	comms := []trace.CommDef{{ID: 0, Members: []int32{0, 1, 2}}}
	r := enginetest.Result[*waitstate.Result](t, write(t, 3, nil, comms, recs), engine.Request{Analysis: waitstate.Name, Options: p}).Runs[0]
	checkBounds(t, r)
	checkSubBounds(t, r)
	return r
}

// measured returns what the correction must give back: the waits.
func measured(r waitstate.RunWaits) string {
	return fmt.Sprint(r.MPINS, r.WaitNS, r.Patterns, r.ByProcess, r.SubPatterns)
}

func corrected(minLat int64) *waitstate.Params {
	p := waitstate.DefaultParams()
	p.ClockCorrection, p.ClockMinLatency = true, minLat
	return p
}

// TestClockCorrection: p1's clock is 1000 ns behind. Its receives
// complete before their sends: 2 violations, of 10100 − 9105 = 995 and
// 10300 − 9320 = 980. Corrected assuming a least latency of 5 ns (that of
// the message p0 → p1), p1 is moved forward 1000 ns exactly and the waits
// are those of the unshifted trace.
func TestClockCorrection(t *testing.T) {
	want := clockWaits(t, clockTrace(0), waitstate.DefaultParams())
	if pattern(want, waitstate.LateSender) != "120/3" || pattern(want, waitstate.WaitBarrier) != "30/2" || want.WaitNS != 150 || want.Clock.Violations != 0 {
		t.Fatalf("unshifted: late sender %s, barrier %s, wait %d, clock %+v", pattern(want, waitstate.LateSender), pattern(want, waitstate.WaitBarrier), want.WaitNS, want.Clock)
	}

	skewed := clockWaits(t, clockTrace(-1000), waitstate.DefaultParams())
	if c := skewed.Clock; c.Violations != 2 || c.MaxNS != 995 || fmt.Sprint(c.Pairs) != "[{0 1 1 995} {2 1 1 980}]" || c.Correction != nil {
		t.Errorf("skewed clock %+v", c)
	}
	if measured(skewed) == measured(want) {
		t.Error("the skew changes no wait")
	}

	r := clockWaits(t, clockTrace(-1000), corrected(5))
	if got, w := measured(r), measured(want); got != w {
		t.Errorf("corrected\n%s\nwant\n%s", got, w)
	}
	// The violations are those of the trace as read; none is left.
	if c := r.Clock; c.Violations != 2 || c.MaxNS != 995 || fmt.Sprint(c.Pairs) != "[{0 1 1 995} {2 1 1 980}]" ||
		c.Correction == nil || fmt.Sprintf("%+v", *c.Correction) != "{MinLatencyNS:5 Applied:true Offsets:[{Proc:1 OffsetNS:1000}] Violations:0}" {
		t.Errorf("corrected clock %+v %+v", c, c.Correction)
	}

	// A trace that holds the condition with 5 ns to spare is not moved.
	r = clockWaits(t, clockTrace(0), corrected(5))
	if measured(r) != measured(want) || fmt.Sprintf("%+v", *r.Clock.Correction) != "{MinLatencyNS:5 Applied:true Offsets:[] Violations:0}" {
		t.Errorf("unshifted, corrected: %s, %+v", measured(r), r.Clock.Correction)
	}
}

// TestClockCorrectionLimits: the correction is the least that restores
// the condition, not the true offset. p1's clock 1000 ns ahead: the
// message p1 → p0 (30 ns of latency) arrives 970 ns before it was sent;
// p0 is moved 975 ns forward (970 + 5), not 1000, and p2 not at all: the
// violation is gone but the waits are not the unshifted trace's. With a
// least latency of 40 ns, which p0 → p1 (5 ns) and p1 → p0 (30 ns)
// cannot both have, no constant offsets exist: nothing is moved.
func TestClockCorrectionLimits(t *testing.T) {
	want := clockWaits(t, clockTrace(0), waitstate.DefaultParams())
	r := clockWaits(t, clockTrace(1000), corrected(5))
	if c := r.Clock; c.Violations != 1 || c.MaxNS != 970 || fmt.Sprint(c.Pairs) != "[{1 0 1 970}]" ||
		fmt.Sprintf("%+v", *c.Correction) != "{MinLatencyNS:5 Applied:true Offsets:[{Proc:0 OffsetNS:975}] Violations:0}" {
		t.Errorf("clock %+v %+v", c, c.Correction)
	}
	if measured(r) == measured(want) {
		t.Error("the least correction gave the true offsets back")
	}

	r = clockWaits(t, clockTrace(0), corrected(40))
	if c := r.Clock; c.Violations != 0 || fmt.Sprintf("%+v", *c.Correction) != "{MinLatencyNS:40 Applied:false Offsets:[] Violations:0}" {
		t.Errorf("clock %+v %+v", c, c.Correction)
	}
	if measured(r) != measured(want) {
		t.Errorf("not applied, yet the waits changed: %s", measured(r))
	}
	if _, err := engine.Run(context.Background(), write(t, 3, nil, nil, clockTrace(0)), []engine.Request{{Analysis: waitstate.Name, Options: corrected(-1)}}); err == nil {
		t.Error("a negative least latency accepted")
	}
}

// TestClockCorrectionSelf: a message p2 sends itself, received 10 ns
// before it was sent, is a violation no offset can correct: the others
// hold the condition, so the correction is applied, moves no process, and
// leaves that one violation. The correction takes two passes over the
// records, the analysis without it one.
func TestClockCorrectionSelf(t *testing.T) {
	recs := append(clockTrace(0), trace.Send(0, 2, 10500, 10505, 2, 8, 7, 0), trace.Recv(0, 2, 10480, 10490, 2, 8, 7, 0))
	slices.SortStableFunc(recs, trace.Compare)
	s := write(t, 3, nil, []trace.CommDef{{ID: 0, Members: []int32{0, 1, 2}}}, recs)
	for _, c := range []struct {
		p      *waitstate.Params
		passes int
	}{{waitstate.DefaultParams(), 1}, {corrected(5), 2}} {
		res := enginetest.Run(t, s, engine.Request{Analysis: waitstate.Name, Options: c.p})
		if res.Passes != c.passes {
			t.Errorf("correction %v: %d passes, want %d", c.p.ClockCorrection, res.Passes, c.passes)
		}
		r := res.Get(waitstate.Name).Result.(*waitstate.Result).Runs[0]
		// The self message is a late sender of 10 ns (the receive's
		// whole call), besides clockTrace's 120.
		if pattern(r, waitstate.LateSender) != "130/4" || r.Messages != 4 {
			t.Errorf("correction %v: late sender %s, %d messages", c.p.ClockCorrection, pattern(r, waitstate.LateSender), r.Messages)
		}
		if cl := r.Clock; cl.Violations != 1 || cl.MaxNS != 10 || fmt.Sprint(cl.Pairs) != "[{2 2 1 10}]" {
			t.Errorf("correction %v: clock %+v", c.p.ClockCorrection, cl)
		}
		if cc := r.Clock.Correction; c.p.ClockCorrection && (cc == nil || fmt.Sprintf("%+v", *cc) != "{MinLatencyNS:5 Applied:true Offsets:[] Violations:1}") {
			t.Errorf("correction %+v", cc)
		}
	}
}
