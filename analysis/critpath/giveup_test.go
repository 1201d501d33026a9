package critpath

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/parscope/parscope/trace"
)

// lateSend returns a trace in which p1 waits in MPI_Recv from 0 to 10
// for a receive recorded at 1 whose send is recorded at 500,000 in p0's
// MPI_Send entered at 5, while p2 enters and leaves a region every 10
// ns: the receive, unmatched until 500,000, holds back the path's
// computation for 10^5 records.
//
// The path: p0 0..5, the message to p1 5..10, p1 10..1,000,010.
func lateSend() []trace.Record {
	const send, recv, compute int32 = 0, 1, 2
	recs := []trace.Record{
		trace.Enter(0, 1, 0, recv), trace.Recv(0, 1, 1, 1, 0, 8, 0, 0), trace.Enter(0, 0, 5, send), trace.Exit(0, 1, 10, recv),
	}
	for t := int64(0); t < 1_000_000; t += 10 {
		recs = append(recs, trace.Enter(0, 2, t, compute), trace.Exit(0, 2, t+5, compute))
		if t == 500_000 {
			recs = append(recs, trace.Send(0, 0, t, t, 1, 8, 0, 0), trace.Exit(0, 0, t+1, send))
		}
	}
	recs = append(recs, trace.Event(0, 1, 1_000_010, 1, 0))
	slices.SortStableFunc(recs, trace.Compare)
	return recs
}

func lateSendTrace() *trace.Header {
	return &trace.Header{Runs: []trace.RunInfo{{ID: 0, Procs: 3}},
		Regions: []trace.RegionDef{{ID: 0, Label: "MPI_Send", Parent: -1}, {ID: 1, Label: "MPI_Recv", Parent: -1},
			{ID: 2, Label: "compute", Parent: -1}}}
}

// TestGiveUp: with fewer changes allowed to wait than the late send holds
// back, the analysis stops waiting for the receive, the path stays on
// p1 (MPI_Recv 0..10, no region after) and the dependency is
// counted in TooLate; with the default bound the path is the
// reference's.
func TestGiveUp(t *testing.T) {
	tr := pingPongTrace()
	tr.Header = lateSendTrace()
	recs := lateSend()
	run := func(pending int) RunPath {
		defer func(m int) { maxPending = m }(maxPending)
		maxPending = pending
		a, err := New(tr, &Params{})
		if err != nil {
			t.Fatal(err)
		}
		feed(t, a, recs, 1)
		res, err := a.Result()
		if err != nil {
			t.Fatal(err)
		}
		return res.(*Result).Runs[0]
	}
	ref, err := newRef(tr, &Params{})
	if err != nil {
		t.Fatal(err)
	}
	feed(t, ref, recs, 1)
	res, _ := ref.Result()
	want := res.(*Result).Runs[0]
	if got := run(MaxPending); !reflect.DeepEqual(got, want) {
		diffRun(t, got, want)
	}
	if want.MessageJumps != 1 || want.Segments[1].FromNS != 5 || want.Segments[1].ToNS != 10 {
		t.Errorf("reference: %+v", want)
	}

	got := run(1000)
	if got.Uncomputed.TooLate != 1 || got.MessageJumps != 0 || got.EndProc != 1 || got.ComputationNS != 1_000_010 ||
		len(got.Segments) != 2 || got.Segments[0].Proc != 1 || got.Segments[0].RegionName != "MPI_Recv" {
		t.Errorf("giving up: %+v", got)
	}
}

// TestGiveUpRandom: on the random traces, with a handful of changes
// allowed to wait, the path is the reference's unless a dependency came
// too late.
func TestGiveUpRandom(t *testing.T) {
	defer func(m int) { maxPending = m }(maxPending)
	maxPending = 4
	late := 0
	for seed := range uint64(300) {
		tr, recs := genTrace(seed)
		ref, _ := newRef(tr, &Params{})
		a, _ := New(tr, &Params{})
		feed(t, ref, recs, seed)
		feed(t, a, recs, seed)
		got, _ := a.Result()
		want, _ := ref.Result()
		g, w := got.(*Result).Runs[0], want.(*Result).Runs[0]
		if g.Uncomputed.TooLate > 0 {
			late++
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("seed %d: no dependency too late, and the path differs", seed)
			diffRun(t, g, w)
		}
	}
	t.Logf("%d of 300 traces with dependencies too late", late)
	if late == 0 {
		t.Errorf("no trace has a dependency too late")
	}
}

// TestUnordered: records out of time order (which the engine never
// feeds) give some path, not a panic.
func TestUnordered(t *testing.T) {
	for seed := range uint64(200) {
		tr, recs := genTrace(seed)
		rng := rand.New(rand.NewPCG(seed, 2))
		for range len(recs) / 4 {
			i, j := rng.IntN(len(recs)), rng.IntN(len(recs))
			recs[i], recs[j] = recs[j], recs[i]
		}
		a, _ := New(tr, &Params{})
		feed(t, a, recs, seed)
		if _, err := a.Result(); err != nil {
			t.Fatal(err)
		}
	}
}
