package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/parscope/parscope/internal/progress"
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
