package format

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestExcerpt checks the cut at a character boundary.
func TestExcerpt(t *testing.T) {
	s := strings.Repeat("a", MaxEcho-1) + "µµ"
	if got, want := Excerpt([]byte(s)), strings.Repeat("a", MaxEcho-1)+"… (67 bytes)"; got != want {
		t.Errorf("Excerpt = %q, want %q", got, want)
	}
	if got := Excerpt([]byte("short")); got != "short" {
		t.Errorf("Excerpt(short) = %q", got)
	}
}

// TestClipError checks that a long error message is cut at a character
// boundary with its length, that a short one and nil pass unchanged, and
// that errors.As still finds the error underneath.
func TestClipError(t *testing.T) {
	if ClipError(nil) != nil {
		t.Error("ClipError(nil) is not nil")
	}
	short := errors.New("json: unknown field \"x\"")
	if ClipError(short) != short {
		t.Error("a short error was changed")
	}
	_, err := strconv.Atoi(strings.Repeat("9", maxMessage-30) + "µ" + strings.Repeat("x", 1<<20))
	got := ClipError(err)
	msg := got.Error()
	if len(msg) > maxMessage+40 || !strings.HasSuffix(msg, fmt.Sprintf("… (%d bytes)", len(err.Error()))) || !utf8.ValidString(msg) {
		t.Errorf("clipped message of %d bytes: %q", len(msg), msg)
	}
	var ne *strconv.NumError
	if !errors.As(got, &ne) {
		t.Error("errors.As no longer finds the *strconv.NumError")
	}
}
