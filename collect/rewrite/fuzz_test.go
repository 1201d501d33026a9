package rewrite

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
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
		res, err := Package(context.Background(), dir, Options{})
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
