package rewrite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// uninstrumentedNames lists a dictionary's uninstrumented functions as
// "name: reason", sorted.
func uninstrumentedNames(d Dictionary) []string {
	var out []string
	for _, u := range d.Uninstrumented {
		out = append(out, u.Function+": "+u.Reason)
	}
	sort.Strings(out)
	return out
}

// sourceDir writes src as main.go of a new directory and returns it.
func sourceDir(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLeafRule checks which functions of testdata/threads the default
// size rule leaves uninstrumented (tiny leaves: no loop, no call of the
// package's functions, nothing communicating), that a larger LeafSize
// leaves more and that none of them then receives the handle.
func TestLeafRule(t *testing.T) {
	tests := []struct {
		size int
		want []string
	}{
		{0, []string{
			"(square).area: leaf of 9 nodes", "asValue: leaf of 7 nodes", "inTests: leaf of 5 nodes",
			"initial: leaf of 3 nodes", "pair: leaf of 14 nodes", "split: leaf of 7 nodes",
			"sum: inlined by the compiler (cost 16)", "weight: leaf of 7 nodes",
		}},
		// Over the size rule, (square).area is still left as written: the
		// compiler inlines it. pair (cost 90) it does not.
		{7, []string{
			"(square).area: inlined by the compiler (cost 6)", "asValue: leaf of 7 nodes", "inTests: leaf of 5 nodes",
			"initial: leaf of 3 nodes", "split: leaf of 7 nodes", "sum: inlined by the compiler (cost 16)", "weight: leaf of 7 nodes",
		}},
		{-1, nil},
	}
	for _, tc := range tests {
		res := rewritePkgOpts(t, "threads", Options{LeafSize: tc.size})
		got := uninstrumentedNames(res.Dict)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("LeafSize %d: uninstrumented\n%s\nwant\n%s", tc.size, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
		for _, b := range res.Dict.Blocks {
			for _, u := range res.Dict.Uninstrumented {
				if b.Function == u.Function {
					t.Errorf("LeafSize %d: block %d belongs to uninstrumented %s", tc.size, b.ID, u.Function)
				}
			}
		}
		src := string(fileOf(t, res, "main.go"))
		for _, name := range []string{"weight", "pair", "split"} {
			if tc.size == 0 && strings.Contains(src, "func "+name+"(parscopeP") {
				t.Errorf("LeafSize %d: uninstrumented %s receives the handle", tc.size, name)
			}
		}
	}
}

// TestRecursiveLeaf checks that a tiny function calling only itself (a
// tree's build and walk, as binary-trees') is a leaf, its whole recursion
// uninstrumented, while one that calls another function of the package
// (mutual recursion) is not, nor is a larger one.
func TestRecursiveLeaf(t *testing.T) {
	src := `package main

type Node struct{ left, right *Node }

func bottomUpTree(depth int) *Node {
	if depth <= 0 {
		return &Node{}
	}
	return &Node{bottomUpTree(depth - 1), bottomUpTree(depth - 1)}
}

func (n *Node) itemCheck() int {
	if n.left == nil {
		return 1
	}
	return 1 + n.left.itemCheck() + n.right.itemCheck()
}

func even(n int) bool {
	if n == 0 {
		return true
	}
	return odd(n - 1)
}

func odd(n int) bool {
	if n == 0 {
		return false
	}
	return even(n - 1)
}

func main() { println(bottomUpTree(4).itemCheck(), even(4)) }
`
	dir := sourceDir(t, src)
	res, err := Package(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(uninstrumentedNames(res.Dict), "\n")
	if want := "(*Node).itemCheck: leaf of 26 nodes\nbottomUpTree: leaf of 24 nodes"; got != want {
		t.Errorf("uninstrumented\n%s\nwant\n%s", got, want)
	}
	res, err = Package(t.Context(), dir, Options{LeafSize: 24})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(uninstrumentedNames(res.Dict), "\n"); got != "bottomUpTree: leaf of 24 nodes" {
		t.Errorf("LeafSize 24: uninstrumented\n%s\nwant bottomUpTree only", got)
	}
}

// TestExclude checks the static filter: functions named by a pattern
// record no block and no region, but their messages still record.
func TestExclude(t *testing.T) {
	res := rewritePkgOpts(t, "prodcons", Options{Exclude: []string{"cons*"}})
	if got := uninstrumentedNames(res.Dict); strings.Join(got, ",") != "consume: excluded by cons*" {
		t.Errorf("uninstrumented %q, want consume excluded by cons*", got)
	}
	for _, b := range res.Dict.Blocks {
		if b.Function == "consume" {
			t.Errorf("block %d of excluded consume", b.ID)
		}
	}
	src := string(fileOf(t, res, "main.go"))
	i := strings.Index(src, "func consume(")
	body := src[i : i+strings.Index(src[i:], "\n}")]
	if strings.Contains(body, ".Block(") || strings.Contains(body, ".Enter(") || !strings.Contains(body, "parscopeRecvd(parscopeP, in, 16, 0)") ||
		!strings.Contains(body, "parscopeSend(parscopeP, done , sum, 8, 0)") {
		t.Errorf("excluded consume rewritten as\n%s\nwant its messages (tag 0) and no block or region", body)
	}
}

// TestExcludedLooksUpNoHandle checks that an excluded function in which
// nothing records does not look its goroutine's handle up (recording, a
// look-up reads runtime.Stack: a microsecond a call of a hot function),
// while an excluded main still gets the handle its deferred close needs.
func TestExcludedLooksUpNoHandle(t *testing.T) {
	src := `package main

func Sum(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

func main() { println(Sum(1000)) }
`
	dir := sourceDir(t, src)
	res, err := Package(t.Context(), dir, Options{Exclude: []string{"Sum", "main"}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(fileOf(t, res, "main.go"))
	i := strings.Index(got, "func Sum(")
	if body := got[i : i+strings.Index(got[i:], "\nfunc main")]; strings.Contains(body, "parscope") {
		t.Errorf("excluded Sum (exported, so not given the handle as a parameter), in which nothing records, rewritten as\n%s\nwant it untouched", body)
	}
	if !strings.Contains(got, "func main() { parscopeP := parscopeSelf(); _ = parscopeP; defer parscopeClose(parscopeP); ") {
		t.Errorf("excluded main rewritten as\n%s\nwant its handle and deferred close", got)
	}
}

// TestCoarse checks function-level instrumentation: functions named by a
// coarse pattern record their entry and exit blocks and their messages
// (tagged with the entry block), and no block or region between them;
// the other functions are rewritten as before.
func TestCoarse(t *testing.T) {
	res := rewritePkgOpts(t, "prodcons", Options{Coarse: []string{"cons*"}})
	if got := uninstrumentedNames(res.Dict); len(got) != 0 {
		t.Errorf("uninstrumented %q, want none", got)
	}
	var kinds []string
	entry := int32(-1)
	for _, b := range res.Dict.Blocks {
		if b.Function == "consume" {
			kinds = append(kinds, b.Kind)
			if b.Kind == "entry" {
				entry = b.ID
			}
		}
	}
	if strings.Join(kinds, ",") != "entry,exit" {
		t.Errorf("blocks of coarse consume: %q, want entry,exit", kinds)
	}
	for _, g := range res.Dict.Regions {
		if g.Function == "consume" {
			t.Errorf("region %d (%s) of coarse consume", g.ID, g.Name())
		}
	}
	src := string(fileOf(t, res, "main.go"))
	i := strings.Index(src, "func consume(")
	body := src[i : i+1+strings.Index(src[i+1:], "\nfunc ")] // up to the next function
	if n := strings.Count(body, ".Block("); n != 2 || strings.Contains(body, ".Enter(") ||
		!strings.Contains(body, fmt.Sprintf("parscopeRecvd(parscopeP, in, 16, %d)", entry)) {
		t.Errorf("coarse consume rewritten as\n%s\nwant its entry and exit blocks (%d .Block calls), its messages tagged %d, no region", body, n, entry)
	}
	var produce []string
	for _, b := range res.Dict.Blocks {
		if b.Function == "produce" {
			produce = append(produce, b.Kind)
		}
	}
	if len(produce) <= 2 {
		t.Errorf("produce, not coarse, has blocks %q: want its loop's blocks too", produce)
	}
}

// TestExitAtReturn checks where exit blocks are recorded: before each
// return and at the end of a body when nothing after the return could
// record (no defer, returned expressions without calls of the package),
// else by a defer.
func TestExitAtReturn(t *testing.T) {
	src := `package p

import "strings"

func A(x int) int {
	if x > 0 {
		return x
	}
	return strings.Count("a", "b") + int(float64(x))
}

func B(x int) int { return A(x) }

func C(s []int) { defer func() {}(); s[0] = 1 }

func D(s []int) { for i := range s { s[i] = i } }
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Package(t.Context(), dir, Options{LeafSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	got := string(fileOf(t, res, "p.go"))
	for _, want := range []string{
		"parscopeP.Exit(0); parscopeP.Block(4); return x",
		`parscopeP.Block(3); parscopeP.Block(4); return strings.Count("a", "b")`,
		"func B(x int) int { parscopeP := parscopeSelf(); parscopeP.Block(5); defer parscopeP.Block(6); return A(x) }",
		"func C(s []int) { parscopeP := parscopeSelf(); parscopeP.Block(7); defer parscopeP.Block(10); defer func() { parscopeP := parscopeSelf(); parscopeP.Block(8);; parscopeP.Block(9); }(); s[0] = 1 }",
		// D's loop only records: it is doubled, the copy that runs with
		// recording off on one line (see unswitch.go).
		"if parscopeP == nil { for i := range s { s [ i ] = i } ; } else { parscopeP.Enter(1); for i := range s { parscopeP.Block(12); s[i] = i }; parscopeP.Exit(1) } ; parscopeP.Block(13); }",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten source lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != strings.Count(src, "\n") {
		t.Errorf("%d lines rewritten into %d", strings.Count(src, "\n"), n)
	}
}

func fileOf(t *testing.T, res *Result, name string) []byte {
	t.Helper()
	for _, f := range res.Files {
		if f.Name == name {
			return f.Src
		}
	}
	t.Fatalf("no %s in the result", name)
	return nil
}

// TestRewrittenInlines builds testdata/hot rewritten with every function
// but the leaves instrumented (InstrumentInlinable: sign, which the
// compiler inlines, too) and asks the compiler (-gcflags=-m) what it
// inlines: the one-line evalA must still be inlined into its loop, as in
// the original, and the recording calls of times too (a nil handle then
// costs a branch). The program prints what the original prints, and its
// trace has times's blocks and none of evalA.
func TestRewrittenInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "hot"))
	if err != nil {
		t.Fatal(err)
	}
	want := goCmd(t, src, nil, "run", ".")
	res := rewritePkgOpts(t, "hot", Options{InstrumentInlinable: true})
	dir := tempModule(t, res, "hot")
	bin := filepath.Join(dir, "hot"+exeSuffix())
	m := goCmd(t, dir, nil, "build", "-gcflags=-m", "-o", bin, ".")
	for _, re := range []string{
		`main.go:7:\d+: can inline evalA`,
		`main.go:14:\d+: inlining call to evalA`,
		`main.go:14:\d+: inlining call to instrument.\(\*Process\).Block`,
		`main.go:13:\d+: inlining call to instrument.\(\*Process\).Enter`,
		`main.go:30:\d+: inlining call to parscopeSelf`,
	} {
		if !regexp.MustCompile(re).MatchString(m) {
			t.Errorf("the compiler's report has no %q:\n%s", re, m)
		}
	}
	rewritten := string(fileOf(t, res, "main.go"))
	if i := strings.Index(rewritten, "func main"); strings.Contains(rewritten[:i], "defer") {
		t.Errorf("the rewritten times or sign defers:\n%s", rewritten)
	}
	pst := filepath.Join(t.TempDir(), "hot.pst")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PARSCOPE_OUT="+pst, "PARSCOPE_ENTROPY_FILTER=off")
	got, err := cmd.CombinedOutput()
	if err != nil || string(got) != want {
		t.Fatalf("rewritten output %q (%v), original %q", got, err, want)
	}
	off := exec.Command(bin)
	off.Dir = t.TempDir()
	off.Env = append(os.Environ(), "PARSCOPE_OUT=off")
	if got, err := off.CombinedOutput(); err != nil || string(got) != want {
		t.Fatalf("rewritten output with PARSCOPE_OUT=off %q (%v), original %q", got, err, want)
	}
	if ents, _ := os.ReadDir(off.Dir); len(ents) != 0 {
		t.Errorf("with PARSCOPE_OUT=off the program wrote %s", ents[0].Name())
	}
	fns := map[string]int{}
	for _, r := range readTrace(t, pst) {
		if r.Kind == trace.KindState && r.ID > 0 && int(r.ID) < len(res.Dict.Blocks)-1 {
			fns[res.Dict.Blocks[r.ID].Function]++
		}
	}
	// times: entry, 4 outer bodies, 16 inner bodies, 4 statements after
	// the inner loop, exit.
	if fns["times"] != 26 || fns["evalA"] != 0 {
		t.Errorf("blocks per function %v, want 26 of times and none of evalA", fns)
	}

	// The entropy filter, on by default: each run of the inner body
	// (block 3, 4 in a row) keeps its first block only (over 14 blocks,
	// Table 4 with K = 100 gives the first repeat H = 0.064, under the
	// threshold 0.1), and the dropped counts rebuild the whole sequence.
	var full []int32
	for _, r := range readTrace(t, pst) {
		if r.Kind == trace.KindState {
			full = append(full, r.ID)
		}
	}
	ent := exec.Command(bin)
	ent.Env = append(os.Environ(), "PARSCOPE_OUT="+pst)
	if got, err := ent.CombinedOutput(); err != nil || string(got) != want {
		t.Fatalf("rewritten output with the entropy filter %q (%v), original %q", got, err, want)
	}
	var rebuilt []int32
	inner := 0
	for _, r := range readTrace(t, pst) {
		switch {
		case r.Kind == trace.KindState:
			rebuilt = append(rebuilt, r.ID)
			if r.ID == 3 {
				inner++
			}
		case r.Kind == trace.KindEvent && r.Value > 0 && len(rebuilt) > 0:
			for range r.Value {
				rebuilt = append(rebuilt, rebuilt[len(rebuilt)-1])
			}
		}
	}
	if inner != 4 {
		t.Errorf("inner body block kept %d times by the entropy filter, want 4 of 16", inner)
	}
	if fmt.Sprint(rebuilt) != fmt.Sprint(full) {
		t.Errorf("blocks rebuilt from the filtered trace\n%v\nwant\n%v", rebuilt, full)
	}

	// The throttle: at most 2 blocks of one id, the drops reported.
	thr := exec.Command(bin)
	thr.Env = append(os.Environ(), "PARSCOPE_OUT="+pst, "PARSCOPE_THROTTLE=2", "PARSCOPE_ENTROPY_FILTER=off")
	if got, err := thr.CombinedOutput(); err != nil || string(got) != want {
		t.Fatalf("rewritten output with PARSCOPE_THROTTLE=2 %q (%v), original %q", got, err, want)
	}
	per := map[int32]int{}
	for _, r := range readTrace(t, pst) {
		if r.Kind == trace.KindState {
			per[r.ID]++
		}
	}
	if per[3] != 2 { // the inner loop's body, 16 times
		t.Errorf("inner body block recorded %d times with PARSCOPE_THROTTLE=2, want 2", per[3])
	}
	st, err := store.Open(pst)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v := st.Header().Meta.Extra["parscope.filtered.state.000003"]; v != "body of range at main.go:13: kept 2, dropped 14: throttled after 2 calls" {
		t.Errorf("meta of block 3: %q", v)
	}
}

// TestReadFilter checks the filter file's syntax and its errors.
func TestReadFilter(t *testing.T) {
	got, err := ReadFilter(strings.NewReader("# first run\nexclude evalA (*Vec).* # hot\n\ncoarse (Vec).Times\nexclude wait\n"))
	if err != nil || strings.Join(got.Exclude, " ") != "evalA (*Vec).* wait" || strings.Join(got.Coarse, " ") != "(Vec).Times" {
		t.Errorf("ReadFilter = %q, %v; want exclude evalA (*Vec).* wait, coarse (Vec).Times", got, err)
	}
	for _, bad := range []string{"include f\n", "exclude\n", "coarse\n", "exclude [\n", "coarse [\n"} {
		if _, err := ReadFilter(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ReadFilter(%q) error %v, want one at line 1", bad, err)
		}
	}
}

// TestReadFilterLongLineClipped checks that an over-long rule or pattern
// of a filter file is echoed as its first bytes and its length, not whole.
func TestReadFilterLongLineClipped(t *testing.T) {
	long := strings.Repeat("w", 60_000) // bufio.Scanner's lines stop at 64 KiB
	for _, tc := range []struct{ in, want string }{
		{"include " + long + "\n", `filter line 1: "include ` + long[:format.MaxEcho-8] + `… (60008 bytes)": want "exclude PATTERN..." or "coarse PATTERN..."`},
		{"exclude [" + long + "\n", `filter line 1: pattern "[` + long[:format.MaxEcho-1] + `… (60001 bytes)": syntax error in pattern`},
	} {
		_, err := ReadFilter(strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%.300v\nwant %q", err, tc.want)
		}
	}
}

// TestInlinable checks the rule that asks the compiler: a function it
// inlines in which nothing could record is left as written, loops and
// all, and stays inlined in the rewritten program; one it does not
// inline, or one that calls a function of the package, is instrumented;
// InstrumentInlinable instruments them all.
func TestInlinable(t *testing.T) {
	src := `package main

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func twice(xs []int) int { return 2 * sum(xs) }

func big(xs []int) int {
	s := 0
	for i := range xs {
		for j := range xs {
			if xs[i] > xs[j] {
				s += xs[i] - xs[j]
			} else if xs[i] < xs[j] {
				s -= xs[j] * 3
			} else {
				s += i * j
			}
		}
	}
	for i := range xs {
		s += xs[i] * xs[len(xs)-1-i]
	}
	println(s, len(xs))
	println(s*2, len(xs)+1)
	println(s*3, len(xs)+2)
	return s
}

func main() {
	xs := []int{3, 1, 2}
	println(sum(xs), twice(xs), big(xs))
}
`
	dir := sourceDir(t, src)
	res, err := Package(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(uninstrumentedNames(res.Dict), "\n")
	if !regexp.MustCompile(`^sum: inlined by the compiler \(cost [0-9]+\)$`).MatchString(got) {
		t.Errorf("uninstrumented\n%s\nwant sum only, inlined by the compiler", got)
	}
	funcs := map[string]bool{}
	for _, b := range res.Dict.Blocks {
		funcs[b.Function] = true
	}
	if funcs["sum"] || !funcs["twice"] || !funcs["big"] {
		t.Errorf("functions with blocks %v; want twice and big, not sum", funcs)
	}
	// The rewritten program: sum is still inlined, and its text is the
	// original's.
	mod := tempModule(t, res, "inl")
	out := goCmd(t, mod, nil, "build", "-gcflags=-m", "-o", filepath.Join(t.TempDir(), "p"+exeSuffix()), ".")
	if !regexp.MustCompile(`(?m)main\.go:3:6: can inline sum$`).MatchString(out) {
		t.Errorf("the rewritten sum is not inlined:\n%s", out)
	}
	if !strings.Contains(string(fileOf(t, res, "main.go")), "func sum(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}") {
		t.Errorf("sum was edited:\n%s", fileOf(t, res, "main.go"))
	}

	res, err = Package(t.Context(), dir, Options{InstrumentInlinable: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := uninstrumentedNames(res.Dict); len(got) != 0 {
		t.Errorf("InstrumentInlinable: uninstrumented %v, want none", got)
	}
}

// TestParseInlinable checks reading the compiler's -m output: "can
// inline" lines only, keyed by file base name, line and name, with a
// path that holds colons.
func TestParseInlinable(t *testing.T) {
	out := "# command-line-arguments\n" +
		"./main.go:3:6: can inline sum with cost 14 as: func([]int) int { s := 0; for loop; return s }\n" +
		"./main.go:11:6: cannot inline twice: function too complex: cost 90 exceeds budget 80\n" +
		"/a:b/c/x.go:20:14: can inline (*T).m with cost 4 as: method(t *T) func() int { return t.n }\n" +
		"./main.go:12:9: inlining call to sum\n" +
		"./main.go:x:6: can inline bad with cost 3 as: func() {}\n"
	got := fmt.Sprint(parseInlinable([]byte(out)))
	if want := "map[main.go:3:sum:14 x.go:20:m:4]"; got != want {
		t.Errorf("parseInlinable = %s, want %s", got, want)
	}
}
