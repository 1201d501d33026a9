package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/parscope/parscope/internal/needtool"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// envDuckDBNode names a directory whose node_modules holds the npm package
// @duckdb/node-api; scripts/test.sh installs it and sets the variable.
const envDuckDBNode = "PARSCOPE_DUCKDB_NODE"

// writeEveryKind writes a .pst with records of every kind (and so every
// table), at microsecond resolution, and returns the messages it sent.
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

// TestPstOpensInDuckDB opens a .pst holding every table with DuckDB, as
// docs/format.md shows (scripts/pst-duckdb.cjs runs its queries), and
// checks the row count of every table against parscope info --json and the
// queries' results against the records written.
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
	for _, table := range []string{"states", "regions", "messages", "collectives", "events", "counters", "bbv"} {
		if info.Tables[table].Rows == 0 {
			t.Fatalf("the generated trace has no %s table: %+v", table, info.Tables)
		}
	}

	cmd := exec.Command(node, "../../scripts/pst-duckdb.cjs", pst)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(mods, "node_modules"))
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("pst-duckdb.cjs: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got struct {
		DuckDB string           `json:"duckdb"`
		Rows   map[string]int64 `json:"rows"`
		States []struct {
			Run, Proc int32
			Seconds   float64
			Name      string
		} `json:"states"`
		Pairs []map[string]any `json:"pairs"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("pst-duckdb.cjs printed %q: %v", out, err)
	}
	t.Logf("DuckDB %s", got.DuckDB)
	for _, ti := range info.Tables {
		if got.Rows[ti.File] != ti.Rows {
			t.Errorf("%s: DuckDB counts %d rows, parscope info says %d", ti.File, got.Rows[ti.File], ti.Rows)
		}
	}
	// The dictionaries and the index open too.
	for _, f := range []string{"index.parquet", "state_names.parquet", "region_names.parquet", "event_names.parquet", "counter_names.parquet"} {
		if got.Rows[f] == 0 {
			t.Errorf("DuckDB read no row of %s (files read: %v)", f, got.Rows)
		}
	}

	// First query: every state entry, in seconds, with its name.
	if len(got.States) != 9 {
		t.Fatalf("states query: %d rows, want 9", len(got.States))
	}
	first := got.States[0]
	if first.Run != 0 || first.Proc != 0 || first.Seconds != 0 || first.Name != "compute" {
		t.Errorf("states query, first row %+v", first)
	}
	last := got.States[8]
	if last.Proc != 2 || last.Seconds != 11e-6 || last.Name != "compute" {
		t.Errorf("states query, last row %+v, want proc 2 at 1.1e-05 s in compute", last)
	}
	// Second query: bytes sent between each pair.
	if len(got.Pairs) != len(sent) {
		t.Fatalf("pairs query: %v, want %d pairs", got.Pairs, len(sent))
	}
	for _, row := range got.Pairs {
		src, _ := strconv.Atoi(fmt.Sprint(row["src"]))
		dst, _ := strconv.Atoi(fmt.Sprint(row["dst"]))
		sum, _ := strconv.ParseInt(fmt.Sprint(row["sum(bytes)"]), 10, 64)
		if want := sent[[2]int32{int32(src), int32(dst)}]; sum != want || want == 0 {
			t.Errorf("pair %d→%d: DuckDB sums %d bytes, %d were sent", src, dst, sum, want)
		}
	}
}
