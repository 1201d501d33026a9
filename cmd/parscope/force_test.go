package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// notFileOutputs are the output flags that name a directory, or a name
// other files are made from, rather than one file: they keep their own
// rules (docs/cli.md, "Outputs"). export -o is a file or a directory by
// --format; ocs --plot NAME draws NAME-time and NAME-delay.
var notFileOutputs = []string{
	"analyze --output", "bbv --output", "bbv --keep", "export --output", "import --output",
	"instrument --output", "mpirun --output", "mpirun --raw", "ocs --plot", "sweep --keep",
}

// eachCommand calls fn for every command under c.
func eachCommand(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, s := range c.Commands() {
		eachCommand(s, fn)
	}
}

// commandName is the command's path without "parscope ".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
}

// fileOutputs returns "COMMAND --FLAG" for every flag defined with
// fileOutputFlag.
func fileOutputs() []string {
	var out []string
	eachCommand(root, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if _, ok := f.Annotations[fileOutputAnnotation]; ok {
				out = append(out, commandName(c)+" --"+f.Name)
			}
		})
	})
	slices.Sort(out)
	return out
}

// TestOutputFlagsDeclared checks that every flag checkOutputs knows as an
// output is either a file output (fileOutputFlag, so that an existing file
// needs --force) or one of the directory outputs with rules of their own,
// and that every command writing files has the one --force (analyze
// replaces only its own report, which it always may).
func TestOutputFlagsDeclared(t *testing.T) {
	files := fileOutputs()
	eachCommand(root, func(c *cobra.Command) {
		writes := false
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !slices.Contains(outputFlags, f.Name) || !strings.HasPrefix(f.Value.Type(), "string") {
				return // --csv is a file on phasespace, a format elsewhere
			}
			key := commandName(c) + " --" + f.Name
			isFile, isOther := slices.Contains(files, key), slices.Contains(notFileOutputs, key)
			if isFile == isOther {
				t.Errorf("%s: a file output %v, listed in notFileOutputs %v: want exactly one", key, isFile, isOther)
			}
			writes = true
		})
		if !writes || commandName(c) == "analyze" {
			return
		}
		f := c.LocalFlags().Lookup("force")
		if f == nil {
			t.Errorf("%s writes files but has no --force", commandName(c))
		} else if want := "replace an output that exists"; !strings.HasPrefix(f.Usage, want) {
			t.Errorf("%s --force: %q, not the one definition of forceFlag", commandName(c), f.Usage)
		}
	})
}

// TestFileOutputsNeedForce runs every file output onto an existing file
// that is not the command's: without --force the command fails (exit 1)
// saying to pass it and the file is untouched; with it the file is
// replaced; and an input is never replaced, --force or not (exit 2). The
// outputs whose names are made from a flag (export --format prv BASE, ocs
// --plot NAME) are refused by any existing file they would write.
func TestFileOutputsNeedForce(t *testing.T) {
	dir := t.TempDir()
	am, ring := importAmoeba(t), importRing(t)
	gz := filepath.Join(dir, "gzip.bb.gz")
	copyFile(t, filepath.Join(examples, "gzip.bb.gz"), gz)
	sweep := filepath.Join(dir, "sweep.csv")
	copyFile(t, filepath.Join("testdata", "occupancy_sweep.golden.csv"), sweep)
	pf := filepath.Join(dir, "some.probe") // never read: the check comes first
	if err := os.WriteFile(pf, []byte("not a probe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each case: the command line with OUT for the output and the input it
	// must not replace ("" when it has none); replaced says whether it runs
	// here with --force (the others need a worker or a command to run).
	const OUT = "{out}"
	cases := []struct {
		flag     string
		args     []string
		in       string
		replaced bool
	}{
		{"export --output", []string{"export", "--format", "chrome", "-o", OUT, am}, am, true},
		{"export --output", []string{"export", "--format", "csv", "--table", "states", "-o", OUT, am}, am, true},
		{"states --output", []string{"states", "--csv", "-o", OUT, am}, am, true},
		{"pca --plot", []string{"pca", "--plot", OUT, am}, am, true},
		{"pca --plot-pc12", []string{"pca", "--components", "2", "--plot-pc12", OUT, am}, am, true},
		{"phasespace --plot", []string{"phasespace", "--plot", OUT, am}, am, true},
		{"phasespace --csv", []string{"phasespace", "--csv", OUT, am}, am, true},
		{"mentropy --output", []string{"mentropy", "-o", OUT, ring}, ring, true},
		{"mentropy --plot", []string{"mentropy", "--plot", OUT, ring}, ring, true},
		{"occupancy --plot", []string{"occupancy", "--windows", "4", "--plot", OUT, am}, am, true},
		{"occupancy --bars", []string{"occupancy", "--bars", OUT, am}, am, true},
		{"occupancy --output", []string{"occupancy", "--all", "--csv", "-o", OUT, am}, am, true},
		{"comm --plot", []string{"comm", "--unknown-comm-as-world", "--plot", OUT, ring}, ring, true},
		{"phases --save-simpoints", []string{"phases", "--save-simpoints", OUT, gz}, gz, true},
		{"phases --save-weights", []string{"phases", "--save-weights", OUT, gz}, gz, true},
		{"phases --save-labels", []string{"phases", "--save-labels", OUT, gz}, gz, true},
		{"phases --plot", []string{"phases", "--plot", OUT, gz}, gz, true},
		{"filter suggest --output", []string{"filter", "suggest", "-o", OUT, ring}, ring, true},
		{"fit --output", []string{"fit", "-o", OUT, sweep}, sweep, true},
		{"sweep --output", []string{"sweep", "--global", "--param", "n=1", "-o", OUT, "--", "true", "{out}"}, "", false},
		{"probe build --output", []string{"probe", "build", "-o", OUT, "--", "true"}, "", false},
		{"probe reduce --output", []string{"probe", "reduce", pf, "-o", OUT}, pf, false},
		{"probe curve --plot", []string{"probe", "curve", pf, "--plot", OUT, "--", "true"}, pf, false},
	}
	var covered []string
	for i, tc := range cases {
		covered = append(covered, tc.flag)
		name := strings.ReplaceAll(tc.flag, " ", "")
		victim := filepath.Join(dir, name+"-"+string(rune('a'+i))+".png")
		if strings.Contains(tc.flag, "csv") || tc.flag == "states --output" || tc.flag == "fit --output" || tc.flag == "occupancy --output" {
			victim = strings.TrimSuffix(victim, ".png") + ".txt"
		}
		if err := os.WriteFile(victim, []byte("important\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		with := func(out string, force bool) []string {
			var args []string
			for _, a := range tc.args {
				if a == OUT {
					a = out
				}
				args = append(args, a)
			}
			if force {
				// Before "--": what follows is a command to run.
				at := slices.Index(args, "--")
				if at < 0 {
					at = len(args)
				}
				args = slices.Insert(args, at, "--force")
			}
			return args
		}
		_, errOut, code := run(t, with(victim, false)...)
		if want := victim + " already exists; pass --force to replace it"; code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("parscope %s: exit %d\n%s\nwant exit 1 and %q", strings.Join(with(victim, false), " "), code, errOut, want)
		}
		mustHold(t, victim, "important\n")
		if tc.replaced {
			mustRun(t, with(victim, true)...)
			if b, err := os.ReadFile(victim); err != nil || len(b) == 0 || string(b) == "important\n" {
				t.Errorf("parscope %s: %s holds %.40q (%v), want the output", strings.Join(with(victim, true), " "), victim, b, err)
			}
		}
		if tc.in != "" {
			before := snapshot(t, tc.in)
			_, errOut, code := run(t, with(tc.in, true)...)
			if code != 2 || !strings.Contains(errOut, "would overwrite the input "+tc.in) {
				t.Errorf("parscope %s: exit %d\n%s\nwant exit 2: the output is the input", strings.Join(with(tc.in, true), " "), code, errOut)
			}
			if after := snapshot(t, tc.in); after != before {
				t.Errorf("parscope %s changed its input", strings.Join(with(tc.in, true), " "))
			}
		}
	}
	for _, f := range fileOutputs() {
		if !slices.Contains(covered, f) {
			t.Errorf("%s: a file output this test does not run", f)
		}
	}

	// Outputs named from a flag: any of the files they would write.
	base := filepath.Join(dir, "paraver")
	pcf := base + ".pcf"
	if err := os.WriteFile(pcf, []byte("important\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "export", "--format", "prv", "-o", base, am)
	if code != 1 || !strings.Contains(errOut, pcf+" already exists; pass --force") {
		t.Errorf("export --format prv -o BASE with BASE.pcf there: exit %d\n%s", code, errOut)
	}
	mustHold(t, pcf, "important\n")
	if _, err := os.Stat(base + ".prv"); err == nil {
		t.Errorf("export --format prv wrote %s.prv though it refused %s", base, pcf)
	}
	mustRun(t, "export", "--force", "--format", "prv", "-o", base, am)
	if b, _ := os.ReadFile(pcf); string(b) == "important\n" {
		t.Errorf("export --force --format prv did not replace %s", pcf)
	}
	curves := filepath.Join(dir, "ocs.png")
	delay := filepath.Join(dir, "ocs-delay.png")
	if err := os.WriteFile(delay, []byte("important\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = run(t, "ocs", "--plot", curves, ring)
	if code != 1 || !strings.Contains(errOut, delay+" already exists; pass --force") {
		t.Errorf("ocs --plot NAME with NAME-delay there: exit %d\n%s", code, errOut)
	}
	mustHold(t, delay, "important\n")
	if _, err := os.Stat(filepath.Join(dir, "ocs-time.png")); err == nil {
		t.Errorf("ocs --plot drew NAME-time though it refused NAME-delay")
	}
	mustRun(t, "ocs", "--force", "--plot", curves, ring)
	if b, _ := os.ReadFile(delay); string(b) == "important\n" {
		t.Errorf("ocs --force --plot did not replace %s", delay)
	}

	// --force never replaces a directory with a file.
	victimDir := filepath.Join(dir, "victim")
	if err := os.Mkdir(victimDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = run(t, "states", "--force", "--csv", "-o", victimDir, am)
	if code != 1 || !strings.Contains(errOut, victimDir+" exists and is a directory") {
		t.Errorf("states --force -o DIR: exit %d\n%s", code, errOut)
	}
}

// snapshot returns the content of the file at path, or of the manifest of
// the .pst at path, to tell whether a command changed it.
func snapshot(t *testing.T, path string) string {
	t.Helper()
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "manifest.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
