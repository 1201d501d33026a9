package prv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPCFKeywords checks a .pcf with every keyword Paraver's parser reads
// and writes, PRECISION in an EVENT_TYPE block among them, plus keywords
// it does not define: those are skipped and counted, never an error.
func TestPCFKeywords(t *testing.T) {
	const src = `DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC
LOOK_BACK           100
SPEED               1
FLAG_ICONS          ENABLED
NUM_OF_STATE_COLORS 1000
YMAX_SCALE          37
FUTURE_OPTION       7


DEFAULT_SEMANTIC

THREAD_FUNC          State As Is


STATES
0    Idle
1    Running


STATES_COLOR
0    {117,195,255}
1    {0,0,255}


GRADIENT_COLOR
0    {0,255,2}


GRADIENT_NAMES
0    Gradient 0


EVENT_TYPE
0    50100001    Memory bandwidth
0    50100002    Memory latency
PRECISION 8
VALUES
0   End


NEW_SECTION
1 something

EVENT_TYPE
9    42000050    Instructions
`
	path := filepath.Join(t.TempDir(), "k.pcf")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := readPCF(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.units != "NANOSEC" || p.states[1] != "Running" || p.types[50100002] != "Memory latency" || p.types[42000050] != "Instructions" {
		t.Errorf("units %q, states %v, types %v", p.units, p.states, p.types)
	}
	if p.precision[50100001] != 8 || p.precision[50100002] != 8 || len(p.precision) != 2 {
		t.Errorf("precision %v, want 8 for both types of the block", p.precision)
	}
	if p.values[50100001][0] != "End" || p.gradient[42000050] != 9 {
		t.Errorf("values %v, gradient %v", p.values, p.gradient)
	}
	want := "2 lines of keywords Paraver's parser does not define: DEFAULT_OPTIONS FUTURE_OPTION ×1, NEW_SECTION ×1"
	if got := p.unknownSummary(); got != want {
		t.Errorf("skipped %q, want %q", got, want)
	}
	// A PRECISION without digits is an error naming the line.
	bad := filepath.Join(t.TempDir(), "b.pcf")
	os.WriteFile(bad, []byte("EVENT_TYPE\n0 1 x\nPRECISION eight\n"), 0o644)
	if _, err := readPCF(bad); err == nil || !strings.Contains(err.Error(), "b.pcf:3") || !strings.Contains(err.Error(), "PRECISION digits") {
		t.Errorf("error %v, want one at b.pcf:3 expecting PRECISION digits", err)
	}
}
