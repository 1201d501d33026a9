package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock is a fenced code block of README.md: its language and lines.
type readmeBlock struct {
	lang  string
	lines []string
	line  int // the line of the opening fence
}

// readmeBlocks returns the fenced code blocks of a Markdown text in order.
func readmeBlocks(t *testing.T, text string) []readmeBlock {
	t.Helper()
	var blocks []readmeBlock
	var cur *readmeBlock
	for i, l := range strings.Split(text, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &readmeBlock{lang: strings.TrimPrefix(l, "```"), line: i + 1}
		case cur != nil && l == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: the code block is not closed", cur.line)
	}
	return blocks
}

// freshClone returns a directory that holds what a fresh clone of the
// repository at root holds: a symbolic link to each top-level entry under
// version control (every entry but bin and .git without git), and nothing
// a build or an earlier run left there.
func freshClone(t *testing.T, root string) string {
	t.Helper()
	var names []string
	if out, err := exec.Command("git", "-C", root, "ls-files").Output(); err == nil && len(out) > 0 {
		seen := map[string]bool{}
		for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			top, _, _ := strings.Cut(f, "/")
			if !seen[top] {
				seen[top] = true
				names = append(names, top)
			}
		}
	} else {
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() != "bin" && e.Name() != ".git" {
				names = append(names, e.Name())
			}
		}
	}
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(filepath.Join(root, n), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// suiteCommand matches the commands of README.md that run the test suite
// TestREADME belongs to: they are checked, not run.
var suiteCommand = regexp.MustCompile(`^(bash scripts/test\.sh|go test )`)

// checkSuiteCommand checks that what a test-suite command of the README
// names exists in dir: the script, the packages, the fuzz target.
func checkSuiteCommand(t *testing.T, dir, cmd string) {
	t.Helper()
	fields := strings.Fields(cmd)
	if fields[0] == "bash" {
		if _, err := os.Stat(filepath.Join(dir, fields[1])); err != nil {
			t.Errorf("README: %s: %v", cmd, err)
		}
		return
	}
	for i, f := range fields {
		if f == "#" {
			break
		}
		if strings.HasPrefix(f, "./") {
			if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || !fi.IsDir() {
				t.Errorf("README: %s: no package %s", cmd, f)
			}
		}
		if f == "-fuzz" && i+1 < len(fields) {
			target := "func " + fields[i+1] + "("
			found := false
			for _, g := range fields {
				if strings.HasPrefix(g, "./") {
					tests, _ := filepath.Glob(filepath.Join(dir, g, "*_test.go"))
					for _, tf := range tests {
						if b, err := os.ReadFile(tf); err == nil && strings.Contains(string(b), target) {
							found = true
						}
					}
				}
			}
			if !found {
				t.Errorf("README: %s: no fuzz target %s", cmd, fields[i+1])
			}
		}
	}
}

// TestREADME runs the command blocks of README.md (fenced sh and console
// blocks) in order, as written, in a fresh copy of the repository, with no
// parscope on PATH: each sh block as one bash script that must succeed,
// each "$ command" of a console block compared with the output shown
// under it. A command of a tool not installed is left out only when the
// README says the tool is optional ("`duckdb` is optional"); the commands
// that run the test suite are checked, not run.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds parscope and runs the README's commands")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	text := readFile(t, filepath.Join(root, "README.md"))
	dir := freshClone(t, root)
	// No parscope but the one the README builds.
	var path []string
	for _, p := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(p, "parscope")); err != nil {
			path = append(path, p)
		}
	}
	env := append(os.Environ(), "PATH="+strings.Join(path, string(filepath.ListSeparator)), "TMPDIR="+t.TempDir())
	shell := func(script string) *exec.Cmd {
		c := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
		c.Dir, c.Env = dir, env
		return c
	}
	ran := 0
	for _, b := range readmeBlocks(t, text) {
		switch b.lang {
		case "sh":
			var script []string
			for _, l := range b.lines {
				cmd := strings.TrimSpace(l)
				if cmd == "" {
					continue
				}
				if suiteCommand.MatchString(cmd) {
					checkSuiteCommand(t, dir, cmd)
					continue
				}
				tool := strings.Fields(cmd)[0]
				if !strings.Contains(tool, "/") {
					if _, err := exec.LookPath(tool); err != nil {
						if !strings.Contains(text, "`"+tool+"` is optional") {
							t.Errorf("README.md:%d: %s is not installed and the README does not say it is optional", b.line, tool)
						} else {
							t.Logf("README.md:%d: %s is not installed (optional): left out %s", b.line, tool, cmd)
						}
						continue
					}
				}
				script = append(script, cmd)
			}
			if len(script) == 0 {
				continue
			}
			out, err := shell(strings.Join(script, "\n")).CombinedOutput()
			if err != nil {
				t.Fatalf("README.md:%d: %v\n%s\n%s", b.line, err, strings.Join(script, "\n"), out)
			}
			ran += len(script)
		case "console":
			for i := 0; i < len(b.lines); {
				cmd, ok := strings.CutPrefix(b.lines[i], "$ ")
				if !ok {
					t.Fatalf("README.md:%d: console block line %q is not a $ command", b.line+1+i, b.lines[i])
				}
				i++
				var want []string
				for ; i < len(b.lines) && !strings.HasPrefix(b.lines[i], "$ "); i++ {
					want = append(want, b.lines[i])
				}
				out, _ := shell(cmd).CombinedOutput() // a console block may show an error
				if got := strings.TrimRight(string(out), "\n"); got != strings.Join(want, "\n") {
					t.Errorf("README.md:%d: %s printed\n%s\nthe README shows\n%s", b.line, cmd, got, strings.Join(want, "\n"))
				}
				ran++
			}
		}
	}
	// The commands did what the README says they do.
	for _, p := range []string{"bin/parscope", "amoeba-report/index.html", "amoeba.pst/manifest.json", "amoeba.json", "amoeba-csv/states.csv"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("after the README's commands: %v", err)
		}
	}
	if ran < 8 {
		t.Errorf("ran %d commands of the README, want at least 8", ran)
	}
}
