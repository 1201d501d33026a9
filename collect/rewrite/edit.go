package rewrite

import (
	"bytes"
	"sort"
	"unicode"
	"unicode/utf8"
)

// editClass orders edits at the same offset: closing insertions (inner
// node first), then a function body's prologue (in the order added), then
// opening insertions (outer node first), then the closings of function
// bodies (closeLast), then deletions.
type editClass uint8

const (
	editClose editClass = iota
	editPrologue
	editOpen
	editCloseLast
	editDelete
)

// edit inserts text at off and/or deletes del bytes there.
type edit struct {
	off   int
	del   int
	text  string
	class editClass
	seq   int
}

// editor collects the edits of one file. Edits are insertions and
// deletions at byte offsets of the original text, so nested rewrites
// compose and every line keeps its number: inserted code never contains a
// newline.
type editor struct {
	src   []byte
	edits []edit
}

func (e *editor) add(off, del int, text string, class editClass) {
	e.edits = append(e.edits, edit{off: off, del: del, text: text, class: class, seq: len(e.edits)})
}

// open inserts text before anything already opened at off (outer first).
// A text that begins with a letter, digit or underscore right after one
// in the source ("return<-c") gets a space first, so that the two do not
// run together into one identifier ("returnparscopeRecv").
func (e *editor) open(off int, text string) {
	if off > 0 && off <= len(e.src) && text != "" {
		before, _ := utf8.DecodeLastRune(e.src[:off])
		first, _ := utf8.DecodeRuneInString(text)
		if isIdentRune(before) && isIdentRune(first) {
			text = " " + text
		}
	}
	e.add(off, 0, text, editOpen)
}

// isIdentRune reports whether r can be part of a Go identifier.
func isIdentRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// prologue inserts text at the start of a function body, off just after
// its brace: before anything its first statement opens there (a body
// "{c<-0" would otherwise get its deferred exit block inside the send).
func (e *editor) prologue(off int, text string) { e.add(off, 0, text, editPrologue) }

// close inserts text at off after inner nodes' closings.
func (e *editor) close(off int, text string) { e.add(off, 0, text, editClose) }

// closeLast inserts text at off after every other insertion there: the
// end of a function body, after its last statement's closings and, when
// the body is empty, after what was inserted at its opening brace.
func (e *editor) closeLast(off int, text string) { e.add(off, 0, text, editCloseLast) }

// replace deletes n bytes at off and inserts text.
func (e *editor) replace(off, n int, text string) { e.add(off, n, text, editDelete) }

// apply returns the edited text.
func (e *editor) apply() []byte {
	ed := append([]edit(nil), e.edits...)
	sort.SliceStable(ed, func(i, j int) bool {
		a, b := ed[i], ed[j]
		if a.off != b.off {
			return a.off < b.off
		}
		if a.class != b.class {
			return a.class < b.class
		}
		if a.class == editClose {
			return a.seq > b.seq
		}
		return a.seq < b.seq
	})
	var out bytes.Buffer
	cur := 0
	for _, x := range ed {
		if x.off > cur {
			out.Write(e.src[cur:x.off])
			cur = x.off
		}
		out.WriteString(x.text)
		if x.off+x.del > cur {
			cur = x.off + x.del
		}
	}
	out.Write(e.src[cur:])
	return out.Bytes()
}
