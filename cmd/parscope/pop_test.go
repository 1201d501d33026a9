package main

import (
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/pop"
)

// popRun runs parscope pop --json and returns its result.
func popRun(t *testing.T, args ...string) *pop.Result {
	t.Helper()
	var env struct {
		SchemaVersion int        `json:"schema_version"`
		Analysis      string     `json:"analysis"`
		Options       pop.Params `json:"options"`
		Result        pop.Result `json:"result"`
	}
	out := mustRun(t, append([]string{"pop", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if env.SchemaVersion != 1 || env.Analysis != "pop" || env.Options.RuntimeRegions != pop.DefaultRuntimeRegions {
		t.Fatalf("envelope %d %q %+v", env.SchemaVersion, env.Analysis, env.Options)
	}
	return &env.Result
}

// TestPopPingPong: the OTF2 ping-pong (2 ranks, 8 round trips of 16 KiB
// to 2 MiB). Each process's MPI time is the sum of its MPI regions'
// inclusive times in `parscope profile --per-process` (they are leaves
// under main), its elapsed time main's inclusive time plus its share of
// the time outside every region, and the efficiencies follow from them by
// the definitions. The ideal replay lies between the largest useful time
// and the sum of both (a ping-pong alternates).
func TestPopPingPong(t *testing.T) {
	dir := realTrace(t, "otf2/ping-pong-otf2")
	prof := profileRun(t, "--top", "0", "--per-process", dir).Runs[0]
	r := popRun(t, dir)
	if r.Of != "regions" || len(r.Runs) != 1 {
		t.Fatalf("%+v", r)
	}
	run := r.Runs[0]
	if run.Procs != 2 || len(run.Processes) != 2 || run.Problems != (pop.Problems{}) {
		t.Fatalf("%+v", run)
	}
	mpiRE := regexp.MustCompile(pop.DefaultRuntimeRegions)
	var mpi, mainIncl, initFin [2]int64
	var names []string
	for _, e := range prof.Flat {
		for _, b := range e.ByProcess {
			switch {
			case mpiRE.MatchString(e.Name):
				if b.InclusiveNS != b.ExclusiveNS {
					t.Errorf("%s is not a leaf: %+v", e.Name, b)
				}
				mpi[b.Proc] += b.InclusiveNS
				if e.Name == "MPI_Init" || e.Name == "MPI_Finalize" {
					initFin[b.Proc] += b.InclusiveNS
				}
			case e.Name == "int main(int, char**)":
				mainIncl[b.Proc] = b.InclusiveNS
			}
		}
		if mpiRE.MatchString(e.Name) {
			names = append(names, e.Name)
		}
	}
	var elapsedSum, outside int64
	var useful [2]int64
	for i, p := range run.Processes {
		if p.Proc != int32(i) || p.MPINS != mpi[i] || p.UsefulNS+p.MPINS != p.ElapsedNS || p.ElapsedNS < mainIncl[i] {
			t.Errorf("process %d: %+v; profile: MPI %d, main %d", i, p, mpi[i], mainIncl[i])
		}
		elapsedSum += p.ElapsedNS
		outside += p.ElapsedNS - mainIncl[i]
		useful[i] = p.UsefulNS
	}
	if elapsedSum != prof.TotalNS || outside != prof.OutsideNS {
		t.Errorf("elapsed %d outside %d; profile total %d outside %d", elapsedSum, outside, prof.TotalNS, prof.OutsideNS)
	}
	T := max(run.Processes[0].ElapsedNS, run.Processes[1].ElapsedNS)
	umax := max(useful[0], useful[1])
	mean := float64(useful[0]+useful[1]) / 2
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12 }
	if run.RuntimeNS != T || run.UsefulMaxNS != umax || !near(run.LoadBalance, mean/float64(umax)) ||
		!near(run.CommunicationEfficiency, float64(umax)/float64(T)) || !near(run.ParallelEfficiency, mean/float64(T)) {
		t.Errorf("T %d LB %g CommE %g PE %g; want T %d from useful %v", run.RuntimeNS, run.LoadBalance, run.CommunicationEfficiency,
			run.ParallelEfficiency, T, useful)
	}
	// The figures docs/pop.md quotes.
	if run.RuntimeNS != 199574377 || useful != [2]int64{2412441, 3008456} {
		t.Errorf("T %d useful %v, docs/pop.md quotes 199574377 and [2412441 3008456]", run.RuntimeNS, useful)
	}
	id := run.Ideal
	if id == nil || id.Messages != 16 || id.Collectives != 0 || id.RuntimeNS < umax || id.RuntimeNS > useful[0]+useful[1] ||
		!near(id.SerializationEfficiency*id.TransferEfficiency, run.CommunicationEfficiency) {
		t.Errorf("ideal %+v", id)
	}
	if strings.Join(run.RuntimeNames, ",") != "MPI_Comm_rank,MPI_Comm_size,MPI_Finalize,MPI_Init,MPI_Recv,MPI_Send" || len(names) != 6 {
		t.Errorf("runtime names %v, profile's MPI regions %v", run.RuntimeNames, names)
	}

	// --without-init: each process from its exit of MPI_Init to its entry
	// into MPI_Finalize (the times of those records in the trace), its MPI
	// time the profile's less those two calls.
	w := popRun(t, "--without-init", dir).Runs[0]
	spans := [2][2]int64{{193643138, 199514778}, {193643835, 199529687}}
	for i, p := range w.Processes {
		if p.BeginNS != spans[i][0] || p.EndNS != spans[i][1] || p.ElapsedNS != p.EndNS-p.BeginNS || p.MPINS != mpi[i]-initFin[i] ||
			p.UsefulNS+p.MPINS != p.ElapsedNS || p.UsefulNS > useful[i] {
			t.Errorf("--without-init process %d: %+v; want [%d, %d), MPI %d", i, p, spans[i][0], spans[i][1], mpi[i]-initFin[i])
		}
	}
	if w.Processes[0].UsefulNS != 2373709 || w.Processes[1].UsefulNS != 2968585 || w.RuntimeNS != 5885852 {
		t.Errorf("--without-init: useful %d %d, T %d; docs/pop.md quotes 2373709, 2968585 and 5885852",
			w.Processes[0].UsefulNS, w.Processes[1].UsefulNS, w.RuntimeNS)
	}
}

// TestPopText: the text, the CSV and the refusals of parscope pop.
func TestPopText(t *testing.T) {
	dir := realTrace(t, "otf2/ping-pong-otf2")
	out := mustRun(t, "pop", dir)
	for _, want := range []string{"ping-pong-otf2, run 0: 2 processes, runtime 199.6ms", "parallel efficiency", "load balance",
		"communication efficiency", "serialisation efficiency", "transfer efficiency", "ideal network: runtime", "16 messages"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	csv := mustRun(t, "pop", "--csv", dir)
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "run,proc,elapsed_ns,useful_ns,mpi_ns") ||
		!strings.HasPrefix(lines[1], "0,0,199266325,2412441,196853884,") {
		t.Errorf("csv:\n%s", csv)
	}
	if _, stderr, code := run(t, "pop", "--runtime-regions", "^omp_", dir); code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, `no region of the trace matches --runtime-regions "^omp_"`) {
		t.Errorf("--runtime-regions ^omp_: exit %d, %q", code, stderr)
	}
	if _, stderr, code := run(t, "pop", "--json", "--csv", dir); code != 2 || !strings.Contains(stderr, "--csv") {
		t.Errorf("--json --csv: exit %d, %q", code, stderr)
	}
}
