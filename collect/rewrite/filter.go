package rewrite

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/parscope/parscope/format"
)

// ReadFilter reads a filter file, the static filter of Score-P's
// filter files: one rule a line, "exclude PATTERN..." with patterns of
// function names in path.Match syntax as the dictionary writes them ("f",
// "(*T).m"); "#" starts a comment. It returns the patterns, for
// Options.Exclude. Suggest and Suggestion.WriteFilter (the command
// `parscope filter suggest TRACE.pst`) write such a file from a first
// run's trace.
func ReadFilter(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if fields[0] != "exclude" || len(fields) == 1 {
			return nil, fmt.Errorf("filter line %d: %q: want \"exclude PATTERN...\"", n, format.Excerpt([]byte(strings.TrimSpace(line))))
		}
		for _, p := range fields[1:] {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("filter line %d: pattern %q: %w", n, format.Excerpt([]byte(p)), err)
			}
			out = append(out, p)
		}
	}
	return out, sc.Err()
}
