package engine

import (
	"bufio"
	"encoding/json"
	"io"
)

// WriteJSON writes v as every face writes a result: JSON indented by two
// spaces, with a newline, what an Encoder with SetIndent("", "  ") writes.
// It is what `parscope ANALYSIS --json` prints and what parscope-beam
// writes, for an Envelope. The indentation is added as the compact
// encoding streams out (indenter), rather than in a second buffer three
// times the size of the first: the comm result of a tree of 10^6
// structures is 1.9 GB indented.
func WriteJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := json.NewEncoder(&indenter{w: bw, indent: "  "}).Encode(v); err != nil {
		return err
	}
	return bw.Flush()
}

// indenter writes the compact JSON written to it indented as json.Indent
// does with no prefix: a newline and the indent per level before each
// element and member, ": " after a name, "{}" and "[]" when empty. The
// JSON may come in any pieces; whitespace outside strings is dropped,
// except after the value (the newline Encoder.Encode ends it with).
type indenter struct {
	w      *bufio.Writer
	indent string
	depth  int
	// open is set after a '{' or '[' whose first element's line is not
	// begun yet; inString and escaped follow the strings.
	open, inString, escaped bool
}

func (d *indenter) newline() {
	d.w.WriteByte('\n')
	for range d.depth {
		d.w.WriteString(d.indent)
	}
}

// Write implements io.Writer; errors are the underlying writer's.
func (d *indenter) Write(p []byte) (int, error) {
	for _, c := range p {
		if d.inString {
			d.w.WriteByte(c)
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if d.depth == 0 && !d.open {
				d.w.WriteByte(c)
			}
			continue
		}
		if d.open && c != '}' && c != ']' {
			d.open = false
			d.depth++
			d.newline()
		}
		switch c {
		case '"':
			d.inString = true
			d.w.WriteByte(c)
		case '{', '[':
			d.open = true
			d.w.WriteByte(c)
		case ',':
			d.w.WriteByte(c)
			d.newline()
		case ':':
			d.w.WriteString(": ")
		case '}', ']':
			if d.open {
				d.open = false
			} else {
				d.depth--
				d.newline()
			}
			d.w.WriteByte(c)
		default:
			d.w.WriteByte(c)
		}
	}
	// bufio.Writer keeps its first error and returns it from every call.
	if _, err := d.w.Write(nil); err != nil {
		return 0, err
	}
	return len(p), nil
}
