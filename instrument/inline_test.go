package instrument

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRecordingMethodsInline checks that the compiler inlines the
// recording methods of Process, so that a disabled recorder (nil handles)
// costs a call site one branch and no call: programs rewritten by `parscope
// instrument` call them in their hot loops.
func TestRecordingMethodsInline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, m := range []string{"Block", "Enter", "Exit", "Send", "Recv", "Event", "EventValue"} {
		if !strings.Contains(string(out), "can inline (*Process)."+m+"\n") {
			t.Errorf("the compiler does not inline (*Process).%s", m)
		}
	}
}
