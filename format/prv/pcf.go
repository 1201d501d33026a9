package prv

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
)

// pcf is what the importer uses from a .pcf file.
type pcf struct {
	units      string           // DEFAULT_OPTIONS UNITS ("NANOSEC", "MICROSEC", ...)
	states     map[int64]string // STATES: id -> name
	stateOrder []int64          // STATES ids in file order
	types      map[int64]string // EVENT_TYPE: type -> name
	gradient   map[int64]int64  // EVENT_TYPE: type -> gradient/colour column
	values     map[int64]map[int64]string
}

// readPCF parses a .pcf file. Sections start with a keyword line (STATES,
// EVENT_TYPE, VALUES, DEFAULT_OPTIONS, ...) and run to the next keyword or
// blank line; sections the importer does not use are skipped.
func readPCF(path string) (*pcf, error) {
	lr, err := format.OpenLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	p := &pcf{states: map[int64]string{}, types: map[int64]string{}, gradient: map[int64]int64{}, values: map[int64]map[int64]string{}}
	section := ""
	var group []int64 // the event types of the current EVENT_TYPE block
	content := false  // the current section has had a line
	for {
		b, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return nil, err
		}
		line := strings.TrimSpace(string(b))
		if line == "" {
			if content {
				section, group = "", nil
			}
			continue
		}
		if isKeyword(line) {
			if line == "EVENT_TYPE" {
				group = nil
			}
			section, content = line, false
			continue
		}
		content = true
		switch section {
		case "DEFAULT_OPTIONS":
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "UNITS" {
				p.units = f[1]
			}
		case "STATES":
			id, name, ok := idName(line)
			if !ok {
				return nil, lr.Errorf("expected \"state-id name\" in the STATES section, got %q", line)
			}
			if _, dup := p.states[id]; !dup {
				p.stateOrder = append(p.stateOrder, id)
			}
			p.states[id] = name
		case "EVENT_TYPE":
			f := strings.Fields(line)
			if len(f) < 2 {
				return nil, lr.Errorf("expected \"gradient type name\" in an EVENT_TYPE section, got %q", line)
			}
			grad, err1 := strconv.ParseInt(f[0], 10, 64)
			typ, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, lr.Errorf("expected \"gradient type name\" in an EVENT_TYPE section, got %q", line)
			}
			name := strings.TrimSpace(strings.Join(f[2:], " "))
			if _, dup := p.types[typ]; !dup || name != "" {
				p.types[typ] = name
			}
			p.gradient[typ] = grad
			group = append(group, typ)
		case "VALUES":
			v, name, ok := idName(line)
			if !ok {
				return nil, lr.Errorf("expected \"value name\" in a VALUES section, got %q", line)
			}
			for _, t := range group {
				m := p.values[t]
				if m == nil {
					m = map[int64]string{}
					p.values[t] = m
				}
				m[v] = name
			}
		}
	}
}

// isKeyword reports whether a .pcf line opens a section: an upper-case word
// with underscores and nothing else.
func isKeyword(s string) bool {
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// idName splits "id name words" into the integer id and the name.
func idName(line string) (int64, string, bool) {
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		id, err := strconv.ParseInt(line, 10, 64)
		return id, "", err == nil
	}
	id, err := strconv.ParseInt(line[:i], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return id, strings.TrimSpace(line[i:]), true
}

// unitNS returns the length in ns of a .pcf UNITS value, or 0 if unknown.
func unitNS(units string) int64 {
	switch strings.ToUpper(units) {
	case "NANOSEC", "NS":
		return 1
	case "MICROSEC", "US":
		return 1000
	case "MILLISEC", "MS":
		return 1000000
	case "SEC", "S":
		return 1000000000
	}
	return 0
}

// row holds the names a .row file gives to each level.
type row struct {
	levels map[string][]string // "THREAD", "CPU", "NODE", ... -> names
}

// readRow parses a .row file: "LEVEL NAME SIZE n" lines each followed by n names.
func readRow(path string) (*row, error) {
	lr, err := format.OpenLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	r := &row{levels: map[string][]string{}}
	level, left := "", 0
	for {
		b, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return r, nil
		}
		if err != nil {
			return nil, err
		}
		line := strings.TrimSpace(string(b))
		if line == "" {
			continue
		}
		if f := strings.Fields(line); len(f) == 4 && f[0] == "LEVEL" && f[2] == "SIZE" {
			n, err := strconv.Atoi(f[3])
			if err != nil || n < 0 {
				return nil, lr.Errorf("expected \"LEVEL name SIZE n\", got %q", line)
			}
			level, left = f[1], n
			r.levels[level] = make([]string, 0, min(n, 1<<16))
			continue
		}
		if left == 0 {
			return nil, lr.Errorf("name %q outside a LEVEL section (or more names than its SIZE)", line)
		}
		r.levels[level] = append(r.levels[level], line)
		left--
	}
}
