package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const planData = "../../testdata/plan"

// TestPlanGolden pins the text and JSON output of plan on the example
// systems (docs/multicluster-plan.md computes them by hand).
func TestPlanGolden(t *testing.T) {
	for _, name := range []string{"two-clusters", "three-clusters", "tradeoff", "grid"} {
		for _, form := range []struct{ ext, flag string }{{".golden.txt", ""}, {".golden.json", "--json"}} {
			args := []string{"plan", filepath.Join(planData, name+".yaml")}
			if form.flag != "" {
				args = append(args, form.flag)
			}
			got := mustRun(t, args...)
			golden := filepath.Join(planData, name+form.ext)
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("parscope %s differs from %s (run with -update to accept):\n%s", strings.Join(args[1:], " "), golden, got)
			}
		}
	}
}

// TestPlanJSON checks the numbers of the two-cluster system: all nodes
// 40 tasks/s at efficiency 40/44; chosen (r2 dropped) 40 at 1; and a
// threshold of 0 keeps every node.
func TestPlanJSON(t *testing.T) {
	type eval struct {
		PerfSte    float64 `json:"perf_ste"`
		Efficiency float64 `json:"efficiency"`
		Nodes      int     `json:"nodes"`
		Clusters   []struct {
			Name   string `json:"name"`
			Limit  string `json:"limit"`
			Bounds struct {
				InetIn *float64 `json:"inet_in"`
			} `json:"bounds"`
		} `json:"clusters"`
	}
	var rep struct {
		File, Units string
		Threshold   float64
		All, Chosen eval
		Use         [][]bool
	}
	path := filepath.Join(planData, "two-clusters.yaml")
	if err := json.Unmarshal([]byte(mustRun(t, "plan", "--json", path)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.File != path || rep.Units != "tasks/s" || rep.Threshold != 0.9 {
		t.Errorf("header %q %q %v", rep.File, rep.Units, rep.Threshold)
	}
	if rep.All.PerfSte != 40 || math.Abs(rep.All.Efficiency-40.0/44) > 1e-12 || rep.All.Nodes != 5 {
		t.Errorf("all: %+v", rep.All)
	}
	if rep.Chosen.PerfSte != 40 || rep.Chosen.Efficiency != 1 || rep.Chosen.Nodes != 4 {
		t.Errorf("chosen: %+v", rep.Chosen)
	}
	if rep.All.Clusters[0].Bounds.InetIn != nil || rep.All.Clusters[1].Bounds.InetIn == nil || *rep.All.Clusters[1].Bounds.InetIn != 10 {
		t.Errorf("inet_in terms: master %v, remote %v", rep.All.Clusters[0].Bounds.InetIn, rep.All.Clusters[1].Bounds.InetIn)
	}
	if rep.All.Clusters[1].Limit != "inet_in" || len(rep.Use) != 2 || rep.Use[1][1] {
		t.Errorf("remote limit %q, use %v", rep.All.Clusters[1].Limit, rep.Use)
	}
	if err := json.Unmarshal([]byte(mustRun(t, "plan", "--json", "--threshold", "0", path)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Chosen.Nodes != 5 {
		t.Errorf("threshold 0 chose %d nodes, want 5", rep.Chosen.Nodes)
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("task: {size: 8KiB, result: 1KiB}\nclusters:\n  - name: remote\n    inet_in: 80KiB/s\n    inet_out: fast\n    nodes: [{name: a, task_time: 1s}]\n"), 0o644)
	_, errOut, code := run(t, "plan", bad)
	if code != 1 || !strings.Contains(errOut, bad+`:5:15: clusters[0].inet_out: expected a throughput`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	os.WriteFile(bad, []byte("task: {size: 8KiB, result: 1KiB}\nclusters:\n  - name: a\n    master: true\n    nodes: [{name: a}]\n"), 0o644)
	_, errOut, code = run(t, "plan", bad)
	if code != 1 || !strings.Contains(errOut, bad+`:5:13: clusters[0].nodes[0]: missing field task_time`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := run(t, "plan", "--threshold", "1.5", filepath.Join(planData, "grid.yaml")); code != 2 || !strings.Contains(errOut, "--threshold") {
		t.Errorf("threshold 1.5: exit %d, %q", code, errOut)
	}
	if _, _, code := run(t, "plan", filepath.Join(dir, "missing.yaml")); code != 1 {
		t.Errorf("missing file: exit %d", code)
	}
}
