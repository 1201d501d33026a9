package rewrite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnswitch checks which loops and bodies the rewriter doubles (see
// unswitch.go). A function that takes the handle and whose rewrite only
// records or passes the handle on has its body doubled, with its copy on
// one line (comments dropped, a multi-line literal joined, a switch's case
// labels kept, the handle passed to the calls that take it, and a return
// added in a function without results), and none of its loops. In a
// function that looks its handle up, the outermost loop that only records
// or passes the handle is doubled. A function or loop that sends, holds a
// label or holds a multi-line raw string is not. Every line keeps its
// number, and the rewritten package builds.
func TestUnswitch(t *testing.T) {
	src := `package p

func pure(s []int) (n int) {
	for i := range s {
		for j := 0; j < i; j++ { // a comment
			switch {
			case s[j] > 2:
				n += []int{
					1, 2,
				}[j%2]
			default:
				n--
			}
		}
	}
	return n
}

func sends(c chan int, s []int) {
	for _, v := range s {
		c <- v
	}
}

func helper(x int) int {
	y := 0
	for i := 0; i < x; i++ {
		y += i
	}
	return y
}

func calls(s []int) (n int) {
	for _, v := range s {
		n += helper(v)
	}
	return n
}

func labeled(s []int) (n int) {
	for _, v := range s {
	inner:
		for k := 0; k < v; k++ {
			if k > 3 {
				break inner
			}
			n++
		}
	}
	return n
}

func raw(s []string) (n int) {
	for _, v := range s {
		n += len(v + ` + "`" + `a
b` + "`" + `)
	}
	return n
}

var sink int

func noResult(s []int) {
	m := 0
	for _, v := range s {
		m += v
	}
	sink = m
}

func Exported(s []int) (n int) {
	for _, v := range s {
		n += helper(v)
	}
	return n
}

func panic(v any) { sink = 1 }

func shadowed(s []int) {
	sink = len(s)
	panic(s)
}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module p\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Package(t.Context(), dir, Options{LeafSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	got := string(fileOf(t, res, "p.go"))
	if n := strings.Count(got, "\n"); n != strings.Count(src, "\n") {
		t.Errorf("%d lines rewritten into %d", strings.Count(src, "\n"), n)
	}
	lines := strings.Split(got, "\n")
	for _, c := range []struct {
		line int
		want string
	}{
		{3, "if parscopeP == nil { for i := range s { for j := 0 ; j < i ; j ++ { switch { case s [ j ] > 2 : n += [ ] int { 1 , 2 , } [ j % 2 ] ; default : n -- ; } ; } ; } ; return n ; } ; parscopeP.Block("},
		{25, "if parscopeP == nil { y := 0 ; for i := 0 ; i < x ; i ++ { y += i ; } ; return y ; } ; parscopeP.Block("},
		{33, "if parscopeP == nil { for _ , v := range s { n += helper ( parscopeP , v ) ; } ; return n ; } ; parscopeP.Block("},
		{63, "if parscopeP == nil { m := 0 ; for _ , v := range s { m += v ; } ; sink = m ; return ; } ; parscopeP.Block("},
		{72, "if parscopeP == nil { for _ , v := range s { n += helper ( parscopeP , v ) ; } ; } else {"},
		// A call of a shadowed panic looks terminating; the copy returns
		// all the same.
		{80, "if parscopeP == nil { sink = len ( s ) ; panic ( parscopeP , s ) ; return ; } ; parscopeP.Block("},
	} {
		if !strings.Contains(lines[c.line-1], c.want) {
			t.Errorf("line %d is\n%s\nwant it to hold\n%s", c.line, lines[c.line-1], c.want)
		}
	}
	if n := strings.Count(got, "if parscopeP == nil"); n != 7 {
		t.Errorf("%d bodies and loops doubled, want 7 (the bodies of pure, helper, calls, noResult, panic and shadowed, Exported's loop):\n%s", n, got)
	}
	for _, line := range []int{19, 20, 40, 41, 53, 54} { // sends, labeled, raw: their bodies and loops
		if strings.Contains(lines[line-1], "parscopeP == nil") {
			t.Errorf("line %d doubled: %s", line, lines[line-1])
		}
	}
	goCmd(t, tempModule(t, res, "p"), nil, "build", ".")
}

// TestOneLine checks the copy's text: automatic semicolons written out,
// comments dropped, and a raw string spanning lines refused.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		src, want string
		ok        bool
	}{
		{"for i := 0; i < n; i++ {\n\tx += i // sum\n}", "for i := 0 ; i < n ; i ++ { x += i ; } ;", true},
		{"for {\n\tif f(a,\n\t\tb) {\n\t\tbreak\n\t}\n}", "for { if f ( a , b ) { break ; } ; } ;", true},
		{"for _, s := range x { y += `a\nb` }", "", false},
		{"for _, s := range x { y += `ab` + \"c\" }", "for _ , s := range x { y += `ab` + \"c\" } ;", true},
	} {
		got, ok := oneLine([]byte(tc.src))
		if ok != tc.ok || got != tc.want {
			t.Errorf("oneLine(%q) = %q, %v; want %q, %v", tc.src, got, ok, tc.want, tc.ok)
		}
	}
}
