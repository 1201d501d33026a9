package occupancy

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/parscope/parscope/format"
)

// Term is one term of an estimator equation (Lyon's tableau): a product of
// sweep parameters, each raised to the power −1, 0 or 1 (Exp[i] for
// parameter i). All zero is the constant term. x, 1/x, x·y, x/y and
// products of up to three parameters are Terms.
type Term []int8

// Order returns the number of parameters the term involves.
func (t Term) Order() int {
	n := 0
	for _, e := range t {
		if e != 0 {
			n++
		}
	}
	return n
}

// Eval returns the term's value at the parameter values v (one per
// parameter). A parameter of exponent −1 that is zero gives ±Inf.
func (t Term) Eval(v []float64) float64 {
	x := 1.0
	for i, e := range t {
		switch e {
		case 1:
			x *= v[i]
		case -1:
			x /= v[i]
		}
	}
	return x
}

// Format writes the term with the parameter names: "1", "g", "1/n", "p*n*g",
// "g/n", "p/(n*g)".
func (t Term) Format(params []string) string {
	var num, den []string
	for i, e := range t {
		switch e {
		case 1:
			num = append(num, params[i])
		case -1:
			den = append(den, params[i])
		}
	}
	s := "1"
	if len(num) > 0 {
		s = strings.Join(num, "*")
	}
	switch len(den) {
	case 0:
		return s
	case 1:
		return s + "/" + den[0]
	}
	return s + "/(" + strings.Join(den, "*") + ")"
}

// ParseTerm parses a term written as Format writes it: parameter names and
// "1" joined by '*' (multiply) and '/' (divide), with at most one
// parenthesised product after a '/': "g/n", "p*n*g", "p/(n*g)", "1/n", "1".
// A parameter may appear once.
func ParseTerm(s string, params []string) (Term, error) {
	t := make(Term, len(params))
	src := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if src == "" {
		return nil, fmt.Errorf("term %q: empty", format.Excerpt([]byte(s)))
	}
	sign := int8(1)
	for i := 0; i < len(src); {
		if src[i] == '*' || src[i] == '/' {
			if i == 0 {
				return nil, fmt.Errorf("term %q: an operator at the beginning", format.Excerpt([]byte(s)))
			}
			if src[i] == '/' {
				sign = -1
			} else if sign == -1 && !strings.Contains(src[:i], "(") {
				sign = 1
			}
			i++
			if i == len(src) {
				return nil, fmt.Errorf("term %q: an operator at the end", format.Excerpt([]byte(s)))
			}
			continue
		}
		if src[i] == '(' {
			if sign != -1 || i == 0 || src[i-1] != '/' {
				return nil, fmt.Errorf("term %q: parentheses only after '/'", format.Excerpt([]byte(s)))
			}
			end := strings.IndexByte(src[i:], ')')
			if end < 0 {
				return nil, fmt.Errorf("term %q: '(' without ')'", format.Excerpt([]byte(s)))
			}
			for _, name := range strings.Split(src[i+1:i+end], "*") {
				if err := t.add(name, -1, params, s); err != nil {
					return nil, err
				}
			}
			i += end + 1
			if i < len(src) {
				return nil, fmt.Errorf("term %q: something after the parenthesised denominator", format.Excerpt([]byte(s)))
			}
			break
		}
		j := i
		for j < len(src) && !strings.ContainsRune("*/()", rune(src[j])) {
			j++
		}
		if j == i || j < len(src) && src[j] == '(' {
			return nil, fmt.Errorf("term %q: unexpected %q at offset %d", format.Excerpt([]byte(s)), src[j], j)
		}
		if err := t.add(src[i:j], sign, params, s); err != nil {
			return nil, err
		}
		i = j
	}
	return t, nil
}

// ParseTerms parses the terms of some modes' estimator equations, fixed
// rather than selected (FitOptions.Terms): each spec is "MODE=T1+T2+..."
// (e.g. "U=g/n+1"), each term parsed by ParseTerm against params. A mode
// given twice is an error. No specs return nil.
func ParseTerms(specs []string, params []string) (map[string][]Term, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := map[string][]Term{}
	for _, spec := range specs {
		mode, list, ok := strings.Cut(spec, "=")
		if !ok || mode == "" || list == "" {
			return nil, fmt.Errorf("%q: expected MODE=TERM+TERM+... (e.g. U=g/n+1)", spec)
		}
		if _, dup := out[mode]; dup {
			return nil, fmt.Errorf("mode %s given twice", mode)
		}
		for _, ts := range strings.Split(list, "+") {
			t, err := ParseTerm(ts, params)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", mode, err)
			}
			out[mode] = append(out[mode], t)
		}
	}
	return out, nil
}

func (t Term) add(name string, e int8, params []string, src string) error {
	if name == "1" {
		return nil
	}
	k := slices.Index(params, name)
	if k < 0 {
		return fmt.Errorf("term %q: %q is not a parameter (parameters: %s)", format.Excerpt([]byte(src)), format.Excerpt([]byte(name)), strings.Join(params, ", "))
	}
	if t[k] != 0 {
		return fmt.Errorf("term %q: parameter %s appears twice", format.Excerpt([]byte(src)), format.Excerpt([]byte(name)))
	}
	t[k] = e
	return nil
}

// Candidates returns the candidate terms over len(params) parameters: the
// constant and every product of up to maxOrder distinct parameters, each
// raised to the power 1 or −1, in order of increasing order (constant; x,
// 1/x; x·y, x/y, y/x, 1/(x·y); ...). Parameters whose skip entry is true
// take part in no term.
func Candidates(nparams, maxOrder int, skip []bool) []Term {
	out := []Term{make(Term, nparams)}
	var rec func(t Term, from, left, order int)
	for order := 1; order <= maxOrder; order++ {
		rec = func(t Term, from, left, order int) {
			if left == 0 {
				out = append(out, slices.Clone(t))
				return
			}
			for i := from; i < nparams; i++ {
				if skip != nil && skip[i] {
					continue
				}
				for _, e := range []int8{1, -1} {
					t[i] = e
					rec(t, i+1, left-1, order)
					t[i] = 0
				}
			}
		}
		rec(make(Term, nparams), 0, order, order)
	}
	return out
}

// finite reports whether every value of xs is a finite number.
func finite(xs []float64) bool {
	for _, x := range xs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return false
		}
	}
	return true
}
