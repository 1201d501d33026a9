package rewrite

import (
	"go/ast"
	"go/scanner"
	"go/token"
	"regexp"
	"slices"
	"strings"
)

// With recording off every handle is nil, and each recording call is a
// test of it: one predictable branch. In loops of a few instructions a
// basic block, such as fasta's random sequence, a branch per block (and a
// region enter and exit per inner loop) is still several per cent of the
// loop. So the rewriter emits such a loop twice and chooses once, on
// entering it:
//
//	if parscopeP == nil { <the loop as written> } else { <the loop recording> }
//
// It does so for the outermost loops whose rewrite adds nothing but
// recording calls (blocks, region enters and exits) and the handle passed
// to the functions that take it (see thread.go): no message, no function
// literal, no label inside. The copy passes the handle too (nil there),
// since those functions take it; otherwise such a loop runs exactly as
// written when recording is off, and the code grows by its size. (A loop
// calling such a function was left single until 2026-12-08: fannkuch's
// main loop, which calls permute on every permutation, ran 8-11 % slower
// with recording off than as written in three runs of four.) The copy is
// written on one line, token by token with its semicolons made explicit,
// so that every line of the file keeps its number. The handle is nil only
// when the program does not record (parscopeSelf in the runtime file):
// recording, every loop runs its recording copy, as before.
//
// A function that takes the handle as a parameter (thread.go) and whose
// whole body qualifies, with its exit block recorded at its returns
// rather than deferred, has its body emitted twice the same way instead
// (unswitchBody): permute itself still ran six tests a call with its
// loops doubled, and one now.

// loopAt is a loop statement of a function and the index of the first
// edit its rewrite made.
type loopAt struct {
	s     ast.Stmt
	label *ast.Ident
	first int
}

// recordingOnly matches an inserted text that only records: blocks,
// region enters and exits.
var recordingOnly = regexp.MustCompile(`^[; ]*(parscopeP\.(Block|Enter|Exit)\([0-9]+\)[; ]*)+$`)

// handleArg matches the handle inserted as a threaded call's first
// argument (threadCalls).
var handleArg = regexp.MustCompile(`^parscopeP(, )?$`)

// unswitchLoops doubles the outermost loops of f that only record (see
// above).
func (w *rewriter) unswitchLoops(f *fn) {
	loops := slices.Clone(f.loops)
	slices.SortFunc(loops, func(a, b loopAt) int { return w.off(a.s.Pos()) - w.off(b.s.Pos()) })
	done := -1 // the end of the last loop doubled
	for _, l := range loops {
		if w.off(l.s.Pos()) < done {
			continue // inside a loop already doubled
		}
		if w.unswitch(l) {
			done = w.off(l.s.End())
		}
	}
}

// unswitch doubles loop l when every edit inside it only records or
// passes the handle to a call, it has no label and holds none, and it can
// be written on one line. The copy is the loop as written with the
// handle passed to those calls. It reports whether it did.
func (w *rewriter) unswitch(l loopAt) bool {
	if l.label != nil || hasLabel(l.s) {
		return false
	}
	start, end := w.off(l.s.Pos()), w.off(l.s.End())
	enter, exit := -1, -1
	// Every edit inside the loop counts, also those made before its
	// statements were (the handle passed to threaded calls).
	args, ok := w.plainEdits(start, end, func(i int, e edit) {
		switch {
		case i == l.first && e.off == start && e.class == editOpen && strings.HasPrefix(e.text, "parscopeP.Enter("):
			enter = i
		case i > l.first && e.off == end && e.class == editClose && strings.HasPrefix(e.text, "; parscopeP.Exit("):
			exit = i
		}
	})
	if !ok || enter < 0 {
		return false
	}
	plain, ok := w.plainCopy(start, end, args)
	if !ok {
		return false
	}
	w.ed.edits[enter].text = "if parscopeP == nil { " + plain + " } else { " + w.ed.edits[enter].text
	if exit >= 0 {
		w.ed.edits[exit].text += " }"
	} else {
		// A loop that never ends normally has no exit call after it.
		w.ed.close(end, " }")
	}
	return true
}

// plainCopy returns the source between start and end as written, with
// the handle passed to threaded calls (args, edits inside it, which it
// sorts), on one line (see oneLine).
func (w *rewriter) plainCopy(start, end int, args []edit) (string, bool) {
	src := w.ed.src[start:end]
	if len(args) > 0 {
		// Inserted from the last, so that the earlier offsets still hold.
		slices.SortFunc(args, func(a, b edit) int { return b.off - a.off })
		src = slices.Clone(src)
		for _, a := range args {
			src = slices.Insert(src, a.off-start, []byte(a.text)...)
		}
	}
	return oneLine(src)
}

// plainEdits sorts the edits between start and end: it returns the
// handles passed to threaded calls, and false when an edit does anything
// but record or pass the handle. recorded, when not nil, is called with
// each recording edit's index.
func (w *rewriter) plainEdits(start, end int, recorded func(i int, e edit)) ([]edit, bool) {
	var args []edit
	for i, e := range w.ed.edits {
		if e.off < start || e.off > end {
			continue
		}
		if e.del == 0 && e.class == editOpen && e.off > start && e.off < end && handleArg.MatchString(e.text) {
			args = append(args, e)
			continue
		}
		if e.del != 0 || !recordingOnly.MatchString(e.text) {
			return nil, false
		}
		if recorded != nil {
			recorded(i, e)
		}
	}
	return args, true
}

// unswitchBody doubles the body of a function whose handle is a parameter
// (a threaded function) and whose every edit records or passes the
// handle, with its exit block recorded at its returns (no defer): its
// entry block's prologue (the edit at entryAt) becomes
//
//	if parscopeP == nil { <the body as written> ; return } ; parscopeP.Block(entry); ...
//
// so that with recording off a call costs one test of the handle instead
// of one per block, region and loop. The "; return" is added in a
// function without results, whatever its last statement (a call of a
// shadowed panic would look terminating), so that the copy never falls
// through into the recording body; a function with results cannot end
// without a return, the compiler makes sure. A body holding a label
// (which a copy would define twice), or that cannot be written on one
// line, is left alone; its loops may still be doubled. It reports whether
// it doubled the body.
func (w *rewriter) unswitchBody(b *ast.BlockStmt, results bool, entryAt int) bool {
	if len(b.List) == 0 || hasLabel(b) {
		return false
	}
	start, end := w.off(b.Lbrace)+1, w.off(b.Rbrace)
	args, ok := w.plainEdits(start, end, nil)
	if !ok {
		return false
	}
	plain, ok := w.plainCopy(start, end, args)
	if !ok {
		return false
	}
	ret := ""
	if !results {
		ret = " return ;"
	}
	w.ed.edits[entryAt].text = " if parscopeP == nil { " + plain + ret + " } ;" + w.ed.edits[entryAt].text
	return true
}

// oneLine returns Go source src (a statement) on one line: its tokens
// separated by spaces, with the semicolons the language inserts at line
// ends written out and comments dropped. It fails on a raw string
// literal spanning lines and on a token it cannot read.
func oneLine(src []byte) (string, bool) {
	fset := token.NewFileSet()
	var sc scanner.Scanner
	bad := false
	sc.Init(fset.AddFile("", fset.Base(), len(src)), src, func(token.Position, string) { bad = true }, 0)
	var b strings.Builder
	for {
		_, tok, lit := sc.Scan()
		switch {
		case tok == token.EOF:
			return b.String(), !bad
		case tok == token.ILLEGAL, tok != token.SEMICOLON && strings.ContainsAny(lit, "\n\r"):
			return "", false
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		switch {
		case tok == token.SEMICOLON:
			b.WriteByte(';')
		case lit != "":
			b.WriteString(lit)
		default:
			b.WriteString(tok.String())
		}
	}
}

// hasLabel reports whether a labeled statement is inside s: a copy of s
// would define its label twice.
func hasLabel(s ast.Stmt) bool {
	found := false
	ast.Inspect(s, func(n ast.Node) bool {
		if _, ok := n.(*ast.LabeledStmt); ok {
			found = true
		}
		return !found
	})
	return found
}
