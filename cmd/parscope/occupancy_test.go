package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/internal/needtool"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// writeLyonStore writes table T1 of Lyon's NISTIR 4418 (4 processes a..d,
// modes A1..A3 as states 1..3, times in ns) to a store, with an event
// ending the run at 29.
func writeLyonStore(t *testing.T) string {
	t.Helper()
	rows := []struct {
		sets [3]string
		dur  int64
	}{
		{[3]string{"abcd", "", ""}, 3}, {[3]string{"acd", "b", ""}, 1}, {[3]string{"abd", "c", ""}, 2},
		{[3]string{"acd", "", "b"}, 1}, {[3]string{"abcd", "", ""}, 1}, {[3]string{"ab", "cd", ""}, 5},
		{[3]string{"cd", "ab", ""}, 5}, {[3]string{"ac", "bd", ""}, 5}, {[3]string{"", "abcd", ""}, 1},
		{[3]string{"abcd", "", ""}, 2}, {[3]string{"a", "bcd", ""}, 2}, {[3]string{"", "abc", "d"}, 1},
	}
	h := &trace.Header{}
	h.Meta.ClockResolution = 1
	h.States = []trace.StateDef{{ID: 1, Name: "A1"}, {ID: 2, Name: "A2"}, {ID: 3, Name: "A3"}}
	h.Events = []trace.EventDef{{ID: 0, Name: "end"}}
	h.Runs = []trace.RunInfo{{ID: 0, Procs: 4}}
	cur := make([]int32, 4)
	var tm int64
	var recs []trace.Record
	for _, r := range rows {
		for k, set := range r.sets {
			for _, c := range set {
				if p := int32(c - 'a'); cur[p] != int32(k+1) {
					cur[p] = int32(k + 1)
					recs = append(recs, trace.State(0, p, tm, int32(k+1)))
				}
			}
		}
		tm += r.dur
	}
	recs = append(recs, trace.Event(0, 0, tm, 0, 0))
	path := filepath.Join(t.TempDir(), "lyon.pst")
	storetest.Create(t, path, h, recs)
	return path
}

// decodeOccupancy reads the runs of `occupancy --json`'s envelope.
func decodeOccupancy(t *testing.T, out string) []occupancy.RunReport {
	t.Helper()
	var env struct {
		SchemaVersion int              `json:"schema_version"`
		Analysis      string           `json:"analysis"`
		Result        occupancy.Report `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if env.SchemaVersion != 1 || env.Analysis != "occupancy" {
		t.Fatalf("envelope of schema %d, analysis %q", env.SchemaVersion, env.Analysis)
	}
	return env.Result.Runs
}

// checkConsistent checks what must hold for every run: the table sums to
// the elapsed time, and the mean node occupancies from the table and from
// the local counters agree and sum to it too.
func checkConsistent(t *testing.T, r occupancy.RunReport) {
	t.Helper()
	var sum int64
	for _, m := range r.Table {
		sum += m.Occupancy
		var procs int32
		for _, c := range m.Counts {
			procs += c
		}
		// The processes that exist: every one unless some are absent.
		if int(procs) > r.Procs || r.AbsentNS == 0 && int(procs) != r.Procs {
			t.Errorf("run %d: macrostate %v has %d processes, want %d (%d ns absent)", r.Run, m.Counts, procs, r.Procs, r.AbsentNS)
		}
	}
	if sum != r.EndNS-r.BeginNS {
		t.Errorf("run %d: occupancies sum to %d, want %d", r.Run, sum, r.EndNS-r.BeginNS)
	}
	var g float64
	for _, m := range r.Mean {
		if math.Abs(m.GlobalNS-m.LocalNS) > 1e-6*float64(sum) {
			t.Errorf("run %d, mode %s: mean occupancy %v from the table, %v from local counters", r.Run, m.Mode, m.GlobalNS, m.LocalNS)
		}
		g += m.GlobalNS
	}
	// The time in no mode is the absent time.
	if want := float64(sum) - float64(r.AbsentNS)/float64(r.Procs); r.Mean != nil && math.Abs(g-want) > 1e-6*float64(sum) {
		t.Errorf("run %d: mean occupancies sum to %v, want %v (%d ns, %d absent over %d processes)", r.Run, g, want, sum, r.AbsentNS, r.Procs)
	}
	if r.ObservedMacrostates != len(r.Table) {
		t.Errorf("run %d: observed %d, table %d rows", r.Run, r.ObservedMacrostates, len(r.Table))
	}
}

func TestOccupancyLyon(t *testing.T) {
	pst := writeLyonStore(t)
	out := mustRun(t, "occupancy", "--mean", "--project", "A1", pst)
	golden(t, "occupancy_lyon.golden.txt", "occupancy output", out)
	// The JSON result is pinned too (docs/results.md shows it).
	js := mustRun(t, "occupancy", "--project", "A1", "--windows", "4", "--json", pst)
	goldenJSON := filepath.Join("testdata", "results", "occupancy.golden.json")
	if *update {
		os.MkdirAll(filepath.Dir(goldenJSON), 0o755)
		os.WriteFile(goldenJSON, []byte(js), 0o644)
	}
	if want, err := os.ReadFile(goldenJSON); err != nil || js != string(want) {
		t.Errorf("occupancy --json differs from %s (%v; run with -update to accept):\n%s", goldenJSON, err, js)
	}
	reps := decodeOccupancy(t, mustRun(t, "occupancy", "--mean", "--project", "A1", "--json", pst))
	if len(reps) != 1 {
		t.Fatalf("%d runs, want 1", len(reps))
	}
	r := reps[0]
	checkConsistent(t, r)
	var mean []float64
	for _, m := range r.Mean {
		mean = append(mean, m.GlobalNS)
	}
	if !slices.Equal(mean, []float64{17, 11.5, 0.5}) || r.PossibleMacrostates != "15" || r.ObservedMacrostates != 7 || r.EndNS != 29 || r.MacrostateRows != 9 || r.Microstates != 12 {
		t.Errorf("T5 %v, possible %s, observed %d, end %d, T2 rows %d, T1 rows %d; want [17 11.5 0.5], 15, 7, 29, 9, 12",
			mean, r.PossibleMacrostates, r.ObservedMacrostates, r.EndNS, r.MacrostateRows, r.Microstates)
	}
	var t4 []string
	for _, m := range r.Projection.Table {
		t4 = append(t4, strconv.Itoa(int(m.Counts[0]))+":"+strconv.FormatInt(m.Occupancy, 10))
	}
	if got := strings.Join(t4, " "); got != "4:6 3:4 2:15 1:2 0:2" {
		t.Errorf("T4 = %s, want 4:6 3:4 2:15 1:2 0:2", got)
	}
}

func TestOccupancyAmoeba(t *testing.T) {
	pst := importAmoeba(t)
	dir := t.TempDir()
	mountains, bars := filepath.Join(dir, "m.png"), filepath.Join(dir, "b.svg")
	reps := decodeOccupancy(t, mustRun(t, "occupancy", "--all", "--mean", "--json", "--plot", mountains, "--bars", bars, pst))
	if len(reps) != 5 {
		t.Fatalf("%d runs, want 5", len(reps))
	}
	for i, r := range reps {
		checkConsistent(t, r)
		// 17 processes in 13 blocks: C(29, 17) possible macrostates.
		if r.Run != int32(i) || r.Procs != 17 || len(r.Modes) != 13 || r.PossibleMacrostates != "51895935" || r.StateRecords != 3400 {
			t.Errorf("run %d: run %d, %d procs, %d modes, %s possible, %d records", i, r.Run, r.Procs, len(r.Modes), r.PossibleMacrostates, r.StateRecords)
		}
		if r.ObservedMacrostates < 100 || r.Compression <= 1 || r.MacrostateRows > r.Microstates {
			t.Errorf("run %d: %d observed, compression %v, %d T2 rows of %d T1 rows", i, r.ObservedMacrostates, r.Compression, r.MacrostateRows, r.Microstates)
		}
	}
	for _, f := range []string{mountains, bars} {
		if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	// Grouping the blocks into two modes keeps the elapsed time and the
	// per-mode sums of the finer modes.
	modes := filepath.Join(dir, "two.modes")
	os.WriteFile(modes, []byte("# the convergence check against the rest\n10 check\n* work\n"), 0o644)
	two := decodeOccupancy(t, mustRun(t, "occupancy", "--all", "--mean", "--json", "--modes", modes, "--runs", "1", pst))
	if len(two) != 1 || two[0].Run != 1 || !slices.Equal(two[0].Modes, []string{"check", "work"}) {
		t.Fatalf("grouped: %+v", two)
	}
	checkConsistent(t, two[0])
	var check float64
	for _, m := range reps[1].Mean {
		if m.Mode == "checks for convergence" {
			check = m.GlobalNS
		}
	}
	if math.Abs(two[0].Mean[0].GlobalNS-check) > 1e-3 {
		t.Errorf("grouped mode check = %v, want the block's %v", two[0].Mean[0].GlobalNS, check)
	}
	if len(two[0].Table) > len(reps[1].Table) {
		t.Errorf("grouped table has %d rows, more than the %d of the blocks", len(two[0].Table), len(reps[1].Table))
	}
}

// TestOccupancyTop checks the default answer: the --top rows of the
// largest occupancy, in order of first appearance, with the count of the
// rows left out; --all streams the whole table, which holds them.
func TestOccupancyTop(t *testing.T) {
	pst := importAmoeba(t)
	all := decodeOccupancy(t, mustRun(t, "occupancy", "--all", "--json", "--runs", "2", pst))
	if len(all) != 1 || len(all[0].Table) != 923 || all[0].TableOmitted != 0 {
		t.Fatalf("--all: %d runs, first with %d rows, %d omitted; want 1 run of 923 rows", len(all), len(all[0].Table), all[0].TableOmitted)
	}
	checkConsistent(t, all[0])
	for _, n := range []int{20, 5} {
		args := []string{"occupancy", "--json", "--runs", "2", pst}
		if n != 20 {
			args = append(args, "--top", strconv.Itoa(n))
		}
		top := decodeOccupancy(t, mustRun(t, args...))[0]
		if len(top.Table) != n || top.TableOmitted != 923-n || top.ObservedMacrostates != 923 {
			t.Fatalf("--top %d: %d rows, %d omitted, %d observed", n, len(top.Table), top.TableOmitted, top.ObservedMacrostates)
		}
		// The expected rows: the n largest occupancies of the whole table
		// (ties to the earlier row), in table order.
		idx := make([]int, len(all[0].Table))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(x, y int) int { return int(all[0].Table[y].Occupancy - all[0].Table[x].Occupancy) })
		idx = idx[:n]
		slices.Sort(idx)
		for i, j := range idx {
			if want := all[0].Table[j]; !slices.Equal(top.Table[i].Counts, want.Counts) || top.Table[i].Occupancy != want.Occupancy {
				t.Errorf("--top %d row %d = %+v, want row %d of the table %+v", n, i, top.Table[i], j, want)
			}
		}
		if top.Table[0].Occupancy <= 0 || top.MacrostateRows != all[0].MacrostateRows || top.EndNS != all[0].EndNS {
			t.Errorf("--top %d: summary %+v differs from --all's", n, top)
		}
	}
	txt := mustRun(t, "occupancy", "--runs", "2", "--top", "3", pst)
	if !strings.Contains(txt, "the 3 rows of the largest occupancy, in order of first appearance; 920 more rows (--all prints all)") {
		t.Errorf("text output does not say what it left out:\n%s", txt)
	}
	txtAll := mustRun(t, "occupancy", "--runs", "2", "--all", pst)
	if n := strings.Count(txtAll, "\n"); n < 923 {
		t.Errorf("--all printed %d lines, fewer than the 923 rows", n)
	}
}

// TestOccupancyAllStreamed checks the whole table of --all, which streams
// from the analysis to the output: the JSON is byte for byte what encoding
// the result holding every row gives (amoeba's five runs, five tables
// streamed), and --csv -o writes the same rows.
func TestOccupancyAllStreamed(t *testing.T) {
	pst := importAmoeba(t)
	out := mustRun(t, "occupancy", "--all", "--json", pst)
	s := storetest.Open(t, pst)
	params := occupancy.DefaultParams()
	params.Top = 0
	res, err := engine.Run(context.Background(), s, []engine.Request{{Analysis: occupancy.Name, Options: params}})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Envelopes[0].Result.(*occupancy.Report)
	defer rep.Close()
	var whole bytes.Buffer
	// writeJSON encodes each streamed table whole (RunReport.MarshalJSON).
	if err := writeJSON(&whole, res.Envelopes[0]); err != nil {
		t.Fatal(err)
	}
	if whole.String() != out {
		t.Fatalf("--all --json streamed differs from the whole result encoded:\n%.2000s\nwant\n%.2000s", out, whole.String())
	}
	runs := decodeOccupancy(t, out)
	if len(runs) != 5 {
		t.Fatalf("%d runs, want amoeba's 5", len(runs))
	}
	for _, r := range runs {
		if r.TableOmitted != 0 || len(r.Table) != r.ObservedMacrostates || len(r.Table) < 100 {
			t.Fatalf("run %d: %d rows of %d observed, %d omitted", r.Run, len(r.Table), r.ObservedMacrostates, r.TableOmitted)
		}
		checkConsistent(t, r)
	}
	path := filepath.Join(t.TempDir(), "table.csv")
	mustRun(t, "occupancy", "--all", "--csv", "-o", path, pst)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]string{"run"}, runs[0].Modes...), "occupancy_ns"); !slices.Equal(recs[0], want) {
		t.Fatalf("CSV header %q, want %q", recs[0], want)
	}
	recs = recs[1:]
	for _, r := range runs {
		for _, m := range r.Table {
			want := []string{strconv.Itoa(int(r.Run))}
			for _, c := range m.Counts {
				want = append(want, strconv.Itoa(int(c)))
			}
			want = append(want, strconv.FormatInt(m.Occupancy, 10))
			if len(recs) == 0 || !slices.Equal(recs[0], want) {
				t.Fatalf("run %d: CSV row %q, want %q", r.Run, recs[:min(1, len(recs))], want)
			}
			recs = recs[1:]
		}
	}
	if len(recs) != 0 {
		t.Fatalf("%d CSV rows more than the tables", len(recs))
	}
	top := mustRun(t, "occupancy", "--csv", "--top", "3", "--runs", "2", pst)
	if n := strings.Count(top, "\n"); n != 4 {
		t.Errorf("--csv --top 3 of one run wrote %d lines, want a header and 3 rows:\n%s", n, top)
	}
}

func TestOccupancyErrors(t *testing.T) {
	pst := writeLyonStore(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.modes")
	os.WriteFile(missing, []byte("A1 busy\n"), 0o644)
	bad := filepath.Join(dir, "bad.modes")
	os.WriteFile(bad, []byte("A1 busy\nA2\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--modes", missing, pst}, 1, "missing.modes: the mapping misses 2 state(s): 2 (A2), 3 (A3)"},
		{[]string{"--modes", bad, pst}, 1, "bad.modes:2: expected \"STATE MODE\""},
		{[]string{"--project", "A4", pst}, 1, `"A4" is neither a mode nor A1..A3`},
		{[]string{"--start", "Z", pst}, 1, `start mode "Z" is not one of the modes A1, A2, A3`},
		{[]string{filepath.Join(dir, "none.pst")}, 1, "none.pst"},
	} {
		_, errOut, code := run(t, append([]string{"occupancy"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("occupancy %v: exit %d, %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}

func TestOccupancyGoTrace(t *testing.T) {
	src := realTrace(t, "go/annotations.go1.26.trace")
	pst := filepath.Join(t.TempDir(), "go.pst")
	mustRun(t, "import", "-o", pst, src)
	// Goroutines appear during the run: they do not exist, and are in no
	// mode, before their first state; not-exist is no mode. No start mode
	// is needed.
	reps := decodeOccupancy(t, mustRun(t, "occupancy", "--all", "--mean", "--json", pst))
	if len(reps) != 1 {
		t.Fatalf("%d runs", len(reps))
	}
	r := reps[0]
	checkConsistent(t, r)
	if !slices.Equal(r.Modes, []string{"running", "runnable", "waiting", "syscall", "undetermined"}) || r.Procs != 10 || r.AbsentNS <= 0 || r.StartMode != "" {
		t.Errorf("modes %v, %d procs, %d ns absent, start %q", r.Modes, r.Procs, r.AbsentNS, r.StartMode)
	}
	if r.PossibleMacrostates != "3003" {
		t.Errorf("possible %s, want C(10+5, 10) = 3003: counts sum to at most 10", r.PossibleMacrostates)
	}
	for _, m := range r.Table {
		if m.Counts[0] > 4 {
			t.Errorf("%d goroutines running for %d ns with GOMAXPROCS=4", m.Counts[0], m.Occupancy)
		}
	}
	if _, errOut, code := run(t, "occupancy", "--start", "not-exist", pst); code != 1 || !strings.Contains(errOut, `start mode "not-exist" is not one of the modes`) {
		t.Errorf("not-exist as a start mode: exit %d, %q", code, errOut)
	}
	// The four goroutine states of a live goroutine, and "gone" for the
	// rest ("*" does not map not-exist: it is no mode).
	modes := filepath.Join(t.TempDir(), "go.modes")
	os.WriteFile(modes, []byte("running running\nrunnable runnable\nwaiting waiting\nsyscall syscall\n* gone\n"), 0o644)
	four := decodeOccupancy(t, mustRun(t, "occupancy", "--all", "--mean", "--json", "--modes", modes, pst))
	checkConsistent(t, four[0])
	if !slices.Equal(four[0].Modes, []string{"running", "runnable", "waiting", "syscall", "gone"}) || four[0].PossibleMacrostates != "3003" || four[0].AbsentNS != r.AbsentNS {
		t.Errorf("modes %v, possible %s, absent %d; want the four states and gone, C(15,10)=3003, %d", four[0].Modes, four[0].PossibleMacrostates, four[0].AbsentNS, r.AbsentNS)
	}
	for j, m := range four[0].Mean[:4] {
		if k := slices.Index(r.Modes, m.Mode); k < 0 || math.Abs(r.Mean[k].GlobalNS-m.GlobalNS) > 1e-6 {
			t.Errorf("mode %d %s: %v, want %v as without the mapping", j, m.Mode, m.GlobalNS, r.Mean)
		}
	}
	// --start puts goroutines in a mode before their first state: less
	// absent time, the same after.
	started := decodeOccupancy(t, mustRun(t, "occupancy", "--all", "--mean", "--json", "--start", "undetermined", pst))
	if started[0].AbsentNS >= r.AbsentNS || started[0].StartMode != "undetermined" {
		t.Errorf("--start undetermined: %d ns absent (without: %d), start %q", started[0].AbsentNS, r.AbsentNS, started[0].StartMode)
	}
}

func TestOccupancyCounters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.pst")
	states := []trace.StateDef{{ID: 0, Name: "init"}, {ID: 1, Name: "U"}, {ID: 2, Name: "S"}, {ID: 3, Name: "end"}}
	rec, err := instrument.Start(instrument.Options{Path: path, Occupancy: true, States: states})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for rank := range 3 {
		wg.Go(func() {
			p := rec.Process(rank)
			p.Block(0)
			x := 1.0
			for range 40 {
				p.Block(1)
				for j := 0; j < 300*(rank+1); j++ {
					x = x*1.0000001 + 1e-9
				}
				p.Block(2)
				for j := 0; j < 100; j++ {
					x = x*1.0000001 + 1e-9
				}
			}
			p.Block(3)
			if err := p.Done(); err != nil || x == 0 {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	reps := decodeOccupancy(t, mustRun(t, "occupancy", "--counters", "--start", "init", "--json", path))
	if len(reps) != 1 || len(reps[0].Mean) != 4 {
		t.Fatalf("%+v", reps)
	}
	checkConsistent(t, reps[0])
	for _, m := range reps[0].Mean[1:3] {
		if m.CountersNS == nil || math.Abs(*m.CountersNS-m.GlobalNS) > 2*40 {
			t.Errorf("mode %s: counters %v, table %v", m.Mode, m.CountersNS, m.GlobalNS)
		}
	}
	if _, errOut, code := run(t, "occupancy", "--counters", writeLyonStore(t)); code != 1 || !strings.Contains(errOut, "no occupancy counters") {
		t.Errorf("no counters: exit %d, %q", code, errOut)
	}
}

func TestOccupancyRates(t *testing.T) {
	pst := writeLyonStore(t)
	dir := t.TempDir()
	rates := filepath.Join(dir, "r.txt")
	// r(macrostate) = A1 count: the work is the A1 processor-time, 68 ns.
	os.WriteFile(rates, []byte("# r = A1\n4,0,0 4\n3,1,0 3\n3,0,1 3\n2,2,0 2\n1,3,0 1\n* 0\n"), 0o644)
	reps := decodeOccupancy(t, mustRun(t, "occupancy", "--json", "--rates", rates, pst))
	if w := reps[0].Work; w == nil || math.Abs(*w-68e-9) > 1e-20 || reps[0].WorkOf != "table" {
		t.Errorf("work %v of %q, want 68e-9 of the table", w, reps[0].WorkOf)
	}
	if out := mustRun(t, "occupancy", "--rates", rates, pst); !strings.Contains(out, "work Σ occupancy (s) × rate over the occupancy table: 6.8e-08") {
		t.Errorf("text output without the work line:\n%s", out)
	}
	// r_1 of the projection on A1 (T4).
	r1 := filepath.Join(dir, "r1.txt")
	os.WriteFile(r1, []byte("4 1\n3 1\n2 1\n1 1\n0 0\n"), 0o644)
	reps = decodeOccupancy(t, mustRun(t, "occupancy", "--json", "--project", "A1", "--rates", r1, pst))
	if w := reps[0].Work; w == nil || math.Abs(*w-27e-9) > 1e-20 || reps[0].WorkOf != "projection" {
		t.Errorf("work on the projection %v (%q), want 27e-9", w, reps[0].WorkOf)
	}
	for content, want := range map[string]string{
		"4,0,0 4\n": "no rate for macrostate(s) (3,1,0)",
		"4,0 4\n":   "macrostates of 2 counts, expected 3",
		"4,0,0 x\n": "r.txt:1: rate \"x\": expected a finite number",
	} {
		os.WriteFile(rates, []byte(content), 0o644)
		_, errOut, code := run(t, "occupancy", "--rates", rates, pst)
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("rates %q: exit %d, %s; want %q", content, code, errOut, want)
		}
	}
}

// fakeWorkload writes a script that imports a Gomez text trace of N
// processes whose state 1 lasts 100·G/N + 20 µs and state 2 3·N·G + 7 µs,
// then all end in state 3: exact mean node occupancies.
func fakeWorkload(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "fake.sh")
	body := "#!/bin/sh\nawk -v n=$1 -v g=$2 'BEGIN{a=100*g/n+20; b=3*n*g+7; for(p=0;p<n;p++) print 0, 1, p; for(p=0;p<n;p++) print a, 2, p; for(p=0;p<n;p++) print a+b, 3, p}' > $3.txt\nexec " + bin + " import -o $3 $3.txt\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	modes := filepath.Join(dir, "fake.modes")
	os.WriteFile(modes, []byte("1 A\n2 B\n3 B\n"), 0o644)
	return script
}

func TestSweepFitPredict(t *testing.T) {
	needtool.Path(t, "gawk", "awk")
	script := fakeWorkload(t)
	modes := filepath.Join(filepath.Dir(script), "fake.modes")
	dir := t.TempDir()
	csv := filepath.Join(dir, "fake.csv")
	out := mustRun(t, "sweep", "--quiet", "--global", "--modes", modes, "--param", "n=1,2,4,5", "--param", "g=10:30:10", "-o", csv,
		"--", script, "{n}", "{g}", "{out}")
	golden(t, "occupancy_sweep.golden.txt", "output", out)
	sw, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "occupancy_sweep.golden.csv", "output", string(sw))
	// Replicates of a deterministic workload: the same table.
	again := mustRun(t, "sweep", "--quiet", "--global", "--repeat", "2", "--modes", modes, "--param", "n=1,2,4,5", "--param", "g=10:30:10",
		"--", script, "{n}", "{g}", "{out}")
	if again != out {
		t.Errorf("--repeat 2 gave\n%s\nwant\n%s", again, out)
	}
	// The means are exact: A = 1e-4 g/n + 2e-5 s, B = 3e-6 n g + 7e-6 s.
	out = mustRun(t, "fit", "-o", filepath.Join(dir, "fake.json"), csv)
	golden(t, "occupancy_fit.golden.txt", "output", out)
	var fits []struct {
		Equations []struct {
			Terms []struct {
				Term string  `json:"term"`
				Coef float64 `json:"coef"`
			} `json:"terms"`
		} `json:"equations"`
		Acc95 float64 `json:"acc95"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "fit", "--json", csv)), &fits); err != nil {
		t.Fatal(err)
	}
	want := []map[string]float64{{"g/n": 1e-4, "1": 2e-5}, {"n*g": 3e-6, "1": 7e-6}}
	for j, eq := range fits[0].Equations {
		if len(eq.Terms) != len(want[j]) {
			t.Errorf("mode %d: terms %+v, want %v", j, eq.Terms, want[j])
		}
		for _, term := range eq.Terms {
			if w, ok := want[j][term.Term]; !ok || math.Abs(term.Coef-w) > 1e-9*w {
				t.Errorf("mode %d: %s × %g, want %v", j, term.Term, term.Coef, want[j])
			}
		}
	}
	if fits[0].Acc95 > 1e-9 {
		t.Errorf("±%g on exact data", fits[0].Acc95)
	}
	// What if g doubles, at n = 8 (outside the sweep)?
	out = mustRun(t, "predict", filepath.Join(dir, "fake.json"), "--at", "n=8,g=20", "--at", "g=40,n=8")
	golden(t, "occupancy_predict.golden.txt", "output", out)
	var pred struct {
		Predictions []struct {
			Means []float64 `json:"means_s"`
			Total float64   `json:"total_s"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "predict", filepath.Join(dir, "fake.json"), "--json", "--at", "n=8,g=20")), &pred); err != nil {
		t.Fatal(err)
	}
	// A = 1e-4·20/8 + 2e-5, B = 3e-6·160 + 7e-6.
	if p := pred.Predictions; len(p) != 1 || math.Abs(p[0].Means[0]-2.7e-4) > 1e-12 || math.Abs(p[0].Means[1]-4.87e-4) > 1e-12 || math.Abs(p[0].Total-7.57e-4) > 1e-12 {
		t.Errorf("predict --json: %+v", p)
	}
	out = mustRun(t, "predict", filepath.Join(dir, "fake.json"), "--check", csv)
	if !strings.Contains(out, "12 trials: T within ±0.0% of the measured elapsed time at 95% (largest error ±0.0%)") {
		t.Errorf("predict --check:\n%s", out)
	}
	// Fixed terms: B with Lyon-style terms, one of them collinear.
	out = mustRun(t, "fit", "--terms", "B=n*g+1", "--terms", "A=g/n+1+g/n", csv)
	if !strings.Contains(out, "3e-06 n*g + 7e-06") || !strings.Contains(out, "A: terms collinear with the selected ones, left out: g/n") {
		t.Errorf("fit --terms:\n%s", out)
	}
	// Bad input.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--max-terms", "12", csv}, "12 trials for up to 12 terms per equation: fewer trials than terms"},
		{[]string{"fit", "--terms", "B=n*x", csv}, `"x" is not a parameter`},
		{[]string{"fit", "--max-order", "4", csv}, "expected 1 to 3"},
		{[]string{"predict", filepath.Join(dir, "fake.json"), "--at", "n=8"}, "no value for g"},
		{[]string{"predict", filepath.Join(dir, "fake.json"), "--at", "n=8,g=1,p=2"}, `"p" is not a parameter`},
		{[]string{"predict", filepath.Join(dir, "fake.json"), "--at", "n=0,g=1"}, "undefined at n=0,g=1"},
		{[]string{"predict", filepath.Join(dir, "fake.json")}, "give --at"},
		{[]string{"predict", csv, "--at", "n=1,g=1"}, "expected a fit file"},
		{[]string{"fit", script}, "fake.sh:2: parameter name"},
		{[]string{"sweep", "--param", "n=1", "--", script, "{n}", "1", "x.pst"}, "must write its trace to {out}"},
		{[]string{"sweep", "--param", "n=1", "--", "false", "{out}"}, "trial 1 of 1 (n=1): false: exit status 1"},
		{[]string{"sweep", "--param", "n=1", "--", "true", "{out}"}, "the command wrote no readable trace"},
		{[]string{"sweep", "--param", "n=1", "--", script, "{n}", "1", "{out}"}, "no occupancy counters"},
		{[]string{"sweep", "--param", "n=x", "--", "true", "{out}"}, "not a finite number"},
		{[]string{"sweep", "--repeat", "0", "--param", "n=1", "--", "true", "{out}"}, "--repeat 0: expected at least 1"},
		{[]string{"sweep", "--param", "n=1", "--param", "n=2", "--", "true", "{out}"}, "--param n given twice"},
		{[]string{"sweep", "--param", "n=1", "true", "{out}"}, "give the command after --"},
	} {
		_, errOut, code := run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("parscope %s: exit %d, %s; want %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	// A failed sweep leaves an existing table alone.
	run(t, "sweep", "--param", "n=1,2", "-o", csv, "--", "false", "{out}")
	if after, _ := os.ReadFile(csv); string(after) != string(sw) {
		t.Error("a failed sweep changed the table")
	}
}

// TestSweepLyonWorkload sweeps the Ring workload of examples/lyon (tiny
// costs) through its occupancy counters. Its times depend on the machine:
// only what must hold is checked.
func TestSweepLyonWorkload(t *testing.T) {
	lyon := filepath.Join(t.TempDir(), "lyon")
	if out, err := exec.Command("go", "build", "-o", lyon, "../../examples/lyon").CombinedOutput(); err != nil {
		t.Fatalf("building examples/lyon: %v\n%s", err, out)
	}
	var sw struct {
		Modes  []string `json:"modes"`
		Trials []struct {
			Params  map[string]float64 `json:"params"`
			Means   map[string]float64 `json:"means_s"`
			Elapsed float64            `json:"elapsed_s"`
		} `json:"trials"`
	}
	out := mustRun(t, "sweep", "--quiet", "--json", "--param", "n=2,3", "--param", "p=1,2", "--",
		lyon, "-bench", "ring", "-steps", "2", "-n", "{n}", "-p", "{p}", "-g", "5", "-unit", "1us", "-send", "2us", "-service", "1us", "-overhead", "5us", "-o", "{out}")
	if err := json.Unmarshal([]byte(out), &sw); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sw.Modes, []string{"I", "S", "R", "U"}) || len(sw.Trials) != 4 {
		t.Fatalf("modes %v, %d trials", sw.Modes, len(sw.Trials))
	}
	for _, tr := range sw.Trials {
		n, p := tr.Params["n"], tr.Params["p"]
		var sum float64
		for _, m := range sw.Modes {
			sum += tr.Means[m]
		}
		// Each node: 2 steps of n−1 messages of p packets each way, 2·n·p·5
		// work units; a sleep never ends early.
		msgs := 2 * (n - 1)
		if tr.Means["U"] < 2*n*p*5*1e-6 || tr.Means["S"] < msgs*(5+2*p)*1e-6 || tr.Means["I"] < msgs*(5+p)*1e-6 {
			t.Errorf("n=%g p=%g: means %v below the costs spent", n, p, tr.Means)
		}
		if sum > tr.Elapsed*(1+1e-9) || sum < 0.5*tr.Elapsed {
			t.Errorf("n=%g p=%g: modes sum to %g s, elapsed %g s", n, p, sum, tr.Elapsed)
		}
	}
}

// TestFitLyonTableau prints the tableau of the sweeps of examples/lyon
// recorded on machine A (docs/occupancy.md) and Lyon's "what if grain g
// changes" for Ring.
func TestFitLyonTableau(t *testing.T) {
	data := "../../analysis/occupancy/testdata/lyon"
	fit := filepath.Join(t.TempDir(), "lyon.json")
	out := mustRun(t, "fit", "--max-order", "3", "-o", fit, filepath.Join(data, "random.csv"), filepath.Join(data, "mesh.csv"), filepath.Join(data, "ring.csv"))
	golden(t, "occupancy_fit_lyon.golden.txt", "output", out)
	for _, want := range []string{"±32.8% of measured elapsed time", "±37.3% of measured elapsed time", "±21.1% of measured elapsed time", "all: 840 measurements : 12 equations = 70:1"} {
		if !strings.Contains(out, want) {
			t.Errorf("tableau without %q", want)
		}
	}
	out = mustRun(t, "predict", fit, "--fit", "ring", "--at", "n=16,p=16,g=100", "--at", "n=16,p=16,g=50", "--at", "n=16,p=16,g=25")
	golden(t, "occupancy_predict_lyon.golden.txt", "output", out)
	out = mustRun(t, "predict", fit, "--fit", "ring", "--check", filepath.Join(data, "ring_new.csv"))
	if !strings.Contains(out, "48 trials: T within ±33.6% of the measured elapsed time at 95% (largest error ±41.8%)") {
		t.Errorf("predict --check ring_new.csv:\n%s", out)
	}
	if _, errOut, code := run(t, "predict", fit, "--at", "n=1"); code == 0 || !strings.Contains(errOut, `--fit "": `) {
		t.Errorf("predict without --fit on a file of 3 fits: exit %d, %s", code, errOut)
	}
}

// TestOccupancyPlots checks that --plot and --bars draw the result's
// series and histograms, and that --plot needs the series.
func TestOccupancyPlots(t *testing.T) {
	pst := importAmoeba(t)
	dir := t.TempDir()
	mountains, bars := filepath.Join(dir, "m.svg"), filepath.Join(dir, "b.png")
	mustRun(t, "occupancy", "--runs", "3", "--plot", mountains, "--bars", bars, pst)
	for _, p := range []string{mountains, bars} {
		if fi, err := os.Stat(p); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, errOut, code := run(t, "occupancy", "--windows", "0", "--plot", filepath.Join(dir, "m2.svg"), pst); code != 2 || !strings.Contains(errOut, "--windows") {
		t.Errorf("--plot without windows: exit %d, %q", code, errOut)
	}
}

// TestOccupancyRunBeginsAtFirstRecord: a DUMPI clock does not start at 0
// (the sample's first record is at 737.669 ms). Without a start mode no
// process exists before the run's first record, so the run, its shares
// and its series begin there, not at 0.
func TestOccupancyRunBeginsAtFirstRecord(t *testing.T) {
	dumpi := realTrace(t, "dumpi/testtrace.meta")
	runs := decodeOccupancy(t, mustRun(t, "occupancy", "--json", dumpi))
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	r := runs[0]
	// Each rank is absent before its first record and after its last:
	// 7.938 ms over the 4 ranks of the 5.557 ms run, not the 2.96 s it
	// was when the run began at 0.
	if r.BeginNS != 737_669_000 || r.EndNS != 743_226_000 || r.AbsentNS != 7_938_000 {
		t.Errorf("run from %d to %d ns, absent %d ns; want 737669000, 743226000, 7938000", r.BeginNS, r.EndNS, r.AbsentNS)
	}
	if w := r.ProcessesPerWindow; len(w) != 256 || r.WindowNS != float64(743_226_000-737_669_000)/256 || slices.Max(w[0]) == 0 {
		t.Errorf("series of %d windows of %g ns, the first %v: want 256 windows over the run, a process in the first", len(w), r.WindowNS, w[0])
	}
	// With a start mode processes are in it from time 0: the run begins at 0.
	start := decodeOccupancy(t, mustRun(t, "occupancy", "--json", "--start", "outside any region", dumpi))
	if start[0].BeginNS != 0 {
		t.Errorf("with --start the run begins at %d ns, want 0", start[0].BeginNS)
	}
}

// TestMountainsTop: the processes axis of the stacked plot ends at the
// most processes that exist at once, 8 ranks of a 20-process trace with
// --procs 0-7, not at the run's 20 processes.
func TestMountainsTop(t *testing.T) {
	r := &occupancy.RunReport{Procs: 20, ProcessesPerWindow: [][]float64{{3, 5}, {7.5, 0.5}, {2.5, 0}}}
	if got := mountainsTop(r); got != 8 {
		t.Errorf("top %v, want 8", got)
	}
	if got := mountainsTop(&occupancy.RunReport{Procs: 4}); got != 1 {
		t.Errorf("no windows: top %v, want 1", got)
	}
}
