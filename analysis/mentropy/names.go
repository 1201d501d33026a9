package mentropy

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/parscope/parscope/trace"
)

// Encode turns a stream of names into ids and the alphabet they index.
func Encode(names []string) ([]int32, *trace.Dict) {
	a := &trace.Dict{}
	ids := make([]int32, len(names))
	for i, n := range names {
		ids[i] = a.ID(n)
	}
	return ids, a
}

// ParseProbs parses "A=0.2,B=0.4,C=0.4" into a table by event name.
func ParseProbs(s string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, val, ok := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("probability %q: expected NAME=VALUE", f)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(v) {
			return nil, fmt.Errorf("probability %q: expected a number after '='", f)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("probability %q: event %q given twice", f, name)
		}
		out[name] = v
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty probability table %q", s)
	}
	return out, nil
}

// ParseTable parses a comma-separated list of numbers ("0.1,0.3,0.6").
func ParseTable(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) {
			return nil, fmt.Errorf("table entry %q: expected a number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// GivenFor builds the Given probabilities of the alphabet's events from a
// table by name. The whole table must sum to 1 (entries for events that do
// not occur count); with normalize, it is scaled to sum 1 instead and the
// returned warning says so. An alphabet event missing from the table is an
// error.
func GivenFor(a *trace.Dict, table map[string]float64, normalize bool) (Probs, string, error) {
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	vals := make([]float64, len(names))
	for i, n := range names {
		vals[i] = table[n]
	}
	var warn string
	if normalize {
		changed, err := Normalize(vals)
		if err != nil {
			return Probs{}, "", err
		}
		if changed {
			warn = "probabilities did not sum to 1: normalised"
		}
	} else if err := (Probs{Mode: Given, P: vals}).Validate(); err != nil {
		return Probs{}, "", err
	}
	byName := make(map[string]float64, len(names))
	for i, n := range names {
		byName[n] = vals[i]
	}
	p := make([]float64, len(a.Names()))
	for i, n := range a.Names() {
		v, ok := byName[n]
		if !ok {
			return Probs{}, "", fmt.Errorf("mentropy: unknown event %q: not in the probability table", n)
		}
		p[i] = v
	}
	return Probs{Mode: Given, N: len(p), P: p}, warn, nil
}
