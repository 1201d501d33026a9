package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/internal/atomicfile"
	"github.com/parscope/parscope/internal/progress"
	"github.com/parscope/parscope/show/plot"
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
	p.count(1)
	return p.Writer.Add(r)
}

// AddBatch implements trace.BatchWriter, passing the batch on whole.
func (p *progressWriter) AddBatch(rs []trace.Record) (int, error) {
	n, err := trace.AddBatch(p.Writer, rs)
	p.count(int64(n))
	return n, err
}

// count adds n records to the bar, which it moves every 4,096 records.
func (p *progressWriter) count(n int64) {
	if p.bar != nil {
		if p.pending += n; p.pending >= 4096 {
			p.bar.Add(p.pending)
			p.pending = 0
		}
	}
}

// Reset implements trace.Resetter when the writer it wraps does, and
// starts the count again.
func (p *progressWriter) Reset() error {
	r, ok := p.Writer.(trace.Resetter)
	if !ok {
		return errors.ErrUnsupported
	}
	if err := r.Reset(); err != nil {
		return err
	}
	if p.bar != nil {
		p.pending = 0
		p.bar.Set(0)
	}
	return nil
}

func (p *progressWriter) done() { p.bar.Done() }

// createOutput calls write with a writer for path ("-" is stdout). A file
// is written under a temporary name beside path, fsynced and renamed into
// place only when write succeeds (see package atomicfile), so a failure or
// a crash never leaves a partial file or touches an existing one. What
// exists at path is replaced only as replaceFile(force) allows: a regular
// file with --force, nothing without.
func createOutput(path string, force bool, write func(io.Writer) error) error {
	if path == "-" {
		return write(os.Stdout)
	}
	return atomicfile.Write(path, replaceFile(force), func(w *bufio.Writer) error { return write(w) })
}

// writeFigure writes a figure drawn for path (see plot.Render) to path as
// createOutput does; err, the drawing's error, is returned as it is.
func writeFigure(path string, force bool, fig *plot.Figure, err error) error {
	if err != nil {
		return err
	}
	return createOutput(path, force, fig.Write)
}

// replaceFile is the rule for what exists at a path a command writes one
// file to: nothing is replaced without --force (an error that says to pass
// it), and with it only a regular file, never a directory, a link or a
// special file. Inputs are never outputs (checkOutputs).
func replaceFile(force bool) atomicfile.Replace {
	return func(path string) error {
		if err := atomicfile.RegularFile(path); err != nil {
			return err
		}
		if !force {
			return fmt.Errorf("%s already exists; pass --force to replace it", path)
		}
		return nil
	}
}

// checkFileOutputs applies replaceFile(force) to each of paths that exists
// ("" and "-" are skipped), so that a command refuses an output it may not
// replace before it does any work. checkOutputs calls it for the flags of
// fileOutputFlag; a command whose output names are made from a flag (BASE
// of a Paraver export, NAME-time.png) calls it itself.
func checkFileOutputs(force bool, paths ...string) error {
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		if _, err := os.Lstat(p); err == nil {
			if err := replaceFile(force)(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// forceFlag defines --force, the one flag by which every command that
// writes files replaces what exists at an output path. It replaces only
// what the command would write there: a regular file for a file output, a
// .pst for a trace, a directory parscope wrote for a directory output;
// never an input.
func forceFlag(fl *pflag.FlagSet, force *bool) {
	fl.BoolVar(force, "force", false, "replace an output that exists (only a file, .pst or directory of the kind this command writes; never an input)")
}

// fileOutputAnnotation marks the flags that name one file a command writes.
const fileOutputAnnotation = "parscope-file-output"

// fileOutputFlag defines a flag naming one file the command writes, which
// checkOutputs checks before the command runs: an existing file there is
// refused without --force (see replaceFile), and so is an input.
func fileOutputFlag(fl *pflag.FlagSet, p *string, name, shorthand, value, usage string) {
	fl.StringVarP(p, name, shorthand, value, usage)
	if err := fl.SetAnnotation(name, fileOutputAnnotation, []string{"file"}); err != nil {
		panic(err) // the flag was defined just above
	}
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
	var files []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[fileOutputAnnotation]; ok {
			files = append(files, f.Value.String())
		}
	})
	return checkFileOutputs(forced(cmd), files...)
}

// forced reports whether --force was given to cmd (false for a command
// that has no --force).
func forced(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("force")
	return f != nil && f.Value.String() == "true"
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
