package format

import (
	"strings"
	"testing"
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
