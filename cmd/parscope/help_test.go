package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/parscope/parscope/format"
)

// helpTexts returns every piece of help text a user can see: each command's
// Short, Long and Example, its flags' usage, and each importer's
// description, keyed by where it comes from.
func helpTexts(t *testing.T) map[string]string {
	t.Helper()
	texts := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := c.CommandPath()
		texts[name+" (short)"] = c.Short
		texts[name+" (long)"] = c.Long
		texts[name+" (example)"] = c.Example
		texts[name+" (flags)"] = c.LocalFlags().FlagUsages() + c.PersistentFlags().FlagUsages()
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, n := range format.Names() {
		imp, err := format.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		texts["importer "+n] = imp.Describe()
	}
	if len(texts) < 80 {
		t.Fatalf("only %d help texts found: the command tree was not walked", len(texts))
	}
	return texts
}

// seedRef matches the internal paper numbers ("seed 002", "seed004-plan")
// that help text once used instead of naming a method or citing a paper.
var seedRef = regexp.MustCompile(`(?i)\bseeds?[ _-]?0\d\d`)

// citation matches an author-year citation of one of the five papers.
var citation = regexp.MustCompile(`(Gomez, Cai & Schubert|Özmen|Jones et al\.|Lyon|Strube)(?:'s)? \(?(\d{4})`)

// docRef matches a file under docs/ that help text points the user to.
var docRef = regexp.MustCompile(`docs/[A-Za-z0-9_./-]+\.(?:md|json|png)`)

// TestHelpCitesPapers checks that no help text names a paper by an internal
// number, that every author-year citation is an entry of
// docs/bibliography.md, and that every docs/ page help text mentions exists.
func TestHelpCitesPapers(t *testing.T) {
	bib, err := os.ReadFile("../../docs/bibliography.md")
	if err != nil {
		t.Fatalf("the bibliography help text cites: %v", err)
	}
	entries := map[string]bool{}
	for _, line := range strings.Split(string(bib), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			entries[h] = true
		}
	}
	cited := map[string]bool{}
	for where, text := range helpTexts(t) {
		if m := seedRef.FindString(text); m != "" {
			t.Errorf("%s says %q; name the method or cite the paper by author and year: %q", where, m, text)
		}
		for _, m := range citation.FindAllStringSubmatch(text, -1) {
			entry := m[1] + " " + m[2]
			cited[entry] = true
			if !entries[entry] {
				t.Errorf("%s cites %q, which has no entry \"## %s\" in docs/bibliography.md", where, m[0], entry)
			}
		}
		for _, doc := range docRef.FindAllString(text, -1) {
			if _, err := os.Stat(filepath.Join("../..", doc)); err != nil {
				t.Errorf("%s points to %s, which does not exist", where, doc)
			}
		}
	}
	// Every paper parscope implements is cited somewhere in the help.
	for entry := range entries {
		if entry != "" && !cited[entry] {
			t.Errorf("no help text cites %q", entry)
		}
	}
}
