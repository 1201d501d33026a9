package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/parscope/parscope/trace"
)

// writeJSON prints v as indented JSON, the --json form of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newTable returns a tab-aligned writer for plain-text tables.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 2, 4, 2, ' ', 0) }

// stderrIsTerminal reports whether progress output should be shown.
func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// progressWriter wraps a trace.Writer and shows a record counter with its
// rate on stderr while it runs, when stderr is a terminal.
type progressWriter struct {
	trace.Writer
	bar     *progressbar.ProgressBar
	what    string
	total   int64
	pending int
}

func withProgress(w trace.Writer, what string) *progressWriter {
	p := &progressWriter{Writer: w, what: what}
	if stderrIsTerminal() {
		p.bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("records"),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

func (p *progressWriter) Add(r trace.Record) error {
	if p.bar != nil {
		p.pending++
		if p.pending == 1<<16 {
			p.total += int64(p.pending)
			p.bar.Describe(fmt.Sprintf("%s: %s records", p.what, humanCount(p.total)))
			_ = p.bar.Add(p.pending)
			p.pending = 0
		}
	}
	return p.Writer.Add(r)
}

func (p *progressWriter) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// humanBytes formats a byte count with binary units.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// humanCount formats an integer with thousands separators.
func humanCount(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// createOutput calls write with a writer for path ("-" is stdout). A file
// is written under a temporary name beside path and renamed into place only
// when write succeeds, so a failure never leaves a partial file or touches
// an existing one.
func createOutput(path string, write func(io.Writer) error) (err error) {
	if path == "-" {
		return write(os.Stdout)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// fmtNS formats a time in ns as a duration ("1.2ms").
func fmtNS(ns int64) string { return time.Duration(ns).String() }
