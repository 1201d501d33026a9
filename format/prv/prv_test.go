package prv

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/internal/realdata"
	"github.com/parscope/parscope/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// realTrace returns the path of a real .prv file of
// testdata/real/traces/paraver, failing the test when it is missing.
func realTrace(t testing.TB, name string) string {
	t.Helper()
	return realdata.Path(t, "traces/paraver/"+name)
}

// lineCounts counts a .prv's records by type with a plain line scan, and
// the type:value pairs of its event records.
type lineCounts struct {
	states, events, comms, globals, commLines, pairs int
}

func countLines(t testing.TB, path string) lineCounts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c lineCounts
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "1:"):
			c.states++
		case strings.HasPrefix(line, "2:"):
			c.events++
			c.pairs += (strings.Count(line, ":") - 5) / 2
		case strings.HasPrefix(line, "3:"):
			c.comms++
		case strings.HasPrefix(line, "4:"):
			c.globals++
		case strings.HasPrefix(line, "c:"):
			c.commLines++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRealTraces checks each real trace of testdata/real/traces/paraver
// against a line scan, the counts of its README, and a golden summary.
func TestRealTraces(t *testing.T) {
	for _, c := range []struct {
		file                                     string
		procs                                    int32
		states, events, comms, globals, commDefs int
	}{
		{"qsort_beo3.prv", 4, 292, 422, 33, 45, 8},
		{"lulesh_7+1_with_uncores_sockets1+2.chop8.prv", 20, 1704, 2640, 160, 0, 14},
		{"444.namd.prv", 1, 4, 27919, 0, 0, 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := realTrace(t, c.file)
			lc := countLines(t, path)
			if lc.states != c.states || lc.events != c.events || lc.comms != c.comms || lc.globals != c.globals {
				t.Fatalf("line scan found %+v, the README says %d/%d/%d/%d", lc, c.states, c.events, c.comms, c.globals)
			}
			m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if m.H.Runs[0].Procs != c.procs {
				t.Errorf("processes = %d, want %d", m.H.Runs[0].Procs, c.procs)
			}
			n := formattest.CountKinds(m.Records)
			gaps := int(m.H.Repairs[RepairStateGap])
			if got := n[trace.KindState] - gaps; got != c.states {
				t.Errorf("states = %d (+%d idle gaps), want %d", got, gaps, c.states)
			}
			pairs := n[trace.KindEvent] + n[trace.KindCounter] + n[trace.KindEnter] + n[trace.KindExit] + int(m.H.Repairs[RepairUnopenedExit]) + int(m.H.Repairs[RepairFunctionUnopenedExit]) - int(m.H.Repairs[RepairImplicitExit])
			if pairs != lc.pairs {
				t.Errorf("event pairs = %d, want %d", pairs, lc.pairs)
			}
			if n[trace.KindSend] != c.comms || n[trace.KindRecv] != c.comms {
				t.Errorf("sends/recvs = %d/%d, want %d", n[trace.KindSend], n[trace.KindRecv], c.comms)
			}
			if n[trace.KindCollective] != c.globals {
				t.Errorf("collectives = %d, want %d", n[trace.KindCollective], c.globals)
			}
			if len(m.H.Comms) != c.commDefs {
				t.Errorf("communicators = %d, want %d", len(m.H.Comms), c.commDefs)
			}
			if err := m.H.Validate(); err != nil {
				t.Error(err)
			}
			checkNesting(t, m.Records) // MPI calls and functions nest
			formattest.Golden(t, filepath.Join("testdata", strings.TrimSuffix(c.file, ".prv")+".summary.golden"), summary(m), *update)
		})
	}
}

// summary is a deterministic text digest of an imported trace.
func summary(m *trace.Memory) []byte {
	var b strings.Builder
	h := &m.H
	fmt.Fprintf(&b, "source %s resolution %d ns\n", h.Meta.Source, h.Meta.ClockResolution)
	var keys []string
	for k := range h.Meta.Extra {
		if k == "prv.pcf" || k == "prv.row" || strings.HasPrefix(k, "prv.values.") {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "meta %s = %s\n", k, h.Meta.Extra[k])
	}
	for _, r := range h.Runs {
		fmt.Fprintf(&b, "run %d %q procs %d\n", r.ID, r.Name, r.Procs)
	}
	for _, p := range h.Procs {
		fmt.Fprintf(&b, "proc %d %q appl %s task %s thread %s node %s\n", p.Proc, p.Name, p.Extra["appl"], p.Extra["task"], p.Extra["thread"], p.Extra["node"])
	}
	for _, s := range h.States {
		fmt.Fprintf(&b, "state %d %q\n", s.ID, s.Name)
	}
	for _, e := range h.Events {
		fmt.Fprintf(&b, "event %d %q\n", e.ID, e.Name)
	}
	for _, c := range h.Counters {
		fmt.Fprintf(&b, "counter %d %q\n", c.ID, c.Name)
	}
	for _, r := range h.Regions {
		fmt.Fprintf(&b, "region %d %q\n", r.ID, r.Label)
	}
	for _, c := range h.Comms {
		fmt.Fprintf(&b, "comm %d %q %v\n", c.ID, c.Name, c.Members)
	}
	var rk []string
	for k, v := range h.Repairs {
		rk = append(rk, fmt.Sprintf("repair %s %d\n", k, v))
	}
	sort.Strings(rk)
	b.WriteString(strings.Join(rk, ""))
	n := formattest.CountKinds(m.Records)
	for _, k := range trace.Kinds {
		if n[k] > 0 {
			fmt.Fprintf(&b, "records %s %d\n", k, n[k])
		}
	}
	// The first records of the time-merged stream.
	recs := append([]trace.Record(nil), m.Records...)
	sortRecords(recs)
	for i := 0; i < len(recs) && i < 40; i++ {
		fmt.Fprintf(&b, "%s\n", recs[i])
	}
	return []byte(b.String())
}

func sortRecords(rs []trace.Record) {
	sort.SliceStable(rs, func(i, j int) bool { return trace.Less(&rs[i], &rs[j]) })
}

// TestHugeHeader checks that a header declaring millions of threads costs
// only what its records name: the run keeps the declared count, and only
// the threads with records get a ProcInfo.
func TestHugeHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.prv")
	os.WriteFile(path, []byte("#Paraver (x):100_ns:1:1:2(4194303:1,1:1)\n1:1:1:2:1:0:10:1\n2:1:1:1:4194303:5:7:1\n"), 0o644)
	m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.H.Runs[0].Procs != 4194304 {
		t.Errorf("run procs = %d, want 4194304", m.H.Runs[0].Procs)
	}
	var got []string
	for _, p := range m.H.Procs {
		got = append(got, fmt.Sprintf("%d=%s", p.Proc, p.Name))
	}
	if want := "[4194302=1.1.4194303 4194303=1.2.1]"; fmt.Sprint(got) != want {
		t.Errorf("procs %v, want %s", got, want)
	}
	if len(m.Records) != 3 { // state, its idle gap at the end, event
		t.Errorf("records %v, want 3", m.Records)
	}
}
