package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

// marshalled returns s as encoding/json writes it, with or without its
// HTML escaping.
func marshalled(t *testing.T, s string, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// same fails t unless AppendString gives encoding/json's bytes for s in
// both modes, appended to what dst held.
func same(t *testing.T, s string) {
	t.Helper()
	for _, html := range []bool{true, false} {
		got := AppendString([]byte("x"), s, html)
		if want := marshalled(t, s, html); string(got) != "x"+string(want) {
			t.Errorf("AppendString(%q, escapeHTML %v) = %s, encoding/json writes %s", s, html, got[1:], want)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `a"b\c`, "tab\tnl\nret\r", "\b\f\x00\x01\x1f\x7f", "héllo · → ←", "a\u2028b\u2029",
		"<&>", "a\xffb", "\xc3", "\xed\xa0\x80", "trailing \xe2\x82",
	} {
		same(t, s)
	}
	if got := string(AppendString(nil, "<a\xff>", false)); got != `"<a\ufffd>"` {
		t.Errorf("without HTML escaping: %s", got)
	}
	if got := string(AppendString(nil, "<a\xff>", true)); got != `"\u003ca\ufffd\u003e"` {
		t.Errorf("with HTML escaping: %s", got)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>\"\\", "\x00\b\f\n\r\t\x1f\x7f", "\xff\xfe", "\u2028\u2029", "héllo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { same(t, s) })
}
