package rewrite

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/parscope/parscope/trace"
)

// InstrumentPath is the import path of the recording library the
// rewritten package calls.
const InstrumentPath = "github.com/parscope/parscope/instrument"

// StorePath is the import path of the package that links the trace store
// into a recording program (Options.BuildAtExit).
const StorePath = InstrumentPath + "/pst"

// RuntimeFile is the name of the file the rewriter adds to the package: the
// package-level recorder, the block dictionary and the helpers the
// rewritten code calls.
const RuntimeFile = "parscope_rt.go"

// TestMainFile is the test file the rewriter adds to a package that has
// tests but no TestMain: it writes the trace when the tests end.
const TestMainFile = "parscope_main_test.go"

// DictFile is the name of the block dictionary written next to the
// rewritten files.
const DictFile = "parscope-blocks.json"

// Options configure Package.
type Options struct {
	// TracePath is the .pst the instrumented program writes (the
	// environment variable PARSCOPE_OUT overrides it at run time; "off"
	// disables recording). Empty means "<directory name>.pst" in the
	// program's working directory.
	TracePath string
	// ProcessVar names an integer function parameter or package-level
	// variable holding the recording process's id (a rank) in every
	// function that has it in scope, as if each such function carried a
	// //parscope:process directive naming it.
	ProcessVar string
	// DynamicBase is the first process id given to goroutines and
	// channels. 0 means 0 when no function names its process and 1024
	// otherwise (ranks are expected below it).
	DynamicBase int
	// LeafSize is the size rule for tiny leaf functions: a function or
	// method of at most LeafSize syntax nodes, without loops, that calls
	// nothing of its package (nor a function value or an interface
	// method), communicates nothing and starts no goroutine is left
	// uninstrumented, so that the
	// compiler still inlines it and a hot call of it records nothing (its
	// time is its caller's block's). 0 means DefaultLeafSize; a negative
	// LeafSize instruments every function.
	LeafSize int
	// InstrumentInlinable instruments the functions the compiler inlines
	// (go build -gcflags=-m on the package as written) that nothing could
	// record in, loops and all. By default they are left uninstrumented, as
	// leaves are, so that instrumenting never stops the compiler inlining
	// a function: their time is their caller's block's. A negative
	// LeafSize implies it.
	InstrumentInlinable bool
	// Exclude are patterns (path.Match syntax) of function names, as the
	// dictionary writes them ("f", "(*T).m", "(T).m"): a function matching
	// one records no blocks and no regions of its own (its messages and
	// its function literals' blocks are still recorded). It is the static
	// filter of Score-P, applied when the program is rewritten, where it
	// costs nothing at run time (see ReadFilter).
	Exclude []string
	// Coarse are patterns of function names, as Exclude's: a function
	// matching one (and not excluded) records its entry and exit blocks
	// and its messages, but no block and no region between them, as a
	// function-level instrumenter (Score-P's compiler instrumentation)
	// does: its hot loops cost nothing, and its time is its entry block's
	// (after a call to an instrumented function returns, the callee's exit
	// block's, until the function's own exit).
	Coarse []string
	// Throttle is the rewritten program's default throttle (TAU's, see
	// instrument.Options.Throttle): a process records at most this many
	// blocks of one id and enters of one region, and the trace's metadata
	// says what was dropped. 0 means DefaultThrottle; negative records
	// everything. The environment variable PARSCOPE_THROTTLE overrides it
	// at run time.
	Throttle int64
	// NoEntropyFilter switches off, by default, the rewritten program's
	// entropy filter (instrument.EntropyFilter with DefaultEntropyConfig
	// and DefaultEntropyThreshold, every process's blocks and events): a
	// repeat of a process's previous block is dropped when its modified
	// entropy is low, and the trace keeps the count of what was dropped.
	// The environment variable PARSCOPE_ENTROPY_FILTER ("off" or "on")
	// overrides it at run time.
	NoEntropyFilter bool
	// BuildAtExit links the trace store into the rewritten program
	// (package instrument/pst), so that it builds the .pst at the end of
	// main, as the examples do. By default it does not: the program then
	// does not link the Parquet writer and its compressors (it starts in
	// a fraction of the time and is several times smaller), and leaves
	// the complete recording in TRACE.spill, which the first parscope
	// command given the trace builds (as with instrument.Options.
	// BuildLater).
	BuildAtExit bool
}

// DefaultThrottle is the throttle of a rewritten program when
// Options.Throttle is 0: TAU's default call count (it also asks for under
// 10 µs a call, which a record's time cannot tell).
const DefaultThrottle = 100000

// DefaultLeafSize is the LeafSize used when Options.LeafSize is 0: a
// function of this many syntax nodes is well inside the compiler's
// inlining budget (80 of its nodes).
const DefaultLeafSize = 40

// Block describes one basic block of the rewritten package.
type Block struct {
	ID int32 `json:"id"`
	// Kind is start, end (the two per-process blocks 0 and the highest),
	// entry, exit (of a function), then, else, case, body (of a loop),
	// after (the statement following a compound statement) or next (the
	// statement following a communication, synchronisation or
	// instrument call).
	Kind        string `json:"kind"`
	Function    string `json:"function,omitempty"`
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	Description string `json:"description"`
}

// Dictionary is the block and region dictionary of a rewritten package.
type Dictionary struct {
	Package string            `json:"package"`
	Blocks  []Block           `json:"blocks"`
	Regions []trace.RegionDef `json:"regions"`
	// Uninstrumented are the functions that record no blocks and no
	// regions of their own, and why.
	Uninstrumented []Uninstrumented `json:"uninstrumented,omitempty"`
}

// Uninstrumented is a function the rewriter left without blocks and
// regions of its own.
type Uninstrumented struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	// Reason is "leaf of N nodes" (Options.LeafSize), "inlined by the
	// compiler (cost N)" (Options.InstrumentInlinable) or "excluded by
	// PATTERN" (Options.Exclude).
	Reason string `json:"reason"`
}

// States returns the blocks as the trace's state dictionary.
func (d *Dictionary) States() []trace.StateDef {
	out := make([]trace.StateDef, len(d.Blocks))
	for i, b := range d.Blocks {
		out[i] = trace.StateDef{ID: b.ID, Name: b.Kind, Description: b.Description, File: b.File, Line: int32(b.Line)}
	}
	return out
}

// File is one output file of the rewritten package.
type File struct {
	Name string
	Src  []byte
}

// Result is a rewritten package.
type Result struct {
	// Dir is the package directory that was read.
	Dir string
	// Files are the rewritten non-test .go files and RuntimeFile.
	Files []File
	Dict  Dictionary
}

// Package reads the Go package in dir (its non-test files for the current
// build context), type-checks it and returns it rewritten to record itself
// with the instrument library.
func Package(ctx context.Context, dir string, opts Options) (*Result, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: reading package: %w", dir, err)
	}
	if len(bp.CgoFiles) > 0 {
		return nil, fmt.Errorf("%s: cgo files (%s) are not supported", dir, bp.CgoFiles[0])
	}
	fset := token.NewFileSet()
	var files []*ast.File
	srcs := map[*ast.File][]byte{}
	for _, name := range bp.GoFiles {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing: %w", err)
		}
		files = append(files, f)
		srcs[f] = src
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Uses:       map[*ast.Ident]types.Object{},
		Defs:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	imp, err := newImporter(ctx, fset, dir, files)
	if err != nil {
		return nil, err
	}
	var typeErrs []error
	conf := types.Config{
		Importer: imp,
		Error:    func(err error) { typeErrs = append(typeErrs, err) },
	}
	pkg, _ := conf.Check(bp.ImportPath, fset, files, info)
	if len(typeErrs) > 0 {
		return nil, fmt.Errorf("type-checking %s: %w", dir, errors.Join(typeErrs...))
	}
	for id := range info.Defs {
		if strings.HasPrefix(id.Name, "parscope") {
			return nil, fmt.Errorf("%s: identifier %s uses the prefix the rewriter reserves", fset.Position(id.Pos()), id.Name)
		}
	}
	w := &rewriter{
		srcs:   srcs,
		fset:   fset,
		info:   info,
		pkg:    pkg,
		opts:   opts,
		sizes:  types.SizesFor("gc", runtime.GOARCH),
		absDir: absDir,
		nextID: 1,
	}
	testNames, err := identNames(fset, dir, bp.TestGoFiles)
	if err != nil {
		return nil, err
	}
	var inl map[string]int
	if !opts.InstrumentInlinable && opts.LeafSize >= 0 {
		if inl, err = inlinable(ctx, dir, bp.GoFiles); err != nil {
			return nil, err
		}
	}
	w.quiet = w.uninstrumented(files, inl)
	w.threaded = w.threadable(files, testNames)
	w.dict.Package = pkg.Name()
	w.dict.Blocks = append(w.dict.Blocks, Block{ID: 0, Kind: "start", Description: "process start"})
	res := &Result{Dir: dir}
	for _, f := range files {
		w.ed = &editor{src: srcs[f]}
		w.tf = fset.File(f.Pos())
		w.file = filepath.Base(w.tf.Name())
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				w.funcDecl(fd)
			}
		}
		if w.err != nil {
			return nil, w.err
		}
		res.Files = append(res.Files, File{Name: w.file, Src: w.ed.apply()})
	}
	w.dict.Blocks = append(w.dict.Blocks, Block{ID: w.nextID, Kind: "end", Description: "process end"})
	res.Dict = w.dict
	rt, err := w.runtimeFile()
	if err != nil {
		return nil, err
	}
	res.Files = append(res.Files, File{Name: RuntimeFile, Src: rt})
	if tm, err := testMain(bp, pkg.Name()); err != nil {
		return nil, err
	} else if tm != nil {
		res.Files = append(res.Files, File{Name: TestMainFile, Src: tm})
	}
	sort.Slice(res.Files, func(i, j int) bool { return res.Files[i].Name < res.Files[j].Name })
	return res, nil
}

// rewriter walks a type-checked package and records its edits.
type rewriter struct {
	srcs   map[*ast.File][]byte
	fset   *token.FileSet
	info   *types.Info
	pkg    *types.Package
	opts   Options
	sizes  types.Sizes
	absDir string
	dict   Dictionary

	ed   *editor
	tf   *token.File
	file string

	threaded   map[types.Object]bool   // functions that receive the handle (see threadable)
	quiet      map[types.Object]string // functions left uninstrumented, and why (see uninstrumented)
	nextID     int32                   // next block id
	directives bool                    // some function names its process
	err        error
}

// frame is an enclosing statement that a branch statement may leave.
type frame struct {
	kind   string // "for", "if", "switch", "select"
	label  string
	region int32 // -1 when the statement is not a region
}

// fn is the state of the function being rewritten.
type fn struct {
	name   string
	frames []frame
	cur    int32 // current block
	// quiet: the function records no blocks and regions (its messages and
	// literals still record); its messages are tagged 0.
	quiet bool
	// coarse: the function records its entry and exit blocks and nothing
	// between them, no block and no region of its own (Options.Coarse);
	// its messages are tagged with its entry block.
	coarse bool
	// atReturn: the exit block is recorded before each return and at the
	// end of the body instead of by a defer (see exitAtReturn); returns
	// are the offsets of the return statements.
	atReturn bool
	returns  []int
	// loops are the function's loops, for unswitch.
	loops []loopAt
}

func (w *rewriter) off(p token.Pos) int { return w.tf.Offset(p) }

func (w *rewriter) line(p token.Pos) int { return w.tf.Line(p) }

func (w *rewriter) where(p token.Pos) string { return fmt.Sprintf("%s:%d", w.file, w.line(p)) }

// inner reports whether f records nothing between its entry and exit
// blocks: no blocks and no regions.
func (f *fn) inner() bool { return f.quiet || f.coarse }

func (w *rewriter) newBlock(f *fn, kind string, p token.Pos, desc string) int32 {
	if f.quiet {
		return 0
	}
	if f.coarse && kind != "entry" && kind != "exit" {
		return f.cur
	}
	id := w.nextID
	w.nextID++
	w.dict.Blocks = append(w.dict.Blocks, Block{ID: id, Kind: kind, Function: f.name, File: w.file, Line: w.line(p), Description: desc})
	f.cur = id
	return id
}

// funcDecl rewrites a declared function or method.
func (w *rewriter) funcDecl(d *ast.FuncDecl) {
	name := funcName(d, w.text)
	handle := "parscopeSelf()"
	if expr := directive(d.Doc); expr != "" {
		handle = "parscopeProc(int(" + expr + "))"
		w.directives = true
	} else if v := w.opts.ProcessVar; v != "" && w.hasIntVar(d, v) {
		handle = "parscopeProc(int(" + v + "))"
		w.directives = true
	}
	var pre string
	if d.Recv == nil && name == "main" && w.pkg.Name() == "main" {
		pre = "defer parscopeClose(parscopeP); "
	}
	if w.threaded[w.info.Defs[d.Name]] {
		w.threadParam(d)
		handle = ""
	}
	w.threadCalls(d.Body, w.wrappedGoCalls(d.Body))
	if why, ok := w.quiet[w.info.Defs[d.Name]]; ok {
		w.dict.Uninstrumented = append(w.dict.Uninstrumented, Uninstrumented{Function: name, File: w.file, Line: w.line(d.Pos()), Reason: why})
		if silent(why) {
			return // nothing in it records (see leafSize)
		}
		w.quietBody(name, d.Body, handle, pre)
		return
	}
	_, coarse := excluded(w.opts.Coarse, name)
	w.body(name, d.Body, d.Type.Results.NumFields() > 0, handle, pre, false, coarse)
}

// hasIntVar reports whether name is an integer parameter of d or an
// integer package-level variable.
func (w *rewriter) hasIntVar(d *ast.FuncDecl, name string) bool {
	isInt := func(t types.Type) bool {
		b, ok := t.Underlying().(*types.Basic)
		return ok && b.Info()&types.IsInteger != 0
	}
	for _, fl := range d.Type.Params.List {
		for _, n := range fl.Names {
			if n.Name == name {
				return isInt(w.info.Defs[n].Type())
			}
		}
	}
	if v, ok := w.pkg.Scope().Lookup(name).(*types.Var); ok {
		return isInt(v.Type())
	}
	return false
}

// directive returns the expression of a //parscope:process comment.
func directive(doc *ast.CommentGroup) string {
	if doc == nil {
		return ""
	}
	for _, c := range doc.List {
		if rest, ok := strings.CutPrefix(c.Text, "//parscope:process "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// body rewrites a function body: the handle, the entry block and the
// exit block recorded on return. quiet bodies record neither (see
// quietBody). results says whether the function returns values.
func (w *rewriter) body(name string, b *ast.BlockStmt, results bool, handle, pre string, quiet, coarse bool) {
	f := &fn{name: name, quiet: quiet, coarse: coarse, atReturn: pre == "" && w.exitAtReturn(b)}
	at := w.off(b.Lbrace) + 1
	if quiet {
		// The handle is looked up only when something in the body records
		// with it (a message, a call that takes it, a function literal):
		// recording, a look-up is the goroutine's id and a sync.Map
		// load, which a hot excluded function would pay on every call for
		// nothing.
		first := len(w.ed.edits)
		w.list(f, b.List)
		uses := strings.Contains(pre, "parscopeP")
		for _, e := range w.ed.edits[first:] {
			uses = uses || strings.Contains(e.text, "parscopeP")
		}
		switch {
		case handle != "" && uses:
			w.ed.prologue(at, fmt.Sprintf(" parscopeP := %s; _ = parscopeP; %s", handle, pre))
		case pre != "":
			w.ed.prologue(at, " "+pre)
		}
		return
	}
	entryAt := -1  // the entry block's prologue, when the body may be doubled
	defer func() { // once every edit of the body is made
		if entryAt < 0 || !f.atReturn || !w.unswitchBody(b, results, entryAt) {
			w.unswitchLoops(f)
		}
	}()
	entry := w.newBlock(f, "entry", b.Lbrace, "entry of "+name)
	if handle == "" { // the handle is a parameter (see threadable)
		entryAt = len(w.ed.edits) // doubled only with f.atReturn, so no pre
		w.ed.prologue(at, fmt.Sprintf(" %sparscopeP.Block(%d);", pre, entry))
	} else {
		w.ed.prologue(at, fmt.Sprintf(" parscopeP := %s; %sparscopeP.Block(%d);", handle, pre, entry))
	}
	w.list(f, b.List)
	exit := w.newBlock(f, "exit", b.Rbrace, "exit of "+name)
	if f.atReturn {
		rec := fmt.Sprintf("parscopeP.Block(%d); ", exit)
		for _, off := range f.returns {
			w.ed.open(off, rec) // after the regions the return exits
		}
		if !listTerminating(b.List) {
			w.ed.closeLast(w.off(b.Rbrace), "; "+rec)
		}
		return
	}
	// The deferred exit block is registered right after the entry block,
	// before any user defer, so it is the last thing the function records.
	w.ed.prologue(at, fmt.Sprintf(" defer parscopeP.Block(%d);", exit))
}

// quietBody rewrites the body of a function Options.Exclude names: its
// messages and function literals record, with the handle it would have
// had; it records no block and no region.
func (w *rewriter) quietBody(name string, b *ast.BlockStmt, handle, pre string) {
	w.body(name, b, false, handle, pre, true, false)
}

// list rewrites a statement list: a new block begins at each statement
// that follows a compound statement or one that communicates. It returns
// whether a new block begins after the list.
func (w *rewriter) list(f *fn, stmts []ast.Stmt) bool {
	need := false
	for _, s := range stmts {
		if need && !f.inner() {
			id := w.newBlock(f, "next", s.Pos(), "statement at "+w.where(s.Pos()))
			w.ed.open(w.off(s.Pos()), fmt.Sprintf("parscopeP.Block(%d); ", id))
		}
		need = w.stmt(f, s, nil)
	}
	return need
}

// clauseBody rewrites the body of a branch, loop or clause: a new block
// starts at its beginning, after prefix (code recorded first).
func (w *rewriter) clauseBody(f *fn, stmts []ast.Stmt, emptyAt token.Pos, kind, desc, prefix string) {
	p := emptyAt
	if len(stmts) > 0 {
		p = stmts[0].Pos()
	}
	id := w.newBlock(f, kind, p, desc)
	prefix = strings.ReplaceAll(prefix, "TAG", fmt.Sprint(id))
	if f.inner() {
		if prefix != "" {
			w.ed.open(w.off(p), prefix)
		}
	} else {
		w.ed.open(w.off(p), fmt.Sprintf("parscopeP.Block(%d); %s", id, prefix))
	}
	w.list(f, stmts)
}

// stmt rewrites one statement and reports whether a new block begins after
// it. label is the label of an enclosing labeled statement.
func (w *rewriter) stmt(f *fn, s ast.Stmt, label *ast.Ident) bool {
	switch s := s.(type) {
	case *ast.LabeledStmt:
		return w.stmt(f, s.Stmt, s.Label)
	case *ast.BlockStmt:
		return w.list(f, s.List)
	case *ast.ExprStmt:
		return w.exprs(f, s.X)
	case *ast.SendStmt:
		w.send(f, s)
		return true
	case *ast.AssignStmt:
		return w.exprs(f, append(exprList(s.Lhs), exprList(s.Rhs)...)...)
	case *ast.IncDecStmt:
		return w.exprs(f, s.X)
	case *ast.DeclStmt:
		return w.exprs(f, s.Decl)
	case *ast.GoStmt:
		if lit, ok := s.Call.Fun.(*ast.FuncLit); ok {
			w.funcLit(f, lit, true)
			return w.exprs(f, exprList(s.Call.Args)...)
		}
		w.goStmt(s)
		return w.exprs(f, s.Call)
	case *ast.DeferStmt:
		return w.exprs(f, s.Call)
	case *ast.ReturnStmt:
		w.exitRegions(f, s.Pos(), len(f.frames))
		w.exprs(f, exprList(s.Results)...)
		if f.atReturn {
			f.returns = append(f.returns, w.off(s.Pos()))
		}
		return true
	case *ast.BranchStmt:
		w.branch(f, s)
		return true
	case *ast.IfStmt:
		return w.ifStmt(f, s, label)
	case *ast.ForStmt:
		f.loops = append(f.loops, loopAt{s: s, label: label, first: len(w.ed.edits)})
		region := w.region(f, trace.RegionLoop, "for", s, label)
		f.frames = append(f.frames, frame{kind: "for", label: labelName(label), region: region})
		w.exprs(f, s.Init, s.Cond, s.Post)
		w.clauseBody(f, s.Body.List, s.Body.Rbrace, "body", "body of for at "+w.where(s.Pos()), "")
		f.frames = f.frames[:len(f.frames)-1]
		return true
	case *ast.RangeStmt:
		f.loops = append(f.loops, loopAt{s: s, label: label, first: len(w.ed.edits)})
		region := w.region(f, trace.RegionLoop, "range", s, label)
		f.frames = append(f.frames, frame{kind: "for", label: labelName(label), region: region})
		w.exprs(f, s.X)
		prefix := ""
		if ch, ok := w.chanOf(s.X); ok && simple(s.X) {
			prefix = fmt.Sprintf("parscopeRecvd(parscopeP, %s, %d, TAG); ", w.text(s.X), w.elemSize(ch))
		}
		w.exprs(f, s.Key, s.Value)
		w.clauseBody(f, s.Body.List, s.Body.Rbrace, "body", "body of range at "+w.where(s.Pos()), prefix)
		f.frames = f.frames[:len(f.frames)-1]
		return true
	case *ast.SwitchStmt:
		w.switchStmt(f, s.Body, label, s.Init, s.Tag)
		return true
	case *ast.TypeSwitchStmt:
		w.switchStmt(f, s.Body, label, s.Init, s.Assign)
		return true
	case *ast.SelectStmt:
		f.frames = append(f.frames, frame{kind: "select", label: labelName(label), region: -1})
		for _, c := range s.Body.List {
			cc := c.(*ast.CommClause)
			prefix := w.commRecord(f, cc.Comm)
			desc := "default of select at " + w.where(s.Pos())
			if cc.Comm != nil {
				desc = "case " + w.text(cc.Comm) + " at " + w.where(cc.Pos())
			}
			w.clauseBody(f, cc.Body, cc.Colon+1, "case", desc, prefix)
		}
		f.frames = f.frames[:len(f.frames)-1]
		return true
	}
	return false
}

// switchStmt rewrites a switch or type switch: its header nodes, then its
// case clauses.
func (w *rewriter) switchStmt(f *fn, body *ast.BlockStmt, label *ast.Ident, header ...ast.Node) {
	f.frames = append(f.frames, frame{kind: "switch", label: labelName(label), region: -1})
	w.exprs(f, header...)
	for _, c := range body.List {
		cc := c.(*ast.CaseClause)
		w.exprs(f, exprList(cc.List)...)
		desc := "default at " + w.where(cc.Pos())
		if cc.List != nil {
			desc = "case at " + w.where(cc.Pos())
		}
		w.clauseBody(f, cc.Body, cc.Colon+1, "case", desc, "")
	}
	f.frames = f.frames[:len(f.frames)-1]
}

func exprList(l []ast.Expr) []ast.Node {
	out := make([]ast.Node, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// ifStmt rewrites an if statement (a region) and its else-if chain.
func (w *rewriter) ifStmt(f *fn, s *ast.IfStmt, label *ast.Ident) bool {
	region := w.region(f, trace.RegionIf, "if", s, label)
	f.frames = append(f.frames, frame{kind: "if", label: labelName(label), region: region})
	for cur := s; cur != nil; {
		w.exprs(f, cur.Init, cur.Cond)
		w.clauseBody(f, cur.Body.List, cur.Body.Rbrace, "then", "then of if at "+w.where(cur.Pos()), "")
		switch e := cur.Else.(type) {
		case *ast.BlockStmt:
			w.clauseBody(f, e.List, e.Rbrace, "else", "else of if at "+w.where(cur.Pos()), "")
			cur = nil
		case *ast.IfStmt:
			cur = e
		default:
			cur = nil
		}
	}
	f.frames = f.frames[:len(f.frames)-1]
	return true
}

// region declares a loop or if region around s: Enter before it (before
// its label), Exit after it.
func (w *rewriter) region(f *fn, kind trace.RegionKind, what string, s ast.Stmt, label *ast.Ident) int32 {
	if f.inner() {
		return -1
	}
	parent := int32(-1)
	for i := len(f.frames) - 1; i >= 0; i-- {
		if f.frames[i].region >= 0 {
			parent = f.frames[i].region
			break
		}
	}
	id := int32(len(w.dict.Regions))
	w.dict.Regions = append(w.dict.Regions, trace.RegionDef{
		ID: id, Kind: kind, Label: what + " at " + w.where(s.Pos()), Function: f.name,
		File: w.file, Line: int32(w.line(s.Pos())), EndLine: int32(w.line(s.End())), Parent: parent,
	})
	start := stmtStart(s, label)
	w.ed.open(w.off(start), fmt.Sprintf("parscopeP.Enter(%d); ", id))
	if !terminating(s, labelName(label)) {
		w.ed.close(w.off(s.End()), fmt.Sprintf("; parscopeP.Exit(%d)", id))
	}
	return id
}

// stmtStart is where code inserted before s goes: before its label.
func stmtStart(s ast.Stmt, label *ast.Ident) token.Pos {
	if label == nil {
		return s.Pos()
	}
	return label.Pos()
}

func labelName(l *ast.Ident) string {
	if l == nil {
		return ""
	}
	return l.Name
}

// exitRegions inserts, before p, Exit calls for the innermost n frames'
// regions.
func (w *rewriter) exitRegions(f *fn, p token.Pos, n int) {
	var b strings.Builder
	for i := len(f.frames) - 1; i >= len(f.frames)-n; i-- {
		if r := f.frames[i].region; r >= 0 {
			fmt.Fprintf(&b, "parscopeP.Exit(%d); ", r)
		}
	}
	if b.Len() > 0 {
		w.ed.open(w.off(p), b.String())
	}
}

// branch closes the regions a break or continue leaves (the target loop's
// own region is closed after the loop).
func (w *rewriter) branch(f *fn, s *ast.BranchStmt) {
	if s.Tok != token.BREAK && s.Tok != token.CONTINUE {
		return
	}
	for i := len(f.frames) - 1; i >= 0; i-- {
		fr := f.frames[i]
		var hit bool
		switch {
		case s.Label != nil:
			hit = fr.label == s.Label.Name
		case s.Tok == token.BREAK:
			hit = fr.kind != "if"
		default:
			hit = fr.kind == "for"
		}
		if hit {
			w.exitRegions(f, s.Pos(), len(f.frames)-1-i)
			return
		}
	}
}

// funcLit rewrites a function literal; root says it is the function of a
// go statement, whose goroutine becomes a new process.
func (w *rewriter) funcLit(f *fn, lit *ast.FuncLit, root bool) {
	name := f.name + ".func@" + w.where(lit.Pos())
	if root {
		w.body(name, lit.Body, lit.Type.Results.NumFields() > 0, "parscopeGoBegin()", "defer parscopeGoEnd(parscopeP); ", f.quiet, false)
		return
	}
	w.body(name, lit.Body, lit.Type.Results.NumFields() > 0, "parscopeSelf()", "", f.quiet, false)
}

// exprs rewrites the receives, function literals and synchronising calls
// in the nodes and reports whether one ends the block.
func (w *rewriter) exprs(f *fn, nodes ...ast.Node) bool {
	ends := false
	for _, n := range nodes {
		if n == nil {
			continue
		}
		ast.Inspect(n, func(x ast.Node) bool {
			switch x := x.(type) {
			case *ast.FuncLit:
				w.funcLit(f, x, false)
				return false
			case *ast.UnaryExpr:
				if x.Op == token.ARROW {
					w.recv(f, x)
					ends = true
				}
			case *ast.CallExpr:
				if w.syncCall(x) {
					ends = true
				}
			}
			return true
		})
	}
	return ends
}

// recv rewrites <-ch into a call that receives and records the message.
func (w *rewriter) recv(f *fn, x *ast.UnaryExpr) {
	ch, ok := w.chanOf(x.X)
	if !ok {
		return
	}
	helper := "parscopeRecv"
	if _, tuple := w.info.Types[x].Type.(*types.Tuple); tuple {
		helper = "parscopeRecv2"
	}
	w.ed.open(w.off(x.Pos()), helper+"(parscopeP, ")
	w.ed.replace(w.off(x.OpPos), 2, "")
	w.ed.close(w.off(x.End()), fmt.Sprintf(", %d, %d)", w.elemSize(ch), f.cur))
}

// send rewrites ch <- v into a call that records the message and sends.
func (w *rewriter) send(f *fn, s *ast.SendStmt) {
	ch, ok := w.chanOf(s.Chan)
	if !ok {
		w.exprs(f, s.Chan, s.Value)
		return
	}
	w.ed.open(w.off(s.Pos()), "parscopeSend(parscopeP, ")
	w.ed.replace(w.off(s.Arrow), 2, ",")
	w.ed.close(w.off(s.End()), fmt.Sprintf(", %d, %d)", w.elemSize(ch), f.cur))
	w.exprs(f, s.Chan, s.Value)
}

// commRecord returns the code recording a select case's communication at
// the start of its body, or "" when the channel expression cannot be
// evaluated again without side effects.
func (w *rewriter) commRecord(f *fn, comm ast.Stmt) string {
	var ch ast.Expr
	okVar := ""
	helper := "parscopeRecvd"
	switch c := comm.(type) {
	case *ast.SendStmt:
		ch, helper = c.Chan, "parscopeSent"
		w.exprs(f, c.Value)
	case *ast.ExprStmt:
		if u, ok := ast.Unparen(c.X).(*ast.UnaryExpr); ok {
			ch = u.X
		}
	case *ast.AssignStmt:
		if u, ok := ast.Unparen(c.Rhs[0]).(*ast.UnaryExpr); ok {
			ch = u.X
		}
		if len(c.Lhs) == 2 {
			if id, ok := c.Lhs[1].(*ast.Ident); ok && id.Name != "_" {
				okVar = id.Name
			}
		}
	}
	if ch == nil {
		return ""
	}
	t, isChan := w.chanOf(ch)
	if !isChan || !simple(ch) {
		w.exprs(f, ch)
		return ""
	}
	if okVar != "" {
		return fmt.Sprintf("if %s { parscopeRecvd(parscopeP, %s, %d, TAG) }; ", okVar, w.text(ch), w.elemSize(t))
	}
	return fmt.Sprintf("%s(parscopeP, %s, %d, TAG); ", helper, w.text(ch), w.elemSize(t))
}

// syncBlocking are the synchronising calls that end a block.
var syncBlocking = map[string]bool{
	"(*sync.WaitGroup).Wait": true,
	"(*sync.Mutex).Lock":     true,
	"(*sync.RWMutex).Lock":   true,
	"(*sync.RWMutex).RLock":  true,
	"(*sync.Cond).Wait":      true,
}

// syncCall reports whether call synchronises or calls the instrument
// library.
func (w *rewriter) syncCall(call *ast.CallExpr) bool {
	var id *ast.Ident
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.SelectorExpr:
		id = fun.Sel
	case *ast.Ident:
		id = fun
	default:
		return false
	}
	fn, ok := w.info.Uses[id].(*types.Func)
	if !ok {
		return false
	}
	if fn.Pkg() != nil && fn.Pkg().Path() == InstrumentPath {
		return true
	}
	return syncBlocking[fn.FullName()]
}

// chanOf returns the channel type of e.
func (w *rewriter) chanOf(e ast.Expr) (*types.Chan, bool) {
	t := w.info.TypeOf(e)
	if t == nil {
		return nil, false
	}
	c, ok := t.Underlying().(*types.Chan)
	return c, ok
}

// elemSize is the size in bytes of the channel's element type, or -1 when
// it depends on a type parameter (the helpers then measure it).
func (w *rewriter) elemSize(c *types.Chan) int64 {
	if hasTypeParam(c.Elem(), 0) {
		return -1
	}
	return w.sizes.Sizeof(c.Elem())
}

func hasTypeParam(t types.Type, depth int) bool {
	if depth > 20 {
		return true
	}
	switch t := t.(type) {
	case *types.TypeParam:
		return true
	case *types.Named:
		if args := t.TypeArgs(); args != nil {
			for i := 0; i < args.Len(); i++ {
				if hasTypeParam(args.At(i), depth+1) {
					return true
				}
			}
		}
		return false
	case *types.Array:
		return hasTypeParam(t.Elem(), depth+1)
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if hasTypeParam(t.Field(i).Type(), depth+1) {
				return true
			}
		}
	}
	return false
}

// simple reports whether e can be evaluated again with the same result
// and no side effect: identifiers, selectors, constants and indexes of
// those.
func simple(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident, *ast.BasicLit:
		return true
	case *ast.SelectorExpr:
		return simple(e.X)
	case *ast.ParenExpr:
		return simple(e.X)
	case *ast.StarExpr:
		return simple(e.X)
	case *ast.IndexExpr:
		return simple(e.X) && simple(e.Index)
	}
	return false
}

// text is the source text of a node.
func (w *rewriter) text(n ast.Node) string { return exprString(w.ed.src, w.tf, n) }

func exprString(src []byte, tf *token.File, n ast.Node) string {
	return string(src[tf.Offset(n.Pos()):tf.Offset(n.End())])
}

// testMain returns TestMainFile for a package with tests and no TestMain,
// or nil.
func testMain(bp *build.Package, name string) ([]byte, error) {
	files := append(append([]string(nil), bp.TestGoFiles...), bp.XTestGoFiles...)
	if len(files) == 0 {
		return nil, nil
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, filepath.Join(bp.Dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing: %w", err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "TestMain" {
				return nil, nil
			}
		}
	}
	return []byte(fmt.Sprintf(`// Code generated by parscope instrument. DO NOT EDIT.

package %s

import (
	"os"
	"testing"
)

// TestMain writes the trace when the tests end.
func TestMain(m *testing.M) {
	code := m.Run()
	parscopeCloseAll()
	os.Exit(code)
}
`, name)), nil
}
