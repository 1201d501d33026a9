package pop_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/pop"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/engine/enginetest"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// write stores recs (with the header's regions, states and communicators)
// and opens it.
func write(t *testing.T, regions []trace.RegionDef, states []trace.StateDef, comms []trace.CommDef, runs int, recs []trace.Record) *store.Store {
	t.Helper()
	h := &trace.Header{Regions: regions, States: states, Comms: comms}
	for r := range runs {
		h.Runs = append(h.Runs, trace.RunInfo{ID: int32(r)})
	}
	return storetest.New(t, "p.pst", h, recs)
}

func popOf(t *testing.T, s *store.Store, p *pop.Params) *pop.Result {
	t.Helper()
	return enginetest.Result[*pop.Result](t, s, engine.Request{Analysis: pop.Name, Options: p})
}

const (
	main      = 1
	mpiSend   = 2
	mpiRecv   = 3
	allreduce = 4
	solve     = 5
	mpiIrecv  = 6
	mpiWait   = 7
	mpiInit   = 8
	mpiFinal  = 9
)

var regions = []trace.RegionDef{{ID: main, Label: "main", Parent: -1}, {ID: mpiSend, Label: "MPI_Send", Parent: -1},
	{ID: mpiRecv, Label: "MPI_Recv", Parent: -1}, {ID: allreduce, Label: "MPI_Allreduce", Parent: -1}, {ID: solve, Label: "solve", Parent: -1},
	{ID: mpiIrecv, Label: "MPI_Irecv", Parent: -1}, {ID: mpiWait, Label: "MPI_Wait", Parent: -1},
	{ID: mpiInit, Label: "MPI_Init", Parent: -1}, {ID: mpiFinal, Label: "MPI_Finalize", Parent: -1}}

func enter(p int32, t int64, id int32) trace.Record { return trace.Enter(0, p, t, id) }
func exit(p int32, t int64, id int32) trace.Record  { return trace.Exit(0, p, t, id) }

// call is an MPI region [t, end) of process p holding rec.
func call(p int32, t, end int64, id int32, rec trace.Record) []trace.Record {
	return []trace.Record{enter(p, t, id), rec, exit(p, end, id)}
}

func send(p int32, t int64, dst int32) trace.Record { return trace.Send(0, p, t, t, dst, 8, 0, 0) }
func recv(p int32, t, end int64, src int32) trace.Record {
	return trace.Recv(0, p, t, end, src, 8, 0, 0)
}

func cat(parts ...[]trace.Record) []trace.Record {
	var out []trace.Record
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// want is a run's metrics as exact fractions.
type want struct {
	T, usefulMax   int64
	usefulMean     float64
	ideal          int64 // 0: no replay
	useful, mpi    []int64
	idealProcesses []int64
}

func near(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Max(1, math.Abs(y)) }

// check compares a run with w, every efficiency recomputed from the
// definitions.
func check(t *testing.T, run pop.Run, w want) {
	t.Helper()
	if run.RuntimeNS != w.T || run.UsefulMaxNS != w.usefulMax || !near(run.UsefulMeanNS, w.usefulMean) {
		t.Errorf("T %d, max useful %d, mean useful %g; want %d, %d, %g", run.RuntimeNS, run.UsefulMaxNS, run.UsefulMeanNS, w.T, w.usefulMax, w.usefulMean)
	}
	lb, ce := w.usefulMean/float64(w.usefulMax), float64(w.usefulMax)/float64(w.T)
	if !near(run.LoadBalance, lb) || !near(run.CommunicationEfficiency, ce) || !near(run.ParallelEfficiency, lb*ce) ||
		!near(run.ParallelEfficiency, w.usefulMean/float64(w.T)) {
		t.Errorf("LB %g CommE %g PE %g; want %g %g %g", run.LoadBalance, run.CommunicationEfficiency, run.ParallelEfficiency, lb, ce, lb*ce)
	}
	if len(run.Processes) != len(w.useful) {
		t.Fatalf("processes %+v", run.Processes)
	}
	for i, p := range run.Processes {
		if p.Proc != int32(i) || p.UsefulNS != w.useful[i] || p.MPINS != w.mpi[i] || p.ElapsedNS != p.UsefulNS+p.MPINS ||
			!near(p.UsefulShare, float64(p.UsefulNS)/float64(p.ElapsedNS)) {
			t.Errorf("process %d: %+v; want useful %d MPI %d", i, p, w.useful[i], w.mpi[i])
		}
		if w.ideal > 0 && p.IdealNS != w.idealProcesses[i] {
			t.Errorf("process %d: ideal %d, want %d", i, p.IdealNS, w.idealProcesses[i])
		}
	}
	if w.ideal == 0 {
		if run.Ideal != nil {
			t.Errorf("ideal %+v, want none", run.Ideal)
		}
		return
	}
	if run.Ideal == nil {
		t.Fatal("no ideal replay")
	}
	ser, trf := float64(w.usefulMax)/float64(w.ideal), float64(w.ideal)/float64(w.T)
	if id := run.Ideal; id.RuntimeNS != w.ideal || !near(id.SerializationEfficiency, ser) || !near(id.TransferEfficiency, trf) ||
		!near(id.SerializationEfficiency*id.TransferEfficiency, run.CommunicationEfficiency) {
		t.Errorf("ideal %+v; want T_ideal %d SerE %g TrfE %g", id, w.ideal, ser, trf)
	}
}

// TestBalanced: two processes with equal work; process 0 sends to 1 once.
//
//	process 0: main [0,100), MPI_Send [40,50) sends at 40
//	process 1: main [0,100), MPI_Recv [40,50) receives 40 → 50
//
// useful 90 each, T 100: LB 1, CommE 0.9. Replay: 0 sends at 40, 1
// receives at max(40, 40); both end at 90: SerE 1, TrfE 0.9.
func TestBalanced(t *testing.T) {
	recs := cat([]trace.Record{enter(0, 0, main), enter(1, 0, main)},
		call(0, 40, 50, mpiSend, send(0, 40, 1)), call(1, 40, 50, mpiRecv, recv(1, 40, 50, 0)),
		[]trace.Record{exit(0, 100, main), exit(1, 100, main)})
	r := popOf(t, write(t, regions, nil, nil, 1, recs), pop.DefaultParams())
	if r.Of != "regions" || len(r.Runs) != 1 {
		t.Fatalf("%+v", r)
	}
	run := r.Runs[0]
	check(t, run, want{T: 100, usefulMax: 90, usefulMean: 90, ideal: 90, useful: []int64{90, 90}, mpi: []int64{10, 10},
		idealProcesses: []int64{90, 90}})
	if run.LoadBalance != 1 || run.Ideal.SerializationEfficiency != 1 || run.Ideal.Messages != 1 {
		t.Errorf("LB %g SerE %g messages %d", run.LoadBalance, run.Ideal.SerializationEfficiency, run.Ideal.Messages)
	}
	if fmt.Sprint(run.RuntimeNames) != "[MPI_Recv MPI_Send]" || run.Problems != (pop.Problems{}) {
		t.Errorf("names %v problems %+v", run.RuntimeNames, run.Problems)
	}
}

// TestTwiceTheWork: process 0 computes 120, process 1 60 and then waits
// for 0's message.
//
//	process 0: main [0,130), MPI_Send [120,130) sends at 120
//	process 1: main [0,130), MPI_Recv [60,130) receives 60 → 130
//
// LB = 90/120 = 0.75, CommE = 120/130, PE = 90/130. Replay: 0 sends at
// 120 and ends at 120; 1 computes 60 and waits for the send until 120:
// T_ideal 120, SerE 1, TrfE 120/130.
func TestTwiceTheWork(t *testing.T) {
	recs := cat([]trace.Record{enter(0, 0, main), enter(1, 0, main)},
		call(1, 60, 130, mpiRecv, recv(1, 60, 130, 0)), call(0, 120, 130, mpiSend, send(0, 120, 1)),
		[]trace.Record{exit(0, 130, main), exit(1, 130, main)})
	run := popOf(t, write(t, regions, nil, nil, 1, recs), pop.DefaultParams()).Runs[0]
	check(t, run, want{T: 130, usefulMax: 120, usefulMean: 90, ideal: 120, useful: []int64{120, 60}, mpi: []int64{10, 70},
		idealProcesses: []int64{120, 120}})
	if run.LoadBalance != 0.75 || run.UsefulMaxProc != 0 {
		t.Errorf("LB %g max process %d", run.LoadBalance, run.UsefulMaxProc)
	}
}

// TestLateSender: a chain of two messages, each taking 10 ns to travel:
// the ideal network removes the transfers but not the waiting for a
// late sender, so SerE and TrfE differ from 1 and from each other.
//
//	process 0: compute [0,40), MPI_Send [40,45) sends at 40,
//	           MPI_Recv [45,100) receives 45 → 100, compute [100,150)
//	process 1: MPI_Recv [0,50) receives 0 → 50, compute [50,90),
//	           MPI_Send [90,100) sends at 90, compute [100,150)
//
// useful 90 each, T 150: LB 1, CommE 0.6. Replay: 0 sends at 40; 1
// receives at 40, computes 40 and sends at 80; 0 receives at 80; both
// compute 50 more: T_ideal 130, SerE 90/130, TrfE 130/150.
func TestLateSender(t *testing.T) {
	recs := cat([]trace.Record{enter(0, 0, main), enter(1, 0, main)},
		call(1, 0, 50, mpiRecv, recv(1, 0, 50, 0)), call(0, 40, 45, mpiSend, send(0, 40, 1)),
		call(0, 45, 100, mpiRecv, recv(0, 45, 100, 1)), call(1, 90, 100, mpiSend, send(1, 90, 0)),
		[]trace.Record{exit(0, 150, main), exit(1, 150, main)})
	run := popOf(t, write(t, regions, nil, nil, 1, recs), pop.DefaultParams()).Runs[0]
	check(t, run, want{T: 150, usefulMax: 90, usefulMean: 90, ideal: 130, useful: []int64{90, 90}, mpi: []int64{60, 60},
		idealProcesses: []int64{130, 130}})
}

// TestNonBlocking: a receive posted in MPI_Irecv completes in MPI_Wait,
// after computation; the replay waits at the completion, with the useful
// time done by then.
//
//	process 0: compute [0,30), MPI_Send [30,35) sends at 30, compute [35,100)
//	process 1: MPI_Irecv [0,5) posts 0 → 60, compute [5,50),
//	           MPI_Wait [50,60), compute [60,100)
//
// useful 95 and 85, T 100. Replay: 1 reaches the completion with 45
// useful, after the send (at 30): no wait, it ends at 85; T_ideal 95.
func TestNonBlocking(t *testing.T) {
	recs := cat([]trace.Record{enter(0, 0, main), enter(1, 0, main)},
		call(1, 0, 5, mpiIrecv, recv(1, 0, 60, 0)), call(0, 30, 35, mpiSend, send(0, 30, 1)),
		[]trace.Record{enter(1, 50, mpiWait), exit(1, 60, mpiWait), exit(0, 100, main), exit(1, 100, main)})
	run := popOf(t, write(t, regions, nil, nil, 1, recs), pop.DefaultParams()).Runs[0]
	check(t, run, want{T: 100, usefulMax: 95, usefulMean: 90, ideal: 95, useful: []int64{95, 85}, mpi: []int64{5, 15},
		idealProcesses: []int64{95, 85}})
}

// TestWithoutInit: --without-init counts each process from its exit of
// MPI_Init to its entry into MPI_Finalize.
//
//	process 0: MPI_Init [0,50), compute [50,90), MPI_Send [90,100) sends
//	           at 90, compute [100,150), MPI_Finalize [150,190), compute to 200
//	process 1: MPI_Init [0,70), compute [70,80), MPI_Recv [80,110)
//	           receives 80 → 110, compute [110,140), MPI_Finalize [140,195),
//	           compute to 200
//
// Whole: useful 100 and 45, MPI 100 and 155, T 200. Without init: process
// 0 counts [50,150): useful 90, MPI 10; process 1 [70,140): useful 40,
// MPI 30; T 100. Replay: 0 sends with 40 useful, 1 receives with 10 and
// waits to 40, then computes 30: T_ideal 90, SerE 1, TrfE 0.9.
func TestWithoutInit(t *testing.T) {
	recs := cat([]trace.Record{enter(0, 0, main), enter(1, 0, main), enter(0, 0, mpiInit), enter(1, 0, mpiInit),
		exit(0, 50, mpiInit), exit(1, 70, mpiInit)},
		call(1, 80, 110, mpiRecv, recv(1, 80, 110, 0)), call(0, 90, 100, mpiSend, send(0, 90, 1)),
		[]trace.Record{enter(1, 140, mpiFinal), enter(0, 150, mpiFinal), exit(0, 190, mpiFinal), exit(1, 195, mpiFinal),
			exit(0, 200, main), exit(1, 200, main)})
	s := write(t, regions, nil, nil, 1, recs)
	whole := popOf(t, s, pop.DefaultParams()).Runs[0]
	// Whole replay: 0 sends with 40 useful and ends at 100; 1 receives
	// with 10, waits to 40 and computes 35 more: 75.
	check(t, whole, want{T: 200, usefulMax: 100, usefulMean: 72.5, ideal: 100, useful: []int64{100, 45}, mpi: []int64{100, 155},
		idealProcesses: []int64{100, 75}})
	p := pop.DefaultParams()
	p.WithoutInit = true
	run := popOf(t, s, p).Runs[0]
	check(t, run, want{T: 100, usefulMax: 90, usefulMean: 65, ideal: 90, useful: []int64{90, 40}, mpi: []int64{10, 30},
		idealProcesses: []int64{90, 70}})
	if pr := run.Processes; pr[0].BeginNS != 50 || pr[0].EndNS != 150 || pr[1].BeginNS != 70 || pr[1].EndNS != 140 {
		t.Errorf("spans %+v", pr)
	}
}

// TestCollective: three processes reach an allreduce (on the world: the
// trace declares no communicator) at 10, 30 and 45 and leave it at 50;
// each computes 10 more.
//
// useful 20, 40, 55; T 60: LB (115/3)/55, CommE 55/60. Replay: the
// allreduce ends when the last member arrives, at 45: every process ends
// at 55, T_ideal 55, SerE 1, TrfE 55/60.
func TestCollective(t *testing.T) {
	var recs []trace.Record
	for p, in := range []int64{10, 30, 45} {
		q := int32(p)
		recs = append(recs, enter(q, 0, main))
		recs = append(recs, call(q, in, 50, allreduce, trace.Coll(0, q, in, 50, trace.OpAllreduce, -1, 8, 0))...)
		recs = append(recs, exit(q, 60, main))
	}
	run := popOf(t, write(t, regions, nil, nil, 1, recs), pop.DefaultParams()).Runs[0]
	check(t, run, want{T: 60, usefulMax: 55, usefulMean: 115.0 / 3, ideal: 55, useful: []int64{20, 40, 55}, mpi: []int64{40, 20, 5},
		idealProcesses: []int64{55, 55, 55}})
	if run.Ideal.Collectives != 1 || run.Problems != (pop.Problems{}) {
		t.Errorf("collectives %d problems %+v", run.Ideal.Collectives, run.Problems)
	}

	// On a communicator of processes 0 and 1 only, process 2 does not
	// wait: 0 and 1 leave at 30 (useful 10 and 30, the later arrival's)
	// and both end 10 later, at 40; 2 ends at 55.
	comms := []trace.CommDef{{ID: 7, Members: []int32{0, 1}}}
	recs = recs[:0]
	for p, in := range []int64{10, 30, 45} {
		q := int32(p)
		recs = append(recs, enter(q, 0, main))
		comm := int32(7)
		if q == 2 {
			comm = 8 // a communicator of its own (undeclared: the world)
		}
		recs = append(recs, call(q, in, 50, allreduce, trace.Coll(0, q, in, 50, trace.OpAllreduce, -1, 8, comm))...)
		recs = append(recs, exit(q, 60, main))
	}
	run = popOf(t, write(t, regions, nil, comms, 1, recs), pop.DefaultParams()).Runs[0]
	// Process 2's allreduce on the undeclared communicator 8 (every
	// process) never completes: its wait is given up.
	if id := run.Ideal; id == nil || fmt.Sprint(run.Processes[0].IdealNS, run.Processes[1].IdealNS, run.Processes[2].IdealNS) != "40 40 55" ||
		id.RuntimeNS != 55 || id.Collectives != 2 || run.Problems.IncompleteCollectives != 1 || run.Problems.ForcedWaits != 1 {
		t.Errorf("ideal %+v processes %+v problems %+v", run.Ideal, run.Processes, run.Problems)
	}
}

// TestNestedAndRepaired: a user region inside an MPI call (a callback)
// is MPI time; a region left open is closed at the last record; a
// receive without a send is counted.
func TestNestedAndRepaired(t *testing.T) {
	recs := []trace.Record{
		enter(0, 0, main), enter(0, 10, mpiRecv), recv(0, 10, 35, 1), enter(0, 20, solve), exit(0, 30, solve),
		exit(0, 40, mpiRecv), enter(0, 50, solve), trace.Event(0, 0, 100, 0, 0),
	}
	run := popOf(t, write(t, regions, nil, nil, 1, recs), pop.DefaultParams()).Runs[0]
	// useful: [0,10) + [40,100) = 70; MPI [10,40) = 30.
	if p := run.Processes; len(p) != 1 || p[0].UsefulNS != 70 || p[0].MPINS != 30 || p[0].ElapsedNS != 100 {
		t.Errorf("processes %+v", p)
	}
	// With no message matched there is nothing to replay.
	if run.Problems.Unclosed != 2 || run.Problems.UnmatchedRecvs != 1 || run.Ideal != nil {
		t.Errorf("ideal %+v problems %+v", run.Ideal, run.Problems)
	}
}

// TestStates: a trace without regions tells useful time by its states;
// runs are separate, and without messages there is no replay.
func TestStates(t *testing.T) {
	states := []trace.StateDef{{ID: 0, Name: "compute"}, {ID: 1, Name: "MPI_Wait"}}
	recs := []trace.Record{
		// run 0, process 0: compute 60, MPI 20, compute 20; process 1:
		// compute 100.
		trace.State(0, 0, 0, 0), trace.State(0, 0, 60, 1), trace.State(0, 0, 80, 0), trace.Event(0, 0, 100, 0, 0),
		trace.State(0, 1, 0, 0), trace.Event(0, 1, 100, 0, 0),
		// run 1, process 0: MPI 5 then compute 15.
		trace.State(1, 0, 0, 1), trace.State(1, 0, 5, 0), trace.Event(1, 0, 20, 0, 0),
	}
	r := popOf(t, write(t, nil, states, nil, 2, recs), pop.DefaultParams())
	if r.Of != "states" || len(r.Runs) != 2 {
		t.Fatalf("%+v", r)
	}
	check(t, r.Runs[0], want{T: 100, usefulMax: 100, usefulMean: 90, useful: []int64{80, 100}, mpi: []int64{20, 0}})
	check(t, r.Runs[1], want{T: 20, usefulMax: 15, usefulMean: 15, useful: []int64{15}, mpi: []int64{5}})
	if fmt.Sprint(r.Runs[0].RuntimeNames) != "[MPI_Wait]" {
		t.Errorf("names %v", r.Runs[0].RuntimeNames)
	}
	// --runtime-regions names the runtime states.
	p := pop.DefaultParams()
	p.RuntimeRegions = "^compute$"
	if u := popOf(t, write(t, nil, states, nil, 2, recs), p).Runs[0].Processes; u[0].UsefulNS != 20 || u[1].UsefulNS != 0 {
		t.Errorf("--runtime-regions ^compute$: %+v", u)
	}
}

// TestRefused: a trace of messages only, a trace whose regions are not
// MPI, a bad expression and a bad --of are refused with one line.
func TestRefused(t *testing.T) {
	s := write(t, nil, nil, nil, 1, []trace.Record{send(0, 1, 1)})
	if _, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: pop.Name}}); err == nil ||
		err.Error() != "p.pst: pop needs enter or state records, and the trace has none" {
		t.Errorf("messages only: %v", err)
	}
	user := []trace.RegionDef{{ID: main, Label: "main", Parent: -1}}
	s = write(t, user, nil, nil, 1, []trace.Record{enter(0, 0, main), exit(0, 10, main)})
	_, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: pop.Name}})
	if err == nil || err.Error() != `p.pst: pop: no region of the trace matches --runtime-regions "^P?MPI_", so useful time cannot be told from MPI or runtime time` {
		t.Errorf("no MPI region: %v", err)
	}
	for _, p := range []*pop.Params{{RuntimeRegions: "("}, {RuntimeRegions: "^MPI_", Of: "calls"}} {
		if _, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: pop.Name, Options: p}}); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v", p, err)
		}
	}
	// Naming main a runtime region makes it one.
	if r := popOf(t, s, &pop.Params{RuntimeRegions: "^main$"}).Runs[0]; r.Processes[0].MPINS != 10 || r.UsefulMaxNS != 0 || r.LoadBalance != 0 {
		t.Errorf("--runtime-regions ^main$: %+v", r)
	}
}

// TestCollectiveRegionsWithoutRecords: MPI_Allreduce calls in a trace
// with no collective records are counted: the replay cannot synchronise
// them.
func TestCollectiveRegionsWithoutRecords(t *testing.T) {
	recs := cat([]trace.Record{enter(0, 0, main), enter(1, 0, main)},
		call(0, 5, 10, mpiSend, send(0, 5, 1)), call(1, 5, 10, mpiRecv, recv(1, 5, 10, 0)),
		[]trace.Record{enter(0, 10, allreduce), exit(0, 20, allreduce), enter(1, 15, allreduce), exit(1, 20, allreduce),
			exit(0, 30, main), exit(1, 30, main)})
	run := popOf(t, write(t, regions, nil, nil, 1, recs), pop.DefaultParams()).Runs[0]
	if run.Problems.CollectiveRegionsWithoutRecords != 2 {
		t.Errorf("problems %+v", run.Problems)
	}
}

// TestMergeRuns: accumulators over different runs merge into what one
// pass gives; over one run they refuse.
func TestMergeRuns(t *testing.T) {
	states := []trace.StateDef{{ID: 0, Name: "compute"}, {ID: 1, Name: "MPI_Recv"}}
	recs := []trace.Record{trace.State(0, 0, 0, 0), trace.State(0, 0, 10, 1), trace.State(0, 0, 12, 0), trace.Event(0, 0, 20, 0, 0),
		trace.State(1, 0, 0, 1), trace.State(1, 0, 7, 0), trace.Event(1, 0, 9, 0, 0)}
	s := write(t, nil, states, nil, 2, recs)
	tr := engine.TraceOf(s)
	acc := func(run int32) engine.Accumulator {
		return enginetest.RunAccumulator(t, pop.Name, tr, pop.DefaultParams(), recs, run)
	}
	a := acc(0)
	if err := a.Merge(acc(1)); err != nil {
		t.Fatal(err)
	}
	res, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	if whole := popOf(t, s, pop.DefaultParams()); fmt.Sprint(res) != fmt.Sprint(whole) {
		t.Errorf("merged\n%+v\nwhole\n%+v", res, whole)
	}
	if err := acc(0).Merge(acc(0)); err == nil {
		t.Error("merging two accumulators of run 0 succeeded")
	}
}

// TestCycle: each process receives, at 10, the message the other sends at
// 20 (clocks out of step): the replay cannot order them, gives up the
// first process's wait and counts it; the second then waits for the
// first's send.
func TestCycle(t *testing.T) {
	recs := cat([]trace.Record{enter(0, 0, main), enter(1, 0, main)},
		call(0, 5, 10, mpiRecv, recv(0, 5, 10, 1)), call(1, 5, 10, mpiRecv, recv(1, 5, 10, 0)),
		call(0, 20, 25, mpiSend, send(0, 20, 1)), call(1, 20, 25, mpiSend, send(1, 20, 0)),
		[]trace.Record{exit(0, 30, main), exit(1, 30, main)})
	run := popOf(t, write(t, regions, nil, nil, 1, recs), pop.DefaultParams()).Runs[0]
	// useful 5+10+5 = 20 each. Process 0 goes on at 5 and sends at 15;
	// process 1 receives it at 15, sends at 25 and ends at 30; process 0
	// ends at 20.
	if run.Problems.ForcedWaits != 1 || run.Ideal == nil || run.Ideal.RuntimeNS != 30 ||
		run.Processes[0].IdealNS != 20 || run.Processes[1].IdealNS != 30 {
		t.Errorf("ideal %+v processes %+v problems %+v", run.Ideal, run.Processes, run.Problems)
	}
}
