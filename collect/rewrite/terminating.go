package rewrite

import (
	"go/ast"
	"go/token"
)

// terminating reports whether s is a terminating statement (the Go
// specification's definition): code inserted after it would be
// unreachable and could make the function miss its final return.
func terminating(s ast.Stmt, label string) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.GOTO || s.Tok == token.FALLTHROUGH
	case *ast.ExprStmt:
		call, ok := s.X.(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := call.Fun.(*ast.Ident)
		return ok && id.Name == "panic" // a shadowed panic only loses precision
	case *ast.BlockStmt:
		return listTerminating(s.List)
	case *ast.LabeledStmt:
		return terminating(s.Stmt, s.Label.Name)
	case *ast.IfStmt:
		return s.Else != nil && terminating(s.Body, "") && terminating(s.Else, "")
	case *ast.ForStmt:
		return s.Cond == nil && !hasBreak(s.Body, label, true)
	case *ast.SwitchStmt:
		return clausesTerminating(s.Body, label)
	case *ast.TypeSwitchStmt:
		return clausesTerminating(s.Body, label)
	case *ast.SelectStmt:
		if hasBreak(s.Body, label, true) {
			return false
		}
		for _, c := range s.Body.List {
			if !listTerminating(c.(*ast.CommClause).Body) {
				return false
			}
		}
		return true
	}
	return false
}

func listTerminating(l []ast.Stmt) bool {
	for i := len(l) - 1; i >= 0; i-- {
		if _, empty := l[i].(*ast.EmptyStmt); !empty {
			return terminating(l[i], "")
		}
	}
	return false
}

func clausesTerminating(body *ast.BlockStmt, label string) bool {
	if hasBreak(body, label, true) {
		return false
	}
	def := false
	for _, c := range body.List {
		cc := c.(*ast.CaseClause)
		if cc.List == nil {
			def = true
		}
		if !listTerminating(cc.Body) {
			return false
		}
	}
	return def
}

// hasBreak reports whether n holds a break that leaves the statement whose
// body n is: a break with its label, or (when top) an unlabeled break not
// nested in another for, switch or select.
func hasBreak(n ast.Node, label string, top bool) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if found {
			return false
		}
		switch x := x.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BranchStmt:
			if x.Tok == token.BREAK && ((x.Label == nil && top) || (x.Label != nil && x.Label.Name == label)) {
				found = true
			}
		case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			if x != n {
				found = found || (label != "" && hasBreak(bodyOf(x), label, false))
				return false
			}
		}
		return true
	})
	return found
}

func bodyOf(n ast.Node) ast.Node {
	switch n := n.(type) {
	case *ast.ForStmt:
		return n.Body
	case *ast.RangeStmt:
		return n.Body
	case *ast.SwitchStmt:
		return n.Body
	case *ast.TypeSwitchStmt:
		return n.Body
	case *ast.SelectStmt:
		return n.Body
	}
	return n
}
