package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/critpath"
)

// critRun runs parscope critpath --json with every segment and region
// and returns its result.
func critRun(t *testing.T, args ...string) *critpath.Result {
	t.Helper()
	var env struct {
		SchemaVersion int             `json:"schema_version"`
		Analysis      string          `json:"analysis"`
		Result        critpath.Result `json:"result"`
	}
	out := mustRun(t, append([]string{"critpath", "--json", "--top", "0", "--segments", "0"}, args...)...)
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if env.SchemaVersion != 1 || env.Analysis != "critpath" || len(env.Result.Runs) == 0 {
		t.Fatalf("envelope %d %q, %d runs", env.SchemaVersion, env.Analysis, len(env.Result.Runs))
	}
	return &env.Result
}

// TestCritpathDUMPI: on the DUMPI sample (4 processes, MPI regions and
// messages) the path covers the run's span with contiguous segments,
// jumps between processes, and the region shares sum to 100%.
func TestCritpathDUMPI(t *testing.T) {
	tr := realTrace(t, "dumpi/testtrace.meta")
	r := critRun(t, tr)
	for _, run := range r.Runs {
		if run.LengthNS <= 0 || run.LengthNS != run.EndNS-run.BeginNS || run.ComputationNS+run.CommunicationNS != run.LengthNS {
			t.Errorf("run %d: length %d span %d..%d computation %d communication %d", run.Run, run.LengthNS, run.BeginNS, run.EndNS,
				run.ComputationNS, run.CommunicationNS)
		}
		at := run.BeginNS
		for i, s := range run.Segments {
			if s.FromNS != at || s.ToNS <= s.FromNS {
				t.Fatalf("run %d segment %d %+v: want it to begin at %d", run.Run, i, s, at)
			}
			at = s.ToNS
		}
		if at != run.EndNS || len(run.Segments) != run.SegmentsTotal {
			t.Errorf("run %d: segments end at %d of %d; %d of %d listed", run.Run, at, run.EndNS, len(run.Segments), run.SegmentsTotal)
		}
		var sum float64
		var ns int64
		for _, g := range run.Regions {
			sum += g.SharePct
			ns += g.NS
		}
		if math.Abs(sum-100) > 1e-6 || ns != run.LengthNS {
			t.Errorf("run %d: region shares sum to %g%%, %d ns", run.Run, sum, ns)
		}
		t.Logf("run %d: %d ns, %d segments, %d message and %d collective jumps, %d processes", run.Run, run.LengthNS,
			run.SegmentsTotal, run.MessageJumps, run.CollectiveJumps, len(run.Processes))
	}
	out := mustRun(t, "critpath", tr)
	if !strings.Contains(out, "critical path") || !strings.Contains(out, "region") {
		t.Errorf("table output:\n%s", out)
	}
	csv := mustRun(t, "critpath", "--csv", tr)
	if !strings.HasPrefix(csv, "run,proc,from_ns,to_ns,kind,region,region_name,peer\n") {
		t.Errorf("csv:\n%s", csv)
	}
}
