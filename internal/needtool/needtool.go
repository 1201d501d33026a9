// Package needtool lets tests depend on external programs (mpicc, chromium,
// python3 with scikit-learn, otf2-print) without silently passing where they
// are missing. A test calls Path; when the program is absent the test is
// skipped on a developer machine, but fails when PARSCOPE_REQUIRE_TOOLS=1,
// which scripts/test.sh (and so CI) sets after installing the packages.
package needtool

import (
	"os"
	"os/exec"
	"testing"
)

// EnvRequire is the environment variable that turns a missing tool from a
// skip into a failure.
const EnvRequire = "PARSCOPE_REQUIRE_TOOLS"

// Required reports whether missing tools must fail tests rather than skip them.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Path returns the absolute path of the first of names found on PATH. If none
// is found the test is skipped, or fails when Required; pkg names the Debian
// package that provides the program, for the message.
func Path(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	Missing(t, "%v not found on PATH (Debian package %s)", names, pkg)
	return ""
}

// Missing skips the test with the formatted reason, or fails it when
// Required. Use it for prerequisites Path cannot check, such as a Python
// module.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf("required tool missing: "+format, args...)
	}
	t.Skipf(format, args...)
}
