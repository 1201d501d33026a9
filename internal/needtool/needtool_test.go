package needtool

import (
	"os/exec"
	"testing"
)

func TestPathFindsShell(t *testing.T) {
	want, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	if got := Path(t, "dash", "no-such-program-parscope", "sh"); got != want {
		t.Fatalf("Path = %q, want %q", got, want)
	}
}

func TestRequired(t *testing.T) {
	t.Setenv(EnvRequire, "1")
	if !Required() {
		t.Fatal("Required() = false with PARSCOPE_REQUIRE_TOOLS=1")
	}
	t.Setenv(EnvRequire, "")
	if Required() {
		t.Fatal("Required() = true with PARSCOPE_REQUIRE_TOOLS unset")
	}
}
