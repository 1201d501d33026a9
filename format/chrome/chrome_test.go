package chrome

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
	"github.com/parscope/parscope/trace/tracetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// smallTrace is a hand-built run of two processes with states, nested
// regions, a matched send/recv (the receive posted before the send), a
// collective, an event and a counter.
func smallTrace(t testing.TB) *trace.Memory {
	m := &trace.Memory{}
	h := m.Header()
	h.Meta = trace.Meta{ClockResolution: 1, Source: "test", Program: "small"}
	h.EnsureRun(0, 2)
	h.States = []trace.StateDef{
		{ID: 0, Name: "idle", Description: "waiting"},
		{ID: 1, Name: "compute", Description: "main loop body", File: "a.c", Line: 10},
		{ID: 2, Name: "comm", Description: `talks "loudly", 2 lines` + "\n"},
	}
	h.Regions = []trace.RegionDef{
		{ID: 0, Kind: trace.RegionFunction, Label: "main", Function: "main", File: "a.c", Line: 1, EndLine: 50, Parent: -1},
		{ID: 1, Kind: trace.RegionLoop, Label: "loop i", Function: "main", File: "a.c", Line: 5, EndLine: 20, Parent: 0},
	}
	h.Events = []trace.EventDef{{ID: 0, Name: "checkpoint"}}
	h.Counters = []trace.CounterDef{{ID: 0, Name: "flops", Unit: "GF/s"}}
	h.Comms = []trace.CommDef{{ID: 0, Name: "world"}}
	h.Procs = []trace.ProcInfo{{Run: 0, Proc: 1, Name: "rank <1>"}}
	add := func(r trace.Record) {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	// Process 0.
	add(trace.State(0, 0, 0, 1))
	add(trace.Enter(0, 0, 0, 0))
	add(trace.Enter(0, 0, 100, 1))
	add(trace.Send(0, 0, 1000, 1200, 1, 4096, 7, 0))
	add(trace.State(0, 0, 1500, 2))
	add(trace.Coll(0, 0, 1500, 2500, trace.OpAllreduce, -1, 8, 0))
	add(trace.Exit(0, 0, 2500, 1))
	add(trace.Event(0, 0, 2600, 0, 42))
	add(trace.State(0, 0, 3000, 0))
	add(trace.Counter(0, 0, 3200, 0, 1.5)) // main stays open: closed at 3200
	// Process 1.
	add(trace.State(0, 1, 0, 0))
	add(trace.Recv(0, 1, 500, 1300, 0, 4096, 7, 0))
	add(trace.State(0, 1, 1300, 1))
	add(trace.Coll(0, 1, 1500, 2600, trace.OpAllreduce, -1, 8, 0))
	add(trace.State(0, 1, 2700, 0))
	add(trace.Enter(0, 1, 2800, 0))
	add(trace.Exit(0, 1, 2900, 0))
	m.Sort()
	return m
}

func export(t testing.TB, m *trace.Memory, opts Options) ([]byte, Stats) {
	t.Helper()
	var st Stats
	opts.Stats = &st
	var buf bytes.Buffer
	if err := Export(&buf, &m.H, m.Reader(), opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), st
}

func TestGolden(t *testing.T) {
	out, _ := export(t, smallTrace(t), Options{})
	formattest.Golden(t, filepath.Join("testdata", "small.golden.json"), out, *update)
	if _, probs := check(out); len(probs) > 0 {
		t.Errorf("golden output has problems:\n%s", strings.Join(probs, "\n"))
	}
}

func TestSmall(t *testing.T) {
	out, st := export(t, smallTrace(t), Options{})
	evs, probs := check(out)
	if len(probs) > 0 {
		t.Fatalf("problems:\n%s", strings.Join(probs, "\n"))
	}
	// State slices per process: (name, ts, dur) in ns.
	type slice struct {
		name    string
		ts, dur int64
	}
	got := map[int64][]slice{}
	for _, e := range evs {
		if e.Ph == "X" && e.Cat == "state" {
			got[e.Pid] = append(got[e.Pid], slice{e.Name, e.ts, e.dur})
		}
	}
	want := map[int64][]slice{
		1: {{"compute", 0, 1500}, {"comm", 1500, 1500}, {"idle", 3000, 200}},
		2: {{"idle", 0, 1300}, {"compute", 1300, 1400}, {"idle", 2700, 200}},
	}
	for pid, w := range want {
		if !slices.Equal(got[pid], w) {
			t.Errorf("pid %d states = %v, want %v", pid, got[pid], w)
		}
	}
	// Process names and the state's args.
	names := map[int64]string{}
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "process_name" {
			names[e.Pid] = e.Args["name"].(string)
		}
		if e.Ph == "X" && e.Name == "comm" {
			if e.Args["description"] != "talks \"loudly\", 2 lines\n" || e.Args["state"] != json.Number("2") {
				t.Errorf("comm args = %v", e.Args)
			}
		}
	}
	if names[1] != "run 0 · proc 0" || names[2] != "run 0 · proc 1 · rank <1>" {
		t.Errorf("process names = %v", names)
	}
	// The MPI slices and the flow.
	var mpi []string
	var flows []string
	for _, e := range evs {
		switch {
		case e.Ph == "X" && e.Cat == "mpi":
			mpi = append(mpi, fmt.Sprintf("%d/%d %s %d+%d bytes=%v", e.Pid, e.Tid, e.Name, e.ts, e.dur, e.Args["bytes"]))
		case e.Ph == "s" || e.Ph == "f":
			flows = append(flows, fmt.Sprintf("%s %d %d/%d %d", e.Ph, e.ID, e.Pid, e.Tid, e.ts))
		}
	}
	wantMPI := []string{
		"2/3 recv ← 0 500+800 bytes=4096",
		"1/3 send → 1 1000+200 bytes=4096",
		"1/3 allreduce 1500+1000 bytes=8",
		"2/3 allreduce 1500+1100 bytes=8",
	}
	if !slices.Equal(mpi, wantMPI) {
		t.Errorf("mpi slices = %q, want %q", mpi, wantMPI)
	}
	wantFlows := []string{"s 1 1/3 1000", "f 1 2/3 1000"}
	if !slices.Equal(flows, wantFlows) {
		t.Errorf("flows = %q, want %q", flows, wantFlows)
	}
	// Regions: main on proc 0 is closed at the process's last time.
	var regs []string
	for _, e := range evs {
		if e.Ph == "B" || e.Ph == "E" {
			regs = append(regs, fmt.Sprintf("%d %s %s %d", e.Pid, e.Ph, e.Name, e.ts))
		}
	}
	wantRegs := []string{"1 B main 0", "1 B loop i 100", "1 E loop i 2500", "2 B main 2800", "2 E main 2900", "1 E main 3200"}
	if !slices.Equal(regs, wantRegs) {
		t.Errorf("regions = %q, want %q", regs, wantRegs)
	}
	wantSt := Stats{Records: 17, Events: st.Events, States: 6, Regions: 3, MPISlices: 4, Instants: 1, Counters: 1,
		Flows: 1, RegionsClosedAtEnd: 1, MaxLanes: 1}
	if st != wantSt {
		t.Errorf("stats = %+v, want %+v", st, wantSt)
	}
	if int(st.Events) != len(evs) {
		t.Errorf("stats count %d events, the file has %d", st.Events, len(evs))
	}
	for _, e := range evs {
		if e.Ph == "C" && (e.Name != "flops" || e.Args["flops"] != json.Number("1.5") || e.ts != 3200) {
			t.Errorf("counter event = %+v", e)
		}
		if e.Ph == "i" && (e.Name != "checkpoint" || e.Args["value"] != json.Number("42") || e.S != "t" || e.Tid != TidEvents) {
			t.Errorf("instant event = %+v", e)
		}
	}
}

func TestStatesToRunEnd(t *testing.T) {
	out, _ := export(t, smallTrace(t), Options{StatesToRunEnd: true, NoFlows: true})
	evs, probs := check(out)
	if len(probs) > 0 {
		t.Fatal(strings.Join(probs, "\n"))
	}
	for _, e := range evs {
		if e.Ph == "s" || e.Ph == "f" {
			t.Errorf("flow event with NoFlows: %+v", e)
		}
		// Process 1's last state starts at 2700; the run ends at 3200 (process 0).
		if e.Ph == "X" && e.Cat == "state" && e.Pid == 2 && e.ts == 2700 && e.dur != 500 {
			t.Errorf("last state of proc 1 lasts %d ns, want 500", e.dur)
		}
	}
}

func TestTwoRuns(t *testing.T) {
	m := &trace.Memory{}
	h := m.Header()
	h.EnsureRun(0, 2)
	h.EnsureRun(1, 2)
	h.Runs[1].Name = "second"
	h.States = []trace.StateDef{{ID: 0, Name: "a"}, {ID: 1, Name: "b"}}
	for run := int32(0); run < 2; run++ {
		off := int64(run) * 10 // the runs differ a little
		for p := int32(0); p < 2; p++ {
			m.Add(trace.State(run, p, 0, 0))
			m.Add(trace.State(run, p, 100+off, 1))
			m.Add(trace.Enter(run, p, 150, 5)) // region 5 is not in the header
		}
		m.Add(trace.Send(run, 0, 200, 210, 1, 8, 0, 0))
		m.Add(trace.Recv(run, 1, 205, 220, 0, 8, 0, 0))
		m.Add(trace.State(run, 0, 300+off, 0))
	}
	// A send in run 1 whose receive is in no run: unmatched.
	m.Add(trace.Send(1, 1, 400, 400, 0, 8, 9, 0))
	m.Sort()
	out, st := export(t, m, Options{})
	evs, probs := check(out)
	if len(probs) > 0 {
		t.Fatal(strings.Join(probs, "\n"))
	}
	names := map[int64]string{}
	labels := map[int64]string{}
	states := map[int64][]int64{}
	flows := map[string]int{}
	for _, e := range evs {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			names[e.Pid] = e.Args["name"].(string)
		case e.Ph == "M" && e.Name == "process_labels":
			labels[e.Pid] = e.Args["labels"].(string)
		case e.Ph == "X" && e.Cat == "state":
			states[e.Pid] = append(states[e.Pid], e.dur)
		case e.Ph == "s" || e.Ph == "f":
			flows[fmt.Sprintf("%s pid %d", e.Ph, e.Pid)]++
		}
	}
	wantNames := map[int64]string{1: "run 0 · proc 0", 2: "run 0 · proc 1", 3: "run 1 · proc 0", 4: "run 1 · proc 1"}
	if fmt.Sprint(names) != fmt.Sprint(wantNames) {
		t.Errorf("names = %v, want %v", names, wantNames)
	}
	if fmt.Sprint(labels) != fmt.Sprint(map[int64]string{3: "second", 4: "second"}) {
		t.Errorf("labels = %v", labels)
	}
	// Run 0: proc 0 ends at 300, proc 1 at 220 (its receive); run 1: 310 and 400.
	wantStates := map[int64][]int64{1: {100, 200, 0}, 2: {100, 120}, 3: {110, 200, 0}, 4: {110, 290}}
	if fmt.Sprint(states) != fmt.Sprint(wantStates) {
		t.Errorf("state durations = %v, want %v", states, wantStates)
	}
	wantFlows := map[string]int{"s pid 1": 1, "f pid 2": 1, "s pid 3": 1, "f pid 4": 1}
	if fmt.Sprint(flows) != fmt.Sprint(wantFlows) {
		t.Errorf("flows = %v, want %v", flows, wantFlows)
	}
	if st.RegionsClosedAtEnd != 4 || st.UnmatchedSends != 1 || st.UnmatchedRecvs != 0 || st.Flows != 2 {
		t.Errorf("stats = %+v", st)
	}
	// Every pid's regions are closed within its own run.
	for _, e := range evs {
		if e.Ph == "E" && e.Name != "region 5" {
			t.Errorf("unexpected region end %+v", e)
		}
	}
}

func TestLanesAndFlows(t *testing.T) {
	m := &trace.Memory{}
	m.Header().EnsureRun(0, 2)
	isend := func(t, end int64, dst, tag, req int32) trace.Record {
		r := trace.Send(0, 0, t, end, dst, 100, tag, 0)
		r.Seq = req
		return r
	}
	// Three overlapping non-blocking sends, then a blocking one that fits
	// on the first lane again, then one whose end is unknown.
	m.Add(isend(0, 100, 1, 1, 0))
	m.Add(isend(10, 150, 1, 2, 1))
	m.Add(isend(20, 30, 1, 3, 2))
	m.Add(isend(30, 40, 1, 4, 3)) // lane 3 is free again at 30
	m.Add(trace.Send(0, 0, 200, 300, 1, 1, 5, 0))
	m.Add(trace.Send(0, 0, 300, 0, 1, 1, 6, 0))
	// Receives on process 1: the first completes before the send was posted
	// (clock skew) and makes a backward flow; the others are fine.
	m.Add(trace.Recv(0, 1, 0, 5, 0, 100, 2, 0)) // its send is posted at 10
	m.Add(trace.Recv(0, 1, 5, 400, 0, 100, 1, 0))
	m.Add(trace.Recv(0, 1, 400, 410, 0, 100, 3, 0))
	m.Add(trace.Recv(0, 1, 410, 420, 0, 100, 4, 0))
	m.Add(trace.Recv(0, 1, 420, 430, trace.NoPeer, 1, 5, 0))
	m.Add(trace.Recv(0, 1, 430, 440, 0, 1, 6, 0))
	m.Sort()
	out, st := export(t, m, Options{})
	evs, probs := check(out)
	// The skewed message is the one problem: its flow goes back in time.
	if len(probs) != 1 || !strings.HasSuffix(probs[0], "ends before it starts") {
		t.Fatalf("problems = %q, want only the backward flow", probs)
	}
	lanes := map[string]int64{}
	for _, e := range evs {
		if e.Ph == "X" && e.Pid == 1 {
			lanes[fmt.Sprintf("%s@%d", e.Name, e.ts)] = e.Tid
		}
	}
	want := map[string]int64{"send → 1@0": 3, "send → 1@10": 5, "send → 1@20": 6, "send → 1@30": 6, "send → 1@200": 3, "send → 1@300": 3}
	if fmt.Sprint(lanes) != fmt.Sprint(want) {
		t.Errorf("lanes = %v, want %v", lanes, want)
	}
	if st.MaxLanes != 3 || st.Flows != 6 || st.BackwardFlows != 1 || st.UnmatchedSends+st.UnmatchedRecvs != 0 {
		t.Errorf("stats = %+v", st)
	}
	// The unknown end makes a 1 ns slice; the any-source receive is named so.
	for _, e := range evs {
		if e.Ph == "X" && e.ts == 300 && e.Pid == 1 && (e.dur != 1 || e.Args["end_unknown"] != true) {
			t.Errorf("send with unknown end = %+v", e)
		}
		if e.Ph == "X" && e.ts == 420 && e.Name != "recv ← any" {
			t.Errorf("any-source receive named %q", e.Name)
		}
	}
	// The lane threads are named.
	var laneNames []string
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "thread_name" && e.Pid == 1 {
			laneNames = append(laneNames, fmt.Sprintf("%d=%s", e.Tid, e.Args["name"]))
		}
	}
	if !slices.Equal(laneNames, []string{"1=states", "2=regions", "3=mpi", "5=mpi 2", "6=mpi 3"}) {
		t.Errorf("thread names = %q", laneNames)
	}
}

func TestRegionRepairs(t *testing.T) {
	m := &trace.Memory{}
	m.Header().EnsureRun(0, 1)
	m.Add(trace.Enter(0, 0, 0, 1))
	m.Add(trace.Enter(0, 0, 10, 2))
	m.Add(trace.Enter(0, 0, 20, 3))
	m.Add(trace.Exit(0, 0, 30, 2)) // closes 3 early, then 2
	m.Add(trace.Exit(0, 0, 40, 7)) // never entered: dropped
	m.Add(trace.Enter(0, 0, 50, 4))
	m.Add(trace.Event(0, 0, 60, 9, 0)) // 1 and 4 stay open until 60
	out, st := export(t, m, Options{})
	evs, probs := check(out)
	if len(probs) > 0 {
		t.Fatal(strings.Join(probs, "\n"))
	}
	var regs []string
	for _, e := range evs {
		if e.Ph == "B" || e.Ph == "E" {
			regs = append(regs, fmt.Sprintf("%s %s %d", e.Ph, e.Name, e.ts))
		}
	}
	want := []string{"B region 1 0", "B region 2 10", "B region 3 20", "E region 3 30", "E region 2 30",
		"B region 4 50", "E region 4 60", "E region 1 60"}
	if !slices.Equal(regs, want) {
		t.Errorf("regions = %q, want %q", regs, want)
	}
	if st.RegionsClosedEarly != 1 || st.UnmatchedExits != 1 || st.RegionsClosedAtEnd != 2 || st.Regions != 4 {
		t.Errorf("stats = %+v", st)
	}
}

func TestExtraProcessesAndSkips(t *testing.T) {
	m := &trace.Memory{}
	m.Header().EnsureRun(0, 1)
	m.Records = []trace.Record{
		trace.State(0, 0, 0, 0),
		trace.State(0, 3, 0, 0), // not in the header
		trace.Counter(0, 0, 5, 0, math.NaN()),
		trace.BBV(0, 0, 0, 5, 1, 10),
		trace.State(2, 0, 7, 0), // run 2 is not in the header
	}
	out, st := export(t, m, Options{})
	evs, probs := check(out)
	if len(probs) > 0 {
		t.Fatal(strings.Join(probs, "\n"))
	}
	names := map[int64]string{}
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "process_name" {
			names[e.Pid] = e.Args["name"].(string)
		}
	}
	if fmt.Sprint(names) != fmt.Sprint(map[int64]string{1: "run 0 · proc 0", 2: "run 0 · proc 3", 3: "run 2 · proc 0"}) {
		t.Errorf("names = %v", names)
	}
	if st.SkippedCounters != 1 || st.SkippedBBV != 1 || st.States != 3 {
		t.Errorf("stats = %+v", st)
	}
}

func TestOrderErrors(t *testing.T) {
	for name, recs := range map[string][]trace.Record{
		"time": {trace.State(0, 0, 10, 0), trace.State(0, 0, 5, 0)},
		"run":  {trace.State(1, 0, 10, 0), trace.State(0, 0, 5, 0)},
		"kind": {{Kind: 42}},
	} {
		err := Export(io.Discard, &trace.Header{}, trace.NewSliceReader(recs), Options{})
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if name == "time" && !errors.Is(err, trace.ErrOutOfOrder) {
			t.Errorf("time: error %v does not wrap ErrOutOfOrder", err)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, _ := export(t, smallTrace(t), Options{})
	for i := 0; i < 3; i++ {
		b, _ := export(t, smallTrace(t), Options{})
		if !bytes.Equal(a, b) {
			t.Fatal("two exports of the same trace differ")
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	r := &tracetest.Stream{Procs: 4, Limit: 200_000}
	err := Export(&failWriter{n: 1 << 20}, &trace.Header{}, r, Options{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want disk full", err)
	}
	if r.Produced() >= r.Limit {
		t.Errorf("the exporter read all %d records after the writer failed", r.Produced())
	}
}

type errReader struct{}

func (errReader) Read([]trace.Record) (int, error) { return 0, errors.New("broken store") }

func TestReadError(t *testing.T) {
	if err := Export(io.Discard, &trace.Header{}, errReader{}, Options{}); err == nil || !strings.Contains(err.Error(), "broken store") {
		t.Fatalf("err = %v", err)
	}
}

func TestAppendNS(t *testing.T) {
	for ns, want := range map[int64]string{
		0: "0.000", 1: "0.001", 999: "0.999", 1000: "1.000", 1793078235: "1793078.235",
		-1: "-0.001", -1500: "-1.500", math.MaxInt64: "9223372036854775.807", math.MinInt64: "-9223372036854775.808",
	} {
		if got := string(appendNS(nil, ns)); got != want {
			t.Errorf("appendNS(%d) = %s, want %s", ns, got, want)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `a"b\c`, "tab\tnl\nret\r", "\x00\x01\x1f\x7f", "héllo · → ←", "a\u2028b\u2029", "<&>"} {
		b := appendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("appendString(%q) = %s: %v", s, b, err)
		} else if back != s {
			t.Errorf("appendString(%q) = %s reads back as %q", s, b, back)
		}
	}
	b := appendString(nil, "a\xffb")
	if string(b) != `"a\ufffdb"` {
		t.Errorf("invalid UTF-8 -> %s", b)
	}
}

// TestCheckerCatches makes sure the structural checks used above can fail.
func TestCheckerCatches(t *testing.T) {
	for name, tc := range map[string]struct{ json, want string }{
		"invalid":  {`{"traceEvents":[{]}`, "not valid JSON"},
		"prefix":   {`{"displayTimeUnit":"ns","traceEvents":[]}`, "does not start"},
		"unclosed": {`{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":2,"ts":1.000}]}`, "never ends"},
		"lifo": {`{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":2,"ts":1.000},{"ph":"B","name":"b","pid":1,"tid":2,"ts":2.000},
			{"ph":"E","name":"a","pid":1,"tid":2,"ts":3.000},{"ph":"E","name":"b","pid":1,"tid":2,"ts":3.000}]}`, "LIFO"},
		"overlap": {`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":3,"ts":1.000,"dur":2.000},{"ph":"X","name":"b","pid":1,"tid":3,"ts":2.000,"dur":2.000}]}`, "partially overlaps"},
		"flow-f":  {`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":3,"ts":1.000,"dur":2.000},{"ph":"s","id":1,"pid":1,"tid":3,"ts":1.000}]}`, "flow 1 has 1 starts and 0 ends"},
		"flow-out": {`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":3,"ts":1.000,"dur":2.000},{"ph":"s","id":1,"pid":1,"tid":3,"ts":1.000},
			{"ph":"f","bp":"e","id":1,"pid":1,"tid":4,"ts":1.500}]}`, "not inside a slice"},
		"flow-back": {`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":3,"ts":1.000,"dur":2.000},{"ph":"s","id":1,"pid":1,"tid":3,"ts":2.000},
			{"ph":"f","bp":"e","id":1,"pid":1,"tid":3,"ts":1.500}]}`, "ends before it starts"},
	} {
		_, probs := check([]byte(tc.json))
		if !strings.Contains(strings.Join(probs, "\n"), tc.want) {
			t.Errorf("%s: problems %q do not mention %q", name, probs, tc.want)
		}
	}
}

// event is a decoded trace event; ts and dur are converted back to ns.
type event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Pid  int64          `json:"pid"`
	Tid  int64          `json:"tid"`
	Ts   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur"`
	ID   int64          `json:"id"`
	BP   string         `json:"bp"`
	S    string         `json:"s"`
	Args map[string]any `json:"args"`

	ts, dur int64
}

// parseMicros converts "123.456" (µs) to 123456 ns exactly.
func parseMicros(n json.Number) (int64, error) {
	s := string(n)
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 3 {
		return 0, fmt.Errorf("%s has sub-nanosecond digits", s)
	}
	frac += strings.Repeat("0", 3-len(frac))
	neg := strings.HasPrefix(whole, "-")
	w, err := strconv.ParseInt(strings.TrimPrefix(whole, "-"), 10, 64)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, err
	}
	v := w*1000 + f
	if neg {
		v = -v
	}
	return v, nil
}

// check parses an export and returns its events and the structural
// problems found: invalid JSON, B/E pairs not matched LIFO per thread, X
// slices partially overlapping on a thread, flow events without exactly one
// partner, outside a slice of their thread, or going back in time.
func check(data []byte) ([]event, []string) {
	var probs []string
	bad := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }
	if !json.Valid(data) {
		return nil, []string{"not valid JSON"}
	}
	if !bytes.HasPrefix(data, []byte(`{"traceEvents":[`)) {
		bad(`does not start with {"traceEvents":[ (Perfetto's detection)`)
	}
	var doc struct {
		TraceEvents     []event        `json:"traceEvents"`
		DisplayTimeUnit string         `json:"displayTimeUnit"`
		Metadata        map[string]any `json:"metadata"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, []string{err.Error()}
	}
	evs := doc.TraceEvents
	type thread struct{ pid, tid int64 }
	stacks := map[thread][]*event{}
	lastBE := map[thread]int64{}
	xs := map[thread][]*event{}
	var flows []*event
	for i := range evs {
		e := &evs[i]
		if e.Ts != "" {
			var err error
			if e.ts, err = parseMicros(e.Ts); err != nil {
				bad("event %d: ts: %v", i, err)
			}
		} else if e.Ph != "M" {
			bad("event %d (%s) has no ts", i, e.Ph)
		}
		if e.Dur != "" {
			var err error
			if e.dur, err = parseMicros(e.Dur); err != nil || e.dur < 0 {
				bad("event %d: dur %s: %v", i, e.Dur, err)
			}
		}
		th := thread{e.Pid, e.Tid}
		switch e.Ph {
		case "B", "E":
			if last, ok := lastBE[th]; ok && e.ts < last {
				bad("event %d: B/E on %v goes back in time", i, th)
			}
			lastBE[th] = e.ts
			if e.Ph == "B" {
				stacks[th] = append(stacks[th], e)
				continue
			}
			st := stacks[th]
			if len(st) == 0 {
				bad("event %d: E %q on %v without B", i, e.Name, th)
				continue
			}
			if top := st[len(st)-1]; top.Name != e.Name {
				bad("event %d: E %q on %v closes B %q: not LIFO", i, e.Name, th, top.Name)
			}
			stacks[th] = st[:len(st)-1]
		case "X":
			xs[th] = append(xs[th], e)
		case "s", "f":
			flows = append(flows, e)
		case "M", "i", "C":
		default:
			bad("event %d: unknown phase %q", i, e.Ph)
		}
	}
	for th, st := range stacks {
		for _, e := range st {
			bad("B %q on %v never ends", e.Name, th)
		}
	}
	for th, list := range xs {
		slices.SortStableFunc(list, func(a, b *event) int {
			if a.ts != b.ts {
				return int(a.ts - b.ts)
			}
			return int(b.dur - a.dur)
		})
		var open []*event
		for _, e := range list {
			for len(open) > 0 && open[len(open)-1].ts+open[len(open)-1].dur <= e.ts {
				open = open[:len(open)-1]
			}
			if len(open) > 0 {
				if top := open[len(open)-1]; e.ts+e.dur > top.ts+top.dur {
					bad("X %q at %d on %v partially overlaps %q at %d", e.Name, e.ts, th, top.Name, top.ts)
				}
			}
			open = append(open, e)
		}
	}
	type pair struct{ s, f []*event }
	byID := map[int64]*pair{}
	for _, e := range flows {
		p := byID[e.ID]
		if p == nil {
			p = &pair{}
			byID[e.ID] = p
		}
		if e.Ph == "s" {
			p.s = append(p.s, e)
		} else {
			p.f = append(p.f, e)
			if e.BP != "e" {
				bad("flow end %d does not bind to its enclosing slice", e.ID)
			}
		}
		inside := false
		for _, x := range xs[thread{e.Pid, e.Tid}] {
			if x.ts <= e.ts && e.ts < x.ts+x.dur {
				inside = true
			}
		}
		if !inside {
			bad("flow %s %d at %d on %d/%d is not inside a slice of its thread", e.Ph, e.ID, e.ts, e.Pid, e.Tid)
		}
	}
	for id, p := range byID {
		if len(p.s) != 1 || len(p.f) != 1 {
			bad("flow %d has %d starts and %d ends", id, len(p.s), len(p.f))
			continue
		}
		if p.f[0].ts < p.s[0].ts {
			bad("flow %d ends before it starts", id)
		}
	}
	slices.Sort(probs)
	return evs, probs
}

func genHeader(procs int32) *trace.Header {
	h := &trace.Header{}
	h.EnsureRun(0, procs)
	for i := int32(0); i < 5; i++ {
		h.States = append(h.States, trace.StateDef{ID: i, Name: fmt.Sprintf("state %d", i), Description: "synthetic"})
	}
	for i := int32(0); i < 3; i++ {
		h.Regions = append(h.Regions, trace.RegionDef{ID: i, Kind: trace.RegionLoop, Label: fmt.Sprintf("loop %d", i), File: "gen.c", Line: 10 * i, Parent: -1})
	}
	h.Events = []trace.EventDef{{ID: 1, Name: "tick"}}
	h.Counters = []trace.CounterDef{{ID: 0, Name: "work"}}
	return h
}

func TestGenerated(t *testing.T) {
	var buf bytes.Buffer
	var st Stats
	if err := Export(&buf, genHeader(8), &tracetest.Stream{Procs: 8, Limit: 20_000}, Options{Stats: &st}); err != nil {
		t.Fatal(err)
	}
	if _, probs := check(buf.Bytes()); len(probs) > 0 {
		t.Fatalf("%d problems, first: %s", len(probs), probs[0])
	}
	if st.Records != 20_000 || st.Flows == 0 || st.MaxLanes != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func BenchmarkExport(b *testing.B) {
	const n = 1_000_000
	h := genHeader(16)
	var w countWriter
	b.ReportAllocs()
	for b.Loop() {
		if err := Export(&w, h, &tracetest.Stream{Procs: 16, Limit: n}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(w.n)/float64(b.N)/n, "bytes/record")
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
