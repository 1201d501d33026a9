// Package callgen turns the DUMPI call table (format/dumpi/calls.txt) into
// the Go decoders of format/dumpi: one argument struct and one read method
// per function label, the function names in label order, and a dispatcher
// that reads the arguments of any label. libdumpi generates its own
// readers and writers from a table of the MPI functions in the same way;
// keeping the layout in one table means a call is never decoded by hand.
package callgen

import (
	"bufio"
	"bytes"
	"fmt"
	"go/format"
	"go/token"
	"strconv"
	"strings"
	"unicode"
)

// Arg is one argument of a call as the table gives it.
type Arg struct {
	Name string // the table's name, such as "position_in"
	Type string // the table's type, such as "int[]"
	// Cond is "a==b" when the argument is present only when the
	// arguments a and b are equal.
	Cond string
	// Since and Before bound the file versions in which the argument is
	// present; zero when unbounded.
	Since, Before [3]int
	// DupCount marks an argv written with its count twice before the
	// version in Before.
	DupCount bool
}

// Call is one line of the table: a function label and its arguments.
type Call struct {
	Label     int
	Name      string // MPI name, such as "MPI_Comm_group"
	Args      []Arg
	Unwritten bool // "-": libdumpi never writes this label
}

// goType is the Go type and decoder method of each table type.
var goType = map[string][2]string{
	"byte": {"uint8", "u8()"}, "op": {"uint8", "u8()"},
	"comm": {"uint16", "u16()"}, "group": {"uint16", "u16()"}, "datatype": {"uint16", "u16()"},
	"file": {"uint16", "u16()"}, "info": {"uint16", "u16()"}, "win": {"uint16", "u16()"},
	"errhandler": {"uint16", "u16()"}, "keyval": {"uint16", "u16()"},
	"int": {"int32", "i32()"}, "dest": {"int32", "i32()"}, "source": {"int32", "i32()"},
	"tag": {"int32", "i32()"}, "request": {"int32", "i32()"}, "int64": {"int64", "i64()"},
	"int[]": {"[]int32", "ints()"}, "request[]": {"[]int32", "ints()"},
	"datatype[]": {"[]uint16", "u16s()"}, "info[]": {"[]uint16", "u16s()"}, "byte[]": {"[]uint8", "u8s()"},
	"char[]": {"string", "chars()"}, "char[][]": {"[]string", "charss()"},
	"char[][][]": {"[][]string", "charsss()"}, "int[][]": {"[][]int32", "intss()"},
	"status": {"[]status", "statuses()"}, "argv": {"[]string", "argv(false)"},
}

// Parse reads the table.
func Parse(src []byte) ([]Call, error) {
	var calls []Call
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		c := Call{Label: len(calls), Name: f[0]}
		if (!strings.HasPrefix(c.Name, "MPI_") && !strings.HasPrefix(c.Name, "MPIO_")) || !token.IsIdentifier(ident(c.Name)) {
			return nil, fmt.Errorf("calls.txt:%d: expected an MPI function name, got %q", n, c.Name)
		}
		seen := map[string]bool{}
		for _, tok := range f[1:] {
			if tok == "-" && len(f) == 2 {
				c.Unwritten = true
				continue
			}
			a, err := parseArg(tok)
			if err != nil {
				return nil, fmt.Errorf("calls.txt:%d: %s: %v", n, c.Name, err)
			}
			if seen[a.Name] {
				return nil, fmt.Errorf("calls.txt:%d: %s: argument %q given twice", n, c.Name, a.Name)
			}
			seen[a.Name] = true
			c.Args = append(c.Args, a)
		}
		for _, a := range c.Args {
			if l, r, ok := strings.Cut(a.Cond, "=="); ok && (!seen[l] || !seen[r]) {
				return nil, fmt.Errorf("calls.txt:%d: %s: condition %q names an argument the call does not have", n, c.Name, a.Cond)
			}
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("calls.txt: expected at least one call")
	}
	return calls, nil
}

func parseArg(tok string) (Arg, error) {
	name, rest, ok := strings.Cut(tok, ":")
	if !ok || name == "" {
		return Arg{}, fmt.Errorf("expected name:type, got %q", tok)
	}
	if !token.IsIdentifier(ident(name)) {
		return Arg{}, fmt.Errorf("expected an argument name that makes a Go identifier, got %q", name)
	}
	a := Arg{Name: name}
	typ := rest
	if i := strings.IndexAny(rest, "?<>/"); i >= 0 {
		typ, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	a.Type = typ
	for rest != "" {
		var mod string
		if strings.HasPrefix(rest, "/") {
			mod, rest = rest, ""
		} else if i := strings.IndexAny(rest[1:], "?<>/"); i >= 0 {
			mod, rest = rest[:i+1], rest[i+1:]
		} else {
			mod, rest = rest, ""
		}
		var err error
		switch {
		case strings.HasPrefix(mod, "?"):
			a.Cond = mod[1:]
			if !strings.Contains(a.Cond, "==") {
				err = fmt.Errorf("expected ?a==b, got %q", mod)
			}
		case strings.HasPrefix(mod, ">="):
			a.Since, err = parseVersion(mod[2:])
		case strings.HasPrefix(mod, "/dupcount<"):
			a.DupCount = true
			a.Before, err = parseVersion(mod[len("/dupcount<"):])
		case strings.HasPrefix(mod, "<"):
			a.Before, err = parseVersion(mod[1:])
		default:
			err = fmt.Errorf("unknown modifier %q", mod)
		}
		if err != nil {
			return Arg{}, err
		}
	}
	if _, ok := goType[a.Type]; !ok {
		return Arg{}, fmt.Errorf("unknown type %q in %q", a.Type, tok)
	}
	if a.DupCount && a.Type != "argv" {
		return Arg{}, fmt.Errorf("/dupcount applies to argv only, got %q", tok)
	}
	return a, nil
}

func parseVersion(s string) ([3]int, error) {
	var v [3]int
	p := strings.Split(s, ".")
	if len(p) != 3 {
		return v, fmt.Errorf("expected a version X.Y.Z, got %q", s)
	}
	for i, x := range p {
		n, err := strconv.Atoi(x)
		if err != nil || n < 0 || n > 255 {
			return v, fmt.Errorf("expected a version X.Y.Z, got %q", s)
		}
		v[i] = n
	}
	return v, nil
}

// ident turns "MPI_Comm_group" into "commGroup", "MPIO_Test" into
// "ioTest" and "position_in" into "positionIn".
func ident(s string) string {
	s = strings.TrimPrefix(s, "MPI_")
	if rest, ok := strings.CutPrefix(s, "MPIO_"); ok {
		s = "io_" + rest
	}
	var b strings.Builder
	up := false
	for i, r := range s {
		switch {
		case r == '_':
			up = true
		case i == 0:
			b.WriteRune(unicode.ToLower(r))
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	id := b.String()
	if token.IsKeyword(id) {
		id += "_"
	}
	return id
}

// TypeName is the Go type of a call's arguments, such as commGroupArgs.
func TypeName(c Call) string { return ident(c.Name) + "Args" }

// ReadName is the decoder method reading a call's arguments, such as readCommGroup.
func ReadName(c Call) string {
	id := ident(c.Name)
	return "read" + strings.ToUpper(id[:1]) + id[1:]
}

// Generate returns the Go source of calls_gen.go for the table src.
func Generate(src []byte) ([]byte, error) {
	calls, err := Parse(src)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("// Code generated by gencalls from calls.txt; DO NOT EDIT.\n\npackage dumpi\n\n")
	p("// functionNames are the MPI functions in the order of DUMPI's function\n")
	p("// labels (label i names functionNames[i]); the labels after them are\n")
	p("// labelAllFunctions, labelFunctionEnter, labelFunctionExit and labelEnd.\n")
	p("var functionNames = [...]string{\n")
	for _, c := range calls {
		p("\t%q,\n", c.Name)
	}
	p("}\n\n")
	for _, c := range calls {
		if c.Unwritten {
			continue
		}
		p("// %s holds the arguments of a %s record.\n", TypeName(c), c.Name)
		p("type %s struct {\n", TypeName(c))
		for _, a := range c.Args {
			p("\t%s %s\n", ident(a.Name), goType[a.Type][0])
		}
		p("}\n\n")
		p("// %s reads the arguments of a %s record.\n", ReadName(c), c.Name)
		p("func (d *decoder) %s(a *%s) {\n", ReadName(c), TypeName(c))
		for _, a := range c.Args {
			var conds []string
			if l, r, ok := strings.Cut(a.Cond, "=="); ok {
				conds = append(conds, fmt.Sprintf("a.%s == a.%s", ident(l), ident(r)))
			}
			if a.Since != [3]int{} {
				conds = append(conds, fmt.Sprintf("d.since(%d, %d, %d)", a.Since[0], a.Since[1], a.Since[2]))
			}
			if a.Before != [3]int{} && !a.DupCount {
				conds = append(conds, fmt.Sprintf("!d.since(%d, %d, %d)", a.Before[0], a.Before[1], a.Before[2]))
			}
			read := "d." + goType[a.Type][1]
			if a.DupCount {
				read = fmt.Sprintf("d.argv(!d.since(%d, %d, %d))", a.Before[0], a.Before[1], a.Before[2])
			}
			if len(conds) > 0 {
				p("\tif %s {\n\t\ta.%s = %s\n\t}\n", strings.Join(conds, " && "), ident(a.Name), read)
			} else {
				p("\ta.%s = %s\n", ident(a.Name), read)
			}
		}
		p("}\n\n")
	}
	p("// skipArgs reads and drops the arguments of a record of label lab; it\n")
	p("// returns false for a label no DUMPI writer produces.\n")
	p("func (d *decoder) skipArgs(lab int) bool {\n\tswitch lab {\n")
	for _, c := range calls {
		if c.Unwritten {
			continue
		}
		p("\tcase %d:\n\t\tvar a %s\n\t\td.%s(&a)\n", c.Label, TypeName(c), ReadName(c))
	}
	p("\tdefault:\n\t\treturn false\n\t}\n\treturn true\n}\n\n")
	p("// unwritten reports whether libdumpi never writes label lab.\n")
	p("func unwritten(lab int) bool {\n\tswitch lab {\n")
	var uw []string
	for _, c := range calls {
		if c.Unwritten {
			uw = append(uw, strconv.Itoa(c.Label))
		}
	}
	if len(uw) > 0 {
		p("\tcase %s:\n\t\treturn true\n", strings.Join(uw, ", "))
	}
	p("\t}\n\treturn false\n}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated code does not parse: %v", err)
	}
	return out, nil
}

// GoType returns the Go type a table type decodes to; two arguments of the
// same Go type have the same bytes in the file.
func GoType(t string) string { return goType[t][0] }
