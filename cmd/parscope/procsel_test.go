package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/profile"
)

// TestProcessSelection checks --procs and --exclude-procs: the profile of
// the ring's processes without process 0 has the three others, the
// envelope names the selection, occupancy counts the left-out process as
// absent, and a bad list is a usage error.
func TestProcessSelection(t *testing.T) {
	pst := importRing(t)
	type profEnv struct {
		Procs        []int32        `json:"procs"`
		ExcludeProcs []int32        `json:"exclude_procs"`
		Result       profile.Result `json:"result"`
	}
	var all, without, only profEnv
	for _, c := range []struct {
		into *profEnv
		args []string
	}{{&all, nil}, {&without, []string{"--exclude-procs", "0"}}, {&only, []string{"--procs", "1-2"}}} {
		out := mustRun(t, append([]string{"profile", "--json", pst}, c.args...)...)
		if err := json.Unmarshal([]byte(out), c.into); err != nil {
			t.Fatal(err)
		}
	}
	if all.Result.Runs[0].Procs != 4 || without.Result.Runs[0].Procs != 3 || only.Result.Runs[0].Procs != 2 {
		t.Errorf("processes profiled: all %d, without 0 %d, only 1-2 %d; want 4, 3, 2",
			all.Result.Runs[0].Procs, without.Result.Runs[0].Procs, only.Result.Runs[0].Procs)
	}
	if len(without.ExcludeProcs) != 1 || without.ExcludeProcs[0] != 0 || len(only.Procs) != 2 || all.Procs != nil {
		t.Errorf("envelopes name %v / %v / %v", all.Procs, without.ExcludeProcs, only.Procs)
	}
	// The total time profiled loses process 0's share, about a quarter.
	if r := float64(without.Result.Runs[0].TotalNS) / float64(all.Result.Runs[0].TotalNS); r < 0.6 || r > 0.9 {
		t.Errorf("without process 0 the profile covers %.2f of the time", r)
	}
	// Occupancy of amoeba without process 16: it never exists, so the
	// modes share less of the process time.
	amoeba := importAmoeba(t)
	var occAll, occOut struct {
		Result occupancy.Report `json:"result"`
	}
	json.Unmarshal([]byte(mustRun(t, "occupancy", "--json", "--runs", "0", amoeba)), &occAll)
	json.Unmarshal([]byte(mustRun(t, "occupancy", "--json", "--runs", "0", "--exclude-procs", "16", amoeba)), &occOut)
	if len(occAll.Result.Runs) != 1 || len(occOut.Result.Runs) != 1 || occOut.Result.Runs[0].AbsentNS <= occAll.Result.Runs[0].AbsentNS {
		t.Errorf("absent time with process 16 left out: %v, with it: %v", occOut.Result.Runs, occAll.Result.Runs)
	}
	_, stderr, code := run(t, "profile", "--exclude-procs", "x", pst)
	if code != 2 || !strings.Contains(stderr, "--exclude-procs") {
		t.Errorf("bad list: exit %d, %q", code, stderr)
	}
}

// TestAnalyzeExcludesProcesses checks that analyze --exclude-procs leaves
// the processes out of every section and says so in report.json.
func TestAnalyzeExcludesProcesses(t *testing.T) {
	pst := importRing(t)
	dir := t.TempDir() + "/rep"
	mustRun(t, "analyze", "--exclude-procs", "0", "-o", dir, pst)
	var rep struct {
		ExcludeProcs []int32 `json:"exclude_procs"`
		Profile      struct {
			ExcludeProcs []int32        `json:"exclude_procs"`
			Result       profile.Result `json:"result"`
		} `json:"profile"`
	}
	readJSONFile(t, dir+"/report.json", &rep)
	if len(rep.ExcludeProcs) != 1 || len(rep.Profile.ExcludeProcs) != 1 || rep.Profile.Result.Runs[0].Procs != 3 {
		t.Errorf("report.json: left out %v, profile's %v, %d processes profiled", rep.ExcludeProcs, rep.Profile.ExcludeProcs, rep.Profile.Result.Runs[0].Procs)
	}
	// The section equals the command's with the same selection.
	var cli struct {
		Result profile.Result `json:"result"`
	}
	json.Unmarshal([]byte(mustRun(t, "profile", "--json", "--exclude-procs", "0", pst)), &cli)
	if cli.Result.Runs[0].TotalNS != rep.Profile.Result.Runs[0].TotalNS {
		t.Errorf("analyze and profile disagree: %d and %d ns", rep.Profile.Result.Runs[0].TotalNS, cli.Result.Runs[0].TotalNS)
	}
}

// TestStatesFromFlag: the commands of the analyses that read processes'
// states take --states-from, those that read the trace as recorded do
// not; compare passes it to both sides.
func TestStatesFromFlag(t *testing.T) {
	for cmd, want := range map[string]bool{
		"states": true, "entropy": true, "pca": true, "phasespace": true, "occupancy": true,
		"analyze": true, "serve": true, "compare": true,
		"profile": false, "critpath": false, "pop": false, "comm": false, "overview": false, "waitstates": false,
	} {
		if got := strings.Contains(mustRun(t, cmd, "--help"), "--states-from"); got != want {
			t.Errorf("%s --help names --states-from: %v, want %v", cmd, got, want)
		}
	}
	pst := importRing(t)
	out := mustRun(t, "compare", "--json", "--states-from", "mpi", pst, pst)
	var env struct {
		Result struct {
			Sections []struct {
				Analysis string `json:"analysis"`
			} `json:"sections"`
			Missing []struct {
				Analysis string `json:"analysis"`
				ReasonA  string `json:"reason_a"`
			} `json:"missing"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range env.Result.Sections {
		found = found || s.Analysis == "occupancy"
	}
	// The ring has no MPI region: every process computes.
	if !found || !strings.Contains(out, `"computation"`) {
		t.Errorf("compare --states-from mpi of the ring compares no occupancy of computation: %.400s", out)
	}
}

// TestDerivedBlockNames: the states derived from the ping-pong's regions
// are named by their regions in the states result (the legend of the
// report's state chart), not by a generic description.
func TestDerivedBlockNames(t *testing.T) {
	var env struct {
		StatesFrom string `json:"states_from"`
		Result     struct {
			BlockNames map[string]string `json:"block_names"`
		} `json:"result"`
	}
	out := mustRun(t, "states", "--json", realTrace(t, "otf2/ping-pong-otf2"))
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"0": "outside any region", "1": "int main(int, char**)", "5": "MPI_Init", "7": "MPI_Send", "8": "ended"}
	for id, name := range want {
		if env.Result.BlockNames[id] != name {
			t.Errorf("block %s is named %q, want %q (all: %v)", id, env.Result.BlockNames[id], name, env.Result.BlockNames)
		}
	}
	if env.StatesFrom != "regions" {
		t.Errorf("states from %q", env.StatesFrom)
	}
}
