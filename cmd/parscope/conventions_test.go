package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parscope/parscope/internal/needtool"
)

// TestVersionMatchesBuildInfo checks parscope version against what the Go
// toolchain embedded in the binary, read independently with go version -m.
func TestVersionMatchesBuildInfo(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	settings := map[string]string{}
	var mod, goVersion string
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case i == 0 && len(f) == 2:
			goVersion = f[1]
		case len(f) >= 3 && f[0] == "mod":
			mod = f[2]
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				settings[k] = v
			}
		}
	}
	if mod == "" || goVersion == "" {
		t.Fatalf("cannot read go version -m output:\n%s", out)
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(mustRun(t, "version", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	want := versionInfo{Version: mod, Go: goVersion, Commit: settings["vcs.revision"], Time: settings["vcs.time"], Modified: settings["vcs.modified"] == "true"}
	if v != want {
		t.Fatalf("version --json = %+v, want %+v", v, want)
	}
	line := mustRun(t, "version")
	if !strings.HasPrefix(line, "parscope "+mod+" ") || !strings.HasSuffix(line, " "+goVersion+"\n") {
		t.Fatalf("version = %q, want parscope %s ... %s", line, mod, goVersion)
	}
	if got := mustRun(t, "--version"); got != line {
		t.Fatalf("--version = %q, version = %q", got, line)
	}
}

// TestVersionText checks the line for an installed module and for a
// modified clone, from build information as the toolchain writes it.
func TestVersionText(t *testing.T) {
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0 go1.26.0"},
		{&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}}, "(devel) (commit 0123abcd, modified) go1.26.1"},
		{&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "false"}}}, "(devel) (commit 0123abcd) go1.26.1"},
	} {
		if got := versionFrom(c.bi, true).String(); got != c.want {
			t.Errorf("version of %+v = %q, want %q", c.bi.Main, got, c.want)
		}
	}
	if got := versionFrom(nil, false); got.Version != "(devel)" || got.Go == "" {
		t.Errorf("without build information: %+v", got)
	}
}

// TestExitCodes checks 0 for success, 1 for failure and 2 for every kind
// of wrong usage, on several commands.
func TestExitCodes(t *testing.T) {
	trace := examples + "/amoeba.srt"
	for _, c := range []struct {
		args []string
		code int
		msg  string // in stderr
	}{
		{[]string{"version"}, 0, ""},
		{[]string{"--help"}, 0, ""},
		{[]string{}, 2, "needs a command"},
		{[]string{"nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"imprt"}, 2, "did you mean import?"},
		{[]string{"probe"}, 2, "probe needs a command"},
		{[]string{"probe", "frobnicate"}, 2, `unknown command "frobnicate" for "parscope probe"`},
		{[]string{"info"}, 2, "info: accepts 1 arg(s), received 0"},
		{[]string{"info", "a.pst", "b.pst"}, 2, "info: accepts 1 arg(s), received 2"},
		{[]string{"info", "--nope", "a.pst"}, 2, "info: unknown flag: --nope"},
		{[]string{"entropy", "--subsets", "many", trace}, 2, `invalid argument "many"`},
		{[]string{"analyze", trace}, 2, "-o DIR is required"},
		{[]string{"-q", "-v", "version"}, 2, "--quiet and --verbose exclude each other"},
		{[]string{"info", "/no/such/trace.pst"}, 1, "/no/such/trace.pst"},
		{[]string{"phases", "/no/such/bbv.txt"}, 1, "/no/such/bbv.txt"},
	} {
		_, stderr, code := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("parscope %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.msg)
		}
	}
}

// flagNames lists the flags completion must offer for c: its own, the
// inherited global ones, and help.
func flagNames(c *cobra.Command) []string {
	var names []string
	c.InitDefaultHelpFlag()
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, "--"+f.Name)
			if f.Shorthand != "" {
				names = append(names, "-"+f.Shorthand)
			}
		}
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, "--"+f.Name)
		}
	})
	return names
}

// TestCompletion checks that the bash, zsh and fish scripts are complete
// programs that ask parscope itself for candidates, and that parscope
// offers every command and every flag of every command: completion reads
// the same command table the commands run from, so it cannot drift.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script := mustRun(t, "completion", shell)
		if !strings.Contains(script, "__complete") || !strings.Contains(script, "parscope") {
			t.Errorf("completion %s: the script does not call parscope __complete", shell)
		}
	}
	t.Run("bash -n", func(t *testing.T) {
		c := exec.Command(needtool.Path(t, "bash", "bash"), "-n")
		c.Stdin = strings.NewReader(mustRun(t, "completion", "bash"))
		if out, err := c.CombinedOutput(); err != nil {
			t.Errorf("bash -n on the bash completion: %v\n%s", err, out)
		}
	})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		if c.HasAvailableSubCommands() {
			got := candidates(t, append(path, ""))
			for _, s := range c.Commands() {
				if s.IsAvailableCommand() && !got[s.Name()] {
					t.Errorf("parscope %s <TAB> does not offer %s", strings.Join(path, " "), s.Name())
				}
			}
		}
		if c.Runnable() && c.Name() != "completion" {
			got := candidates(t, append(path, "-"))
			for _, f := range flagNames(c) {
				if !got[f] {
					t.Errorf("parscope %s -<TAB> does not offer %s", strings.Join(path, " "), f)
				}
			}
		}
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				walk(s)
			}
		}
	}
	walk(root)
	// A spot check that the table above is the real one.
	if got := candidates(t, []string{"import", "-"}); !got["--output"] || !got["--format"] || !got["--quiet"] {
		t.Errorf("parscope import -<TAB> = %v", got)
	}
}

// candidates runs parscope __complete ARGS and returns the candidates.
func candidates(t *testing.T, args []string) map[string]bool {
	t.Helper()
	out := mustRun(t, append([]string{"__complete"}, args...)...)
	got := map[string]bool{}
	directive := regexp.MustCompile(`^:\d+$`)
	for _, line := range strings.Split(out, "\n") {
		if line == "" || directive.MatchString(line) {
			continue
		}
		name, _, _ := strings.Cut(line, "\t")
		got[name] = true
	}
	return got
}

// TestQuietVerboseAndPipes checks the global flags and that nothing but
// notes reaches stderr when it is a pipe: no progress line, no escape.
func TestQuietVerboseAndPipes(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(examples, "amoeba.srt")
	dict := filepath.Join(examples, "amoeba_blocks.txt")
	pst := filepath.Join(dir, "a.pst")
	_, stderr, code := run(t, "import", "-o", pst, "--dict", dict, src)
	if code != 0 || !regexp.MustCompile(`^imported [0-9,]+ records \(gomez\) from 1 file\(s\) into \S+a\.pst in \S+\n$`).MatchString(stderr) {
		t.Fatalf("import in a pipe: exit %d, stderr %q; want one note", code, stderr)
	}
	for _, q := range []string{"-q", "--quiet"} {
		_, stderr, code = run(t, q, "import", "--force", "-o", pst, "--dict", dict, src)
		if code != 0 || stderr != "" {
			t.Fatalf("import %s: exit %d, stderr %q; want nothing", q, code, stderr)
		}
	}
	// Quiet still reports errors.
	if _, stderr, code = run(t, "-q", "info", filepath.Join(dir, "none.pst")); code != 1 || !strings.Contains(stderr, "none.pst") {
		t.Fatalf("info -q of a missing trace: exit %d, stderr %q", code, stderr)
	}
	out := filepath.Join(dir, "report")
	_, stderr, code = run(t, "analyze", "-v", "-o", out, pst)
	// The engine runs the record analyses in one pass: one line names them
	// all and the time of the pass.
	for _, step := range []string{"overview", "states", "occupancy"} {
		if !regexp.MustCompile(`(?m)^a\.pst: (\S+, )*` + step + `(, \S+)* took \S+$`).MatchString(stderr) {
			t.Errorf("analyze -v: no line for %s in %q", step, stderr)
		}
	}
	if code != 0 || strings.ContainsAny(stderr, "\r\x1b") {
		t.Fatalf("analyze -v in a pipe: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, _ = run(t, "analyze", "-o", out, pst); stderr != "" {
		t.Fatalf("analyze in a pipe wrote %q to stderr", stderr)
	}
}
