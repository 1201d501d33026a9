// Package format holds what parscope's importers and exporters share: the
// located error they return on bad input, the registry through which the
// CLI finds an importer by name or by content, and a line reader for text
// formats (plain or gzip, lines of any length).
//
// Each format lives in its own package under format/ and registers itself
// from an init function; a program that imports format/all gets them all.
package format

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/parscope/parscope/trace"
)

// Error is an import error located in its input: a file and a line (for
// text formats) or a byte offset (for binary ones), and what was expected.
type Error struct {
	File   string
	Line   int   // 1-based line number; 0 when not line-oriented
	Offset int64 // byte offset; -1 when a line is given or nothing is known
	Msg    string
	Err    error // an underlying cause, if any
}

// Error formats the location the way compilers do: "file:line: message" or
// "file: byte N: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case e.Line > 0:
		fmt.Fprintf(&b, ":%d", e.Line)
	case e.Offset >= 0:
		fmt.Fprintf(&b, ": byte %d", e.Offset)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// LineError returns an Error located at a line of a file.
func LineError(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// OffsetError returns an Error located at a byte offset of a file.
func OffsetError(file string, offset int64, format string, args ...any) *Error {
	return &Error{File: file, Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// MaxEcho is about how many bytes of an input an error message repeats.
const MaxEcho = 64

// Excerpt returns s for an error message: whole when it is at most MaxEcho
// bytes, otherwise its first MaxEcho bytes (cut at a UTF-8 character
// boundary) followed by "…" and its full length, so that a 100 MB field
// does not become a 100 MB message.
func Excerpt(s []byte) string {
	if len(s) <= MaxEcho {
		return string(s)
	}
	n := MaxEcho
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:n], len(s))
}

// maxMessage is about how many bytes of another library's error message
// (a JSON decoder's, say, which quotes the input) ClipError keeps.
const maxMessage = 4 * MaxEcho

// ClipError returns err with its message cut, as Excerpt cuts an input, to
// about 256 bytes: a decoder's message may quote a field of the input
// whole. errors.Is and errors.As still see err. A nil err gives nil.
func ClipError(err error) error {
	if err == nil || len(err.Error()) <= maxMessage {
		return err
	}
	return &clippedError{err}
}

type clippedError struct{ err error }

func (c *clippedError) Error() string {
	s := c.err.Error()
	n := maxMessage
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:n], len(s))
}

func (c *clippedError) Unwrap() error { return c.err }

// WarningPrefix starts the Header.Meta.Extra keys that hold an import's
// warnings: what an importer noticed about its input and went on with.
const WarningPrefix = "warning."

// Warn records a warning about the input in h, under WarningPrefix+key;
// msg names the file it is about. `parscope import` (and every command
// that imports on the fly) prints the warnings once the import is done,
// and `parscope info` shows them with the other metadata.
func Warn(h *trace.Header, key, msg string) {
	if h.Meta.Extra == nil {
		h.Meta.Extra = map[string]string{}
	}
	h.Meta.Extra[WarningPrefix+key] = msg
}

// Warnings returns the warnings recorded in h with Warn, sorted by key.
func Warnings(h *trace.Header) []string {
	var keys []string
	for k := range h.Meta.Extra {
		if strings.HasPrefix(k, WarningPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = h.Meta.Extra[k]
	}
	return out
}

// Options are the import options common to all formats. A format ignores
// what does not apply to it and documents what it reads from Params.
type Options struct {
	// Dict is an optional dictionary file (for gomez: "id description" lines naming blocks).
	Dict string
	// TimeUnit overrides the unit of the input's timestamps (0: the format's default).
	TimeUnit time.Duration
	// Params holds format-specific options as key=value pairs.
	Params map[string]string
}

// Importer converts files of one format into the trace model.
type Importer interface {
	// Name is the format's name as given to --format ("gomez", "annotated", "bbv").
	Name() string
	// Describe is a one-line description for help texts.
	Describe() string
	// Detect reports whether a file looks like this format from its name
	// and its first bytes (decompressed when the file is gzipped).
	Detect(name string, head []byte) bool
	// Import reads the inputs and writes the trace to w, filling in the
	// header (runs, dictionaries, metadata, repairs). It stops at the first
	// error, which locates the problem in its input.
	Import(ctx context.Context, inputs []string, opts Options, w trace.Writer) error
}

var (
	mu        sync.RWMutex
	importers = map[string]Importer{}
)

// Register makes an importer available by name. It panics on a duplicate
// name, which is a programming error caught at init time.
func Register(imp Importer) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := importers[imp.Name()]; dup {
		panic("format: importer " + imp.Name() + " registered twice")
	}
	importers[imp.Name()] = imp
}

// Lookup returns the importer with the given name.
func Lookup(name string) (Importer, error) {
	mu.RLock()
	defer mu.RUnlock()
	if imp, ok := importers[name]; ok {
		return imp, nil
	}
	return nil, fmt.Errorf("unknown format %q (known: %s)", name, strings.Join(namesLocked(), ", "))
}

// Names lists the registered importers in alphabetical order.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	var ns []string
	for n := range importers {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// Detect returns the importer that recognises path from its content. It
// reads the first few kilobytes (through gzip when the file is gzipped).
// A directory (an OTF2 archive, say) is offered to each importer with an
// empty head.
func Detect(path string) (Importer, error) {
	var head []byte
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		if head, err = Head(path, 8192); err != nil {
			return nil, err
		}
	}
	mu.RLock()
	defer mu.RUnlock()
	var found []Importer
	for _, n := range namesLocked() {
		if importers[n].Detect(path, head) {
			found = append(found, importers[n])
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%s: cannot tell the format from its content; give --format (known: %s)", path, strings.Join(namesLocked(), ", "))
	case 1:
		return found[0], nil
	}
	var ns []string
	for _, f := range found {
		ns = append(ns, f.Name())
	}
	return nil, fmt.Errorf("%s: the content fits several formats (%s); give --format", path, strings.Join(ns, ", "))
}
