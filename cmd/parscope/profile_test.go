package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/profile"
)

// profileRun runs parscope profile --json and returns its result.
func profileRun(t *testing.T, args ...string) *profile.Result {
	t.Helper()
	var env struct {
		SchemaVersion int            `json:"schema_version"`
		Analysis      string         `json:"analysis"`
		Result        profile.Result `json:"result"`
	}
	out := mustRun(t, append([]string{"profile", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if env.SchemaVersion != 1 || env.Analysis != "profile" {
		t.Fatalf("envelope %d %q", env.SchemaVersion, env.Analysis)
	}
	return &env.Result
}

// TestProfilePingPong: the OTF2 ping-pong (2 ranks, main holding MPI_Init,
// 8 MPI_Send and 8 MPI_Recv each, …), read straight from its directory:
// the visits are the trace's, every region sits under main, the exclusive
// times and the time outside add up to the processes' time, and the 16
// messages (16 KiB to 2 MiB, two of each size) are sent from MPI_Send.
func TestProfilePingPong(t *testing.T) {
	dir := realTrace(t, "otf2/ping-pong-otf2")
	r := profileRun(t, "--top", "0", dir)
	if r.Of != "regions" || len(r.Runs) != 1 || r.Runs[0].Procs != 2 {
		t.Fatalf("%+v", r)
	}
	run := r.Runs[0]
	visits := map[string]int64{}
	var excl int64
	for _, e := range run.Flat {
		visits[e.Name] = e.Visits
		excl += e.ExclusiveNS
		if e.InclusiveNS < e.ExclusiveNS || e.Exclusive.MinNS > e.Exclusive.MaxNS || e.Procs != 2 {
			t.Errorf("%s: %+v", e.Name, e)
		}
	}
	if visits["MPI_Send"] != 16 || visits["MPI_Recv"] != 16 || visits["MPI_Init"] != 2 || visits["int main(int, char**)"] != 2 {
		t.Errorf("visits %v", visits)
	}
	if excl+run.OutsideNS != run.TotalNS || run.Flat[0].Name != "MPI_Init" {
		t.Errorf("exclusive %d + outside %d != total %d; first %s", excl, run.OutsideNS, run.TotalNS, run.Flat[0].Name)
	}
	if len(run.Tree) != 7 || run.Tree[0].Name != "int main(int, char**)" || run.Tree[0].InclusiveNS != run.TotalNS-run.OutsideNS {
		t.Errorf("tree %+v", run.Tree)
	}
	for _, n := range run.Tree[1:] {
		if n.Parent != 0 || n.Depth != 1 {
			t.Errorf("node %+v not under main", n)
		}
	}
	m := run.Messages
	if m.Count != 16 || m.Bytes != 2*16384*(1<<8-1) || len(m.BySize) != 8 || m.BySize[0].MinBytes != 16384 ||
		len(m.ByRegion) != 1 || m.ByRegion[0].Name != "MPI_Send" || len(m.ByPair) != 2 {
		t.Errorf("messages %+v", m)
	}
	if run.Problems != (profile.Problems{}) {
		t.Errorf("problems %+v", run.Problems)
	}
}

// TestProfileGolden: the text of parscope profile on the ring example.
func TestProfileGolden(t *testing.T) {
	pst := importRing(t)
	got := mustRun(t, "profile", "--tree", "5", pst)
	got = strings.ReplaceAll(got, filepath.Base(pst), "ring.pst")
	golden(t, "profile_ring.golden", "profile output", got)
	// CSV: a header and the two regions.
	csv := mustRun(t, "profile", "--csv", pst)
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "run,region,name,visits") ||
		!strings.HasPrefix(lines[1], "0,") || !strings.Contains(lines[1], ",IF_101,256,4,") {
		t.Errorf("csv:\n%s", csv)
	}
	// Bad options are usage errors naming the flag.
	if _, stderr, code := run(t, "profile", "--sort", "size", pst); code == 0 || !strings.Contains(stderr, "size") {
		t.Errorf("--sort size: exit %d, %q", code, stderr)
	}
	if _, stderr, code := run(t, "profile", "--json", "--csv", pst); code != 2 || !strings.Contains(stderr, "--csv") {
		t.Errorf("--json --csv: exit %d, %q", code, stderr)
	}
}
