package rewrite

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/parscope/parscope/format"
)

// Filter is a filter file's rules, for Options.Exclude and
// Options.Coarse.
type Filter struct {
	// Exclude are the patterns of "exclude" rules.
	Exclude []string
	// Coarse are the patterns of "coarse" rules.
	Coarse []string
}

// ReadFilter reads a filter file, the static filter of Score-P's filter
// files: one rule a line, "exclude PATTERN..." (the functions record no
// blocks and no regions of their own) or "coarse PATTERN..." (they record
// their entry and exit and nothing between: function-level
// instrumentation), with patterns of function names in path.Match syntax
// as the dictionary writes them ("f", "(*T).m"); "#" starts a comment.
// Suggest and Suggestion.WriteFilter (the command `parscope filter
// suggest TRACE.pst`) write such a file from a first run's trace.
func ReadFilter(r io.Reader) (Filter, error) {
	var out Filter
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var to *[]string
		switch fields[0] {
		case "exclude":
			to = &out.Exclude
		case "coarse":
			to = &out.Coarse
		}
		if to == nil || len(fields) == 1 {
			return Filter{}, fmt.Errorf("filter line %d: %q: want \"exclude PATTERN...\" or \"coarse PATTERN...\"", n, format.Excerpt([]byte(strings.TrimSpace(line))))
		}
		for _, p := range fields[1:] {
			if _, err := path.Match(p, ""); err != nil {
				return Filter{}, fmt.Errorf("filter line %d: pattern %q: %w", n, format.Excerpt([]byte(p)), err)
			}
			*to = append(*to, p)
		}
	}
	return out, sc.Err()
}
