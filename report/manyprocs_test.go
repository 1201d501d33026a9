package report

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace"
)

// TestManyProcesses builds the report of a trace of more processes than the
// exact PCA and the timeline take: the PCA comes from the randomized method
// (one process moves far, so PC1 is that process), the states have no
// timeline, and nothing of P×P or P×samples is allocated.
func TestManyProcesses(t *testing.T) {
	const p = pca.ExactMaxProcs + 4
	path := filepath.Join(t.TempDir(), "many.pst")
	h := &trace.Header{Meta: trace.Meta{ClockResolution: 1}}
	h.EnsureRun(0, p)
	h.States = []trace.StateDef{{ID: 0}, {ID: 1}, {ID: 2}, {ID: 50}}
	var recs []trace.Record
	for i := int64(1); i <= 40; i++ {
		recs = append(recs, trace.State(0, 7, 10*i, int32(50*(i%2))), trace.State(0, int32(100+i), 10*i+5, int32(1+i%2)))
	}
	storetest.Create(t, path, h, recs)
	b, err := Build(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pc, ok := b.PCAResult()
	if !ok || b.PhaseSpace == nil {
		t.Fatalf("no PCA or phase space; skipped: %v", b.Skipped)
	}
	if pc.Method != pca.MethodRandomized {
		t.Errorf("method %q, want %q", pc.Method, pca.MethodRandomized)
	}
	if pc.Procs != p || len(pc.Components) != PCAComponents {
		t.Fatalf("PCA of %d processes with %d components, want %d and %d", pc.Procs, len(pc.Components), p, PCAComponents)
	}
	if l := pc.Components[0].Loadings[7]; math.Abs(l-1) > 1e-4 {
		t.Errorf("PC1 loading of process 7 = %g, want 1 (it carries almost all the variance)", l)
	}
	js, err := json.Marshal(b.States)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Result struct {
			Runs []map[string]json.RawMessage `json:"runs"`
		} `json:"result"`
	}
	if err := json.Unmarshal(js, &st); err != nil {
		t.Fatal(err)
	}
	if r := st.Result.Runs; len(r) != 1 || r[0]["timeline"] != nil || string(r[0]["procs"]) != "4100" {
		t.Errorf("states = %s, want one run of 4100 processes without a timeline", js[:min(len(js), 300)])
	}
}
