package rewrite

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parscope/parscope/format/formattest"
	"github.com/parscope/parscope/trace"
)

var update = flag.Bool("update", false, "rewrite golden files")

// packages are the test packages under testdata.
var packages = []string{"prodcons", "shapes"}

// rewritePkg rewrites testdata/name instrumenting every function (no
// leaf left out: the tests of blocks, regions and handles need them all;
// TestLeafRule tests the rule).
func rewritePkg(t *testing.T, name string) *Result {
	t.Helper()
	return rewritePkgOpts(t, name, Options{LeafSize: -1})
}

// rewritePkgOpts rewrites testdata/name with opts.
func rewritePkgOpts(t *testing.T, name string, opts Options) *Result {
	t.Helper()
	res, err := Package(context.Background(), filepath.Join("testdata", name), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// golden renders a result as one text: each file, then the dictionary.
func golden(res *Result) []byte {
	var b bytes.Buffer
	for _, f := range res.Files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.Name, f.Src)
	}
	js, _ := json.MarshalIndent(res.Dict, "", "  ")
	fmt.Fprintf(&b, "-- %s --\n%s\n", DictFile, js)
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, name := range packages {
		t.Run(name, func(t *testing.T) {
			got := golden(rewritePkg(t, name))
			formattest.Golden(t, filepath.Join("testdata", "golden", name+".golden"), got, *update)
		})
	}
}

// TestBlockNumbering checks the numbering of Gomez, Cai & Schubert (2017): 0 is the start, the
// highest id the end, the others consecutive in textual order, and each
// function's entry is its lowest block and its exit its highest.
func TestBlockNumbering(t *testing.T) {
	for _, name := range packages {
		t.Run(name, func(t *testing.T) {
			d := rewritePkg(t, name).Dict
			n := len(d.Blocks)
			if d.Blocks[0].Kind != "start" || d.Blocks[n-1].Kind != "end" {
				t.Fatalf("first/last blocks are %q/%q, want start/end", d.Blocks[0].Kind, d.Blocks[n-1].Kind)
			}
			type pos struct {
				file string
				line int
			}
			var prev pos
			lo, hi := map[string]int32{}, map[string]int32{}
			for i, b := range d.Blocks {
				if b.ID != int32(i) {
					t.Fatalf("block %d has id %d", i, b.ID)
				}
				if i == 0 || i == n-1 {
					continue
				}
				p := pos{b.File, b.Line}
				if p.file < prev.file || (p.file == prev.file && p.line < prev.line) {
					t.Errorf("block %d at %s:%d comes before block %d at %s:%d", b.ID, p.file, p.line, b.ID-1, prev.file, prev.line)
				}
				prev = p
				if _, ok := lo[b.Function]; !ok {
					lo[b.Function] = b.ID
				}
				hi[b.Function] = b.ID
			}
			for _, b := range d.Blocks {
				if b.Kind == "entry" && lo[b.Function] != b.ID {
					t.Errorf("%s: entry block %d is not its lowest (%d)", b.Function, b.ID, lo[b.Function])
				}
				if b.Kind == "exit" && hi[b.Function] != b.ID {
					t.Errorf("%s: exit block %d is not its highest (%d)", b.Function, b.ID, hi[b.Function])
				}
			}
		})
	}
}

// TestBlockBoundaries checks where blocks end in shapes.Pipe and Add:
// after every receive and send, and after an embedded Mutex's Lock.
func TestBlockBoundaries(t *testing.T) {
	d := rewritePkg(t, "shapes").Dict
	var got []string
	for _, b := range d.Blocks {
		if b.Function == "Pipe" || b.Function == "(*Counter).Add" {
			got = append(got, fmt.Sprintf("%s %s:%d", b.Kind, b.File, b.Line))
		}
	}
	want := []string{
		"entry shapes.go:16", "next shapes.go:18", "exit shapes.go:20", // Add: Lock ends block 1
		"entry shapes.go:79", "next shapes.go:81", "next shapes.go:82", "next shapes.go:83",
		"next shapes.go:84", "then shapes.go:85", "next shapes.go:87", "exit shapes.go:88",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRegionsNest checks the static nesting of regions: a child lies
// within its parent's lines, and Search's loops and ifs nest as written.
func TestRegionsNest(t *testing.T) {
	d := rewritePkg(t, "shapes").Dict
	byID := map[int32]trace.RegionDef{}
	for _, r := range d.Regions {
		byID[r.ID] = r
		if r.Parent < 0 {
			continue
		}
		p, ok := byID[r.Parent]
		if !ok || p.Function != r.Function || r.Line < p.Line || r.EndLine > p.EndLine {
			t.Errorf("region %d (%s, lines %d-%d) not inside its parent %d", r.ID, r.Label, r.Line, r.EndLine, r.Parent)
		}
	}
	var got []string
	for _, r := range d.Regions {
		if r.Function == "Search" {
			got = append(got, fmt.Sprintf("%d %s %s parent %d", r.ID, r.Kind, r.Label, r.Parent))
		}
	}
	want := []string{
		"0 loop range at shapes.go:26 parent -1",
		"1 loop range at shapes.go:27 parent 0",
		"2 if if at shapes.go:28 parent 1",
		"3 if if at shapes.go:31 parent 1",
		"4 if if at shapes.go:34 parent 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("regions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDictionaryLines checks the dictionary's file:line entries against
// the sources: lines keep their numbers, each block's line is where its
// Block call was inserted, exits are at a closing brace and regions at
// their for or if.
func TestDictionaryLines(t *testing.T) {
	for _, name := range packages {
		t.Run(name, func(t *testing.T) {
			res := rewritePkg(t, name)
			orig, rewritten := map[string][]string{}, map[string][]string{}
			for _, f := range res.Files {
				src, err := os.ReadFile(filepath.Join("testdata", name, f.Name))
				if err != nil {
					continue // the generated file
				}
				orig[f.Name] = strings.Split(string(src), "\n")
				rewritten[f.Name] = strings.Split(string(f.Src), "\n")
				if len(orig[f.Name]) != len(rewritten[f.Name]) {
					t.Errorf("%s: %d lines rewritten into %d", f.Name, len(orig[f.Name]), len(rewritten[f.Name]))
				}
			}
			for _, b := range res.Dict.Blocks {
				if b.Kind == "start" || b.Kind == "end" {
					continue
				}
				o, r := orig[b.File][b.Line-1], rewritten[b.File][b.Line-1]
				call := fmt.Sprintf("parscopeP.Block(%d)", b.ID)
				switch {
				case b.Kind == "exit":
					if !strings.HasPrefix(strings.TrimSpace(o), "}") {
						t.Errorf("exit block %d at %s:%d: line %q has no closing brace", b.ID, b.File, b.Line, o)
					}
				case !strings.Contains(r, call):
					t.Errorf("block %d at %s:%d: line %q has no %s", b.ID, b.File, b.Line, r, call)
				}
			}
			for _, g := range res.Dict.Regions {
				o := strings.TrimSpace(orig[g.File][g.Line-1])
				kw := map[trace.RegionKind]string{trace.RegionLoop: "for ", trace.RegionIf: "if "}[g.Kind]
				if !strings.HasPrefix(o, kw) {
					t.Errorf("region %d at %s:%d: line %q does not start with %q", g.ID, g.File, g.Line, o, kw)
				}
				if e := strings.TrimSpace(orig[g.File][g.EndLine-1]); !strings.HasPrefix(e, "}") {
					t.Errorf("region %d ends at %s:%d: line %q is no closing brace", g.ID, g.File, g.EndLine, e)
				}
			}
		})
	}
}

// TestEdits checks the composition of nested insertions and deletions.
func TestEdits(t *testing.T) {
	tests := []struct {
		name string
		do   func(e *editor)
		want string
	}{
		{"nested send of a receive", func(e *editor) { // "c <- <-a"
			e.open(0, "S(")
			e.replace(2, 2, ",")
			e.close(8, ")")
			e.open(5, "R(")
			e.replace(5, 2, "")
			e.close(8, "]")
		}, "S(c , R(a])"},
		{"outer opens first", func(e *editor) {
			e.open(0, "A")
			e.open(0, "B")
		}, "ABc <- <-a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &editor{src: []byte("c <- <-a")}
			tc.do(e)
			if got := string(e.apply()); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"syntax", "package p\nfunc f() {\n\tx :=\n}\n", "p.go:4:1"},
		{"types", "package p\nfunc f() int {\n\treturn \"s\"\n}\n", "p.go:3:9"},
		{"reserved", "package p\nvar parscopeX int\n", "p.go:2:5: identifier parscopeX"},
		{"no files", "", "no buildable Go source files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.src != "" {
				if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(tc.src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Package(context.Background(), dir, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// tempModule writes the rewritten package into a new module that uses
// this repository, and returns its directory.
func tempModule(t *testing.T, res *Result, name string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	gomod := fmt.Sprintf("module %s\n\ngo 1.26\n\nrequire github.com/parscope/parscope v0.0.0\n\nreplace github.com/parscope/parscope => %s\n", name, root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=mod"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// rewriteAndRun runs the program testdata/name as it is, rewrites it into
// a temporary module, builds it there and runs it recording into a
// temporary .pst: its output must be the original's. It returns the
// rewrite, the module's directory and the records of the trace.
func rewriteAndRun(t *testing.T, name string) (*Result, string, []trace.Record) {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	want := goCmd(t, src, nil, "run", ".")
	res := rewritePkg(t, name)
	dir := tempModule(t, res, name)
	bin := filepath.Join(dir, name+exeSuffix())
	goCmd(t, dir, nil, "build", "-o", bin, ".")
	pst := filepath.Join(t.TempDir(), "run.pst")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PARSCOPE_OUT="+pst, "PARSCOPE_ENTROPY_FILTER=off")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running: %v\n%s", err, got)
	}
	if string(got) != want {
		t.Errorf("instrumented output %q, original %q", got, want)
	}
	return res, dir, readTrace(t, pst)
}

// TestProdConsEndToEnd builds and runs the rewritten producer/consumer
// program: same output as the original, and a trace whose every send has
// its receive, with balanced regions and blocks starting at 0 and ending
// at the end block.
func TestProdConsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	res, _, recs := rewriteAndRun(t, "prodcons")
	var m trace.Matcher
	matched := 0
	m.OnMatch = func(s, r *trace.Record) {
		matched++
		if s.Value != r.Value {
			t.Errorf("send of %d bytes received as %d", s.Value, r.Value)
		}
	}
	stacks := map[int32][]int32{}
	first, last := map[int32]int32{}, map[int32]int32{}
	sizes := map[int64]int{}
	for i := range recs {
		r := &recs[i]
		m.Add(r)
		switch r.Kind {
		case trace.KindSend:
			sizes[r.Value]++
		case trace.KindEnter:
			stacks[r.Proc] = append(stacks[r.Proc], r.ID)
		case trace.KindExit:
			s := stacks[r.Proc]
			if len(s) == 0 || s[len(s)-1] != r.ID {
				t.Fatalf("process %d exits region %d with open regions %v", r.Proc, r.ID, s)
			}
			stacks[r.Proc] = s[:len(s)-1]
		case trace.KindState:
			if _, ok := first[r.Proc]; !ok {
				first[r.Proc] = r.ID
			}
			last[r.Proc] = r.ID
		}
	}
	sends, recvs := m.Unmatched()
	if len(sends) != 0 || len(recvs) != 0 {
		t.Errorf("%d sends and %d receives unmatched", len(sends), len(recvs))
	}
	// 30 items of 16 bytes and one float64 sum, each counted on its way
	// into and out of its channel.
	if matched != 2*31 || sizes[16] != 2*30 || sizes[8] != 2 {
		t.Errorf("matched %d messages, sizes %v; want 62 = 2×(30 of 16 B + 1 of 8 B)", matched, sizes)
	}
	for p, s := range stacks {
		if len(s) != 0 {
			t.Errorf("process %d ends inside regions %v", p, s)
		}
	}
	end := res.Dict.Blocks[len(res.Dict.Blocks)-1].ID
	// Processes: main, 3 producers, 2 goroutine literals (all 6 end with
	// the end block: go produce(...) is wrapped like a literal), 2 channels.
	if len(first) != 6 {
		t.Errorf("%d processes with blocks, want 6 (main, 3 producers, 2 literals)", len(first))
	}
	ended := 0
	for p, b := range first {
		if b != 0 {
			t.Errorf("process %d starts in block %d, want 0", p, b)
		}
		if last[p] == end {
			ended++
		}
	}
	if ended != 6 {
		t.Errorf("%d processes reach the end block %d, want 6 (main, 3 producers, 2 literals)", ended, end)
	}
}

// TestShapesTestsInstrumented runs the shapes package's own tests on its
// rewritten copy (with the race detector when this test has it).
func TestShapesTestsInstrumented(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	dir := tempModule(t, rewritePkg(t, "shapes"), "shapes")
	pst := filepath.Join(t.TempDir(), "shapes.pst")
	args := []string{"test", "-count=1"}
	if raceEnabled {
		args = append(args, "-race")
	}
	goCmd(t, dir, []string{"PARSCOPE_OUT=" + pst, "PARSCOPE_ENTROPY_FILTER=off"}, append(args, ".")...)
	if n := checkTrace(t, pst); n == 0 {
		t.Errorf("no message recorded")
	}
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// TestProcessHandle checks which process each function records as: a
// directive, Options.ProcessVar (a parameter or a package variable of
// integer type), a go statement's literal, or the goroutine's.
func TestProcessHandle(t *testing.T) {
	src := `package p

var me int32

//parscope:process id + 1
func a(id int) {}

func B(rank int) {}

func C(rank string) { go func() {}() }

func D() {}
`
	tests := []struct {
		processVar string
		want       []string
	}{
		{"", []string{"parscopeProc(int(id + 1))", "parscopeSelf()", "parscopeSelf()", "parscopeGoBegin()", "parscopeSelf()"}},
		{"rank", []string{"parscopeProc(int(id + 1))", "parscopeProc(int(rank))", "parscopeSelf()", "parscopeGoBegin()", "parscopeSelf()"}},
		{"me", []string{"parscopeProc(int(id + 1))", "parscopeProc(int(me))", "parscopeProc(int(me))", "parscopeGoBegin()", "parscopeProc(int(me))"}},
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run("var="+tc.processVar, func(t *testing.T) {
			res, err := Package(context.Background(), dir, Options{ProcessVar: tc.processVar, LeafSize: -1})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Files {
				if f.Name != "p.go" {
					continue
				}
				for _, part := range strings.Split(string(f.Src), "parscopeP := ")[1:] {
					got = append(got, part[:strings.Index(part, ";")])
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("handles %q, want %q", got, tc.want)
			}
		})
	}
}
