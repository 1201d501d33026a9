package format

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readAllLines(t *testing.T, name string, data []byte) ([]string, error) {
	t.Helper()
	lr, err := NewLineReader(name, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []string
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, string(l))
	}
}

func gz(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 700<<10) // longer than the buffer
	text := "a b c\r\n\n" + long + "\nlast"
	want := []string{"a b c", "", long, "last"}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"plain", []byte(text)}, {"gzip", gz([]byte(text))}} {
		got, err := readAllLines(t, "f.txt", tc.data)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d lines, want %d", tc.name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: line %d has %d bytes, want %d", tc.name, i+1, len(got[i]), len(want[i]))
			}
		}
	}
}

func TestLineReaderTruncatedGzip(t *testing.T) {
	var text strings.Builder
	for i := 0; i < 20000; i++ {
		text.WriteString("12345 6 7\n")
	}
	data := gz([]byte(text.String()))
	lines, err := readAllLines(t, "t.gz", data[:len(data)/2])
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *format.Error", err)
	}
	if fe.File != "t.gz" || fe.Line != len(lines)+1 || !strings.Contains(fe.Msg, "truncated") {
		t.Fatalf("error %q: file %q line %d (read %d lines)", err, fe.File, fe.Line, len(lines))
	}
}

func TestErrorFormat(t *testing.T) {
	if got := LineError("a.srt", 17, "expected %d fields", 3).Error(); got != "a.srt:17: expected 3 fields" {
		t.Errorf("LineError = %q", got)
	}
	if got := OffsetError("x.bin", 1024, "bad magic").Error(); got != "x.bin: byte 1024: bad magic" {
		t.Errorf("OffsetError = %q", got)
	}
	e := &Error{File: "f", Offset: -1, Msg: "m", Err: io.ErrUnexpectedEOF}
	if !errors.Is(e, io.ErrUnexpectedEOF) || e.Error() != "f: m: unexpected EOF" {
		t.Errorf("wrapped error = %q", e.Error())
	}
}

func TestHeadGzip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.gz")
	os.WriteFile(p, gz([]byte("T:1:2\n")), 0o644)
	h, err := Head(p, 100)
	if err != nil || string(h) != "T:1:2\n" {
		t.Fatalf("Head = %q, %v", h, err)
	}
}
