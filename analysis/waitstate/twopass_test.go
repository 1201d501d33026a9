package waitstate

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// runReference runs the reference (reference_test.go), the analysis as
// it was when the clock correction held every message of a run, over recs.
func runReference(t *testing.T, recs []trace.Record, procs int, p *Params) *Result {
	t.Helper()
	return runReferenceOn(t, randomTrace(procs), recs, p)
}

// runReferenceOn is runReference over recs of the trace tr.
func runReferenceOn(t *testing.T, tr *engine.Trace, recs []trace.Record, p *Params) *Result {
	t.Helper()
	a, err := newRef(tr, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Add(recs); err != nil {
		t.Fatal(err)
	}
	res, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	return res.(*Result)
}

// TestClockCorrectionReference checks that the analysis gives exactly
// what the reference gives, holding every message of a run to the end,
// with and without the clock correction: on 300 random MPI traces with
// collectives, skewed clocks and, some, messages a process sends itself,
// read in batches of 1, 3, 16 records and all at once, with least
// latencies of 0, 5 and 10 ns. The traces must cover corrections applied
// (processes moved, with waits, wrong order waits and collective waits
// measured on the moved clocks, and violations left by messages a process
// sent itself) and refused.
func TestClockCorrectionReference(t *testing.T) {
	var applied, moved, refused, wrongOrder, collective, left int
	for seed := range uint64(300) {
		procs := 2 + int(seed%5)
		opt := randomOptions{collectives: int(seed % 4), acyclic: seed%3 != 0, self: seed%4 == 0, skew: 500}
		recs := randomMPIWith(seed, procs, 10+int(seed%50), opt)
		for _, correct := range []bool{true, false} {
			p := DefaultParams()
			p.Top = 0
			p.ClockCorrection, p.ClockMinLatency = correct, 5*int64(seed%3)
			want := runReference(t, recs, procs, p)
			for _, n := range []int{1, 3, 16, 0} {
				if got := runBatches(t, recs, procs, p, n, true); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, correction %v, batches of %d:\n%s", seed, correct, n, diffWaits(got.Runs[0], want.Runs[0]))
				}
			}
			if !correct {
				continue
			}
			w := want.Runs[0]
			cc := w.Clock.Correction
			switch {
			case !cc.Applied:
				refused++
			case len(cc.Offsets) > 0:
				moved++
				if cc.Violations > 0 {
					left++ // messages a process sent itself
				}
				if w.SubPatterns[LateSenderWrongOrder].WaitNS > 0 {
					wrongOrder++
				}
				for _, q := range []Pattern{WaitNxN, WaitBarrier, LateBroadcast, EarlyReduce} {
					if w.Patterns[q].WaitNS > 0 {
						collective++
						break
					}
				}
				fallthrough
			default:
				applied++
			}
		}
	}
	t.Logf("corrections: %d applied (%d moving a process: %d with wrong order waits, %d with collective waits, %d with violations left), %d refused",
		applied, moved, wrongOrder, collective, left, refused)
	if moved < 100 || wrongOrder < 20 || collective < 50 || left < 10 || refused < 20 {
		t.Errorf("the random traces cover too little: %d corrections moving a process (%d with wrong order, %d with collective waits, %d with violations left), %d refused",
			moved, wrongOrder, collective, left, refused)
	}
}

// diffWaits lists the fields in which two results of a run differ.
func diffWaits(got, want RunWaits) string {
	out := ""
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			out += fmt.Sprintf("%s: got %+v\n  want %+v\n", g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
	if c := got.Clock.Correction; c != nil {
		out += fmt.Sprintf("correction: got %+v, want %+v\n", *c, *want.Clock.Correction)
	}
	return out
}
