package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parscope/parscope/internal/needtool"
)

// longCommand is a command that shows a progress line on a terminal.
type longCommand struct {
	name string
	// args returns the command line, with its outputs in dir (each run
	// gets a fresh one).
	args func(dir string) []string
	// bar starts the progress line the command draws.
	bar string
	// onStderr: the command's result is a note on stderr (import), not
	// lines on stdout.
	onStderr bool
}

// longCommands are the commands with a progress line: import, analyze,
// phases, sweep and probe build.
func longCommands(t *testing.T) []longCommand {
	t.Helper()
	src, dict := filepath.Join(examples, "amoeba.srt"), filepath.Join(examples, "amoeba_blocks.txt")
	needtool.Path(t, "gawk", "awk")
	script := fakeWorkload(t)
	modes := filepath.Join(filepath.Dir(script), "fake.modes")
	workers := probeWorkers(t)
	return []longCommand{
		{"import", func(dir string) []string {
			return []string{"import", "-o", filepath.Join(dir, "a.pst"), "--dict", dict, src}
		}, "importing gomez", true},
		{"analyze", func(dir string) []string {
			return []string{"analyze", "-o", filepath.Join(dir, "report"), "--dict", dict, src}
		}, "analysing amoeba.srt", false},
		{"phases", func(string) []string {
			return []string{"phases", filepath.Join(examples, "gzip.bb.gz")}
		}, "phases: gzip.bb.gz", false},
		{"sweep", func(string) []string {
			return []string{"sweep", "--global", "--modes", modes, "--param", "n=1,2", "--param", "g=10", "--", script, "{n}", "{g}", "{out}"}
		}, "sweep: trial 1", false},
		{"probe build", func(dir string) []string {
			return []string{"probe", "build", "-o", filepath.Join(dir, "mm.probe"), "--intervals", "100",
				"--", filepath.Join(workers, "matmul"), "-n", "24", "-reps", "40", "-rows", "2"}
		}, "probe build", false},
	}
}

// TestProgressInAPipe runs each long command with stdout and stderr in
// pipes: no progress line reaches stderr, so it holds no carriage return
// and no escape sequence; the results are whole.
func TestProgressInAPipe(t *testing.T) {
	for _, c := range longCommands(t) {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := run(t, c.args(t.TempDir())...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if strings.ContainsAny(stderr, "\r\x1b") || strings.ContainsAny(stdout, "\r\x1b") {
				t.Fatalf("a carriage return or an escape in a pipe:\nstdout %q\nstderr %q", stdout, stderr)
			}
			if res := stdout; c.onStderr && !strings.HasPrefix(stderr, "imported ") || !c.onStderr && res == "" {
				t.Fatalf("no result: stdout %q, stderr %q", stdout, stderr)
			}
		})
	}
}

// TestProgressOnATerminal runs each long command with stdout and stderr on
// one pseudo-terminal (script from bsdutils), as at a user's terminal, and
// checks that the progress line is drawn and cleared before the result:
// the result's first line starts at the start of a line, and from there
// on the terminal receives the result alone, no carriage return and no
// escape sequence. It also checks that with stdout in a file (stderr still
// the terminal) the file holds no escape.
func TestProgressOnATerminal(t *testing.T) {
	script := needtool.Path(t, "bsdutils", "script")
	for _, c := range longCommands(t) {
		t.Run(c.name, func(t *testing.T) {
			// The first line of the result, from a run in a pipe.
			stdout, stderr, code := run(t, c.args(t.TempDir())...)
			first, _, _ := strings.Cut(stdout, "\n")
			if c.onStderr {
				first, _, _ = strings.Cut(stderr, "\n")
			}
			if code != 0 || first == "" {
				t.Fatalf("in a pipe: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			// Only the first words: times and rates differ between runs.
			if i := strings.IndexAny(first, "0123456789"); i > 0 && !strings.HasPrefix(c.name, "phases") {
				first = first[:i]
			}
			cmdline := shellWords(append([]string{bin}, c.args(t.TempDir())...))
			raw, err := exec.Command(script, "-q", "-e", "-c", cmdline, "/dev/null").Output()
			if err != nil {
				t.Fatalf("script: %v\n%q", err, raw)
			}
			ts := strings.ReplaceAll(string(raw), "\r\n", "\n") // the terminal's line ends
			if !strings.Contains(ts, "\r"+c.bar) || !strings.Contains(ts, "\r\x1b[K") {
				t.Fatalf("no progress line %q drawn and cleared:\n%q", c.bar, ts)
			}
			i := strings.Index(ts, first)
			if i < 0 {
				t.Fatalf("the result %q is not on the terminal:\n%q", first, ts)
			}
			if before := ts[:i]; before != "" && !strings.HasSuffix(before, "\n") && !strings.HasSuffix(before, "\r\x1b[K") {
				t.Fatalf("the result does not start a line (it follows %q):\n%q", before[max(0, len(before)-80):], ts)
			}
			if rest := ts[i:]; strings.ContainsAny(rest, "\r\x1b") {
				t.Fatalf("a carriage return or an escape after the result began:\n%q", rest)
			}
			if c.onStderr {
				return
			}
			out := filepath.Join(t.TempDir(), "stdout")
			cmdline = shellWords(append([]string{bin}, c.args(t.TempDir())...)) + " > " + shellWords([]string{out})
			if raw, err := exec.Command(script, "-q", "-e", "-c", cmdline, "/dev/null").Output(); err != nil || !strings.Contains(string(raw), "\r"+c.bar) {
				t.Fatalf("with stdout in a file: %v, no progress line on the terminal:\n%q", err, raw)
			}
			b, err := os.ReadFile(out)
			if err != nil || !strings.HasPrefix(string(b), first) || strings.ContainsAny(string(b), "\r\x1b") {
				t.Fatalf("stdout in a file: %v, %q", err, b)
			}
		})
	}
	if _, _, code := run(t, "-q", "version"); code != 0 {
		t.Fatal("version -q failed")
	}
}

// shellWords quotes words for sh -c.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
