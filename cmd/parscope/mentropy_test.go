package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Table 3 of Özmen (2002) through the CLI: variant W, Table 2, p = A .2 B .4 C .4.
func TestMentropyStreamTable3(t *testing.T) {
	out := mustRun(t, "mentropy", "--variant", "W", "--window", "4", "--alpha", "0.1,0.3,0.6,0.9",
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
	var got []mentropyProc
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{0: "6.931472", 2: "6.931472", 3: "0.499345", 4: "0.024992", 5: "0.000743", 80: "0.000004", 102: "0.921034", 103: "6.931472"}
	for i, w := range want {
		if g := fmt.Sprintf("%.6f", got[0].Series[i].H); g != w {
			t.Errorf("event %d: %s, want %s", i, g, w)
		}
	}
}

func TestMentropyBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--stream", "A B", "--window", "0"}, 2, "--alpha and --beta are needed"},
		{[]string{"--stream", "A B", "--window", "0", "--alpha", "0.5", "--beta", "0.5"}, 2, "need W ≥ 1"},
		{[]string{"--stream", "A B", "--alpha", "0.5,0.5", "--beta", "0.5,0.5"}, 2, "alpha table has 2 rows, variant R with W = 4 needs 5"},
		{[]string{"--stream", "A B", "--alpha", "0.5,0.7,0.8,0.9,1", "--beta", "0.5,0.3,0.2,0.1,0.01"}, 2, "alpha[4] = 1"},
		{[]string{"--stream", "A B", "--prob", "A=0.5,B=0.6"}, 1, "probabilities do not sum to 1 (sum 1.1)"},
		{[]string{"--stream", "A B", "--prob", "A=1"}, 1, `unknown event "B": not in the probability table`},
		{[]string{"--stream", "A B", "--prob", "A=x"}, 2, "expected a number"},
		{[]string{"--stream", "A B", "--variant", "Q"}, 2, `unknown variant "Q"`},
		{[]string{}, 2, "either a TRACE.pst or --stream"},
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
	var got []mentropyProc
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
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
