package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/store/storetest"
	"github.com/parscope/parscope/trace/tracetest"
)

// Part is a part of a trace: some runs and some processes of them (nil:
// every one), as engine.Restrict takes them.
type Part struct {
	Runs, Procs []int32
}

// Parts runs req over src in parts as a distributed face does
// (parscope-beam): each part's accumulator is fed (every pass it asks for;
// with global, one pass a round), encoded, and decoded into a new
// accumulator (engine.Portable), as if it came from another machine; the
// decoded ones are merged in the order of parts. With global the merge is
// then asked for another pass (Again) and, while it wants one, encoded for
// every part to continue from in the next round. Parts returns the
// envelope of the merge's result, or the first error.
func Parts(src engine.Source, req engine.Request, parts []Part, global bool) (*engine.Envelope, error) {
	ctx := context.Background()
	p, err := engine.Prepare(src, req)
	if err != nil {
		return nil, err
	}
	// travel encodes acc and decodes it into a new accumulator.
	travel := func(acc engine.Accumulator) (engine.Accumulator, error) {
		pa, ok := acc.(engine.Portable)
		if !ok {
			return nil, fmt.Errorf("%s: a %T is not engine.Portable", req.Analysis, acc)
		}
		data, err := pa.MarshalBinary()
		if err != nil {
			return nil, p.Error(err)
		}
		return decode(p, data)
	}
	var prev []byte
	for round := 0; ; round++ {
		var merged engine.Accumulator
		for _, pt := range parts {
			acc, err := decode(p, prev)
			if err != nil {
				return nil, err
			}
			for {
				if err := p.Feed(ctx, engine.Restrict(src, pt.Runs, pt.Procs), acc); err != nil {
					return nil, err
				}
				if global {
					break
				}
				if again, err := p.Again(acc); err != nil {
					return nil, err
				} else if !again {
					break
				}
			}
			if acc, err = travel(acc); err != nil {
				return nil, err
			}
			if merged == nil {
				merged = acc
			} else if err := merged.Merge(acc); err != nil {
				return nil, p.Error(err)
			}
		}
		if merged, err = travel(merged); err != nil {
			return nil, err
		}
		again, err := p.Again(merged)
		if err != nil {
			return nil, err
		}
		if !again {
			return p.Result(merged)
		}
		if !global {
			return nil, fmt.Errorf("%s: the merge of the parts asks for another pass", req.Analysis)
		}
		if prev, err = merged.(engine.Portable).MarshalBinary(); err != nil {
			return nil, p.Error(err)
		}
	}
}

// decode returns a new accumulator of p holding data (none: a new one).
func decode(p *engine.Prepared, data []byte) (engine.Accumulator, error) {
	acc, err := p.New()
	if err != nil || data == nil {
		return acc, err
	}
	pa, ok := acc.(engine.Portable)
	if !ok {
		return nil, fmt.Errorf("%s: a %T is not engine.Portable", p.Analysis.Name, acc)
	}
	if err := pa.UnmarshalBinary(data); err != nil {
		return nil, p.Error(err)
	}
	return acc, nil
}

// SameAsRun checks that req run over src in parts (Parts) gives the
// envelope Run gives, byte for byte as engine.WriteJSON writes them, or
// Run's error.
func SameAsRun(tb testing.TB, src engine.Source, req engine.Request, parts []Part, global bool) {
	tb.Helper()
	SameAsRunWithin(tb, src, req, parts, global, 0)
}

// SameAsRunWithin is SameAsRun for an analysis whose sums are added in
// another order in parts: numbers may differ by tol, relative (absolute
// near 0; Within); everything else is equal. tol 0 is SameAsRun.
func SameAsRunWithin(tb testing.TB, src engine.Source, req engine.Request, parts []Part, global bool, tol float64) {
	tb.Helper()
	res, werr := engine.Run(context.Background(), src, []engine.Request{req})
	got, gerr := Parts(src, req, parts, global)
	if werr != nil || gerr != nil {
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			tb.Fatalf("Run's error %v, in parts %v", werr, gerr)
		}
		return
	}
	var want, have bytes.Buffer
	if err := engine.WriteJSON(&want, res.Envelopes[0]); err != nil {
		tb.Fatal(err)
	}
	if err := engine.WriteJSON(&have, got); err != nil {
		tb.Fatal(err)
	}
	if tol == 0 {
		if want.String() != have.String() {
			tb.Fatalf("%s in parts:\n%.2000s\nwant Run's:\n%.2000s", req.Analysis, have.String(), want.String())
		}
		return
	}
	if path, ok := Within(want.Bytes(), have.Bytes(), tol); !ok {
		tb.Fatalf("%s in parts differs at %s:\n%.2000s\nwant Run's:\n%.2000s", req.Analysis, path, have.String(), want.String())
	}
}

// Within compares two JSON documents: their numbers within tol, relative
// (or absolute, for numbers within tol of 0), the rest equal. It returns
// false and the path of the first difference when they differ.
func Within(a, b []byte, tol float64) (string, bool) {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return "$ (not JSON)", false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return "$ (not JSON)", false
	}
	return within(x, y, "$", tol)
}

func within(a, b any, path string, tol float64) (string, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return path, false
		}
		d := math.Abs(x - y)
		return path, d <= tol*math.Max(math.Abs(x), math.Abs(y)) || d <= tol
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for i := range x {
			if p, ok := within(x[i], y[i], fmt.Sprintf("%s[%d]", path, i), tol); !ok {
				return p, false
			}
		}
		return path, true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if p, ok := within(x[k], y[k], path+"."+k, tol); !ok {
				return p, false
			}
		}
		return path, true
	}
	return path, reflect.DeepEqual(a, b)
}

// ByRun returns a part for every run of src (from its figures), in order.
func ByRun(src engine.Source) []Part {
	var out []Part
	for _, r := range src.Manifest().Stats.Runs {
		out = append(out, Part{Runs: []int32{r.Run}})
	}
	return out
}

// ByProcess returns a part for every process of every run of src that
// has records (from its spans), in order.
func ByProcess(src engine.Spanner) []Part {
	var out []Part
	for _, sp := range src.ProcSpans() {
		out = append(out, Part{Runs: []int32{sp.Run}, Procs: []int32{sp.Proc}})
	}
	return out
}

// MixedStore writes tracetest.Mixed(runs, procs, steps, states) to a
// store "mixed.pst" in a temporary folder and opens it for the test.
func MixedStore(tb testing.TB, runs, procs int32, steps int, states bool) *store.Store {
	tb.Helper()
	h, recs := tracetest.Mixed(runs, procs, steps, states)
	return storetest.New(tb, "mixed.pst", h, recs)
}
