package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadTwoClusters(t *testing.T) {
	s, err := ReadFile("../testdata/plan/two-clusters.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := twoClusters()
	for ci := range want.Clusters {
		for i := range want.Clusters[ci].Nodes {
			want.Clusters[ci].Nodes[i].Name = []string{"l", "r"}[ci] + string(rune('1'+i))
			want.Clusters[ci].Nodes[i].Source = "task_time"
		}
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("read\n%+v\nwant\n%+v", s, want)
	}
}

// TestReadGrid checks units, count, batch and a probe node, and the plan
// of the grid example by hand.
func TestReadGrid(t *testing.T) {
	s, err := ReadFile("../testdata/plan/grid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// 2MB = 2e6 B, 200kB = 2e5 B, 6MB = 6e6 B; 1Gbit/s = 1.25e8 B/s,
	// 100Mbit/s = 1.25e7 B/s, 8Mbit/s = 1e6 B/s.
	if s.Task != (Task{Size: 2e6, Result: 2e5, Batch: 4, InterTask: 6e6, Oper: 4e10}) {
		t.Errorf("task %+v", s.Task)
	}
	if s.Clusters[0].LAN != 1.25e8 || s.Clusters[1].InetIn != 1.25e7 || s.Clusters[2].InetOut != 1e6 || s.Clusters[2].LAN != 1.25e7 {
		t.Errorf("throughputs %+v", s.Clusters)
	}
	if len(s.Clusters[0].Nodes) != 6 || s.Clusters[0].Nodes[3].Name != "fast/4" || s.Clusters[0].Nodes[4].TaskTime != 9 {
		t.Errorf("home nodes %+v", s.Clusters[0].Nodes)
	}
	// gpu, eq. 4.7: 120·0.5/3·0.15 = 3, 120·0.3/2·0.1 = 1.8,
	// 120·0.2/4·0.25 = 1.5; Σ = 6.3; ·100/120 = 5.25 s.
	gpu := s.Clusters[1].Nodes[8]
	if gpu.Name != "gpu" || gpu.Source != "probe" || !near(gpu.TaskTime, 5.25) {
		t.Errorf("gpu %+v, want a 5.25 s probe prediction", gpu)
	}
	p, err := Choose(s, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	// S_Comm = 2e6 + 2e5 = 2.2e6 B; S_ResultInter = 4·2e5 = 8e5 B.
	// home: LAN 1.25e8/2.2e6 = 56.82; CPerf 4·0.5 + 2/9 = 2.2222 → Perf_Ste 2.2222
	// campus: inet in 4·1.25e7/6e6 = 8.333, out 4·1.25e7/8e5 = 62.5;
	//   CPerf 8/1.5 + 1/5.25 = 5.3333 + 0.1905 = 5.5238 → Perf_Ste 5.5238
	// partner: inet in 4·1e6/6e6 = 0.6667 (out 4·1e6/8e5 = 5, LAN 5.68);
	//   CPerf 16 → Perf_Ste 0.6667, efficiency 0.0417; at 0.9 the limit is
	//   0.6667/0.9 = 0.741 < 1 (one node) → slashed.
	// all: 2.2222 + 5.5238 + 0.6667 = 8.4127 of CPerf 23.746 (eff 0.3543)
	// chosen: 2.2222 + 5.5238 = 7.7460, efficiency 1.
	home, campus := 2+2.0/9, 8/1.5+1/5.25
	wantNear(t, "home", p.Chosen.Clusters[0].PerfSte, home)
	wantNear(t, "campus", p.Chosen.Clusters[1].PerfSte, campus)
	wantNear(t, "partner inet in", p.All.Clusters[2].Bounds.InetIn, 4e6/6e6)
	wantNear(t, "partner all", p.All.Clusters[2].PerfSte, 4e6/6e6)
	wantNear(t, "all", p.All.PerfSte, home+campus+4e6/6e6)
	wantNear(t, "all efficiency", p.All.Efficiency, (home+campus+4e6/6e6)/(home+campus+16))
	wantNear(t, "chosen", p.Chosen.PerfSte, home+campus)
	if p.Chosen.Clusters[2].Used != 0 || p.Chosen.Nodes != 15 {
		t.Errorf("partner uses %d nodes, %d chosen in all", p.Chosen.Clusters[2].Used, p.Chosen.Nodes)
	}
}

func TestReadErrors(t *testing.T) {
	const ok = `task: {size: 8KiB, result: 1KiB}
clusters:
  - name: a
    master: true
    nodes:
      - {name: n, task_time: 1s}
`
	cases := []struct{ yaml, want string }{
		{"", "f.yaml:1: empty; expected a mapping"},
		{"task: [1\n", "f.yaml:1: YAML syntax"},
		{"- 1\n", "f.yaml:1:1: expected a mapping with fields task, clusters"},
		{"task: {size: 1}\nclusters: []\n", "f.yaml:1:7: task: missing field result"},
		{"task: {size: 1, result: 1}\n", "f.yaml:1:1: missing field clusters"},
		{"task: {size: 1, result: 1}\nclusters: []\n", "f.yaml:2:11: clusters: expected a non-empty list"},
		{"task: {size: 1, result: 1}\nclusterz: []\n", "f.yaml:2:1: clusterz: unknown field; expected one of task, clusters"},
		{"task: {size: 8 furlongs, result: 1}\n", `f.yaml:1:14: task.size: expected a size (8KiB, 1MB, 4096), got "8 furlongs"`},
		{"task: {size: 0, result: 1}\n", "task.size: expected a size"},
		{"task: {size: 1, result: -1}\n", "task.result: expected a size"},
		{"task: {size: 1, result: 1, batch: 0}\n", "task.batch: expected a positive integer"},
		{strings.Replace(ok, "task_time: 1s", "task_time: soon", 1), `f.yaml:6:30: clusters[0].nodes[0].task_time: expected a positive duration (250ms, 1.5s, or a number of seconds), got "soon"`},
		{strings.Replace(ok, "task_time: 1s", "task_time: -2", 1), "clusters[0].nodes[0].task_time: expected a positive duration"},
		{strings.Replace(ok, "task_time: 1s", "time: 1s", 1), "f.yaml:6:19: clusters[0].nodes[0].time: unknown field; expected one of name, task_time, probe, count"},
		{strings.Replace(ok, ", task_time: 1s", "", 1), "f.yaml:6:9: clusters[0].nodes[0]: missing field task_time (seconds per task, e.g. 250ms) or probe"},
		{strings.Replace(ok, "    master: true\n", "", 1), "f.yaml:3:5: clusters[0]: missing field inet_in"},
		{strings.Replace(ok, "    master: true\n", "    master: true\n    inet_in: 1MB/s\n", 1), "f.yaml:5:14: clusters[0].inet_in: the master's cluster has no internet link"},
		{strings.Replace(ok, "    master: true\n", "    master: yes please\n", 1), `clusters[0].master: expected true or false, got "yes please"`},
		{strings.Replace(ok, "    master: true\n", "    master: true\n    lan: 1MB\n", 1), `f.yaml:5:10: clusters[0].lan: expected a throughput (80KiB/s, 100Mbit/s, 1Gbps, or bytes per second), got "1MB"`},
		{ok + "  - name: a\n    master: true\n    nodes: [{name: m, task_time: 1}]\n", `f.yaml:7:5: clusters[1].name: cluster "a" already defined as clusters[0]`},
		{ok + "  - name: b\n    master: true\n    nodes: [{name: m, task_time: 1}]\n", `clusters[1].master: cluster "a" is the master's cluster already`},
		{strings.Replace(ok, "      - {name: n, task_time: 1s}\n", "      - {name: n, task_time: 1s, count: 2}\n      - {name: n/2, task_time: 1s}\n", 1), `f.yaml:7:9: clusters[0].nodes[1].name: node "n/2" appears twice in cluster "a"`},
		{strings.Replace(ok, "task_time: 1s", "task_time: 1s, count: 0", 1), "clusters[0].nodes[0].count: expected an integer from 1 to 100000"},
		{strings.Replace(ok, "task_time: 1s", "task_time: 1s, probe: {}", 1), "clusters[0].nodes[0].probe: expected either task_time or probe"},
		{strings.Replace(ok, "task_time: 1s", "probe: {et_ref: 1s, phases: []}", 1), "clusters[0].nodes[0].probe: missing field et_uninst_ref"},
		{strings.Replace(ok, "task_time: 1s", "probe: {et_ref: 1s, et_uninst_ref: 1s, phases: [{weight: 2, t_phase_ref: 1, t_probed: 1}]}", 1), "clusters[0].nodes[0].probe.phases[0].weight: expected a weight in (0, 1]"},
		{strings.Replace(ok, "task_time: 1s", "probe: {et_ref: 1s, et_uninst_ref: 1s, phases: [{weight: 1, t_probed: 1}]}", 1), "clusters[0].nodes[0].probe.phases[0]: missing field t_phase_ref"},
		{strings.Replace(ok, "name: a", "name: ''", 1), "clusters[0].name: expected a non-empty cluster name"},
		{strings.Replace(ok, "name: a", "name: [x]", 1), "clusters[0].name: expected a cluster name"},
		{"task: {size: 1, result: 1, size: 2}\n", "f.yaml:1:28: task.size: given twice"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.yaml), "f.yaml")
		if err == nil {
			t.Errorf("%q: accepted, want %q", c.yaml, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.yaml, err, c.want)
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.File != "f.yaml" {
			t.Errorf("%q: error %T does not locate the file", c.yaml, err)
		}
	}
	if _, err := Read(strings.NewReader(ok), "f.yaml"); err != nil {
		t.Fatalf("the base case is rejected: %v", err)
	}
}

// TestReadProbe reads task times from probes: inline numbers of eq. 4.7
// (through probe.ETPredicted) and a `parscope probe run --json` file.
func TestReadProbe(t *testing.T) {
	dir := t.TempDir()
	// docs/paper-oracles.md §4: ET_Ref = 120, ET_uninstRef = 100 (noise 1.2):
	//   120·0.5/3·1.5 = 30; 120·0.3/2·1.0 = 18; 120·0.2/4·2.5 = 15;
	//   Σ = 63; 63/1.2 = 52.5 s.
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"predicted_s": 12.5, "covered": 0.8, "phases": []}`), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"predicted_s": 0}`), 0o644)
	const sys = `task: {size: 1, result: 1}
clusters:
  - name: c
    master: true
    nodes:
      - name: a
        probe:
          et_ref: 120
          et_uninst_ref: 100s
          phases:
            - {weight: 0.5, t_phase_ref: 3s, t_probed: 1.5s}
            - {weight: 0.3, t_phase_ref: 2, t_probed: 1}
            - {weight: 0.2, t_phase_ref: 4s, t_probed: 2500ms}
      - {name: b, probe: b.json}
`
	path := filepath.Join(dir, "sys.yaml")
	os.WriteFile(path, []byte(sys), 0o644)
	s, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Clusters[0].Nodes[0], s.Clusters[0].Nodes[1]
	if !near(a.TaskTime, 52.5) || a.Source != "probe" {
		t.Errorf("a: %+v, want 52.5 s from the probe's phases", a)
	}
	if b.TaskTime != 12.5 || b.Source != "probe b.json (covers 80%)" {
		t.Errorf("b: %+v, want 12.5 s from b.json", b)
	}
	for _, c := range []struct{ file, want string }{
		{"bad.json", "sys.yaml:14:26: clusters[0].nodes[1].probe: " + filepath.Join(dir, "bad.json") + ": predicted_s 0 is not a positive time"},
		{"none.json", "sys.yaml:14:26: clusters[0].nodes[1].probe: open " + filepath.Join(dir, "none.json")},
		{"sys.yaml", "clusters[0].nodes[1].probe: " + path + ": invalid character"},
	} {
		os.WriteFile(path, []byte(strings.Replace(sys, "b.json", c.file, 1)), 0o644)
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("probe %s: %v, want %s", c.file, err, c.want)
		}
	}
}

func TestParseQuantity(t *testing.T) {
	for _, c := range []struct {
		s    string
		rate bool
		want float64
	}{
		{"4096", false, 4096}, {"8KiB", false, 8192}, {"1.5 MB", false, 1.5e6}, {"2GiB", false, 2 << 30},
		{"64kbit", false, 8000}, {"10B", false, 10}, {"1e3", false, 1000},
		{"80KiB/s", true, 81920}, {"100Mbit/s", true, 12.5e6}, {"1Gbps", true, 1.25e8}, {"56kbps", true, 7000},
		{"125000", true, 125000}, {"1 MB/s", true, 1e6}, {"0", true, 0},
	} {
		got, err := ParseQuantity(c.s, c.rate)
		if err != nil || !near(got, c.want) {
			t.Errorf("ParseQuantity(%q, %v) = %v, %v; want %v", c.s, c.rate, got, err, c.want)
		}
	}
	for _, c := range []struct {
		s    string
		rate bool
	}{{"", false}, {"KiB", false}, {"1 parsec", false}, {"1MB", true}, {"-1", false}, {"0x10", false}, {"Inf", false}, {"1e400", false}, {"NaN", true}, {"1e400KiB/s", true}} {
		if v, err := ParseQuantity(c.s, c.rate); err == nil {
			t.Errorf("ParseQuantity(%q, %v) = %v, want an error", c.s, c.rate, v)
		}
	}
}

// FuzzRead: any input either reads into a valid system that Choose can
// plan, or fails with a located error; never a panic.
func FuzzRead(f *testing.F) {
	for _, p := range []string{"../testdata/plan/two-clusters.yaml", "../testdata/plan/grid.yaml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("task: &t {size: 1, result: 1}\nclusters: [{name: a, master: true, nodes: [{name: x, task_time: 1}]}]\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(strings.NewReader(string(data)), "fuzz.yaml")
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("unlocated error %T: %v", err, err)
			}
			return
		}
		if _, err := Choose(s, 0.9); err != nil {
			t.Fatalf("read a system Choose rejects: %v", err)
		}
	})
}
