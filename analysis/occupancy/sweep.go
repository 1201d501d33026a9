package occupancy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parscope/parscope/format"
	"github.com/parscope/parscope/internal/regular"
)

// Sweep is a table of trials of one workload over a grid of parameters, as
// Lyon records them: the independent variables (n, p, g, e, ...) and the
// mean node occupancy of each mode (the dependent variables), in seconds.
type Sweep struct {
	// Params are the parameter names and Modes the mode names.
	Params, Modes []string
	// HasElapsed is true when the trials carry a measured elapsed time.
	HasElapsed bool
	// Trials are the rows of the table.
	Trials []Trial
}

// Trial is one run of a sweep.
type Trial struct {
	// Values holds one value per parameter.
	Values []float64
	// Means holds the mean node occupancy of each mode (s).
	Means []float64
	// Elapsed is the measured elapsed time of the run (s), when known.
	Elapsed float64
}

// Total returns the time the estimator T = Σ modes stands for: the
// measured elapsed time when the sweep has it, else the sum of the means.
func (t *Trial) Total(hasElapsed bool) float64 {
	if hasElapsed {
		return t.Elapsed
	}
	var s float64
	for _, m := range t.Means {
		s += m
	}
	return s
}

// ModeColumn prefixes the header of a mode's column in a sweep file, and
// ElapsedColumn names the measured elapsed time's column.
const (
	ModeColumn    = "mode:"
	ElapsedColumn = "elapsed"
)

// WriteSweep writes s as comma-separated values (RFC 4180): a header of the
// parameter names, "mode:NAME" per mode and "elapsed" (when known), then
// one line per trial, times in seconds. A name holding a comma or a quote,
// or starting with '#', is quoted, so that ReadSweep reads back exactly s.
// A sweep that no file can hold (see CheckSweep) is refused with an error
// and nothing is written.
func WriteSweep(w io.Writer, s *Sweep) error {
	if err := CheckSweep(s); err != nil {
		return err
	}
	var b bytes.Buffer
	for i, name := range sweepHeader(s) {
		if i > 0 {
			b.WriteByte(',')
		}
		// Quoted: a name with a comma or a quote, one that would read as
		// a comment, and a first one whose bytes would read as gzip's
		// magic number (ReadSweep would take the file for gzipped).
		if strings.ContainsAny(name, ",\"") || strings.HasPrefix(name, "#") || (i == 0 && format.IsGzip([]byte(name))) {
			name = `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		}
		b.WriteString(name)
	}
	b.WriteByte('\n')
	for _, t := range s.Trials {
		vals := append(slices.Clone(t.Values), t.Means...)
		if s.HasElapsed {
			vals = append(vals, t.Elapsed)
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// sweepHeader returns the column names of s.
func sweepHeader(s *Sweep) []string {
	head := slices.Clone(s.Params)
	for _, m := range s.Modes {
		head = append(head, ModeColumn+m)
	}
	if s.HasElapsed {
		head = append(head, ElapsedColumn)
	}
	return head
}

// CheckSweep reports why a sweep cannot be written to a file that reads
// back the same, or nil: it needs at least one mode; names must be
// non-empty, without surrounding white space (ReadSweep trims it) or line
// breaks; a parameter name must not be "elapsed", start with "mode:" or
// hold '*', '/', '(', ')' or a space (the estimator terms use them); no
// column may be named twice; every trial needs a value per parameter and
// per mode, and every value must be finite.
func CheckSweep(s *Sweep) error {
	if len(s.Modes) == 0 {
		return errors.New("occupancy: a sweep needs at least one mode")
	}
	for _, p := range s.Params {
		switch {
		case p == ElapsedColumn || strings.HasPrefix(p, ModeColumn):
			return fmt.Errorf("occupancy: parameter name %q would read back as a mode or the elapsed time", p)
		case strings.ContainsAny(p, "*/() "):
			return fmt.Errorf("occupancy: parameter name %q: expected no '*', '/', '(', ')' or space", p)
		}
	}
	seen := map[string]bool{}
	for _, name := range sweepHeader(s) {
		bare := strings.TrimPrefix(name, ModeColumn)
		switch {
		case bare == "" || strings.TrimSpace(bare) != bare || strings.ContainsAny(bare, "\r\n"):
			return fmt.Errorf("occupancy: column name %q: expected a non-empty name without surrounding white space or line breaks", name)
		case seen[name]:
			return fmt.Errorf("occupancy: column %q named twice", name)
		}
		seen[name] = true
	}
	for i, t := range s.Trials {
		if len(t.Values) != len(s.Params) || len(t.Means) != len(s.Modes) {
			return fmt.Errorf("occupancy: trial %d has %d values and %d means, want %d and %d", i+1, len(t.Values), len(t.Means), len(s.Params), len(s.Modes))
		}
		for _, v := range append(append(slices.Clone(t.Values), t.Means...), t.Elapsed) {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("occupancy: trial %d holds %v: expected finite numbers", i+1, v)
			}
		}
	}
	return nil
}

// ReadSweep reads a sweep file as WriteSweep writes it (name is used in
// errors): comma-separated values with RFC 4180 quoting, plain or gzipped.
// Blank lines and lines starting with '#' are skipped, and white space
// around a field is ignored. Every column must be named once, at least one
// must be a mode, and every value must be a finite number; the error names
// the line and column.
func ReadSweep(r io.Reader, name string) (*Sweep, error) {
	br := bufio.NewReader(r)
	var in io.Reader = br
	if magic, _ := br.Peek(2); format.IsGzip(magic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &format.Error{File: name, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		defer zr.Close()
		in = zr
	}
	cr := csv.NewReader(in)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = -1
	s := &Sweep{}
	var kind []int // per column: 0 parameter, 1 mode, 2 elapsed
	var head []string
	for {
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, format.LineError(name, pe.Line, "column %d: %v", pe.Column, pe.Err)
			}
			return nil, &format.Error{File: name, Offset: -1, Msg: "read error", Err: err}
		}
		line, _ := cr.FieldPos(0)
		if len(fields) == 1 && strings.TrimSpace(fields[0]) == "" {
			continue // a line of white space
		}
		if head == nil {
			seen := map[string]bool{}
			for _, f := range fields {
				f = strings.TrimSpace(f)
				if m, ok := strings.CutPrefix(f, ModeColumn); ok {
					f = ModeColumn + strings.TrimSpace(m)
				}
				switch {
				case f == "":
					return nil, format.LineError(name, line, "an empty column name in the header")
				case strings.ContainsAny(f, "\r\n"):
					return nil, format.LineError(name, line, "column name %q: expected no line break", format.Excerpt([]byte(f)))
				case seen[f]:
					return nil, format.LineError(name, line, "column %q named twice", format.Excerpt([]byte(f)))
				case f == ElapsedColumn:
					s.HasElapsed = true
					kind = append(kind, 2)
				case strings.HasPrefix(f, ModeColumn):
					m := strings.TrimPrefix(f, ModeColumn)
					if m == "" {
						return nil, format.LineError(name, line, "column %q names no mode", format.Excerpt([]byte(f)))
					}
					s.Modes = append(s.Modes, m)
					kind = append(kind, 1)
				default:
					if strings.ContainsAny(f, "*/() ") {
						return nil, format.LineError(name, line, "parameter name %q: expected no '*', '/', '(', ')' or space", format.Excerpt([]byte(f)))
					}
					s.Params = append(s.Params, f)
					kind = append(kind, 0)
				}
				seen[f] = true
			}
			if len(s.Modes) == 0 {
				return nil, format.LineError(name, line, "expected a header with at least one %q column", ModeColumn+"NAME")
			}
			head = fields
			continue
		}
		if len(fields) != len(head) {
			return nil, format.LineError(name, line, "%d values, expected %d (one per header column)", len(fields), len(head))
		}
		t := Trial{Values: make([]float64, 0, len(s.Params)), Means: make([]float64, 0, len(s.Modes))}
		for i, f := range fields {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, format.LineError(name, line, "column %d (%s): expected a finite number, got %q", i+1,
					format.Excerpt([]byte(strings.TrimSpace(head[i]))), format.Excerpt([]byte(f)))
			}
			switch kind[i] {
			case 0:
				t.Values = append(t.Values, v)
			case 1:
				t.Means = append(t.Means, v)
			default:
				t.Elapsed = v
			}
		}
		s.Trials = append(s.Trials, t)
	}
	if head == nil {
		return nil, &format.Error{File: name, Offset: -1, Msg: "expected a header line, found no lines"}
	}
	return s, nil
}

// ReadSweepFile reads the sweep file at path (ReadSweep) and returns it
// with the name of its workload, which names its fit (Fit.Name): the
// file's base name without its extension ("ring" for runs/ring.csv).
func ReadSweepFile(path string) (*Sweep, string, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	s, err := ReadSweep(f, path)
	if err != nil {
		return nil, "", err
	}
	return s, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), nil
}

// Axis is one parameter of a sweep grid and its values.
type Axis struct {
	Name   string
	Values []float64
}

// ParseAxis parses "NAME=V1,V2,..." or "NAME=FROM:TO:STEP" (TO included
// when the steps reach it), or a mix: "g=20:100:20,200".
func ParseAxis(s string) (Axis, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || list == "" {
		return Axis{}, fmt.Errorf("parameter %q: expected NAME=V1,V2,... or NAME=FROM:TO:STEP", s)
	}
	if strings.ContainsAny(name, "*/(), ") {
		return Axis{}, fmt.Errorf("parameter name %q: expected no '*', '/', '(', ')', ',' or space", name)
	}
	a := Axis{Name: name}
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		nums := strings.Split(part, ":")
		var f [3]float64
		for i, n := range nums {
			if i > 2 {
				return Axis{}, fmt.Errorf("parameter %s: %q: expected FROM:TO:STEP", name, part)
			}
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return Axis{}, fmt.Errorf("parameter %s: %q is not a finite number", name, n)
			}
			f[i] = v
		}
		switch len(nums) {
		case 1:
			a.Values = append(a.Values, f[0])
		case 3:
			from, to, step := f[0], f[1], f[2]
			if step <= 0 || to < from || (to-from)/step > 1e6 {
				return Axis{}, fmt.Errorf("parameter %s: range %q: expected FROM ≤ TO and 0 < STEP (at most a million values)", name, part)
			}
			for k := 0; ; k++ {
				v := from + float64(k)*step
				if v > to+step*1e-9 {
					break
				}
				a.Values = append(a.Values, v)
			}
		default:
			return Axis{}, fmt.Errorf("parameter %s: %q: expected a value or FROM:TO:STEP", name, part)
		}
	}
	return a, nil
}

// Grid returns every combination of the axes' values, the last axis
// varying fastest.
func Grid(axes []Axis) [][]float64 {
	out := [][]float64{{}}
	for _, a := range axes {
		var next [][]float64
		for _, p := range out {
			for _, v := range a.Values {
				next = append(next, append(slices.Clip(p), v))
			}
		}
		out = next
	}
	return out
}
