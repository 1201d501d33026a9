package rewrite

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parscope/parscope/trace"
)

// TestThreadedSignatures checks which functions of testdata/threads
// receive the handle as a parameter and which keep their signature (and
// look their process up), for each reason the rewriter has. Every
// function is instrumented (no leaf is left out).
func TestThreadedSignatures(t *testing.T) {
	res := rewritePkgOpts(t, "threads", Options{LeafSize: -1})
	var src string
	for _, f := range res.Files {
		if f.Name == "main.go" {
			src = string(f.Src)
		}
	}
	threaded := map[string]bool{
		"add": true, "addDone": true, "weight": true, "pair": true, "work": true, "sum": true,
		"area": false, "split": false, "asValue": false, "inTests": false, "initial": false, "main": false,
	}
	for name, want := range threaded {
		re := regexp.MustCompile(`func (\([^)]*\) )?` + name + `\((parscopeP \*parscopeProcess)?`)
		m := re.FindStringSubmatch(src)
		if m == nil {
			t.Errorf("no declaration of %s in the rewritten source", name)
			continue
		}
		if got := m[2] != ""; got != want {
			t.Errorf("%s threaded = %v, want %v", name, got, want)
		}
	}
	for _, call := range []string{
		`c.add(parscopeP, w, weight(parscopeP, w)`,
		`c.add(parscopeP, word, k)`,
		`split(pair(parscopeP, "hello world"))`,
		`weight(parscopeP, "end")`,
		`sum(parscopeP, xs...)`,
		`parscopeF(parscopeP, parscopeA0, parscopeA1, parscopeA2, parscopeA3, 1.5, nil, "x", "y")`,
		`parscopeF(parscopeP, "extra", 100, parscopeA2)`,
	} {
		if !strings.Contains(src, call) {
			t.Errorf("rewritten source lacks %q", call)
		}
	}
	// Every line keeps its number.
	orig, err := os.ReadFile(filepath.Join("testdata", "threads", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := strings.Count(string(orig), "\n"), strings.Count(src, "\n"); a != b {
		t.Errorf("rewritten main.go has %d lines, the original %d", b, a)
	}
}

// TestThreadsEndToEnd builds and runs the rewritten program: the same
// output as the original, its in-package test still passes, and every go
// statement's goroutine is a process of its own that ends with the end
// block (main, 3 workers, the addDone method and the literal).
func TestThreadsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	res, dir, recs := rewriteAndRun(t, "threads")
	goCmd(t, dir, []string{"PARSCOPE_OUT=off"}, "test", "-count=1", ".")
	end := res.Dict.Blocks[len(res.Dict.Blocks)-1].ID
	last := map[int32]int32{}
	for _, r := range recs {
		if r.Kind == trace.KindState {
			last[r.Proc] = r.ID
		}
	}
	ended := 0
	for _, b := range last {
		if b == end {
			ended++
		}
	}
	if len(last) != 6 || ended != 6 {
		t.Errorf("%d processes, %d ending with the end block %d; want 6 and 6 (main, 3 workers, addDone, the literal)", len(last), ended, end)
	}
}
