package format

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parscope/parscope/internal/regular"
)

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// IsGzip reports whether data starts with the gzip magic bytes.
func IsGzip(data []byte) bool { return bytes.HasPrefix(data, gzipMagic) }

// Head returns up to n leading bytes of a file, decompressed if the file is
// gzipped (a truncated gzip stream yields what could be decompressed).
func Head(path string, n int) ([]byte, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	var r io.Reader = br
	if IsGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &Error{File: path, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		r = zr
	}
	buf := make([]byte, n)
	m, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		if m == 0 {
			return nil, &Error{File: path, Offset: -1, Msg: "cannot read", Err: err}
		}
	}
	return buf[:m], nil
}

// LineReader reads a text file line by line, through gzip when the file is
// gzipped, with no limit on line length and no allocation per line. Lines
// are returned without their "\n" or "\r\n".
type LineReader struct {
	Name string // the file name used in errors
	f    *os.File
	gz   *gzip.Reader
	br   *bufio.Reader
	line int
	long []byte
	err  error
}

// OpenLines opens path for line reading.
func OpenLines(path string) (*LineReader, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	lr, err := NewLineReader(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	lr.f = f
	return lr, nil
}

// NewLineReader reads lines from r, which may be gzipped; name is used in errors.
func NewLineReader(name string, r io.Reader) (*LineReader, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	lr := &LineReader{Name: name, br: br}
	magic, _ := br.Peek(2)
	if IsGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &Error{File: name, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		lr.gz = zr
		lr.br = bufio.NewReaderSize(zr, 256<<10)
	}
	return lr, nil
}

// Next returns the next line, valid until the following call. It returns
// io.EOF after the last line; a final line without a newline is returned
// like any other. A truncated or corrupt gzip stream is an *Error naming
// the line where it broke off.
func (lr *LineReader) Next() ([]byte, error) {
	if lr.err != nil {
		return nil, lr.err
	}
	line, err := lr.br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			line, err = joinLong(lr.br, line, &lr.long)
		}
		if err != nil && err != io.EOF {
			lr.err = lr.wrap(err)
			return nil, lr.err
		}
		if len(line) == 0 && err == io.EOF {
			lr.err = io.EOF
			return nil, io.EOF
		}
	}
	lr.line++
	return trimEOL(line), nil
}

// joinLong reads the rest of a line longer than br's buffer, whose first
// part ReadSlice returned, into *long, and returns the whole line and the
// error of the last read.
func joinLong(br *bufio.Reader, first []byte, long *[]byte) ([]byte, error) {
	*long = append((*long)[:0], first...)
	err := bufio.ErrBufferFull
	for err == bufio.ErrBufferFull {
		var part []byte
		part, err = br.ReadSlice('\n')
		*long = append(*long, part...)
	}
	return *long, err
}

// trimEOL returns line without its "\n" or "\r\n".
func trimEOL(line []byte) []byte {
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
		if n > 0 && line[n-1] == '\r' {
			n--
		}
	}
	return line[:n]
}

func (lr *LineReader) wrap(err error) error {
	msg := "read error"
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
		msg = "truncated or corrupt gzip stream"
	}
	return &Error{File: lr.Name, Line: lr.line + 1, Offset: -1, Msg: msg, Err: err}
}

// Line returns the number of the line last returned by Next (1-based).
func (lr *LineReader) Line() int { return lr.line }

// Errorf returns an *Error located at the current line.
func (lr *LineReader) Errorf(format string, args ...any) *Error {
	return &Error{File: lr.Name, Line: lr.line, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// Close closes the underlying file when the reader opened it.
func (lr *LineReader) Close() error {
	if lr.gz != nil {
		lr.gz.Close()
	}
	if lr.f != nil {
		return lr.f.Close()
	}
	return nil
}
