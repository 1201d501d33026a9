// Package docs holds parscope's documentation. Its only Go file is this
// test, which keeps the README's and the pages' links and wording honest.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// link matches a Markdown link or image target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// seedRef matches the internal paper numbers ("seed 002", "seed004-plan")
// the pages once used instead of naming a method or citing a paper.
var seedRef = regexp.MustCompile(`(?i)\bseeds?[ _-]?0\d\d`)

// pages returns README.md and every docs/*.md page, relative to docs/.
func pages(t *testing.T) []string {
	t.Helper()
	md, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(md) < 10 {
		t.Fatalf("only %d pages in docs/", len(md))
	}
	return append(md, filepath.Join("..", "README.md"))
}

// slug is the anchor GitHub gives a heading: lower case, punctuation other
// than hyphens dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// outsideCode returns the lines of a Markdown page that are not in a fenced
// code block, with their 1-based line numbers.
func outsideCode(text string) map[int]string {
	out := map[int]string{}
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out[i+1] = line
		}
	}
	return out
}

// anchors returns the heading anchors of a Markdown page.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := map[string]bool{}
	for _, line := range outsideCode(string(b)) {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			a[slug(strings.TrimLeft(h, "#"))] = true
		}
	}
	return a
}

// TestLinks checks that every relative link of the README and the docs
// pages points to a file that exists and, with a #fragment into a Markdown
// page, to one of its headings.
func TestLinks(t *testing.T) {
	checked := 0
	for _, page := range pages(t) {
		checked += checkLinks(t, page)
	}
	if checked < 20 {
		t.Errorf("only %d links checked: the link pattern no longer matches the pages", checked)
	}
}

// checkLinks checks the relative links of one Markdown page as TestLinks
// describes and returns how many it checked.
func checkLinks(t *testing.T, page string) int {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for n, line := range outsideCode(string(b)) {
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", page, n, target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[frag] {
				t.Errorf("%s:%d: link to %s: %s has no heading with anchor %q", page, n, target, path, frag)
			}
			checked++
		}
	}
	return checked
}

// TestTestdataREADMEs checks that test data says what it is: every folder
// named testdata, every folder of the top-level testdata/, and every folder
// of testdata/real/ and of its subfolders (the groups of real samples)
// holds a README.md that names a licence, links only to what exists and
// cites no paper by an internal number. A sample's own layout below that
// (an OTF2 experiment's traces/, SimPoint's sample/) is described by the
// README above it.
func TestTestdataREADMEs(t *testing.T) {
	root := ".."
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
			return filepath.SkipDir
		}
		if d.Name() == "testdata" {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"testdata/*", "testdata/real/*", "testdata/real/*/*"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				dirs = append(dirs, p)
			}
		}
	}
	// 18 packages' testdata, the top-level one, its 4 folders, and 9 groups
	// of real samples when this test was written: far fewer means the walk
	// went wrong, not that the READMEs are there.
	if len(dirs) < 30 {
		t.Fatalf("only %d test data folders found: %q", len(dirs), dirs)
	}
	for _, dir := range dirs {
		readme := filepath.Join(dir, "README.md")
		b, err := os.ReadFile(readme)
		if err != nil {
			t.Errorf("%s has no README.md saying what its files are, where they come from, their licence and which tests read them", dir)
			continue
		}
		if !strings.Contains(strings.ToLower(string(b)), "licen") {
			t.Errorf("%s names no licence", readme)
		}
		if m := seedRef.FindString(string(b)); m != "" {
			t.Errorf("%s says %q; cite the paper by author and year", readme, m)
		}
		checkLinks(t, readme)
	}
}

// TestCitations checks that no page names a paper by an internal number and
// that every page the bibliography links to exists (TestLinks) and links
// back to it.
func TestCitations(t *testing.T) {
	for _, page := range pages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			if m := seedRef.FindString(line); m != "" {
				t.Errorf("%s:%d says %q; name the method or cite the paper by author and year", page, n+1, m)
			}
		}
	}
	bib, err := os.ReadFile("bibliography.md")
	if err != nil {
		t.Fatal(err)
	}
	var cited []string
	for _, m := range link.FindAllStringSubmatch(string(bib), -1) {
		if !strings.Contains(m[1], "://") && strings.HasSuffix(m[1], ".md") {
			cited = append(cited, m[1])
		}
	}
	if len(cited) < 5 {
		t.Fatalf("the bibliography links to %d method pages, want one or more per paper", len(cited))
	}
	for _, page := range cited {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("bibliography.md links to %s: %v", page, err)
			continue
		}
		if !strings.Contains(string(b), "(bibliography.md#") {
			t.Errorf("%s does not link its paper's entry in bibliography.md", page)
		}
	}
}
