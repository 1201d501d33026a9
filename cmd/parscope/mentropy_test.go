package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// Table 3 of Özmen (2002) through the CLI: variant W, Table 2, p = A .2 B .4 C .4.
func TestMentropyStreamTable3(t *testing.T) {
	out := mustRun(t, "mentropy", "--variant", "W", "--window-events", "4", "--alpha", "0.1,0.3,0.6,0.9",
		"--beta", "0.45,0.35,0.2,0.05", "--K", "100", "--prob", "A=0.2,B=0.4,C=0.4", "--csv",
		"--stream", "A B B B B "+strings.Repeat("C ", 16)+"A")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	paper := []string{"", "2.995732", "0.094824", "0.275846", "0.195044", "2.328448", "0.716873", "1.986090", "0.390087"}
	for i := 9; i <= 20; i++ {
		paper = append(paper, "0.000000")
	}
	paper = append(paper, "2.328448")
	if len(rows) != 23 || strings.Join(rows[0], ",") != "run,proc,index,t_ns,event,window,i,case,p_w,h" {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	for i := 1; i < len(paper); i++ {
		var h float64
		fmt.Sscan(rows[i+1][9], &h)
		if got := fmt.Sprintf("%.6f", h); got != paper[i] {
			t.Errorf("row %d: %s, want %s", i, got, paper[i])
		}
	}
	if rows[5][5] != "B B B A" || rows[1][7] != "first" {
		t.Errorf("window %q case %q", rows[5][5], rows[1][7])
	}
}

// Table 4's slave column with the default table (W = 4).
func TestMentropyStreamTable4(t *testing.T) {
	stream := "prog_st recv1 " + strings.Repeat("do_calc ", 100) + "send_res prog_sp"
	out := mustRun(t, "mentropy", "--K", "100", "--json", "--stream", stream)
	got := mentropyOf(t, out).Procs
	want := map[int]string{0: "6.931472", 2: "6.931472", 3: "0.499345", 4: "0.024992", 5: "0.000743", 80: "0.000004", 102: "0.921034", 103: "6.931472"}
	for i, w := range want {
		if g := fmt.Sprintf("%.6f", got[0].Steps[i].H); g != w {
			t.Errorf("event %d: %s, want %s", i, g, w)
		}
		if got[0].HMax[i] != got[0].Steps[i].H || got[0].HMean[i] != got[0].Steps[i].H || got[0].Index[i] != i {
			t.Errorf("event %d: point %d %v %v, step %v", i, got[0].Index[i], got[0].HMax[i], got[0].HMean[i], got[0].Steps[i].H)
		}
	}
	// Summed into 4 points: 26 events each, the largest and mean H.
	pts := mentropyOf(t, mustRun(t, "mentropy", "--K", "100", "--json", "--max-points", "4", "--stream", stream)).Procs[0]
	if fmt.Sprint(pts.Index) != "[0 26 52 78]" || pts.Steps != nil || fmt.Sprintf("%.6f", pts.HMax[3]) != "6.931472" || fmt.Sprintf("%.6f", pts.HMax[1]) != "0.000004" {
		t.Errorf("4 points: index %v, h_max %v, steps %d", pts.Index, pts.HMax, len(pts.Steps))
	}
	sum := 0.0
	for _, st := range got[0].Steps[:26] {
		sum += st.H
	}
	if m := pts.HMean[0]; m != sum/26 || fmt.Sprintf("%.4f", m) != "0.8200" {
		t.Errorf("mean H of the first 26 events %v, want %v", m, sum/26)
	}
}

func TestMentropyBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--stream", "A B", "--window-events", "0"}, 2, "--alpha and --beta are needed"},
		{[]string{"--stream", "A B", "--window-events", "3"}, 2, "the default tables are Table 4's, for W = 4 and variant R"},
		{[]string{"--stream", "A B", "--variant", "W"}, 2, "--alpha and --beta are needed"},
		{[]string{"--stream", "A B", "--window-events", "0", "--alpha", "0.5", "--beta", "0.5"}, 2, "need W ≥ 1"},
		{[]string{"--stream", "A B", "--window", "0", "--alpha", "0.5", "--beta", "0.5"}, 2, "need W ≥ 1"},
		{[]string{"--stream", "A B", "--max-points", "-1"}, 2, "must not be negative"},
		{[]string{"--stream", "A B", "--prob", "A=1", "--learned"}, 2, "exclude each other"},
		{[]string{"--stream", "A B", "--of", "calls"}, 2, `unknown stream "calls"`},
		{[]string{"--stream", "A B", "--alpha", "0.5,0.5", "--beta", "0.5,0.5"}, 2, "alpha table has 2 rows, variant R with W = 4 needs 5"},
		{[]string{"--stream", "A B", "--alpha", "0.5,0.7,0.8,0.9,1", "--beta", "0.5,0.3,0.2,0.1,0.01"}, 2, "alpha[4] = 1"},
		{[]string{"--stream", "A B", "--prob", "A=0.5,B=0.6"}, 1, "probabilities do not sum to 1 (sum 1.1)"},
		{[]string{"--stream", "A B", "--prob", "A=1"}, 1, `unknown event "B": not in the probability table`},
		{[]string{"--stream", "A B", "--prob", "A=x"}, 2, "expected a number"},
		{[]string{"--stream", "A B", "--alpha", "x"}, 2, "--alpha"},
		{[]string{"--stream", "A B", "--variant", "Q"}, 2, `unknown variant "Q"`},
		{[]string{}, 2, "either a TRACE or --stream"},
		{[]string{"--stream", "A", "--K", "0"}, 2, "--K 0: need a positive constant"},
		{[]string{"--stream", "A", "--plot", "x.gif"}, 2, "must end in .png or .svg"},
	} {
		_, stderr, code := run(t, append([]string{"mentropy"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "NaN") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	out, stderr, code := run(t, "mentropy", "--stream", "A B", "--prob", "A=1,B=3", "--normalize", "--json")
	if code != 0 || !strings.Contains(stderr, "normalised") || !strings.Contains(out, `"p_w": 0.75`) {
		t.Errorf("normalize: exit %d %q %s", code, stderr, out)
	}
}

// The master/worker workload (examples/masterworker): phases per process
// against the workload's ground truth. The master dispatches (send_i),
// computes (do_calc), collects (recv_res) and stops; each worker has one
// phase per task it received (tasks are dealt round-robin over the 4
// processes: ids ≡ w mod 4) plus the closing send_res/recv1/program_sp.
func TestMentropyMasterWorkerPhases(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example")
	}
	pst := filepath.Join(t.TempDir(), "mw.pst")
	// The phases are those of the whole event stream: no entropy filter.
	if out, err := exec.Command("go", "run", "../../examples/masterworker", "-o", pst, "-workers", "3", "-tasks", "16", "-work", "10",
		"-entropy-filter=false").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	png := filepath.Join(t.TempDir(), "mw.png")
	out := mustRun(t, "mentropy", "--K", "100", "--json", "--phase-threshold", "0.1", "--plot", png, pst)
	got := mentropyOf(t, out).Procs
	if len(got) != 4 {
		t.Fatalf("%d processes", len(got))
	}
	for _, p := range got {
		var dom []string
		for _, ph := range p.Phases {
			dom = append(dom, ph.Dominant)
		}
		want := "send_i do_calc recv_res program_sp"
		if p.Proc != 0 {
			want = strings.TrimSpace(strings.Repeat("do_calc ", 4)) + " send_res"
		}
		if g := strings.Join(dom, " "); g != want {
			t.Errorf("process %d: phases %s, want %s", p.Proc, g, want)
		}
	}
	if _, _, code := run(t, "mentropy", "--of", "states", "--csv", pst); code != 0 {
		t.Errorf("--of states: exit %d", code)
	}
}

// mentropyOf decodes the envelope `parscope mentropy --json` prints.
func mentropyOf(t *testing.T, out string) *mentropy.Result {
	t.Helper()
	var env struct {
		SchemaVersion int             `json:"schema_version"`
		Analysis      string          `json:"analysis"`
		Result        mentropy.Result `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v in %.300s", err, out)
	}
	if env.SchemaVersion != engine.SchemaVersion || env.Analysis != mentropy.Name {
		t.Fatalf("not the mentropy envelope: %.300s", out)
	}
	return &env.Result
}

// writeMasterSlaveStore writes Özmen's (2002) master/slave streams, cut
// short, as the named events of two processes (10 ns apart), with an event
// of the entropy filter's dropped counts that is not part of the stream.
func writeMasterSlaveStore(t *testing.T) string {
	t.Helper()
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}, Runs: []trace.RunInfo{{ID: 0, Procs: 2}}}
	names := map[string]int32{}
	for _, stream := range []string{"prog_st send1 send2 recv_res recv_res recv_res recv_res prog_sp", "prog_st recv1 do_calc do_calc do_calc do_calc do_calc do_calc send_res prog_sp"} {
		for _, n := range strings.Fields(stream) {
			if _, ok := names[n]; !ok {
				names[n] = int32(len(names))
				h.Events = append(h.Events, trace.EventDef{ID: names[n], Name: n})
			}
		}
	}
	h.Events = append(h.Events, trace.EventDef{ID: 99, Name: mentropy.DroppedEvent})
	var recs []trace.Record
	for p, stream := range []string{"prog_st send1 send2 recv_res recv_res recv_res recv_res prog_sp", "prog_st recv1 do_calc do_calc do_calc do_calc do_calc do_calc send_res prog_sp"} {
		for i, n := range strings.Fields(stream) {
			recs = append(recs, trace.Event(0, int32(p), int64(10*i), names[n], 0))
			if p == 1 && i == 5 {
				recs = append(recs, trace.Event(0, 1, 55, 99, 3))
			}
		}
	}
	path := filepath.Join(t.TempDir(), "masterslave.pst")
	storetest.Create(t, path, h, recs)
	return path
}

// TestMentropyGolden pins the JSON result (docs/results.md shows it) of
// the master/slave streams, every event kept, with phases; and checks that
// summing the series into points keeps their largest H.
func TestMentropyGolden(t *testing.T) {
	pst := writeMasterSlaveStore(t)
	js := mustRun(t, "mentropy", "--K", "100", "--phase-threshold", "0.1", "--min-low", "2", "--json", pst)
	golden := filepath.Join("testdata", "results", "mentropy.golden.json")
	if *update {
		os.WriteFile(golden, []byte(js), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || js != string(want) {
		t.Errorf("mentropy --json differs from %s (%v; run with -update to accept):\n%s", golden, err, js)
	}
	r := mentropyOf(t, js)
	if len(r.Procs) != 2 || r.Procs[1].Events != 10 || len(r.Procs[1].Steps) != 10 || r.Procs[1].Steps[2].Window != "recv1 prog_st * *" {
		t.Fatalf("master/slave: %+v", r.Procs)
	}
	// The slave: a peak at each change, H falling along the do_calc run
	// (Table 4: 0.499345 at the first repeat);
	// phases split where H rises after 2 low events.
	s := r.Procs[1]
	if fmt.Sprintf("%.6f", s.Steps[3].H) != "0.499345" || s.Steps[3].Case != mentropy.Alpha || s.Steps[3].I != 1 {
		t.Errorf("slave event 3: %+v", s.Steps[3])
	}
	var ph []string
	for _, p := range s.Phases {
		ph = append(ph, fmt.Sprintf("%d-%d %s", p.Start, p.End, p.Dominant))
	}
	if got := strings.Join(ph, ", "); got != "0-7 do_calc, 8-9 send_res" {
		t.Errorf("slave phases %s", got)
	}
	pts := mentropyOf(t, mustRun(t, "mentropy", "--K", "100", "--max-points", "2", "--runs", "0", "--procs", "1", "--json", pst))
	if len(pts.Procs) != 1 || fmt.Sprint(pts.Procs[0].Index) != "[0 5]" || pts.Procs[0].HMax[1] != max(s.Steps[5].H, s.Steps[8].H, s.Steps[9].H) {
		t.Errorf("2 points of process 1: %+v", pts.Procs)
	}
	text := mustRun(t, "mentropy", "--K", "100", "--max-points", "2", "--series", pst)
	if !strings.Contains(text, "run 0 process 1: 10 events, 5 event types") || !strings.Contains(text, "index  t   H max") {
		t.Errorf("--series text:\n%s", text)
	}
	// The summary: one line per process, its H over every event.
	sum := mustRun(t, "mentropy", "--K", "100", pst)
	if !regexp.MustCompile(`(?m)^0 +1 +10 +5 +\S+ +\S+ +\S+ +0$`).MatchString(sum) || strings.Contains(sum, "index") {
		t.Errorf("summary:\n%s", sum)
	}
}
