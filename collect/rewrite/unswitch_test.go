package rewrite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnswitch checks which loops the rewriter doubles (see unswitch.go):
// the outermost loop that only records is, once, with its copy on one line
// (comments dropped, a multi-line literal joined, a switch's case labels
// kept); so is a loop that calls a function taking the handle, whose copy
// passes it; a loop that sends, one holding a label and one holding a
// multi-line raw string are not. Every line keeps its number, and the
// rewritten package builds.
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
	want := "if parscopeP == nil { for i := range s { for j := 0 ; j < i ; j ++ { switch { case s [ j ] > 2 : n += [ ] int { 1 , 2 , } [ j % 2 ] ; default : n -- ; } ; } ; } ; } else {"
	if !strings.Contains(lines[3], want) {
		t.Errorf("pure's loops not doubled as expected: line 4 is\n%s\nwant it to hold\n%s", lines[3], want)
	}
	if n := strings.Count(got, "if parscopeP == nil"); n != 3 {
		t.Errorf("%d loops doubled, want 3 (pure's outer loop, helper's and calls'):\n%s", n, got)
	}
	if want := "if parscopeP == nil { for _ , v := range s { n += helper ( parscopeP , v ) ; } ; } else {"; !strings.Contains(lines[33], want) {
		t.Errorf("calls' loop (it calls helper, which takes the handle) not doubled as expected: line 34 is\n%s\nwant it to hold\n%s", lines[33], want)
	}
	for _, line := range []int{20, 41, 54} { // sends, labeled, raw
		if strings.Contains(lines[line-1], "parscopeP == nil") {
			t.Errorf("line %d doubled: %s", line, lines[line-1])
		}
	}
	if !strings.Contains(lines[26], "if parscopeP == nil { for i := 0 ; i < x ; i ++ { y += i ; } ; } else {") {
		t.Errorf("helper's loop (its function takes the handle; the loop only records) not doubled: %s", lines[26])
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
