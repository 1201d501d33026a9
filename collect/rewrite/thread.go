package rewrite

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
)

// Threading the process handle. Looking a goroutine's process up by
// goroutine id costs about a microsecond, which small functions called in
// hot loops cannot afford. A function whose every use is a direct call
// from inside a function body instead receives the caller's handle as an
// extra first parameter, parscopeP, and looks nothing up. The caller is on
// the same goroutine, so the handle is the one the look-up would have
// found.

// threadable returns the package's functions and methods that receive the
// handle: unexported, declared with a body, not generic, not init or main,
// without a //parscope:process directive or ProcessVar parameter, never
// used other than as the callee of a call inside a function body, never
// called with a multi-valued argument (f(g()) cannot take an extra
// argument), not named in the package's test files (which are not
// rewritten and would call the old signature), and, for methods, not
// possibly satisfying an interface (no interface of the package declares
// a method of that name).
func (w *rewriter) threadable(files []*ast.File, testNames map[string]bool) map[types.Object]bool {
	ifaceMethods := map[string]bool{}
	for _, name := range w.pkg.Scope().Names() {
		if it, ok := w.pkg.Scope().Lookup(name).Type().Underlying().(*types.Interface); ok {
			for i := 0; i < it.NumMethods(); i++ {
				ifaceMethods[it.Method(i).Name()] = true
			}
		}
	}
	cand := map[types.Object]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || ast.IsExported(fd.Name.Name) || testNames[fd.Name.Name] {
				continue
			}
			if fd.Name.Name == "init" || fd.Name.Name == "main" || fd.Name.Name == "_" {
				continue
			}
			if directive(fd.Doc) != "" || (w.opts.ProcessVar != "" && w.hasIntVar(fd, w.opts.ProcessVar)) {
				continue
			}
			if fd.Type.TypeParams != nil {
				continue
			}
			if fd.Recv != nil {
				if len(fd.Recv.List) != 1 || ifaceMethods[fd.Name.Name] || recvTypeParams(fd.Recv.List[0].Type) {
					continue
				}
			}
			if obj := w.info.Defs[fd.Name]; obj != nil && !silent(w.quiet[obj]) {
				cand[obj] = true
			}
		}
	}
	// Every use must be a direct call inside a function body.
	direct := map[*ast.Ident]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				id := calleeIdent(call)
				if id == nil || !cand[w.info.Uses[id]] {
					return true
				}
				if len(call.Args) == 1 {
					if _, tuple := w.info.TypeOf(call.Args[0]).(*types.Tuple); tuple {
						delete(cand, w.info.Uses[id])
						return true
					}
				}
				direct[id] = true
				return true
			})
		}
	}
	for id, obj := range w.info.Uses {
		if cand[obj] && !direct[id] {
			delete(cand, obj)
		}
	}
	return cand
}

// recvTypeParams reports whether a receiver type has type parameters
// (a method of a generic type).
func recvTypeParams(t ast.Expr) bool {
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch t.(type) {
	case *ast.IndexExpr, *ast.IndexListExpr:
		return true
	}
	return false
}

// calleeIdent returns the identifier naming a call's function: f in f(x),
// m in x.m(y) and pkg.F(x); nil for other callees.
func calleeIdent(call *ast.CallExpr) *ast.Ident {
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return fun
	case *ast.SelectorExpr:
		return fun.Sel
	}
	return nil
}

// threadCalls passes the handle to every call of a threaded function in
// body, except the calls of go statements that goStmt wraps (they pass the
// goroutine's own handle).
func (w *rewriter) threadCalls(body *ast.BlockStmt, wrapped map[*ast.CallExpr]bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || wrapped[call] {
			return true
		}
		if id := calleeIdent(call); id != nil && w.threaded[w.info.Uses[id]] {
			sep := ", "
			if len(call.Args) == 0 {
				sep = ""
			}
			w.ed.open(w.off(call.Lparen)+1, "parscopeP"+sep)
		}
		return true
	})
}

// threadParam gives a threaded function its handle parameter. Parameters
// without names ("func f(int)") are named "_" then, since Go does not mix
// named and unnamed parameters.
func (w *rewriter) threadParam(d *ast.FuncDecl) {
	text := "parscopeP *parscopeProcess"
	for i, f := range d.Type.Params.List {
		if len(f.Names) > 0 {
			break
		}
		if i == 0 {
			text += ", _ "
			continue
		}
		w.ed.open(w.off(f.Type.Pos()), "_ ")
	}
	if d.Type.Params.NumFields() > 0 && len(d.Type.Params.List[0].Names) > 0 {
		text += ", "
	}
	w.ed.open(w.off(d.Type.Params.Opening)+1, text)
}

// goPlan says whether goStmt can wrap a go statement whose function is
// not a literal, and how: which arguments are passed as written (constants
// and nil: a temporary would take their default type) and where the commas
// between the arguments are. It refuses built-ins, implicitly instantiated
// generic functions, and constant arguments spanning lines (deleting them
// would renumber the lines below).
func (w *rewriter) goPlan(s *ast.GoStmt) (inline []bool, commas []int, ok bool) {
	call := s.Call
	if _, lit := call.Fun.(*ast.FuncLit); lit {
		return nil, nil, false
	}
	if id := calleeIdent(call); id != nil {
		if _, builtin := w.info.Uses[id].(*types.Builtin); builtin {
			return nil, nil, false
		}
		if _, generic := w.info.Instances[id]; generic {
			if _, explicit := ast.Unparen(call.Fun).(*ast.IndexExpr); !explicit {
				return nil, nil, false
			}
		}
	}
	inline = make([]bool, len(call.Args))
	for i, a := range call.Args {
		tv := w.info.Types[a]
		if tv.Value != nil || tv.IsNil() {
			if w.line(a.Pos()) != w.line(a.End()) {
				return nil, nil, false
			}
			inline[i] = true
		}
	}
	commas, ok = w.argCommas(call)
	return inline, commas, ok
}

// goStmt rewrites "go f(args)" for a named or computed function f so that
// the goroutine is a process of its own, as a go statement with a function
// literal is:
//
//	{ parscopeF, parscopeA0 := f, a0; go func() { parscopeP := parscopeGoBegin(); defer parscopeGoEnd(parscopeP); parscopeF(parscopeA0) }() }
//
// The function value and the arguments are evaluated before the goroutine
// starts, as the go statement evaluates them. It reports whether it
// rewrote the statement (see goPlan).
func (w *rewriter) goStmt(s *ast.GoStmt) bool {
	inline, commas, ok := w.goPlan(s)
	if !ok {
		return false
	}
	call := s.Call
	names := []string{"parscopeF"}
	var callArgs []string
	if id := calleeIdent(call); id != nil && w.threaded[w.info.Uses[id]] {
		callArgs = append(callArgs, "parscopeP")
	}
	for i, a := range call.Args {
		if inline[i] {
			callArgs = append(callArgs, w.text(a))
			w.ed.replace(w.off(a.Pos()), w.off(a.End())-w.off(a.Pos()), "")
			continue
		}
		name := fmt.Sprintf("parscopeA%d", i)
		names = append(names, name)
		callArgs = append(callArgs, name)
		w.ed.open(w.off(a.Pos()), ", ")
	}
	for _, c := range commas {
		w.ed.replace(c, 1, "")
	}
	w.ed.replace(w.off(s.Go), w.off(call.Pos())-w.off(s.Go), "{ "+strings.Join(names, ", ")+" := ")
	w.ed.replace(w.off(call.Lparen), 1, "")
	last := ""
	if call.Ellipsis.IsValid() {
		w.ed.replace(w.off(call.Ellipsis), 3, "")
		last = "..."
	}
	w.ed.replace(w.off(call.Rparen), 1, "; go func() { parscopeP := parscopeGoBegin(); defer parscopeGoEnd(parscopeP); parscopeF("+
		strings.Join(callArgs, ", ")+last+") }() }")
	return true
}

// argCommas returns the offsets of the commas between a call's arguments
// (and of a trailing one), skipping comments; false if the text between
// two arguments is not what it should be.
func (w *rewriter) argCommas(call *ast.CallExpr) ([]int, bool) {
	var out []int
	for i := range call.Args {
		from := w.off(call.Args[i].End())
		to := w.off(call.Rparen)
		if i+1 < len(call.Args) {
			to = w.off(call.Args[i+1].Pos())
		} else if call.Ellipsis.IsValid() {
			from = w.off(call.Ellipsis) + 3
		}
		c, ok := findComma(w.ed.src[from:to])
		if ok {
			out = append(out, from+c)
		} else if i+1 < len(call.Args) {
			return nil, false
		}
	}
	return out, true
}

// findComma returns the offset of the first comma in b outside comments.
func findComma(b []byte) (int, bool) {
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == ',':
			return i, true
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(string(b[i+2:]), "*/")
			if end < 0 {
				return 0, false
			}
			i += end + 3
		}
	}
	return 0, false
}

// wrappedGoCalls returns the calls of the go statements in body that
// goStmt will wrap.
func (w *rewriter) wrappedGoCalls(body *ast.BlockStmt) map[*ast.CallExpr]bool {
	out := map[*ast.CallExpr]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok {
			if _, _, ok := w.goPlan(g); ok {
				out[g.Call] = true
			}
		}
		return true
	})
	return out
}

// identNames returns every identifier name in the named files of dir (the
// package's in-package test files, which stay as written).
func identNames(fset *token.FileSet, dir string, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing: %w", err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				out[id.Name] = true
			}
			return true
		})
	}
	return out, nil
}
