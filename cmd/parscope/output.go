package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// writeJSON prints v as indented JSON, the --json form of every command:
// what an Encoder with SetIndent("", "  ") writes. The indentation is added
// as the compact encoding streams out (indenter), rather than in a second
// buffer three times the size of the first: the result of a tree of 10^6
// structures is 1.9 GB indented.
func writeJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := json.NewEncoder(&indenter{w: bw, indent: "  "}).Encode(v); err != nil {
		return err
	}
	return bw.Flush()
}

// indenter writes the compact JSON written to it indented as json.Indent
// does with no prefix: a newline and the indent per level before each
// element and member, ": " after a name, "{}" and "[]" when empty. The
// JSON may come in any pieces; whitespace outside strings is dropped,
// except after the value (the newline Encoder.Encode ends it with).
type indenter struct {
	w      *bufio.Writer
	indent string
	depth  int
	// open is set after a '{' or '[' whose first element's line is not
	// begun yet; inString and escaped follow the strings.
	open, inString, escaped bool
}

func (d *indenter) newline() {
	d.w.WriteByte('\n')
	for range d.depth {
		d.w.WriteString(d.indent)
	}
}

// Write implements io.Writer; errors are the underlying writer's.
func (d *indenter) Write(p []byte) (int, error) {
	for _, c := range p {
		if d.inString {
			d.w.WriteByte(c)
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if d.depth == 0 && !d.open {
				d.w.WriteByte(c)
			}
			continue
		}
		if d.open && c != '}' && c != ']' {
			d.open = false
			d.depth++
			d.newline()
		}
		switch c {
		case '"':
			d.inString = true
			d.w.WriteByte(c)
		case '{', '[':
			d.open = true
			d.w.WriteByte(c)
		case ',':
			d.w.WriteByte(c)
			d.newline()
		case ':':
			d.w.WriteString(": ")
		case '}', ']':
			if d.open {
				d.open = false
			} else {
				d.depth--
				d.newline()
			}
			d.w.WriteByte(c)
		default:
			d.w.WriteByte(c)
		}
	}
	// bufio.Writer keeps its first error and returns it from every call.
	if _, err := d.w.Write(nil); err != nil {
		return 0, err
	}
	return len(p), nil
}

// newTable returns a tab-aligned writer for plain-text tables.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 2, 4, 2, ' ', 0) }

// progressWriter wraps a trace.Writer and shows the records written, with
// their rate, on a terminal (see internal/progress).
type progressWriter struct {
	trace.Writer
	bar     *progress.Bar
	pending int64
}

func withProgress(w trace.Writer, what string) *progressWriter {
	return &progressWriter{Writer: w, bar: progress.Start(what, 0, progress.Records)}
}

func (p *progressWriter) Add(r trace.Record) error {
	if p.bar != nil {
		if p.pending++; p.pending == 4096 {
			p.bar.Add(p.pending)
			p.pending = 0
		}
	}
	return p.Writer.Add(r)
}

func (p *progressWriter) done() { p.bar.Done() }

// createOutput calls write with a writer for path ("-" is stdout). A file
// is written under a temporary name beside path, fsynced and renamed into
// place only when write succeeds (see package atomicfile), so a failure or
// a crash never leaves a partial file or touches an existing one. Only a
// regular file is replaced, never a directory or anything else.
func createOutput(path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(os.Stdout)
	}
	return atomicfile.Write(path, atomicfile.RegularFile, func(w *bufio.Writer) error { return write(w) })
}

// outputFlags are the flags, on any command, that name a file or directory
// the command writes; inputFlags those that name one it reads. Positional
// arguments are inputs.
var (
	outputFlags = []string{"output", "plot", "plot-pc12", "bars", "csv", "save-labels", "save-simpoints", "save-weights", "keep", "raw"}
	inputFlags  = []string{"dict", "probe", "source", "check", "merge", "modes"}
)

// checkOutputs refuses a command whose output is one of its inputs, holds
// one (a directory to be replaced that contains an input) or lies inside
// an input .pst (one of its files), comparing paths and, through links and
// other spellings, files (os.SameFile). Arguments after "--" are a command
// to run, not inputs. It runs before every command.
func checkOutputs(cmd *cobra.Command, args []string) error {
	if n := cmd.ArgsLenAtDash(); n >= 0 {
		args = args[:n]
	}
	var ins []string
	for _, a := range args {
		if _, err := os.Stat(a); err == nil {
			ins = append(ins, a)
		}
	}
	flagValues := func(name string) []string {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed || !strings.HasPrefix(f.Value.Type(), "string") {
			return nil
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			return sv.GetSlice()
		}
		return []string{f.Value.String()}
	}
	for _, name := range inputFlags {
		ins = append(ins, flagValues(name)...)
	}
	for _, name := range outputFlags {
		for _, out := range flagValues(name) {
			if out == "" || out == "-" {
				continue
			}
			for _, in := range ins {
				if within(in, out) || within(out, in) && (sameFile(out, in) || store.Replaceable(in) == nil) {
					flag := "--" + name
					if f := cmd.Flags().Lookup(name); f != nil && f.Shorthand != "" {
						flag = "-" + f.Shorthand
					}
					return usagef("%s %s would overwrite the input %s; refusing to write there", flag, out, in)
				}
			}
		}
	}
	return nil
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

// within reports whether path is target or lies inside it. It compares the
// cleaned absolute paths and, for each existing ancestor of path, the file
// itself with os.SameFile, so that symbolic links and hard links to target
// are caught too.
func within(path, target string) bool {
	ti, terr := os.Stat(target)
	ta, err1 := filepath.Abs(target)
	p, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return false
	}
	for {
		if p == ta {
			return true
		}
		if terr == nil {
			if pi, err := os.Stat(p); err == nil && os.SameFile(pi, ti) {
				return true
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false
		}
		p = parent
	}
}

// fmtNS formats a time in ns as a duration ("1.2ms").
func fmtNS(ns int64) string { return time.Duration(ns).String() }
