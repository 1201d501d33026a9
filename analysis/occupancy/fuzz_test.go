package occupancy

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// FuzzParseModes checks that any mapping file either parses into modes
// that map every state of the dictionary, or fails with a located error.
func FuzzParseModes(f *testing.F) {
	for _, s := range []string{"0 U\n1 S\n2 R\n3 I\n", "# c\nrecv R\n* U\n", "0 U\n0 S\n", "x\n", ""} {
		f.Add([]byte(s))
	}
	h := &trace.Header{States: []trace.StateDef{{ID: 0, Name: "compute"}, {ID: 1, Name: "send"}, {ID: 2, Name: "recv"}, {ID: 3, Name: "irq"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseModes(bytes.NewReader(data), "fuzz.modes", h)
		if err != nil {
			var fe *format.Error
			if !errors.As(err, &fe) && !strings.HasPrefix(err.Error(), "fuzz.modes: ") {
				t.Fatalf("error without location: %v", err)
			}
			return
		}
		if len(m.Names) == 0 {
			t.Fatal("no modes without an error")
		}
		for _, d := range h.States {
			k, ok := m.Mode(d.ID)
			if !ok || k < 0 || k >= len(m.Names) {
				t.Fatalf("state %d maps to %d, %v", d.ID, k, ok)
			}
		}
	})
}
