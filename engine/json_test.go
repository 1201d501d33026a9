package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteJSONIndent checks that WriteJSON, which indents the JSON as it
// streams out, writes what an Encoder with SetIndent("", "  ") writes: on
// values whose strings hold the punctuation it indents at and escapes,
// with empty lists and objects, raw JSON with spaces, and on every golden
// result of the CLI; and that the indenter gives the same when the JSON comes byte
// by byte.
func TestWriteJSONIndent(t *testing.T) {
	type inner struct {
		A []int           `json:"a"`
		B map[string]any  `json:"b,omitempty"`
		C json.RawMessage `json:"c"`
	}
	values := []any{
		nil, 42, -1.5e-300, math.MaxInt64, "", `"`, `\`, `a\"b`, "{[,:]}", "<&>\u2028\t\n", "é😀",
		[]int{}, []int{1}, map[string]int{}, map[string]any{"": nil, "z": []any{}, "a": map[string]any{}},
		[]any{[]any{[]any{}}, map[string]any{"k": []int{1, 2}}, "x,y:z"},
		inner{A: []int{}, C: json.RawMessage(`{ "x" : [ 1 , 2 ] , "y":{} }`)},
		&inner{A: []int{3}, B: map[string]any{"q\"{": "]", "n": nil}, C: json.RawMessage(`"s p a c e"`)},
	}
	goldens, _ := filepath.Glob(filepath.Join("..", "cmd", "parscope", "testdata", "results", "*.json"))
	if len(goldens) == 0 {
		t.Fatal("no golden results")
	}
	for _, g := range goldens {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		values = append(values, v)
	}
	for i, v := range values {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteJSON(&got, v); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("value %d: writeJSON wrote\n%s\nwant\n%s", i, got.String(), want.String())
			continue
		}
		compact, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var bytewise bytes.Buffer
		bw := bufio.NewWriter(&bytewise)
		d := &indenter{w: bw, indent: "  "}
		for _, c := range append(compact, '\n') {
			if _, err := d.Write([]byte{c}); err != nil {
				t.Fatal(err)
			}
		}
		bw.Flush()
		if bytewise.String() != want.String() {
			t.Errorf("value %d byte by byte: %q, want %q", i, bytewise.String(), want.String())
		}
	}
	if err := WriteJSON(failingWriter{}, make([]int, 1<<15)); !errors.Is(err, errWrite) {
		t.Errorf("writing to a failing writer: %v", err)
	}
}

var errWrite = errors.New("disk full")

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }
