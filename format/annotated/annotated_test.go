package annotated

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// writeFiles writes name -> content into a temporary directory and returns
// the paths in the order given by names.
func writeFiles(t testing.TB, names []string, contents []string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, n := range names {
		paths = append(paths, formattest.WriteFile(t, dir, n, contents[i]))
	}
	return paths
}

// importText imports one file with the given name and content.
func importText(t testing.TB, name, content string, params map[string]string) (*trace.Memory, error) {
	t.Helper()
	return formattest.Import(t, Importer{}, writeFiles(t, []string{name}, []string{content}), format.Options{Params: params})
}

const figure4 = "testdata/figure4.0.trace"

func TestGolden(t *testing.T) {
	ring4, err := filepath.Glob("testdata/ring4/ring4.*.trace")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		inputs []string
	}{
		{"figure4", []string{figure4}},
		{"ring4", ring4},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := formattest.Import(t, Importer{}, c.inputs, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.H.Validate(); err != nil {
				t.Fatal(err)
			}
			m.Sort()
			var b strings.Builder
			for _, r := range m.Records {
				b.WriteString(r.String())
				b.WriteByte('\n')
			}
			formattest.Golden(t, "testdata/"+c.name+".records.golden", []byte(b.String()), *update)
			hdr, err := json.MarshalIndent(&m.H, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			formattest.Golden(t, "testdata/"+c.name+".header.golden", append(hdr, '\n'), *update)
		})
	}
}

// find returns the n-th record (0-based) of a kind.
func find(t *testing.T, recs []trace.Record, kind trace.Kind, n int) trace.Record {
	t.Helper()
	for _, r := range recs {
		if r.Kind == kind {
			if n == 0 {
				return r
			}
			n--
		}
	}
	t.Fatalf("no such %s record", kind)
	return trace.Record{}
}

func regionByLabel(t *testing.T, h *trace.Header, label string) trace.RegionDef {
	t.Helper()
	for _, d := range h.Regions {
		if d.Label == label {
			return d
		}
	}
	t.Fatalf("no region %s", label)
	return trace.RegionDef{}
}

func TestFigure4Values(t *testing.T) {
	m, err := formattest.Import(t, Importer{}, []string{figure4}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const origin = 1793_078235000 // the first stamp, in ns
	// Times relative to the origin.
	rel := func(s, ns int64) int64 { return s*1e9 + ns - origin }

	irecv := find(t, m.Records, trace.KindRecv, 0)
	irecv2 := find(t, m.Records, trace.KindRecv, 1)
	send := find(t, m.Records, trace.KindSend, 0)
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"irecv bytes", irecv.Value, 8712 * 8},
		{"irecv peer", int64(irecv.Peer), int64(trace.NoPeer)},
		{"irecv tag", int64(irecv.Tag), 1100},
		{"irecv comm", int64(irecv.Comm), 91},
		{"irecv request", int64(irecv.Seq), 133},
		{"irecv flags", int64(irecv.Flags), int64(trace.FlagDynamic | trace.FlagAnySource)},
		{"irecv T", irecv.T, rel(1793, 78257000)},
		{"irecv End (return, no wait seen)", irecv.End, rel(1793, 245772000)},
		{"irecv2 tag", int64(irecv2.Tag), 1300},
		{"irecv2 request", int64(irecv2.Seq), 134},
		{"irecv2 End", irecv2.End, rel(1793, 245956000)},
		{"send bytes", send.Value, 2048 * 8},
		{"send peer", int64(send.Peer), 42},
		{"send tag", int64(send.Tag), 1300},
		{"send request", int64(send.Seq), -1},
		{"send flags", int64(send.Flags), int64(trace.FlagDynamic)},
		{"send T", send.T, rel(1794, 798499000)},
		{"send End (last call: unknown)", send.End, 0},
		{"procs grown to cover dst=42", int64(m.H.Runs[0].Procs), 43},
		{"records", int64(len(m.Records)), 3 + 5 + 5},
		{"implicit exits", m.H.Repairs[RepairImplicitExit], 1},
		{"elisions", m.H.Repairs[RepairElision], 2},
		{"unwaited", m.H.Repairs[RepairUnwaitedRequest], 2},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if got := m.H.Meta.Extra["time_origin_ns"]; got != "1793078235000" {
		t.Errorf("time_origin_ns = %q", got)
	}
	if m.H.Meta.Source != "annotated" || m.H.Meta.ClockResolution != 1 || !slices.Equal(m.H.Meta.Inputs, []string{figure4}) {
		t.Errorf("meta = %+v", m.H.Meta)
	}
	if len(m.H.Comms) != 1 || m.H.Comms[0].ID != 91 {
		t.Errorf("comms = %+v", m.H.Comms)
	}

	loop := regionByLabel(t, &m.H, "LOOP_151")
	if loop.Kind != trace.RegionLoop || loop.Line != 1070 || loop.EndLine != 1083 ||
		loop.Function != "comm3_" || loop.File != "mg.f" || loop.Parent != -1 {
		t.Errorf("LOOP_151 = %+v", loop)
	}
	if167 := regionByLabel(t, &m.H, "IF_167")
	if164 := regionByLabel(t, &m.H, "IF_164")
	if if167.Parent != if164.ID || if167.Kind != trace.RegionIf || if167.Line != 1212 ||
		if167.EndLine != 1224 || if167.Function != "give3_" {
		t.Errorf("IF_167 = %+v (IF_164 is %d)", if167, if164.ID)
	}
	if152 := regionByLabel(t, &m.H, "IF_152")
	if if152.Parent != loop.ID || if152.EndLine != 0 {
		t.Errorf("IF_152 = %+v", if152)
	}
	if163 := regionByLabel(t, &m.H, "IF_163")
	if if163.Parent != if152.ID || if164.Parent != if163.ID {
		t.Errorf("IF_163 = %+v, IF_164 = %+v", if163, if164)
	}

	// Region times: before the first call, its t_end_prev (the origin);
	// between the second irecv and the send, the time the irecv returned;
	// after the last call, the send's start.
	wantT := map[string][2]int64{ // label -> enter, exit time
		"LOOP_151": {0, send.T},
		"IF_152":   {0, send.T},
		"IF_163":   {irecv2.End, send.T},
		"IF_167":   {irecv2.End, send.T},
	}
	for label, want := range wantT {
		d := regionByLabel(t, &m.H, label)
		var got [2]int64
		for _, r := range m.Records {
			if r.ID == d.ID && r.Kind == trace.KindEnter {
				got[0] = r.T
			}
			if r.ID == d.ID && r.Kind == trace.KindExit {
				got[1] = r.T
			}
		}
		if got != want {
			t.Errorf("%s enter/exit at %v, want %v", label, got, want)
		}
	}
	// The exits come innermost first: IF_152 closes before LOOP_151.
	var exits []string
	ix := trace.NewIndex(&m.H)
	for _, r := range m.Records {
		if r.Kind == trace.KindExit {
			exits = append(exits, ix.RegionName(r.ID))
		}
	}
	if want := []string{"IF_167", "IF_164", "IF_163", "IF_152", "LOOP_151"}; !slices.Equal(exits, want) {
		t.Errorf("exits %v, want %v", exits, want)
	}
}

func TestRing4(t *testing.T) {
	paths, err := filepath.Glob("testdata/ring4/ring4.*.trace")
	if err != nil || len(paths) != 4 {
		t.Fatalf("glob: %v %v", paths, err)
	}
	slices.Reverse(paths) // the import orders the files by rank
	m, err := formattest.Import(t, Importer{}, paths, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.H.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.H.Runs[0].Procs != 4 || len(m.H.Procs) != 4 || m.H.Procs[2].Proc != 2 || !strings.HasSuffix(m.H.Procs[2].Extra["file"], "ring4.2.trace") {
		t.Fatalf("runs %+v procs %+v", m.H.Runs, m.H.Procs)
	}
	m.Sort()
	var mt trace.Matcher
	matched := 0
	mt.OnMatch = func(s, r *trace.Record) {
		matched++
		if s.Value != r.Value || s.Peer != r.Proc || s.Tag != r.Tag || s.Proc != r.Peer {
			t.Errorf("mismatched pair %v / %v", s, r)
		}
		// The receive was posted before, and completes at the waitall's
		// return: after the send started.
		if r.End < s.T {
			t.Errorf("receive %v completes before its send %v starts", r, s)
		}
	}
	counts := map[trace.Kind]int{}
	ops := map[trace.CollectiveOp]int{}
	ix := trace.NewIndex(&m.H)
	events := map[string]int{}
	for i := range m.Records {
		r := &m.Records[i]
		mt.Add(r)
		counts[r.Kind]++
		switch r.Kind {
		case trace.KindCollective:
			ops[trace.CollectiveOp(r.ID)]++
			if r.Comm != 91 || r.End <= r.T {
				t.Errorf("collective %v", r)
			}
			if trace.CollectiveOp(r.ID) == trace.OpBcast && (r.Peer != 0 || r.Value != 32) {
				t.Errorf("bcast %v", r)
			}
			if trace.CollectiveOp(r.ID) == trace.OpAllreduce && (r.Peer != -1 || r.Value != 8) {
				t.Errorf("allreduce %v", r)
			}
		case trace.KindEvent:
			events[ix.EventName(r.ID)]++
		case trace.KindRecv:
			if r.Flags != trace.FlagDynamic || r.Seq != 200+r.Peer {
				t.Errorf("recv %v", r)
			}
		}
	}
	sends, recvs := mt.Unmatched()
	if matched != 12 || len(sends) != 0 || len(recvs) != 0 {
		t.Errorf("matched %d, unmatched sends %v recvs %v", matched, sends, recvs)
	}
	want := map[trace.Kind]int{trace.KindSend: 12, trace.KindRecv: 12, trace.KindCollective: 8,
		trace.KindEvent: 20, trace.KindEnter: 8, trace.KindExit: 8}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%d %s records, want %d", counts[k], k, n)
		}
	}
	if ops[trace.OpBcast] != 4 || ops[trace.OpAllreduce] != 4 {
		t.Errorf("collectives %v", ops)
	}
	for _, n := range []string{"mpi_init_", "mpi_comm_rank_", "mpi_waitall_", "mpi_frobnicate_", "mpi_finalize_"} {
		if events[n] != 4 {
			t.Errorf("%d %s events, want 4", events[n], n)
		}
	}
	if len(m.H.Repairs) != 0 {
		t.Errorf("repairs %v", m.H.Repairs)
	}
	// Ranks start 3 µs apart; rank 0 is the origin.
	if m.H.Meta.Extra["time_origin_ns"] != "10000000000" {
		t.Errorf("origin %s", m.H.Meta.Extra["time_origin_ns"])
	}
	// The waitall completes rank 1's irecv from rank 3: End is the time the
	// waitall returned (the t_end_prev of the bcast, 10.000843 s).
	for _, r := range m.Records {
		if r.Kind == trace.KindRecv && r.Proc == 1 && r.Peer == 3 && r.End != 843000 {
			t.Errorf("rank 1's irecv from 3 ends at %d, want 843000", r.End)
		}
	}
}

// describe gives each record as "kind T[-End]", with the region or event
// name after the kind.
func describe(m *trace.Memory) []string {
	ix := trace.NewIndex(&m.H)
	var out []string
	for _, r := range m.Records {
		s := r.Kind.String()
		switch r.Kind {
		case trace.KindEnter, trace.KindExit:
			s += " " + ix.RegionName(r.ID)
		case trace.KindEvent:
			s += " " + ix.EventName(r.ID)
		}
		s += " " + strconv.FormatInt(r.T, 10)
		if r.End != 0 {
			s += "-" + strconv.FormatInt(r.End, 10)
		}
		out = append(out, s)
	}
	return out
}

// call formats a call record whose stamps are given in ns after 1 s (a
// negative prev prints as 0, "no previous call").
func call(name, args string, prev, start int64, extra string) string {
	f := func(ns int64) string {
		if ns < 0 {
			return "0.000000000"
		}
		return fmt.Sprintf("1.%09d", ns)
	}
	return name + "(" + args + ") [#1@f_@\"a.f\"] [ " + f(prev) + " " + f(start) + " ]" + extra + "\n"
}

func TestRules(t *testing.T) {
	ts := " { typesize = 4 }"
	for _, c := range []struct {
		name   string
		text   string
		params map[string]string
		want   []string
		repair map[string]int64
	}{
		{
			name: "wait completes the irecv",
			text: call("mpi_irecv_", "count=2 src=1 tag=5 request=7", -1, 0, ts) +
				call("mpi_compute_", "", 10, 20, "") +
				call("mpi_wait_", "request=7", 30, 40, "") +
				call("mpi_barrier_", "Communicator=91", 50, 60, "") +
				call("mpi_finalize_", "", 70, 80, ""),
			want: []string{"recv 0-50", "event mpi_compute_ 20", "event mpi_wait_ 40", "collective 60-70", "event mpi_finalize_ 80"},
		},
		{
			name: "waitall as the last call: End is the wait's start",
			text: call("mpi_isend_", "count=2 dst=1 tag=5 request=7", -1, 0, ts) +
				call("mpi_isend_", "count=2 dst=1 tag=6 request=8", 10, 20, ts) +
				call("mpi_waitall_", "count=2 array_of_requests=8,7", 30, 40, ""),
			want: []string{"send 0-40", "send 20-40", "event mpi_waitall_ 40"},
		},
		{
			name: "test without flag completes nothing; with flag=.true. it does",
			text: call("mpi_irecv_", "count=2 src=1 tag=5 request=7", -1, 0, ts) +
				call("mpi_test_", "request=7", 10, 20, "") +
				call("mpi_test_", "request=7 flag=.true.", 30, 40, "") +
				call("mpi_finalize_", "", 50, 60, ""),
			want: []string{"recv 0-50", "event mpi_test_ 20", "event mpi_test_ 40", "event mpi_finalize_ 60"},
		},
		{
			name: "a reused handle releases the unwaited call",
			text: call("mpi_irecv_", "count=2 src=1 tag=5 request=7", -1, 0, ts) +
				call("mpi_waitany_", "count=1 requests=7", 10, 20, "") +
				call("mpi_irecv_", "count=2 src=1 tag=5 request=7", 30, 40, ts) +
				call("mpi_wait_", "request=7", 50, 60, "") +
				call("mpi_finalize_", "", 70, 80, ""),
			want:   []string{"recv 0-10", "event mpi_waitany_ 20", "recv 40-70", "event mpi_wait_ 60", "event mpi_finalize_ 80"},
			repair: map[string]int64{RepairUnwaitedRequest: 1},
		},
		{
			name: "regions between calls take the previous call's return time",
			text: "--- LOOP_1 starts --- [#1@f_@\"a.f\"]\n" +
				call("mpi_barrier_", "", 5, 10, "") +
				"--- IF_2 starts --- [#2@f_@\"a.f\"]\n+++ IF_2 ends +++\n" +
				call("mpi_barrier_", "", 20, 30, "") +
				"+++ LOOP_1 ends +++ [#9@f_@\"a.f\"]\n",
			want: []string{"enter LOOP_1 0", "collective 5-15", "enter IF_2 15", "exit IF_2 15", "collective 25", "exit LOOP_1 25"},
		},
		{
			name: "first call with t_end_prev 0",
			text: "--- LOOP_1 starts --- [#1@f_@\"a.f\"]\n" +
				"mpi_barrier_() [#1@f_@\"a.f\"] [ 0.000000000 2.5 ]\n" +
				"+++ LOOP_1 ends +++\n",
			want: []string{"enter LOOP_1 0", "collective 0", "exit LOOP_1 0"},
		},
		{
			name:   "unclosed region at EOF",
			text:   "--- FUNC_main starts --- [#1@main@\"a.c\"]\n--- CALL_3 starts --- [#3@main@\"a.c\"]\n" + call("MPI_Bcast", "count=1 root=0", 0, 10, ts),
			want:   []string{"enter FUNC_main 0", "enter CALL_3 0", "collective 10", "exit CALL_3 10", "exit FUNC_main 10"},
			repair: map[string]int64{RepairUnclosedRegion: 2},
		},
		{
			name: "MPI_PROC_NULL peers send nothing",
			text: call("mpi_send_", "count=2 dst=-1 tag=5", 0, 10, ts) +
				call("mpi_sendrecv_", "sendcount=2 dest=1 sendtag=3 recvcount=4 source=-1 recvtag=4", 20, 30, ts) +
				call("mpi_recv_", "count=2 src=-2 tag=5", 40, 50, ts),
			want: []string{"event mpi_send_ 10", "send 30-40", "recv 50"},
		},
		{
			name:   "Open MPI constants through parameters",
			text:   call("mpi_recv_", "count=2 src=-1 tag=5", 0, 10, ts) + call("mpi_send_", "count=2 dst=-2 tag=5", 20, 30, ts),
			params: map[string]string{"anysource": "-1", "procnull": "-2"},
			want:   []string{"recv 10-20", "event mpi_send_ 30"},
		},
		{
			name: "sendrecv gives a send then a receive",
			text: call("mpi_sendrecv_", "sendcount=2 dest=1 sendtag=3 recvcount=4 source=1 recvtag=4 comm=5", 0, 10, ts) +
				call("mpi_finalize_", "", 20, 30, ""),
			want: []string{"send 10-20", "recv 10-20", "event mpi_finalize_ 30"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := importText(t, "x.0.trace", c.text, c.params)
			if err != nil {
				t.Fatal(err)
			}
			got := describe(m)
			if !slices.Equal(got, c.want) {
				t.Errorf("records\n%q\nwant\n%q", got, c.want)
			}
			if len(c.repair) != len(m.H.Repairs) {
				t.Errorf("repairs %v, want %v", m.H.Repairs, c.repair)
			}
			for k, v := range c.repair {
				if m.H.Repairs[k] != v {
					t.Errorf("repair %s = %d, want %d", k, m.H.Repairs[k], v)
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	const ts = " { typesize = 8 }"
	okCall := call("mpi_barrier_", "", 0, 10, "")
	for _, c := range []struct {
		name  string
		files []string // name, content, name, content...
		file  string   // the file the error names
		line  int
		msg   string
	}{
		{"missing stamps", []string{"mg.3.trace",
			"# rank 3\n--- LOOP_1 starts --- [#1@f_@\"a.f\"]\n\nmpi_send_(count=1 dst=0 tag=1)\n [#7@f.: \"a.f\"]\n{ typesize = 8 }\n"},
			"mg.3.trace", 4, `expected "[ t_end_prev t_start ]" after the call location, found "{ typesize = 8 }"`},
		{"truncated record", []string{"mg.0.trace", okCall + "[D]mpi_send_(count=1 dst=0\ntag=1) [#7@f.: \"a.f\"]\n[ 1.0"},
			"mg.0.trace", 2, `unexpected end of file in the record that starts here: expected "[ t_end_prev t_start ]"`},
		{"truncated arguments", []string{"mg.0.trace", okCall + "mpi_send_(count=1 dst=0\n"},
			"mg.0.trace", 2, `unexpected end of file in the record that starts here: expected ")" after the arguments of mpi_send_`},
		{"negative count", []string{"mg.0.trace", okCall + call("mpi_send_", "count=-1 dst=0 tag=1", 20, 30, ts)},
			"mg.0.trace", 2, "negative count -1 in mpi_send_"},
		{"negative typesize", []string{"mg.0.trace", okCall + call("mpi_bcast_", "count=1 root=0", 20, 30, " { typesize = -8 }")},
			"mg.0.trace", 2, "negative typesize -8 in mpi_bcast_"},
		{"missing typesize", []string{"mg.0.trace", call("mpi_send_", "count=1 dst=0 tag=1", 20, 30, "")},
			"mg.0.trace", 1, `expected "{ typesize = N }" after the timestamps of mpi_send_`},
		{"call ends before it started", []string{"mg.0.trace", okCall + call("mpi_barrier_", "", 5, 30, "")},
			"mg.0.trace", 2, "time goes backwards: the record says the previous call ended at 1.000000005 s, but it started at 1.000000010 s"},
		{"call starts before previous ended", []string{"mg.0.trace", okCall + call("mpi_barrier_", "", 20, 15, "")},
			"mg.0.trace", 2, "time goes backwards: the call starts at 1.000000015 s"},
		{"ends does not match", []string{"mg.0.trace", "--- LOOP_1 starts --- [#1@f_@\"a.f\"]\n--- IF_2 starts --- [#2@f_@\"a.f\"]\n+++ IF_3 ends +++ [#3@f_@\"a.f\"]\n"},
			"mg.0.trace", 3, `"+++ IF_3 ends +++" does not match the open region IF_2 of f_ in a.f (entered on line 2), nor any region around it`},
		{"ends in another function", []string{"mg.0.trace", "--- IF_2 starts --- [#2@f_@\"a.f\"]\n+++ IF_2 ends +++ [#3@g_@\"a.f\"]\n"},
			"mg.0.trace", 2, `does not match the open region IF_2`},
		{"ends with nothing open", []string{"mg.0.trace", okCall + "+++ IF_3 ends +++\n"},
			"mg.0.trace", 2, `"+++ IF_3 ends +++" but no region is open`},
		{"unknown rank", []string{"mg.3.trace", "# rank 3 of 16\n" + okCall + "# a comment\n" + call("[D]mpi_send_", "count=2048 dst=42 tag=1", 20, 30, ts)},
			"mg.3.trace", 4, "unknown rank 42: the trace declares 16 processes"},
		{"unknown root", []string{"mg.1.trace", "# rank 1 of 2\n" + call("mpi_bcast_", "count=1 root=2", 20, 30, ts)},
			"mg.1.trace", 2, "unknown rank 2: the trace declares 2 processes"},
		{"negative peer", []string{"mg.1.trace", call("mpi_send_", "count=1 dst=-7 tag=0", 20, 30, ts)},
			"mg.1.trace", 1, "dst=-7 is not a rank"},
		{"send to any source", []string{"mg.1.trace", call("mpi_send_", "count=1 dst=-2 tag=0", 20, 30, ts)},
			"mg.1.trace", 1, "dst=-2 is MPI_ANY_SOURCE, which a send cannot use"},
		{"no dst", []string{"mg.1.trace", call("mpi_send_", "count=1 tag=0", 20, 30, ts)},
			"mg.1.trace", 1, "mpi_send_ has no dst= argument"},
		{"no rank", []string{"trace.txt", okCall},
			"trace.txt", 0, "cannot tell the rank"},
		{"rank header after a record", []string{"mg.0.trace", okCall + "# rank 0 of 2\n"},
			"mg.0.trace", 2, "the rank header must come before the first record"},
		{"malformed rank header", []string{"mg.0.trace", "# rank zero\n" + okCall},
			"mg.0.trace", 1, "malformed rank header"},
		{"rank outside declared size", []string{"mg.0.trace", "# rank 4 of 4\n"},
			"mg.0.trace", 1, "rank 4 is outside the 4 processes the header declares"},
		{"duplicate rank", []string{"a.1.trace", okCall, "b.trace", "# rank 1\n" + okCall},
			"b.trace", 0, "rank 1 is also the rank of"},
		{"sizes disagree", []string{"a.0.trace", "# rank 0 of 2\n" + okCall, "a.1.trace", "# rank 1 of 3\n" + okCall},
			"a.1.trace", 1, "the header declares 3 processes, but"},
		{"rank beyond declared size", []string{"a.0.trace", "# rank 0 of 2\n" + okCall, "a.5.trace", okCall},
			"a.5.trace", 0, "unknown rank 5: the trace declares 2 processes"},
		{"too many decimals", []string{"mg.0.trace", "mpi_barrier_() [#1@f_@\"a.f\"] [ 1.0000000001 2.0 ]\n"},
			"mg.0.trace", 1, `bad timestamp "1.0000000001"`},
		{"bad count", []string{"mg.0.trace", call("mpi_send_", "count=many dst=0", 0, 10, ts)},
			"mg.0.trace", 1, "count=many: expected an integer"},
		{"missing location", []string{"mg.0.trace", "mpi_barrier_() [ 1.0 2.0 ]\n"},
			"mg.0.trace", 1, `expected the call location, such as [#1167:ready.: "mg.f"], after the arguments of mpi_barrier_, found "[ 1.0 2.0 ]"`},
		{"region without location", []string{"mg.0.trace", "--- LOOP_1 starts ---\n" + okCall},
			"mg.0.trace", 1, `expected a location such as [#1070@comm3_@"mg.f"] after "--- LOOP_1 starts ---", found "mpi_barrier_()`},
		{"region without starts", []string{"mg.0.trace", "--- LOOP_1 begins --- [#1@f_@\"a.f\"]\n"},
			"mg.0.trace", 1, `expected "starts" after the region label, found "begins`},
		{"garbage", []string{"mg.0.trace", okCall + "\n\nhello world\n"},
			"mg.0.trace", 4, `expected "(" after the call name hello, found "world"`},
		{"stray stamps", []string{"mg.0.trace", okCall + "[ 1.0 2.0 ]\n"},
			"mg.0.trace", 2, `expected a region line, an MPI call record`},
		{"bad flag", []string{"mg.0.trace", call("mpi_test_", "request=1 flag=maybe", 0, 10, "")},
			"mg.0.trace", 1, "flag=maybe: expected a logical value"},
		{"unterminated file name", []string{"mg.0.trace", "--- IF_1 starts --- [#1@f_@\"a.f]\n"},
			"mg.0.trace", 1, "unterminated file name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var names, contents []string
			for i := 0; i < len(c.files); i += 2 {
				names = append(names, c.files[i])
				contents = append(contents, c.files[i+1])
			}
			paths := writeFiles(t, names, contents)
			_, err := formattest.Import(t, Importer{}, paths, format.Options{})
			if err == nil {
				t.Fatal("no error")
			}
			var fe *format.Error
			if !errors.As(err, &fe) {
				t.Fatalf("%v is not a *format.Error", err)
			}
			if filepath.Base(fe.File) != c.file || fe.Line != c.line || !strings.Contains(fe.Msg, c.msg) {
				t.Errorf("got  %s:%d: %s\nwant %s:%d: ...%s...", filepath.Base(fe.File), fe.Line, fe.Msg, c.file, c.line, c.msg)
			}
		})
	}
}

func TestBadParams(t *testing.T) {
	for _, p := range []map[string]string{
		{"anysource": "x"},
		{"anysource": "-1"}, // equal to the default procnull
	} {
		if _, err := importText(t, "a.0.trace", "", p); err == nil {
			t.Errorf("params %v: no error", p)
		}
	}
	if err := (Importer{}).Import(context.Background(), nil, format.Options{}, &trace.Memory{}); err == nil {
		t.Error("no inputs: no error")
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Importer{}.Import(ctx, []string{figure4}, format.Options{}, &trace.Memory{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestDetect(t *testing.T) {
	fig, err := os.ReadFile(figure4)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		head string
		want bool
	}{
		{string(fig), true},
		{"--- LOOP_1 starts --- [#1@f@\"a.f\"]\n", true},
		{"  +++ IF_9 ends +++\n", true},
		{"[D]mpi_irecv_(count=1 src=0) [#1:f.: \"a.f\"] [ 1.0 2.0 ] { typesize = 8 }", true},
		{"mpi_irecv_(count=1 src=0) [#1:f.: \"a.f\"] [ 1.0 2.0 ]", false},
		{"0 1 2\n1 2 3\n", false},
		{"--- a\n+++ b\n@@ -1 +1 @@\n", false},
		{"", false},
	} {
		if got := (Importer{}).Detect("x", []byte(c.head)); got != c.want {
			t.Errorf("Detect(%.30q) = %v, want %v", c.head, got, c.want)
		}
	}
}

func TestRegistered(t *testing.T) {
	imp, err := format.Lookup("annotated")
	if err != nil {
		t.Fatal(err)
	}
	if imp.Name() != Name || imp.Describe() == "" {
		t.Errorf("%q %q", imp.Name(), imp.Describe())
	}
	if got, err := format.Detect(figure4); err != nil || got.Name() != Name {
		t.Errorf("Detect(%s) = %v, %v", figure4, got, err)
	}
}

func TestParseStamp(t *testing.T) {
	for _, c := range []struct {
		in   string
		unit time.Duration
		want int64
		ok   bool
	}{
		{"1793.078235000", time.Second, 1793078235000, true},
		{"1793.078257", time.Second, 1793078257000, true},
		{"0.000000001", time.Second, 1, true},
		{"12", time.Second, 12e9, true},
		{"12.", time.Second, 12e9, true},
		{".5", time.Second, 5e8, true},
		{"1.1234567890000", time.Second, 1123456789, true},
		{"1.1234567891", time.Second, 0, false},
		{"1.2.3", time.Second, 0, false},
		{".", time.Second, 0, false},
		{"9223372036.854775807", time.Second, 9223372036854775807, true},
		{"9223372036.854775808", time.Second, 0, false},
		{"99999999999999999999", time.Second, 0, false},
		{"1500.5", time.Millisecond, 1500500000, true},
		{"2.000000001", time.Microsecond, 2000, true}, // below a nanosecond: truncated
		{"3", time.Nanosecond, 3, true},
	} {
		got, ok := parseStamp([]byte(c.in), c.unit)
		if got != c.want || ok != c.ok {
			t.Errorf("parseStamp(%q, %v) = %d, %v; want %d, %v", c.in, c.unit, got, ok, c.want, c.ok)
		}
	}
}

func TestTimeUnit(t *testing.T) {
	paths := writeFiles(t, []string{"a.0.trace"}, []string{"mpi_barrier_() [#1@f@\"a.f\"] [ 1000 1500.5 ]\nmpi_barrier_() [#1@f@\"a.f\"] [ 1600 1700 ]\n"})
	m, err := formattest.Import(t, Importer{}, paths, format.Options{TimeUnit: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Records[0]; r.T != 500_500_000 || r.End != 600_000_000 || m.H.Meta.Extra["time_origin_ns"] != "1000000000" {
		t.Errorf("%v origin %s", r, m.H.Meta.Extra["time_origin_ns"])
	}
}

func TestRankFromName(t *testing.T) {
	for _, c := range []struct {
		name string
		want int64
		ok   bool
	}{
		{"mg.3.trace", 3, true},
		{"/runs/7/trace-0003.txt", 3, true},
		{"figure4.0.trace", 0, true},
		{"mg.12.trace.gz", 12, true},
		{"rank17", 17, true},
		{"trace.txt", 0, false},
		{"mg.99999999999.trace", 0, false},
	} {
		got, ok := rankFromName(c.name)
		if got != c.want || ok != c.ok {
			t.Errorf("rankFromName(%q) = %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestGenerate(t *testing.T) {
	const procs, steps = 3, 40
	var names, contents []string
	for r := 0; r < procs; r++ {
		var b strings.Builder
		if err := Generate(&b, r, procs, steps); err != nil {
			t.Fatal(err)
		}
		names = append(names, fmt.Sprintf("gen.%d.trace", r))
		contents = append(contents, b.String())
	}
	m, err := formattest.Import(t, Importer{}, writeFiles(t, names, contents), format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Per rank: init, finalize, loop enter/exit, 5 records per step and an
	// allreduce every 8 steps.
	if want := procs * (4 + 5*steps + steps/8); len(m.Records) != want {
		t.Errorf("%d records, want %d", len(m.Records), want)
	}
	m.Sort()
	var mt trace.Matcher
	n := 0
	mt.OnMatch = func(s, r *trace.Record) {
		n++
		if r.End < s.T || s.Value != r.Value {
			t.Errorf("pair %v / %v", s, r)
		}
	}
	for i := range m.Records {
		mt.Add(&m.Records[i])
	}
	if s, r := mt.Unmatched(); n != procs*steps || len(s)+len(r) != 0 {
		t.Errorf("%d matched, unmatched %d sends %d recvs", n, len(s), len(r))
	}
	if len(m.H.Repairs) != 0 {
		t.Errorf("repairs %v", m.H.Repairs)
	}
	if err := Generate(&strings.Builder{}, 3, 3, 1); err == nil {
		t.Error("rank 3 of 3: no error")
	}
}

// TestGzip checks that gzipped input goes through the shared line reader.
func TestGzip(t *testing.T) {
	// A minimal gzip of figure 4 written with the standard library.
	fig, err := os.ReadFile(figure4)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "figure4.0.trace.gz")
	if err := os.WriteFile(path, formattest.Gzip(t, fig), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Records) != 13 {
		t.Errorf("%d records", len(m.Records))
	}
}
