package rewrite

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Keeping the program as fast as it was. A function whose exit block is
// recorded by a defer is never inlined, and the two recording calls of an
// instrumented function exceed the compiler's inlining budget on their
// own. So the rewriter leaves tiny leaf functions uninstrumented (their
// time counts in their caller's block, which is where the compiler would
// have put their code), and records the exit block of the other functions
// before each return rather than by a defer where that records the same
// sequence of blocks.

// uninstrumented returns the package's functions that record no blocks
// and no regions of their own, with the reason: leaves within
// Options.LeafSize, functions that could record nothing and that the
// compiler inlines (inl, see inlinable; nil when not asked), and functions
// Options.Exclude names.
func (w *rewriter) uninstrumented(files []*ast.File, inl map[string]int) map[types.Object]string {
	limit := w.opts.LeafSize
	if limit == 0 {
		limit = DefaultLeafSize
	}
	out := map[types.Object]string{}
	for _, f := range files {
		w.tf = w.fset.File(f.Pos())
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			obj := w.info.Defs[fd.Name]
			if obj == nil {
				continue
			}
			name := funcName(fd, func(n ast.Node) string { return w.text2(f, n) })
			if pat, ok := excluded(w.opts.Exclude, name); ok {
				out[obj] = "excluded by " + pat
				continue
			}
			if limit < 0 || (fd.Recv == nil && fd.Name.Name == "main" && w.pkg.Name() == "main") {
				continue
			}
			if directive(fd.Doc) != "" || (w.opts.ProcessVar != "" && w.hasIntVar(fd, w.opts.ProcessVar)) {
				continue
			}
			if n, ok := w.leafSize(fd.Body, obj, false); ok && n <= limit {
				out[obj] = fmt.Sprintf("leaf of %d nodes", n)
			} else if cost, ok := inl[w.inlKey(fd)]; ok {
				if _, ok := w.leafSize(fd.Body, obj, true); ok {
					out[obj] = fmt.Sprintf("%s (cost %d)", inlinedReason, cost)
				}
			}
		}
	}
	return out
}

// inlinedReason begins the reason of a function left uninstrumented
// because the compiler inlines it and nothing it does can record.
const inlinedReason = "inlined by the compiler"

// silent reports whether why, a reason of uninstrumented, is one of a
// function nothing in which can record (a leaf, or a function the
// compiler inlines): its body is left as written.
func silent(why string) bool {
	return strings.HasPrefix(why, "leaf ") || strings.HasPrefix(why, inlinedReason)
}

// inlKey is the key of a declared function in inlinable's answer: its
// file's base name, its line and its name (a method's without the
// receiver).
func (w *rewriter) inlKey(fd *ast.FuncDecl) string {
	p := w.fset.Position(fd.Pos())
	return fmt.Sprintf("%s:%d:%s", filepath.Base(p.Filename), p.Line, fd.Name.Name)
}

// inlinable asks the compiler which functions of the package made of
// files (names in dir) it can inline (go build -gcflags=-m=2 of the
// files, which works in a module and outside one, into a scratch
// directory), and returns their inlining costs by inlKey.
func inlinable(ctx context.Context, dir string, files []string) (map[string]int, error) {
	tmp, err := os.MkdirTemp("", "parscope-inline-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"build", "-gcflags=-m=2", "-o", filepath.Join(tmp, "out")}, files...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: asking the compiler what it inlines (go build -gcflags=-m=2): %w: %s", dir, err, clip(out))
	}
	return parseInlinable(out), nil
}

// parseInlinable reads the compiler's "PATH:LINE:COL: can inline NAME
// with cost N as: ..." lines (NAME "f" or "(*T).m"; closures, "f.func1",
// match no declared function).
func parseInlinable(out []byte) map[string]int {
	m := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		pos, rest, ok := strings.Cut(line, ": can inline ")
		if !ok {
			continue
		}
		name, cost, ok := strings.Cut(rest, " with cost ")
		if !ok {
			continue
		}
		cost, _, _ = strings.Cut(cost, " ")
		n, err := strconv.Atoi(cost)
		if err != nil || n < 0 {
			continue
		}
		name = name[strings.LastIndexByte(name, '.')+1:]
		// pos is PATH:LINE:COL; PATH may itself hold colons.
		i := strings.LastIndexByte(pos, ':')
		if i < 0 {
			continue
		}
		j := strings.LastIndexByte(pos[:i], ':')
		if j < 0 {
			continue
		}
		ln, err := strconv.Atoi(pos[j+1 : i])
		file := filepath.Base(pos[:j])
		if err != nil || ln < 1 || !token.IsIdentifier(name) ||
			file == "." || strings.ContainsAny(file, `/\`) {
			continue // not a line about a function of a file
		}
		m[fmt.Sprintf("%s:%d:%s", file, ln, name)] = n
	}
	return m
}

// clip is the compiler's output for an error: its first 512 bytes.
func clip(out []byte) string {
	s := strings.TrimSpace(string(out))
	if len(s) > 512 {
		s = s[:512] + " …"
	}
	return s
}

// text2 is the source text of n in file f (before the editor is set up).
func (w *rewriter) text2(f *ast.File, n ast.Node) string {
	tf := w.fset.File(f.Pos())
	src := w.srcs[f]
	return string(src[tf.Offset(n.Pos()):tf.Offset(n.End())])
}

// funcName is a declared function's name as the dictionary writes it:
// "f", or "(RECV).m" with the receiver type as written.
func funcName(d *ast.FuncDecl, text func(ast.Node) string) string {
	if d.Recv != nil && len(d.Recv.List) == 1 {
		return "(" + text(d.Recv.List[0].Type) + ")." + d.Name.Name
	}
	return d.Name.Name
}

// excluded returns the first pattern matching name.
func excluded(patterns []string, name string) (string, bool) {
	for _, p := range patterns {
		if ok, err := path.Match(p, name); err == nil && ok {
			return p, true
		}
	}
	return "", false
}

// leafSize returns the number of syntax nodes of a function body, and
// whether the function is a leaf: straight-line code and branches (no
// loop, whose regions carry what the function does, unless loops is
// true), and nothing it does can record (no call of
// a function or method of the package, of a function value or of an
// interface method, of the instrument library or of a synchronising
// method; no channel operation, go, defer, select or function literal).
// Conversions, built-ins and static calls into other packages are leaves'
// calls, and so are calls of the function itself (self, its object): a
// tiny recursive function (a tree's walk, binary-trees' bottomUpTree)
// records nothing in any of its calls, and its whole recursion counts in
// its caller's block.
func (w *rewriter) leafSize(body *ast.BlockStmt, self types.Object, loops bool) (int, bool) {
	n, leaf := 0, true
	ast.Inspect(body, func(x ast.Node) bool {
		if x == nil || !leaf {
			return false
		}
		n++
		switch x := x.(type) {
		case *ast.GoStmt, *ast.DeferStmt, *ast.SelectStmt, *ast.SendStmt, *ast.FuncLit:
			leaf = false
		case *ast.ForStmt, *ast.RangeStmt:
			leaf = loops
		case *ast.UnaryExpr:
			if x.Op == token.ARROW {
				leaf = false
			}
		case *ast.CallExpr:
			if id := calleeIdent(x); !w.silentCall(x) && (self == nil || id == nil || w.info.Uses[id] != self) {
				leaf = false
			}
		}
		return leaf
	})
	return n, leaf
}

// silentCall reports whether a call cannot record: a conversion, a
// built-in, or a static call of a function or concrete method of another
// package (not the instrument library, not a synchronising method).
func (w *rewriter) silentCall(call *ast.CallExpr) bool {
	if tv, ok := w.info.Types[call.Fun]; ok && tv.IsType() {
		return true
	}
	id := calleeIdent(call)
	if id == nil {
		return false
	}
	switch obj := w.info.Uses[id].(type) {
	case *types.Builtin:
		return true
	case *types.Func:
		if obj.Pkg() == nil || obj.Pkg() == w.pkg || obj.Pkg().Path() == InstrumentPath || syncBlocking[obj.FullName()] {
			return false
		}
		if sig, ok := obj.Type().(*types.Signature); ok && sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
			return false // the dynamic type may be one of the package's
		}
		return true
	}
	return false
}

// exitAtReturn reports whether a body's exit block can be recorded before
// each of its returns (and at its end) instead of by a defer: the body
// has no defer of its own (which would run after the exit block), and no
// return evaluates anything that may record (which would then come after
// the exit block). A panic leaving such a function records no exit block.
func (w *rewriter) exitAtReturn(body *ast.BlockStmt) bool {
	ok := true
	ast.Inspect(body, func(x ast.Node) bool {
		if !ok {
			return false
		}
		switch x := x.(type) {
		case *ast.FuncLit:
			return false // its defers and returns are its own
		case *ast.DeferStmt:
			ok = false
		case *ast.ReturnStmt:
			for _, r := range x.Results {
				ast.Inspect(r, func(y ast.Node) bool {
					switch y := y.(type) {
					case *ast.FuncLit:
						return false // not called here
					case *ast.UnaryExpr:
						if y.Op == token.ARROW {
							ok = false
						}
					case *ast.CallExpr:
						if !w.silentCall(y) {
							ok = false
						}
					}
					return ok
				})
			}
		}
		return ok
	})
	return ok
}
