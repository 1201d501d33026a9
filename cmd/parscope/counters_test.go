package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parscope/parscope/analysis/counters"
)

// TestCountersPAPI summarises the PAPI counters of the OTF2 ping-pong
// (Score-P, two ranks, 42 samples of each of three counters per rank) and
// checks the table and the CSV.
func TestCountersPAPI(t *testing.T) {
	in := realTrace(t, "otf2/ping-pong-otf2-papi/traces.otf2")
	var env struct {
		Analysis string          `json:"analysis"`
		Result   counters.Result `json:"result"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "counters", "--json", "--windows", "16", in)), &env); err != nil {
		t.Fatal(err)
	}
	if env.Analysis != "counters" || len(env.Result.Runs) != 1 || len(env.Result.Runs[0].Counters) != 3 {
		t.Fatalf("result %+v", env.Result)
	}
	names := []string{}
	for _, c := range env.Result.Runs[0].Counters {
		names = append(names, c.Name)
		var n int64
		for _, p := range c.Series {
			n += p.Samples
		}
		if c.Samples != 84 || c.Procs != 2 || len(c.ByProcess) != 2 || c.ByProcess[0].Samples != 42 || n != 84 || len(c.Series) > 16 || !(c.Min <= c.Mean && c.Mean <= c.Max) {
			t.Errorf("%s: %d samples on %d processes, series of %d windows holding %d", c.Name, c.Samples, c.Procs, len(c.Series), n)
		}
	}
	if strings.Join(names, ",") != "PAPI_TOT_CYC,PAPI_L2_TCM,PAPI_BR_MSP" {
		t.Errorf("counters %v", names)
	}
	if text := mustRun(t, "counters", in); !strings.Contains(text, "PAPI_L2_TCM") || !strings.Contains(text, "3 counters") {
		t.Errorf("text:\n%s", text)
	}
	csv := mustRun(t, "counters", "--csv", in)
	if lines := strings.Count(csv, "\n"); !strings.HasPrefix(csv, "run,counter,name,t_ns,samples,min,mean,max\n") || lines < 4 {
		t.Errorf("csv:\n%.300s", csv)
	}
}
