package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parscope/parscope/instrument"
	"github.com/parscope/parscope/store"
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
	path := filepath.Join(t.TempDir(), "lyon.pst")
	w, err := store.Create(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := w.Header()
	h.Meta.ClockResolution = 1
	h.States = []trace.StateDef{{ID: 1, Name: "A1"}, {ID: 2, Name: "A2"}, {ID: 3, Name: "A3"}}
	h.Events = []trace.EventDef{{ID: 0, Name: "end"}}
	h.Runs = []trace.RunInfo{{ID: 0, Procs: 4}}
	cur := make([]int32, 4)
	var tm int64
	for _, r := range rows {
		for k, set := range r.sets {
			for _, c := range set {
				if p := int32(c - 'a'); cur[p] != int32(k+1) {
					cur[p] = int32(k + 1)
					if err := w.Add(trace.State(0, p, tm, int32(k+1))); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		tm += r.dur
	}
	if err := w.Add(trace.Event(0, 0, tm, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func decodeOccupancy(t *testing.T, out string) []occupancyRun {
	t.Helper()
	var reps []occupancyRun
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	return reps
}

// checkConsistent checks what must hold for every run: the table sums to
// the elapsed time, and the mean node occupancies from the table and from
// the local counters agree and sum to it too.
func checkConsistent(t *testing.T, r occupancyRun) {
	t.Helper()
	var sum int64
	for _, m := range r.Table {
		sum += m.Occupancy
		var procs int32
		for _, c := range m.Counts {
			procs += c
		}
		if int(procs) != r.Procs {
			t.Errorf("run %d: macrostate %v has %d processes, want %d", r.Run, m.Counts, procs, r.Procs)
		}
	}
	if sum != r.End-r.Begin {
		t.Errorf("run %d: occupancies sum to %d, want %d", r.Run, sum, r.End-r.Begin)
	}
	var g float64
	for _, m := range r.Mean {
		if math.Abs(m.Global-m.Local) > 1e-6*float64(sum) {
			t.Errorf("run %d, mode %s: mean occupancy %v from the table, %v from local counters", r.Run, m.Mode, m.Global, m.Local)
		}
		g += m.Global
	}
	if r.Mean != nil && math.Abs(g-float64(sum)) > 1e-6*float64(sum) {
		t.Errorf("run %d: mean occupancies sum to %v, want %d", r.Run, g, sum)
	}
	if r.Observed != len(r.Table) {
		t.Errorf("run %d: observed %d, table %d rows", r.Run, r.Observed, len(r.Table))
	}
}

func TestOccupancyLyon(t *testing.T) {
	pst := writeLyonStore(t)
	out := mustRun(t, "occupancy", "--mean", "--project", "A1", pst)
	golden := filepath.Join("testdata", "occupancy_lyon.golden.txt")
	if *update {
		os.WriteFile(golden, []byte(out), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("occupancy output differs from %s (run with -update to accept):\n%s", golden, out)
	}
	reps := decodeOccupancy(t, mustRun(t, "occupancy", "--mean", "--project", "A1", "--json", pst))
	if len(reps) != 1 {
		t.Fatalf("%d runs, want 1", len(reps))
	}
	r := reps[0]
	checkConsistent(t, r)
	var mean []float64
	for _, m := range r.Mean {
		mean = append(mean, m.Global)
	}
	if !slices.Equal(mean, []float64{17, 11.5, 0.5}) || r.Possible != "15" || r.Observed != 7 || r.End != 29 || r.MacroRows != 9 || r.Microstates != 12 {
		t.Errorf("T5 %v, possible %s, observed %d, end %d, T2 rows %d, T1 rows %d; want [17 11.5 0.5], 15, 7, 29, 9, 12",
			mean, r.Possible, r.Observed, r.End, r.MacroRows, r.Microstates)
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
	reps := decodeOccupancy(t, mustRun(t, "occupancy", "--mean", "--json", "--plot", mountains, "--bars", bars, pst))
	if len(reps) != 5 {
		t.Fatalf("%d runs, want 5", len(reps))
	}
	for i, r := range reps {
		checkConsistent(t, r)
		// 17 processes in 13 blocks: C(29, 17) possible macrostates.
		if r.Run != int32(i) || r.Procs != 17 || len(r.Modes) != 13 || r.Possible != "51895935" || r.Records != 3400 {
			t.Errorf("run %d: run %d, %d procs, %d modes, %s possible, %d records", i, r.Run, r.Procs, len(r.Modes), r.Possible, r.Records)
		}
		if r.Observed < 100 || r.Compression <= 1 || r.MacroRows > r.Microstates {
			t.Errorf("run %d: %d observed, compression %v, %d T2 rows of %d T1 rows", i, r.Observed, r.Compression, r.MacroRows, r.Microstates)
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
	two := decodeOccupancy(t, mustRun(t, "occupancy", "--mean", "--json", "--modes", modes, "--runs", "1", pst))
	if len(two) != 1 || two[0].Run != 1 || !slices.Equal(two[0].Modes, []string{"check", "work"}) {
		t.Fatalf("grouped: %+v", two)
	}
	checkConsistent(t, two[0])
	var check float64
	for _, m := range reps[1].Mean {
		if m.Mode == "checks for convergence" {
			check = m.Global
		}
	}
	if math.Abs(two[0].Mean[0].Global-check) > 1e-3 {
		t.Errorf("grouped mode check = %v, want the block's %v", two[0].Mean[0].Global, check)
	}
	if len(two[0].Table) > len(reps[1].Table) {
		t.Errorf("grouped table has %d rows, more than the %d of the blocks", len(two[0].Table), len(reps[1].Table))
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
		{[]string{"--project", "A4", pst}, 2, `"A4" is neither a mode nor A1..A3`},
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
	src := "../../../shared/data/traces/go/annotations.go1.26.trace"
	if _, err := os.Stat(src); err != nil {
		t.Skip("no Go runtime trace:", err)
	}
	pst := filepath.Join(t.TempDir(), "go.pst")
	mustRun(t, "import", "-o", pst, src)
	// Goroutines appear during the run: without a start mode they are in
	// no mode before.
	if _, errOut, code := run(t, "occupancy", pst); code != 1 || !strings.Contains(errOut, "processes in no mode") {
		t.Errorf("no start mode: exit %d, %q", code, errOut)
	}
	reps := decodeOccupancy(t, mustRun(t, "occupancy", "--mean", "--json", "--start", "not-exist", pst))
	if len(reps) != 1 {
		t.Fatalf("%d runs", len(reps))
	}
	r := reps[0]
	checkConsistent(t, r)
	if !slices.Contains(r.Modes, "running") || !slices.Contains(r.Modes, "waiting") || r.Procs != 10 {
		t.Errorf("modes %v, %d procs", r.Modes, r.Procs)
	}
	// The four goroutine states of a live goroutine, and "gone".
	modes := filepath.Join(t.TempDir(), "go.modes")
	os.WriteFile(modes, []byte("running running\nrunnable runnable\nwaiting waiting\nsyscall syscall\n* gone\n"), 0o644)
	four := decodeOccupancy(t, mustRun(t, "occupancy", "--mean", "--json", "--start", "gone", "--modes", modes, pst))
	checkConsistent(t, four[0])
	if !slices.Equal(four[0].Modes, []string{"running", "runnable", "waiting", "syscall", "gone"}) || four[0].Possible != "1001" {
		t.Errorf("modes %v, possible %s; want the four states and gone, C(14,10)=1001", four[0].Modes, four[0].Possible)
	}
	for j, m := range four[0].Mean[:4] {
		if k := slices.Index(r.Modes, m.Mode); k < 0 || math.Abs(r.Mean[k].Global-m.Global) > 1e-6 {
			t.Errorf("mode %d %s: %v, want %v as without the mapping", j, m.Mode, m.Global, r.Mean)
		}
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
		if m.Counters == nil || math.Abs(*m.Counters-m.Global) > 2*40 {
			t.Errorf("mode %s: counters %v, table %v", m.Mode, m.Counters, m.Global)
		}
	}
	if _, errOut, code := run(t, "occupancy", "--counters", writeLyonStore(t)); code != 1 || !strings.Contains(errOut, "no occupancy counters") {
		t.Errorf("no counters: exit %d, %q", code, errOut)
	}
}
