package prv

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

// functionsPRV is a hand-written trace of two single-thread tasks. Task 1
// enters main (user function 1), solve (2) from it, an MPI_Recv inside
// solve, a user function with no .pcf name (7), an OpenMP parallel
// function; then one user function exit too many, a value too large for a
// region id (an untranslated address) and its exit, a sampled function
// and a caller at level 1. Task 2 runs an OpenMP task function.
const functionsPRV = `#Paraver (01/01/70 at 00:00):1000_ns:1(2):1:2(1:1,1:1)
2:1:1:1:1:10:60000019:1:60000119:11
2:1:1:1:1:20:60000019:2:60000119:12
2:1:1:1:1:30:50000001:3
2:1:1:1:1:40:50000001:0
2:1:1:1:1:50:60000019:7
2:1:1:1:1:55:60000019:0
2:1:1:1:1:60:60000019:0:60000119:0
2:1:1:1:1:70:60000018:4
2:1:1:1:1:80:60000018:0
2:1:1:1:1:90:60000019:0:60000119:0
2:1:1:1:1:95:60000019:0
2:1:1:1:1:96:60000019:300000000
2:1:1:1:1:97:60000019:0
2:1:1:1:1:98:30000000:1:70000001:2
2:2:1:2:1:5:60000023:3
2:2:1:2:1:15:60000023:0
`

const functionsPCF = `DEFAULT_OPTIONS

UNITS               NANOSEC


EVENT_TYPE
0    50000001    MPI Point-to-point
VALUES
0   End
3   MPI_Recv


EVENT_TYPE
0    60000018    Executed OpenMP parallel function
VALUES
0   End
4   main._omp_fn.0 (solve.c)


EVENT_TYPE
0    60000019    User function
VALUES
0   End
1   main
2   solve


EVENT_TYPE
0    60000119    User function line
VALUES
0   End
11   3 (solve.c)
12   20 (solve.c)


EVENT_TYPE
0    60000023    Executed OpenMP task function
VALUES
0   End
3   task_body


EVENT_TYPE
0    30000000    Sampled functions
0    30000001    Sampled functions (depth 1)
VALUES
0   End
1   main


EVENT_TYPE
0    70000001    Caller at level 1
VALUES
0   End
2   main
`

// Region ids of functionsPRV: k*FunctionRegionScale+value with k the
// type's place in FunctionTypes, MPI ids as before.
const (
	idMain    = 2*FunctionRegionScale + 1 // 60000019 value 1
	idSolve   = 2*FunctionRegionScale + 2 // 60000019 value 2
	idNoName  = 2*FunctionRegionScale + 7 // 60000019 value 7
	idOMP     = 1*FunctionRegionScale + 4 // 60000018 value 4
	idTask    = 4*FunctionRegionScale + 3 // 60000023 value 3
	idMPIRecv = 1*100000 + 3              // 50000001 value 3
)

// TestFunctionRegions imports functionsPRV and checks every record of
// both processes, the region names, the nesting of functions and MPI
// calls, and the repair of the exit without an entry.
func TestFunctionRegions(t *testing.T) {
	dir := t.TempDir()
	path := formattest.WriteFile(t, dir, "fn.prv", functionsPRV)
	formattest.WriteFile(t, dir, "fn.pcf", functionsPCF)
	m, err := formattest.Import(t, Importer{}, []string{path}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Record{
		trace.Enter(0, 0, 10, idMain), trace.Event(0, 0, 10, 60000119, 11),
		trace.Enter(0, 0, 20, idSolve), trace.Event(0, 0, 20, 60000119, 12),
		trace.Enter(0, 0, 30, idMPIRecv),
		trace.Exit(0, 0, 40, idMPIRecv),
		trace.Enter(0, 0, 50, idNoName),
		trace.Exit(0, 0, 55, idNoName),
		trace.Exit(0, 0, 60, idSolve), trace.Event(0, 0, 60, 60000119, 0),
		trace.Enter(0, 0, 70, idOMP),
		trace.Exit(0, 0, 80, idOMP),
		trace.Exit(0, 0, 90, idMain), trace.Event(0, 0, 90, 60000119, 0),
		// 95: the exit with nothing open is dropped and counted.
		trace.Event(0, 0, 96, UserFunctionType, 300000000),
		trace.Event(0, 0, 97, UserFunctionType, 0),
		trace.Event(0, 0, 98, 30000000, 1), trace.Event(0, 0, 98, 70000001, 2),
		trace.Enter(0, 1, 5, idTask),
		trace.Exit(0, 1, 15, idTask),
	}
	var got []trace.Record
	for p := int32(0); p < 2; p++ {
		for _, r := range m.Records {
			if r.Proc == p {
				got = append(got, r)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records\n%s\nwant\n%s", joinRecords(got), joinRecords(want))
	}
	checkNesting(t, got)

	regions := map[int32]string{}
	for _, r := range m.H.Regions {
		regions[r.ID] = r.Label
		if r.Kind != trace.RegionFunction || r.Parent != -1 {
			t.Errorf("region %d: kind %v parent %d, want a function without parent", r.ID, r.Kind, r.Parent)
		}
	}
	wantRegions := map[int32]string{
		idMain: "main", idSolve: "solve", idNoName: "User function value 7",
		idOMP: "main._omp_fn.0 (solve.c)", idTask: "task_body", idMPIRecv: "MPI_Recv",
	}
	if fmt.Sprint(regions) != fmt.Sprint(wantRegions) {
		t.Errorf("regions %v, want %v", regions, wantRegions)
	}
	if n := m.H.Repairs[RepairFunctionUnopenedExit]; n != 1 {
		t.Errorf("%s = %d, want 1", RepairFunctionUnopenedExit, n)
	}
	if n := m.H.Repairs[RepairUnopenedExit] + m.H.Repairs[RepairImplicitExit]; n != 0 {
		t.Errorf("MPI repairs %v, want none", m.H.Repairs)
	}
	ix := trace.NewIndex(&m.H)
	for _, c := range []struct{ got, want string }{
		{ix.EventName(UserFunctionType), "User function"}, // the value too large kept it an event
		{ix.EventName(60000119), "User function line"},
		{ix.EventName(30000000), "Sampled functions"},
		{ix.EventName(70000001), "Caller at level 1"},
		{m.H.Meta.Extra["prv.type.60000018"], "Executed OpenMP parallel function"},
		{m.H.Meta.Extra["prv.type.60000023"], "Executed OpenMP task function"},
		{m.H.Meta.Extra["prv.values.60000023"], `{"0":"End","3":"task_body"}`},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if err := m.H.Validate(); err != nil {
		t.Error(err)
	}

	// The export writes each function region back under its own type and
	// value, and importing it gives the same records and regions.
	p, _ := exportMemory(t, m, t.TempDir(), "back")
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{":20:60000019:2\n", ":70:60000018:4\n", ":80:60000018:0\n", ":5:60000023:3\n", ":30:50000001:3\n"} {
		if !strings.Contains(string(body), line) {
			t.Errorf("the export lacks a line ending in %q:\n%s", line, body)
		}
	}
	back, err := formattest.Import(t, Importer{}, []string{p}, format.Options{})
	if err != nil {
		t.Fatal(err)
	}
	diffRecords(t, recordSet(m), recordSet(back))
	if d1, d2 := dicts(&m.H), dicts(&back.H); d1 != d2 {
		t.Errorf("dictionaries differ:\n--- original\n%s\n--- round trip\n%s", d1, d2)
	}
}

// TestFunctionRegionIDs checks RegionID and RegionType on the edges of
// both id ranges: they are inverses, and no function id is an MPI id.
func TestFunctionRegionIDs(t *testing.T) {
	for _, c := range []struct {
		typ, v int64
		id     int32
		ok     bool
	}{
		{50000001, 1, 100001, true},
		{50000099, 99999, 9999999, true},
		{50000001, 100000, 0, false},
		{60000018, 1, 100000001, true},
		{60000019, 5, 200000005, true},
		{63500006, 99999999, 799999999, true},
		{60000019, 0, 0, false},
		{60000019, -3, 0, false},
		{60000019, 100000000, 0, false},
		{60000119, 5, 0, false}, // a line, not a function
		{30000000, 5, 0, false}, // a sample
		{70000001, 5, 0, false}, // a caller
	} {
		id, ok := RegionID(c.typ, c.v)
		if id != c.id || ok != c.ok {
			t.Errorf("RegionID(%d, %d) = %d, %v, want %d, %v", c.typ, c.v, id, ok, c.id, c.ok)
		}
		if !ok {
			continue
		}
		typ, v, ok := RegionType(id)
		if typ != c.typ || v != c.v || !ok {
			t.Errorf("RegionType(%d) = %d, %d, %v, want %d, %d", id, typ, v, ok, c.typ, c.v)
		}
	}
	for _, id := range []int32{0, 10000000, 99999999, FunctionRegionScale, 8 * FunctionRegionScale, 8*FunctionRegionScale + 1} {
		if typ, v, ok := RegionType(id); ok {
			t.Errorf("RegionType(%d) = %d, %d, want no region", id, typ, v)
		}
	}
	for _, typ := range FunctionTypes() {
		if typ >= MPITypeMin && typ <= MPITypeMax || !IsFunctionType(typ) {
			t.Errorf("function type %d", typ)
		}
	}
}

func joinRecords(rs []trace.Record) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "  %v\n", r)
	}
	return b.String()
}

// checkNesting checks that every exit closes its process's innermost open
// region and that nothing stays open.
func checkNesting(t *testing.T, rs []trace.Record) {
	t.Helper()
	stacks := map[int32][]int32{}
	for _, r := range rs {
		s := stacks[r.Proc]
		switch r.Kind {
		case trace.KindEnter:
			stacks[r.Proc] = append(s, r.ID)
		case trace.KindExit:
			if len(s) == 0 || s[len(s)-1] != r.ID {
				t.Errorf("%v does not close the innermost region (open: %v)", r, s)
				continue
			}
			stacks[r.Proc] = s[:len(s)-1]
		}
	}
	for p, s := range stacks {
		if len(s) != 0 {
			t.Errorf("process %d ends with regions %v open", p, s)
		}
	}
}
