package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ocsJSON is the part of `ocs --json` the tests read.
type ocsJSON struct {
	Procs       int      `json:"procs"`
	Messages    int      `json:"messages"`
	RankedFrom  []string `json:"ranked_from"`
	Connections int      `json:"connections"`
	Curves      struct {
		Planes     []int    `json:"planes"`
		Strategies []string `json:"strategies"`
		Results    [][]struct {
			Strategy        string  `json:"strategy"`
			Planes          int     `json:"planes"`
			Time            float64 `json:"time"`
			Delay           float64 `json:"delay"`
			Messages        int64   `json:"messages"`
			Bytes           int64   `json:"bytes"`
			CircuitBytes    int64   `json:"circuit_bytes"`
			CircuitFraction float64 `json:"circuit_fraction"`
			Circuits        int64   `json:"circuits"`
		} `json:"results"`
		Electronic struct {
			Time, Delay float64
			Messages    int64
		} `json:"electronic"`
	} `json:"curves"`
	Problems struct {
		UnmatchedSends int64 `json:"unmatched_sends"`
		UnmatchedRecvs int64 `json:"unmatched_recvs"`
		OutsideComm    int64 `json:"outside_comm"`
		UnknownComm    int64 `json:"unknown_comm"`
	} `json:"problems"`
}

// ocsRun returns run 0 of `ocs --json`'s result.
func ocsRun(t *testing.T, args ...string) ocsJSON {
	t.Helper()
	var env struct {
		Analysis string `json:"analysis"`
		Result   struct {
			Runs []struct {
				Run int32 `json:"run"`
				ocsJSON
			} `json:"runs"`
		} `json:"result"`
	}
	out := mustRun(t, append([]string{"ocs", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if env.Analysis != "ocs" || len(env.Result.Runs) == 0 || env.Result.Runs[0].Run != 0 {
		t.Fatalf("not ocs's envelope of run 0: %.300s", out)
	}
	return env.Result.Runs[0].ocsJSON
}

// TestOCSRing: the ring example (4 processes; IF_101 sends 8 KiB per
// iteration to the next rank, LOOP_100 holds 8 allreduces decomposed
// linearly): 304 messages on 8 connections. Rank 0 is the allreduce root, so
// it talks to every other rank: 3 planes give every connection a circuit,
// after which the static strategies coincide. The annotated trace names its
// communicator by handle without members, so the allreduces are decomposed
// over every process only with --unknown-comm-as-world; without it they are
// counted and left out (the 256 ring messages remain).
func TestOCSRing(t *testing.T) {
	pst := importRing(t)
	if u := ocsRun(t, "--planes", "1", pst); u.Messages != 256 || u.Problems.UnknownComm != 32 || u.Problems.OutsideComm != 0 {
		t.Errorf("without --unknown-comm-as-world: %d messages, problems %+v", u.Messages, u.Problems)
	}
	r := ocsRun(t, "--unknown-comm-as-world", "--planes", "1-3", pst)
	if r.Procs != 4 || r.Messages != 304 || r.Connections != 8 || !slices.Equal(r.RankedFrom, []string{"program"}) ||
		!slices.Equal(r.Curves.Planes, []int{1, 2, 3}) || !slices.Equal(r.Curves.Strategies, []string{"best", "worst", "indexed", "runtime"}) {
		t.Fatalf("ocs ring: %+v", r)
	}
	if r.Problems.UnmatchedSends != 0 || r.Problems.UnmatchedRecvs != 0 || r.Curves.Electronic.Messages != 304 {
		t.Errorf("problems %+v, electronic %+v", r.Problems, r.Curves.Electronic)
	}
	res := r.Curves.Results
	for j := range r.Curves.Planes {
		b, w, ix, rt := res[0][j], res[1][j], res[2][j], res[3][j]
		if b.Strategy != "best" || rt.Strategy != "runtime" || b.Planes != j+1 {
			t.Fatalf("result order: %+v %+v", b, rt)
		}
		if b.Time > w.Time || b.Time > ix.Time || b.Time > r.Curves.Electronic.Time || b.CircuitFraction < w.CircuitFraction {
			t.Errorf("%d planes: best %+v, worst %+v, indexed %+v", j+1, b, w, ix)
		}
		if b.Messages != 304 || b.CircuitBytes > b.Bytes {
			t.Errorf("%d planes: %+v", j+1, b)
		}
	}
	// One plane: best puts the four ring connections (the largest) on it,
	// all the ring's bytes but the allreduces' 256 B.
	if b := res[0][0]; b.Circuits != 4 || b.Bytes-b.CircuitBytes != 256 {
		t.Errorf("best, 1 plane: %+v", b)
	}
	for i := 0; i < 3; i++ {
		if x := res[i][2]; x.CircuitFraction != 1 || x.Circuits != 8 || x.Time != res[0][2].Time {
			t.Errorf("%s, 3 planes: %+v", x.Strategy, x)
		}
	}
	// Ranking the ring loop alone: its four connections form one
	// permutation, so every static strategy gives best's single plane.
	s := ocsRun(t, "--unknown-comm-as-world", "--planes", "1", "--ranking", "worst,indexed", "--structure", "IF_101", pst)
	if s.Connections != 4 || !slices.Equal(s.RankedFrom, []string{"IF_101"}) ||
		s.Curves.Results[0][0].Time != res[0][0].Time || s.Curves.Results[1][0].Circuits != 4 {
		t.Errorf("--structure IF_101: %+v", s)
	}
	// Parameters reach the simulation: a faster electronic network makes
	// the electronic-only run faster.
	fast := ocsRun(t, "--unknown-comm-as-world", "--planes", "1", "--ranking", "best", "--elec-bw", "10", "--elec-lat", "1", pst)
	if fast.Curves.Electronic.Time >= r.Curves.Electronic.Time {
		t.Errorf("10 Gbit/s electronic: %g s, 1 Gbit/s: %g s", fast.Curves.Electronic.Time, r.Curves.Electronic.Time)
	}
	// A threshold above every message keeps the runtime strategy off the
	// circuits.
	if th := ocsRun(t, "--unknown-comm-as-world", "--planes", "2", "--ranking", "runtime", "--threshold", "1000000", pst); th.Curves.Results[0][0].Circuits != 0 ||
		th.Curves.Results[0][0].Time != th.Curves.Electronic.Time {
		t.Errorf("--threshold 1000000: %+v", th.Curves.Results[0][0])
	}
	out := mustRun(t, "ocs", "--unknown-comm-as-world", "--planes", "1,3", pst)
	for _, want := range []string{"4 processes, 304 messages, collectives decomposed linear", "rank the 8 connections of program",
		"planes  strategy  time", "3       worst     ", "100.0%", "unmatched  0 sends"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestOCSPlot(t *testing.T) {
	pst := importRing(t)
	dir := t.TempDir()
	out := mustRun(t, "ocs", "--unknown-comm-as-world", "--planes", "1-3", "--plot", filepath.Join(dir, "ring.png"), pst)
	want := []string{filepath.Join(dir, "ring-time.png"), filepath.Join(dir, "ring-delay.png")}
	for _, f := range want {
		if !strings.Contains(out, f) {
			t.Fatalf("the output does not name the plot %s:\n%s", f, out)
		}
	}
	for _, f := range want {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil || img.Bounds().Dx() < 400 {
			t.Errorf("%s: %v", f, err)
		}
	}
	mustRun(t, "ocs", "--planes", "1-2", "--plot", filepath.Join(dir, "ring.svg"), pst)
	data, err := os.ReadFile(filepath.Join(dir, "ring-delay.svg"))
	if err != nil || !strings.Contains(string(data), "<svg") || !strings.Contains(string(data), "runtime") || !strings.Contains(string(data), "delay") {
		t.Errorf("svg: %v %.200s", err, data)
	}
}

func TestOCSErrors(t *testing.T) {
	pst := importRing(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--planes", "x", pst},
		{"--planes", "3-1", pst},
		{"--ranking", "best,random", pst},
		{"--optical-bw", "0", pst},
		{"--elec-bw", "-1", pst},
		{"--switch-ms", "-1", pst},
		{"--threshold", "-5", pst},
		{"--decompose", "star", pst},
		{"--plot", filepath.Join(dir, "x.gif"), pst},
	} {
		_, stderr, code := run(t, append([]string{"ocs"}, args...)...)
		if code != 2 || stderr == "" {
			t.Errorf("ocs %v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x-time.gif")); err == nil {
		t.Error("x-time.gif was written")
	}
	if _, stderr, code := run(t, "ocs", "--structure", "LOOP_999", pst); code != 1 || !strings.Contains(stderr, `ring.pst: ocs: structure "LOOP_999": no such structure in run 0`) {
		t.Errorf("--structure LOOP_999: exit %d, %q", code, stderr)
	}
	for _, args := range [][]string{{"--run", "3"}, {"--runs", "3"}} {
		if _, stderr, code := run(t, append(append([]string{"ocs"}, args...), pst)...); code != 2 || !strings.Contains(stderr, "no run 3") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	if _, stderr, code := run(t, "ocs", filepath.Join(dir, "missing.pst")); code != 1 || !strings.Contains(stderr, "missing.pst") {
		t.Errorf("missing trace: exit %d, %q", code, stderr)
	}
}

// TestOCSGolden pins the table of the ring example (1–3 planes, every
// strategy, default parameters).
func TestOCSGolden(t *testing.T) {
	pst := importRing(t)
	got := strings.ReplaceAll(mustRun(t, "ocs", "--unknown-comm-as-world", "--planes", "1-3", pst), filepath.Dir(pst), "DIR")
	golden(t, "ocs_ring.golden", "ocs output", got)
}

// TestOCSJSONGolden pins the JSON result of the ring example
// (docs/results.md shows it), and checks that every run is simulated: on a
// trace of two runs, each run's curves are those it has alone (--runs).
func TestOCSJSONGolden(t *testing.T) {
	pst := importRing(t)
	js := mustRun(t, "ocs", "--unknown-comm-as-world", "--planes", "1-2", "--ranking", "best,runtime", "--json", pst)
	golden := filepath.Join("testdata", "results", "ocs.golden.json")
	if *update {
		os.WriteFile(golden, []byte(js), 0o644)
	}
	if want, err := os.ReadFile(golden); err != nil || js != string(want) {
		t.Errorf("ocs --json differs from %s (%v; run with -update to accept):\n%s", golden, err, js)
	}
	mixed := writeMixedStore(t)
	var all, one struct {
		Result struct {
			Runs []json.RawMessage `json:"runs"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(mustRun(t, "ocs", "--planes", "1", "--ranking", "best", "--json", mixed)), &all)
	json.Unmarshal([]byte(mustRun(t, "ocs", "--planes", "1", "--ranking", "best", "--json", "--runs", "1", mixed)), &one)
	if len(all.Result.Runs) != 2 || len(one.Result.Runs) != 1 || string(canonical(t, all.Result.Runs[1])) != string(canonical(t, one.Result.Runs[0])) ||
		!strings.Contains(string(canonical(t, one.Result.Runs[0])), `"run":1}`) {
		t.Errorf("runs of the mixed trace: %d\nrun 1 %s\nalone %s", len(all.Result.Runs), canonical(t, all.Result.Runs[1]), canonical(t, one.Result.Runs[0]))
	}
}
