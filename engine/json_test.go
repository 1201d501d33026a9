package engine_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/parscope/parscope/engine"
)

// TestWriteJSON checks the writer every face shares: two-space indented
// JSON and a newline.
func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	env := &engine.Envelope{SchemaVersion: engine.SchemaVersion, Analysis: "x", Trace: "t.pst", Options: map[string]int{"a": 1}, Result: []int{}}
	if err := engine.WriteJSON(&b, env); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"schema_version\": 1,\n  \"analysis\": \"x\",\n  \"trace\": \"t.pst\",\n  \"options\": {\n    \"a\": 1\n  },\n  \"result\": []\n}\n"
	if b.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", &b, want)
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Error(err)
	}
}
