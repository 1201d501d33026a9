package prv

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
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
	precision  map[int64]int64 // EVENT_TYPE PRECISION: type -> decimal digits
	// unknown counts the lines and sections Paraver's parser does not
	// define, which the importer skips, by their first word.
	unknown map[string]int64
}

// pcfSections are the section keywords of Paraver's pcf grammar
// (paraver-kernel, utils/pcfparser) and the keyword lines each accepts;
// VALUES belongs to EVENT_TYPE. Anything else is skipped and counted.
var pcfSections = map[string][]string{
	"DEFAULT_OPTIONS":  {"LEVEL", "UNITS", "LOOK_BACK", "SPEED", "FLAG_ICONS", "NUM_OF_STATE_COLORS", "YMAX_SCALE"},
	"DEFAULT_SEMANTIC": {"THREAD_FUNC"},
	"STATES":           nil,
	"STATES_COLOR":     nil,
	"GRADIENT_COLOR":   nil,
	"GRADIENT_NAMES":   nil,
	"EVENT_TYPE":       {"PRECISION"},
	"VALUES":           nil,
}

// readPCF parses a .pcf file. Sections start with a keyword line (STATES,
// EVENT_TYPE, VALUES, DEFAULT_OPTIONS, ...) and run to the next keyword or
// blank line; sections the importer does not use are skipped. Every
// keyword of Paraver's own parser is accepted (PRECISION n in an
// EVENT_TYPE block gives the block's types n decimal digits); keywords it
// does not know are skipped and counted in unknown, never an error.
func readPCF(path string) (*pcf, error) {
	lr, err := format.OpenLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.Close()
	p := &pcf{states: map[int64]string{}, types: map[int64]string{}, gradient: map[int64]int64{}, values: map[int64]map[int64]string{},
		precision: map[int64]int64{}, unknown: map[string]int64{}}
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
			if _, ok := pcfSections[line]; !ok {
				p.unknown[line]++
			}
			section, content = line, false
			continue
		}
		content = true
		if f := strings.Fields(line); isKeyword(f[0]) {
			// A keyword line inside a section: Paraver's options, or
			// PRECISION in an EVENT_TYPE block.
			known := slices.Contains(pcfSections[section], f[0])
			switch {
			case section == "EVENT_TYPE" && f[0] == "PRECISION":
				n, err := strconv.ParseInt(strings.Join(f[1:], ""), 10, 64)
				if err != nil || len(f) != 2 || n < 0 {
					return nil, lr.Errorf("expected \"PRECISION digits\" in an EVENT_TYPE section, got %q", format.Excerpt([]byte(line)))
				}
				for _, t := range group {
					p.precision[t] = n
				}
			case section == "DEFAULT_OPTIONS" && f[0] == "UNITS" && len(f) >= 2:
				p.units = f[1]
			case !known:
				p.unknown[section+" "+f[0]]++
			}
			continue
		}
		switch section {
		case "STATES":
			id, name, ok := idName(line)
			if !ok {
				return nil, lr.Errorf("expected \"state-id name\" in the STATES section, got %q", format.Excerpt([]byte(line)))
			}
			if _, dup := p.states[id]; !dup {
				p.stateOrder = append(p.stateOrder, id)
			}
			p.states[id] = name
		case "EVENT_TYPE":
			f := strings.Fields(line)
			if len(f) < 2 {
				return nil, lr.Errorf("expected \"gradient type name\" in an EVENT_TYPE section, got %q", format.Excerpt([]byte(line)))
			}
			grad, err1 := strconv.ParseInt(f[0], 10, 64)
			typ, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, lr.Errorf("expected \"gradient type name\" in an EVENT_TYPE section, got %q", format.Excerpt([]byte(line)))
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
				return nil, lr.Errorf("expected \"value name\" in a VALUES section, got %q", format.Excerpt([]byte(line)))
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
				return nil, lr.Errorf("expected \"LEVEL name SIZE n\", got %q", format.Excerpt([]byte(line)))
			}
			level, left = f[1], n
			r.levels[level] = make([]string, 0, min(n, 1<<16))
			continue
		}
		if left == 0 {
			return nil, lr.Errorf("name %q outside a LEVEL section (or more names than its SIZE)", format.Excerpt([]byte(line)))
		}
		r.levels[level] = append(r.levels[level], line)
		left--
	}
}

// unknownSummary describes the skipped keywords, "" when there were none:
// the count of lines, then each keyword (with its section) and its count.
func (p *pcf) unknownSummary() string {
	if len(p.unknown) == 0 {
		return ""
	}
	var total int64
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p.unknown)) {
		total += p.unknown[k]
		parts = append(parts, fmt.Sprintf("%s ×%d", k, p.unknown[k]))
	}
	return fmt.Sprintf("%d lines of keywords Paraver's parser does not define: %s", total, strings.Join(parts, ", "))
}
