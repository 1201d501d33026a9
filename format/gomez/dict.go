package gomez

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/trace"
)

// nameLimit is the longest short name, in bytes, made from a description.
const nameLimit = 24

// ReadDict reads a block dictionary: lines "id description" like Table 1 of
// Gomez, Cai & Schubert 2017, where id is a non-negative integer and the rest of the line,
// after spaces or tabs, is the description. A first line that does not
// start with an integer is a column header and is skipped; blank lines and
// '#' lines are skipped. It returns one StateDef per line in file order,
// with the full Description and a short Name made of its first words.
// A later line that does not start with an integer, a negative or
// out-of-range id and an id given twice are *format.Error values naming
// the file and line.
func ReadDict(path string) (defs []trace.StateDef, err error) {
	lr, err := format.OpenLines(path)
	if err != nil {
		var fe *format.Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, fmt.Errorf("gomez: block dictionary: %w", err)
	}
	defer func() {
		if cerr := lr.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("gomez: block dictionary: %w", cerr)
		}
	}()
	first := true
	seen := map[int32]int{}
	for {
		line, err := lr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return defs, nil
			}
			return nil, err
		}
		text := strings.TrimFunc(string(line), unicode.IsSpace)
		if text == "" || text[0] == '#' {
			continue
		}
		idText, desc := text, ""
		if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
			idText, desc = text[:i], strings.TrimFunc(text[i:], unicode.IsSpace)
		}
		wasFirst := first
		first = false
		neg := strings.HasPrefix(idText, "-")
		v, ok, overflow := parseDigits([]byte(strings.TrimPrefix(idText, "-")))
		switch {
		case !ok && wasFirst:
			continue // a column header such as "Block #	Description"
		case !ok:
			return nil, lr.Errorf(`expected "id description" with an integer block id, got %q`, format.Excerpt([]byte(idText)))
		case neg:
			return nil, lr.Errorf("block id %s is negative", format.Excerpt([]byte(idText)))
		case overflow || v > math.MaxInt32:
			return nil, lr.Errorf("block id %s is out of range (at most %d)", format.Excerpt([]byte(idText)), math.MaxInt32)
		}
		id := int32(v)
		if at, dup := seen[id]; dup {
			return nil, lr.Errorf("block %d is described twice (first at line %d)", id, at)
		}
		seen[id] = lr.Line()
		defs = append(defs, trace.StateDef{ID: id, Name: shortName(desc), Description: desc})
	}
}

// shortName makes a label from the first words of a description: as many
// whole words as fit in nameLimit bytes (at least the first, cut at a rune
// boundary if it alone is too long), without trailing punctuation.
func shortName(desc string) string {
	words := strings.Fields(desc)
	if len(words) == 0 {
		return ""
	}
	name := words[0]
	if len(name) > nameLimit {
		cut := nameLimit
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut]
		words = words[:1] // a cut word ends the name: nothing may follow it
	}
	for _, w := range words[1:] {
		if len(name)+1+len(w) > nameLimit {
			break
		}
		name += " " + w
	}
	return strings.TrimRightFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != ')' && r != ']'
	})
}
