package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/parscope/parscope/internal/needtool"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// envDuckDBNode names a directory whose node_modules holds the npm package
// @duckdb/node-api; scripts/test.sh installs it and sets the variable.
const envDuckDBNode = "PARSCOPE_DUCKDB_NODE"

// writeEveryKind writes a .pst with records of every kind (and so every
// record table) and every dictionary (process names and communicators
// too), at microsecond resolution, and returns the messages it sent.
func writeEveryKind(t *testing.T, path string) map[[2]int32]int64 {
	t.Helper()
	h := &trace.Header{}
	h.Meta.ClockResolution = 1000
	h.Meta.Source = "test"
	h.Runs = []trace.RunInfo{{ID: 0, Procs: 3}}
	h.States = []trace.StateDef{{ID: 1, Name: "compute"}, {ID: 2, Name: "wait"}}
	h.Regions = []trace.RegionDef{{ID: 1, Label: "loop 10", Parent: -1}}
	h.Events = []trace.EventDef{{ID: 1, Name: "tick"}}
	h.Counters = []trace.CounterDef{{ID: 1, Name: "flops", Unit: "1"}}
	h.Procs = []trace.ProcInfo{{Run: 0, Proc: 0, Name: "rank 0"}, {Run: 0, Proc: 1, Name: "rank 1"}, {Run: 0, Proc: 2, Name: "rank 2"}}
	h.Comms = []trace.CommDef{{ID: 0, Name: "MPI_COMM_WORLD", Members: []int32{0, 1, 2}}, {ID: 1, Name: "even", Members: []int32{0, 2}}}
	var recs []trace.Record
	sent := map[[2]int32]int64{}
	for p := range int32(3) {
		us := func(n int64) int64 { return (n + int64(p)) * 1000 }
		dst := (p + 1) % 3
		bytes := int64(100 * (p + 1))
		sent[[2]int32{p, dst}] += 2 * bytes
		recs = append(recs,
			trace.State(0, p, us(0), 1), trace.State(0, p, us(5), 2), trace.State(0, p, us(9), 1),
			trace.Enter(0, p, us(1), 1), trace.Exit(0, p, us(8), 1),
			trace.Send(0, p, us(2), us(3), dst, bytes, 7, 0), trace.Send(0, p, us(4), us(5), dst, bytes, 7, 0),
			trace.Recv(0, p, us(2), us(6), (p+2)%3, int64(100*((p+2)%3+1)), 7, 0),
			trace.Recv(0, p, us(4), us(7), (p+2)%3, int64(100*((p+2)%3+1)), 7, 0),
			trace.Coll(0, p, us(10), us(11), trace.OpAllreduce, 0, 8, 0),
			trace.Event(0, p, us(3), 1, 1), trace.Counter(0, p, us(6), 1, 2.5),
			trace.BBV(0, p, 0, us(0), 1, 40), trace.BBV(0, p, 0, us(0), 2, 2), trace.BBV(0, p, 1, us(6), 1, 42))
	}
	// Each process's records in time order, as a recorder writes them.
	slices.SortStableFunc(recs, func(a, b trace.Record) int { return cmp.Or(cmp.Compare(a.Proc, b.Proc), cmp.Compare(a.T, b.T)) })
	storetest.Create(t, path, h, recs)
	return sent
}

// TestPstOpensInDuckDB opens a .pst holding every table and every
// dictionary with DuckDB, as docs/format.md shows: scripts/pst-duckdb.cjs
// counts the rows of every Parquet file the manifest names and runs the
// SQL statements of the page, read from it. The test checks that the
// manifest names every Parquet file of the directory (so that a new table
// cannot go unchecked), each count against what parscope info --json
// reports for that table, and the statements' results against the records
// written.
func TestPstOpensInDuckDB(t *testing.T) {
	node := needtool.Path(t, "nodejs", "node")
	mods := os.Getenv(envDuckDBNode)
	if mods == "" {
		needtool.Missing(t, "%s is not set (npm install --prefix DIR @duckdb/node-api, as scripts/test.sh does)", envDuckDBNode)
	}
	dir := t.TempDir()
	pst := filepath.Join(dir, "every.pst")
	sent := writeEveryKind(t, pst)

	var info infoReport
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", pst)), &info); err != nil {
		t.Fatal(err)
	}
	// What info reports for each table, record tables and the others.
	reported := map[string]int64{}
	for _, list := range []map[string]store.TableInfo{info.Tables, info.Files} {
		for name, ti := range list {
			reported[name] = ti.Rows
		}
	}
	// Every table and every dictionary is there, and holds rows.
	for _, name := range []string{"states", "regions", "messages", "collectives", "events", "counters", "bbv",
		"index", "state_names", "region_names", "event_names", "counter_names", "procs", "comms"} {
		if reported[name] == 0 {
			t.Errorf("parscope info reports no rows of %s: %v", name, reported)
		}
	}

	cmd := exec.Command(node, "../../scripts/pst-duckdb.cjs", pst, "../../docs/format.md")
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(mods, "node_modules"))
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("pst-duckdb.cjs: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got struct {
		DuckDB  string           `json:"duckdb"`
		Rows    map[string]int64 `json:"rows"`
		Parquet []string         `json:"parquet"`
		Queries []struct {
			Comment string            `json:"comment"`
			Rows    []json.RawMessage `json:"rows"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("pst-duckdb.cjs printed %q: %v", out, err)
	}
	t.Logf("DuckDB %s", got.DuckDB)
	// The manifest names every Parquet file of the directory.
	var named []string
	for _, list := range []map[string]store.TableInfo{info.Tables, info.Files} {
		for _, ti := range list {
			named = append(named, ti.File)
		}
	}
	slices.Sort(named)
	if !slices.Equal(named, got.Parquet) {
		t.Errorf("the manifest names %v; the .pst holds %v", named, got.Parquet)
	}
	// DuckDB counts, for every table, the rows info reports.
	if !maps.Equal(got.Rows, reported) {
		t.Errorf("DuckDB counts %v rows; parscope info reports %v", got.Rows, reported)
	}

	// The statements of docs/format.md, in its order.
	if len(got.Queries) != 2 || got.Queries[0].Comment != "time in seconds and state names" || got.Queries[1].Comment != "bytes between each pair of processes" {
		t.Fatalf("docs/format.md's statements: %d, want the two the test checks (states, pairs)", len(got.Queries))
	}
	// First: every state entry, in seconds, with its name.
	var states []struct {
		Run, Proc int32
		Seconds   float64
		Name      string
	}
	for _, r := range got.Queries[0].Rows {
		var s struct {
			Run, Proc int32
			Seconds   float64
			Name      string
		}
		if err := json.Unmarshal(r, &s); err != nil {
			t.Fatal(err)
		}
		states = append(states, s)
	}
	if len(states) != 9 {
		t.Fatalf("states query: %d rows, want 9", len(states))
	}
	if first := states[0]; first.Run != 0 || first.Proc != 0 || first.Seconds != 0 || first.Name != "compute" {
		t.Errorf("states query, first row %+v", first)
	}
	if last := states[8]; last.Proc != 2 || last.Seconds != 11e-6 || last.Name != "compute" {
		t.Errorf("states query, last row %+v, want proc 2 at 1.1e-05 s in compute", last)
	}
	// Second: bytes sent between each pair.
	if len(got.Queries[1].Rows) != len(sent) {
		t.Fatalf("pairs query: %s, want %d pairs", got.Queries[1].Rows, len(sent))
	}
	for _, r := range got.Queries[1].Rows {
		var row map[string]any
		if err := json.Unmarshal(r, &row); err != nil {
			t.Fatal(err)
		}
		src, _ := strconv.Atoi(fmt.Sprint(row["src"]))
		dst, _ := strconv.Atoi(fmt.Sprint(row["dst"]))
		sum, _ := strconv.ParseInt(fmt.Sprint(row["bytes"]), 10, 64)
		if want := sent[[2]int32{int32(src), int32(dst)}]; sum != want || want == 0 {
			t.Errorf("pair %d→%d: DuckDB sums %d bytes, %d were sent", src, dst, sum, want)
		}
	}
}
