package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// SourceMaxLines bounds the lines read from one source file.
const SourceMaxLines = 20000

// sourceMaxLineBytes bounds one line of a source file.
const sourceMaxLineBytes = 1 << 20

// readSources reads the source files the regions name, from the
// directories the user named (Options.SourceDirs) and nowhere else: a
// trace is untrusted input, and the file names it carries must not make
// the report show files it was not meant to (see OpenSource). Files that
// cannot be found there are left out; without directories nothing is read.
func readSources(h *trace.Header, dirs []string) map[string][]string {
	if len(dirs) == 0 {
		return nil
	}
	out := map[string][]string{}
	for _, r := range h.Regions {
		if r.File == "" {
			continue
		}
		if _, done := out[r.File]; done {
			continue
		}
		if lines, err := SourceLines(dirs, r.File); err == nil {
			out[r.File] = lines
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// OpenSource opens the source file a trace names, confined to dirs. In
// each directory in turn it tries the name as given, when it stays inside
// the directory (a relative name with no ".." escape, or an absolute name
// that lies under the directory), then the name's base name. Symbolic links
// are followed only while they stay inside the directory (os.Root), and
// only regular files are opened. A name that resolves nowhere inside dirs
// is an error naming it; nothing outside dirs is ever opened.
func OpenSource(dirs []string, name string) (*os.File, error) {
	if name == "" {
		return nil, fmt.Errorf("source file: empty name")
	}
	for _, d := range dirs {
		f, err := openInDir(d, name)
		if err == nil {
			return f, nil
		}
	}
	return nil, fmt.Errorf("source file %q: not found inside the source directories %q", format.Excerpt([]byte(name)), dirs)
}

// SourceLines reads the lines of the source file name, confined to dirs
// as OpenSource is (at most SourceMaxLines lines).
func SourceLines(dirs []string, name string) ([]string, error) {
	f, err := OpenSource(dirs, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, err := readLines(f)
	if err != nil {
		return nil, fmt.Errorf("source file %s: %w", f.Name(), err)
	}
	return lines, nil
}

// openInDir tries name inside dir (see OpenSource).
func openInDir(dir, name string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var cands []string
	if rel, ok := inside(dir, name); ok {
		cands = append(cands, rel)
	}
	if base := filepath.Base(name); filepath.IsLocal(base) {
		cands = append(cands, base)
	}
	for _, c := range cands {
		if f, err := openRegular(root, c); err == nil {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%s: no %s inside", dir, name)
}

// inside returns name relative to dir when it stays inside dir: a relative
// name that is local (no "..", not absolute), or an absolute name under
// dir (or under dir with its symbolic links resolved).
func inside(dir, name string) (string, bool) {
	if !filepath.IsAbs(name) {
		return name, filepath.IsLocal(name)
	}
	bases := []string{}
	if abs, err := filepath.Abs(dir); err == nil {
		bases = append(bases, abs)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		if abs, err := filepath.Abs(real); err == nil {
			bases = append(bases, abs)
		}
	}
	for _, b := range bases {
		if rel, err := filepath.Rel(b, filepath.Clean(name)); err == nil && filepath.IsLocal(rel) {
			return rel, true
		}
	}
	return "", false
}

// openRegular opens name inside root when it is a regular file (never a
// device, a FIFO or a directory).
func openRegular(root *os.Root, name string) (*os.File, error) {
	st, err := root.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	return f, nil
}

// readLines reads at most SourceMaxLines lines of r.
func readLines(r io.Reader) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), sourceMaxLineBytes)
	for len(lines) < SourceMaxLines && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}
