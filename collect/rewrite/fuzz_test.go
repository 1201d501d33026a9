package rewrite

import (
	"bufio"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// stubRuntime declares the names the rewritten code calls, so that the
// rewritten files can be type-checked without the instrument library.
const stubRuntime = `
type parscopeProcess struct{}

func (*parscopeProcess) Block(int32) {}
func (*parscopeProcess) Enter(int32) {}
func (*parscopeProcess) Exit(int32)  {}

func parscopeSelf() *parscopeProcess        { return nil }
func parscopeProc(int) *parscopeProcess     { return nil }
func parscopeGoBegin() *parscopeProcess     { return nil }
func parscopeGoEnd(*parscopeProcess)        {}
func parscopeClose(*parscopeProcess)        {}
func parscopeSend[T any](p *parscopeProcess, c chan<- T, v T, size int64, tag int32) {}
func parscopeRecv[T any](p *parscopeProcess, c <-chan T, size int64, tag int32) (v T) { return }
func parscopeRecv2[T any](p *parscopeProcess, c <-chan T, size int64, tag int32) (v T, ok bool) { return }
func parscopeSent[T any](p *parscopeProcess, c chan<- T, size int64, tag int32)  {}
func parscopeRecvd[T any](p *parscopeProcess, c <-chan T, size int64, tag int32) {}
`

// FuzzPackage rewrites arbitrary one-file packages without imports: the
// rewriter must not panic, and when the input type-checks, the output must
// keep its lines and type-check too.
func FuzzPackage(f *testing.F) {
	f.Add("package p\n\nfunc f(c chan int) int {\n\tc <- 1\n\treturn <-c\n}\n")
	f.Fuzz(func(t *testing.T, src string) {
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, "p.go", src, parser.ImportsOnly)
		if err != nil || len(af.Imports) > 0 || strings.Contains(src, "parscope") {
			t.Skip()
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		// Not asking the compiler what it inlines (a build per input
		// would slow the fuzzing a hundredfold): FuzzParseInlinable
		// covers reading its answer.
		res, err := Package(context.Background(), dir, Options{InstrumentInlinable: true})
		if err != nil {
			return // bad input: an error is the right answer
		}
		var out []byte
		for _, fl := range res.Files {
			if fl.Name == "p.go" {
				out = fl.Src
			}
		}
		if strings.Count(string(out), "\n") != strings.Count(src, "\n") {
			t.Fatalf("line count changed:\n%s", out)
		}
		fset = token.NewFileSet()
		rf, err := parser.ParseFile(fset, "p.go", out, 0)
		if err != nil {
			t.Fatalf("rewritten source does not parse: %v\n%s", err, out)
		}
		sf, err := parser.ParseFile(fset, "stub.go", "package "+rf.Name.Name+"\n"+stubRuntime, 0)
		if err != nil {
			t.Fatal(err)
		}
		conf := types.Config{}
		if _, err := conf.Check("p", fset, []*ast.File{rf, sf}, nil); err != nil {
			t.Fatalf("rewritten source does not type-check: %v\n%s", err, out)
		}
	})
}

// FuzzReadFilter checks that a filter file never makes ReadFilter panic,
// that an error names its line and stays short, and that the patterns it
// accepts are valid path.Match patterns, each one word without '#', which
// read back the same once written out as one rule.
func FuzzReadFilter(f *testing.F) {
	for _, s := range []string{
		"# first run\nexclude evalA (*Vec).* # hot\n\nexclude wait\n",
		"# parscope filter suggest: functions of at least 1000 calls\nexclude main.leaf # cheap, 4000 records, est. 0.1 ms\nexclude (\\*T\\).m\n",
		"include f\n",
		"exclude\n",
		"exclude [\n",
		"exclude a\\\n",
		"\texclude\t[a-z]*\t?\r\n",
		"coarse (Vec).Times (Vec).TimesTransp # loops of 10^6 blocks a call\nexclude evalA\n",
		"coarse\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		rules, err := ReadFilter(strings.NewReader(src))
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "filter line ") && !errors.Is(err, bufio.ErrTooLong) || len(msg) > 400 {
				t.Fatalf("error %.500q: want one that names the line, at most 400 bytes", msg)
			}
			return
		}
		for _, p := range slices.Concat(rules.Exclude, rules.Coarse) {
			if _, err := path.Match(p, ""); err != nil || p == "" || strings.ContainsAny(p, "# \t\n\r\v\f") {
				t.Fatalf("pattern %q: want one valid word without '#'", p)
			}
		}
		var text string
		if len(rules.Exclude) > 0 {
			text += "exclude " + strings.Join(rules.Exclude, " ") + "\n"
		}
		if len(rules.Coarse) > 0 {
			text += "coarse " + strings.Join(rules.Coarse, " ") + "\n"
		}
		again, err := ReadFilter(strings.NewReader(text))
		if err != nil || !slices.Equal(again.Exclude, rules.Exclude) || !slices.Equal(again.Coarse, rules.Coarse) {
			t.Fatalf("round trip: %v\n got  %q\n want %q", err, again, rules)
		}
	})
}

// FuzzParseInlinable checks that reading the compiler's -m output never
// panics, and that every key it returns is FILE:LINE:NAME with a
// positive line, a name and no slash in FILE.
func FuzzParseInlinable(f *testing.F) {
	f.Add("./a.go:3:6: can inline sum with cost 12 as: func([]int) int { s := 0; for loop; return s }\n./a.go:9:6: cannot inline main: function too complex\n")
	f.Add("/x:y/b.go:10:20: can inline (*T).m with cost 7 as: method(*T) func() { }\n")
	f.Fuzz(func(t *testing.T, out string) {
		for k := range parseInlinable([]byte(out)) {
			parts := strings.Split(k, ":")
			if len(parts) < 3 || strings.Contains(k, "/") {
				t.Fatalf("key %q from %q", k, out)
			}
			if n, err := strconv.Atoi(parts[len(parts)-2]); err != nil || n < 1 || parts[len(parts)-1] == "" {
				t.Fatalf("key %q from %q: want FILE:LINE:NAME", k, out)
			}
		}
	})
}
