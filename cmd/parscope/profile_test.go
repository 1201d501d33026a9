package main

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/profile"
	"github.com/parscope/parscope/internal/needtool"
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

// mi300Kernels are the GPU kernels of the Score-P MI300 sample, their
// stream and their time, from the reference OTF2 library:
//
//	otf2-print ARCHIVE/traces.otf2 | awk '$2 == 128849018880 || $2 == 133143986176'
//	otf2-print -G ARCHIVE/traces.otf2 | grep -E '^(CLOCK_PROPERTIES|LOCATION .*ACCELERATOR_STREAM)'
//
// heavy_kernel enters at 6127386368557734 and leaves at 6127403889281692
// ticks on HIP[0:0]; light_kernel enters at 6127405422733255 and leaves at
// 6127411447497340 on HIP[1:0]; 3,699,958,577 ticks per second.
var mi300Kernels = map[string]struct {
	stream string
	ticks  int64
}{
	"heavy_kernel(float*, float const*)": {"HIP[0:0]", 6127403889281692 - 6127386368557734},
	"light_kernel(float*, float const*)": {"HIP[1:0]", 6127411447497340 - 6127405422733255},
}

// mi300TicksPerSecond is the sample's timer resolution (CLOCK_PROPERTIES).
const mi300TicksPerSecond = 3699958577

// otf2PrintKernels computes each kernel's ticks and stream from the live
// output of otf2-print: the ENTER and LEAVE events of the locations of type
// ACCELERATOR_STREAM, paired per location.
func otf2PrintKernels(t *testing.T, bin, archive string) (map[string]int64, map[string]string, int64) {
	t.Helper()
	defs, err := exec.Command(bin, "-G", archive).Output()
	if err != nil {
		t.Fatal(err)
	}
	streams := map[string]string{} // location id -> name
	var res int64
	for line := range strings.Lines(string(defs)) {
		f := strings.Fields(line)
		switch {
		case len(f) > 4 && f[0] == "LOCATION" && strings.Contains(line, "Type: ACCELERATOR_STREAM"):
			streams[f[1]] = strings.Trim(f[3], `",`)
		case len(f) > 4 && f[0] == "CLOCK_PROPERTIES":
			res, _ = strconv.ParseInt(strings.TrimSuffix(f[4], ","), 10, 64)
		}
	}
	out, err := exec.Command(bin, archive).Output()
	if err != nil {
		t.Fatal(err)
	}
	ticks, on := map[string]int64{}, map[string]string{}
	open := map[string]int64{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 5 || (f[0] != "ENTER" && f[0] != "LEAVE") || streams[f[1]] == "" {
			continue
		}
		ts, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		name := line[strings.Index(line, `"`)+1 : strings.LastIndex(line, `"`)]
		if f[0] == "ENTER" {
			open[f[1]+name] = ts
			continue
		}
		ticks[name] += ts - open[f[1]+name]
		on[name] = streams[f[1]]
	}
	return ticks, on, res
}

// TestProfileGPUKernels: on the Score-P trace of a HIP program on two
// MI300 devices, parscope profile gives each GPU kernel (a region on its
// accelerator stream) with its time, visits and spread over the processes,
// and the times are those of the raw trace: the kernels' LEAVE minus ENTER
// timestamps in timer ticks, as the OTF2 library prints them, converted to
// nanoseconds. With otf2-print installed the test recomputes them from its
// output; the constants above are what it printed.
func TestProfileGPUKernels(t *testing.T) {
	dir := realTrace(t, "otf2/simple-mi300-example-run")
	want, res := map[string]int64{}, int64(mi300TicksPerSecond)
	wantStream := map[string]string{}
	for name, k := range mi300Kernels {
		want[name], wantStream[name] = k.ticks, k.stream
	}
	// Without otf2-print this part is skipped (it fails where tools are
	// required) and the rest checks against the constants only.
	t.Run("otf2-print", func(t *testing.T) {
		bin := needtool.Path(t, "otf2-tools", "otf2-print")
		gotTicks, gotStream, gotRes := otf2PrintKernels(t, bin, filepath.Join(dir, "traces.otf2"))
		if !maps.Equal(gotTicks, want) || !maps.Equal(gotStream, wantStream) || gotRes != res {
			t.Errorf("otf2-print: kernels %v on %v at %d ticks/s; the test's constants are %v on %v at %d", gotTicks, gotStream, gotRes, want, wantStream, res)
		}
	})

	// The command, and the profile part of analyze's report.
	r := profileRun(t, "--top", "0", dir)
	report := t.TempDir()
	mustRun(t, "analyze", "-o", report, dir)
	raw, err := os.ReadFile(filepath.Join(report, "profile.json"))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Result profile.Result `json:"result"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "info", "--json", dir)
	var info struct {
		Procs []struct {
			Proc int32  `json:"proc"`
			Name string `json:"name"`
		} `json:"procs"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	procName := map[int32]string{}
	for _, p := range info.Procs {
		procName[p.Proc] = p.Name
	}
	for face, r := range map[string]*profile.Result{"profile": r, "analyze": &env.Result} {
		checkKernels(t, face, r, want, wantStream, procName, res)
	}

	// The text names the kernels with their times.
	text := mustRun(t, "profile", dir)
	for _, s := range []string{"heavy_kernel(float*, float const*)                 1       1      4.735s", "light_kernel(float*, float const*)                 1       1      1.628s"} {
		if !strings.Contains(text, s) {
			t.Errorf("profile text lacks %q:\n%s", s, text)
		}
	}
}

// checkKernels checks the kernels' rows of the flat profile r (from face):
// one visit each on its stream, and the time of its ticks at res ticks
// per second.
func checkKernels(t *testing.T, face string, r *profile.Result, want map[string]int64, wantStream map[string]string, procName map[int32]string, res int64) {
	t.Helper()
	if r.Of != "regions" || len(r.Runs) != 1 {
		t.Fatalf("%s: %+v", face, r)
	}
	run := r.Runs[0]
	found := 0
	for _, e := range run.Flat {
		ticks, ok := want[e.Name]
		if !ok {
			continue
		}
		found++
		// ns = ticks · 10⁹ / resolution; the importer scales each timestamp
		// and the difference may round 1 ns the other way.
		ns := int64(math.Round(float64(ticks) * 1e9 / float64(res)))
		if d := e.InclusiveNS - ns; d < -1 || d > 1 || e.ExclusiveNS != e.InclusiveNS {
			t.Errorf("%s: %s: inclusive %d ns, exclusive %d; the raw trace gives %d ticks = %d ns", face, e.Name, e.InclusiveNS, e.ExclusiveNS, ticks, ns)
		}
		if e.Visits != 1 || e.Procs != 1 || procName[e.Inclusive.MaxProc] != wantStream[e.Name] ||
			e.Inclusive.MaxNS != e.InclusiveNS || e.Inclusive.MinNS != 0 {
			t.Errorf("%s: %s: %d visits on %d processes, most on %d (%s), spread %+v; want 1 visit on %s",
				face, e.Name, e.Visits, e.Procs, e.Inclusive.MaxProc, procName[e.Inclusive.MaxProc], e.Inclusive, wantStream[e.Name])
		}
	}
	if found != len(want) {
		t.Errorf("%s: %d of the %d kernels in the flat profile", face, found, len(want))
	}
}
