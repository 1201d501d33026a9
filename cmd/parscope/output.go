package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// writeJSON prints v as indented JSON, the --json form of every command:
// the writer of every face (engine.WriteJSON), so that an analysis'
// envelope is the same bytes here and in parscope-beam's output.
func writeJSON(w io.Writer, v any) error { return engine.WriteJSON(w, v) }

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
