package plan

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/probe"
)

// probeYAML is a system whose one node takes its task time from the
// prediction file p.json beside it.
const probeYAML = "task: {size: 1, result: 1}\nclusters: [{name: a, master: true, nodes: [{name: x, probe: p.json}]}]\n"

// FuzzProbeFile feeds arbitrary bytes as the prediction file a `parscope
// probe run --json` writes, which a node's probe field names: reading the
// system must fail with an error located in the YAML file, or give the
// node the file's predicted time.
func FuzzProbeFile(f *testing.F) {
	for _, p := range []probe.Prediction{{Predicted: 5.25}, {Predicted: 0.5, Partial: 0.25, Covered: 0.5}, {Predicted: -1}} {
		b, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"predicted_s": 1e999}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		yml := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(yml, []byte(probeYAML), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "p.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadFile(yml)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), yml+":") {
				t.Fatalf("error %q is not located in %s", err, yml)
			}
			return
		}
		var pred probe.Prediction
		if err := json.Unmarshal(data, &pred); err != nil {
			t.Fatalf("read a system from a prediction that is not JSON: %v", err)
		}
		n := s.Clusters[0].Nodes[0]
		if n.TaskTime != pred.Predicted || !(n.TaskTime > 0) || !strings.HasPrefix(n.Source, "probe p.json") {
			t.Fatalf("node %+v from predicted_s %v", n, pred.Predicted)
		}
	})
}
