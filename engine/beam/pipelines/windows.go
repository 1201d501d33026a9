package pipelines

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// The analyses that follow the global time order of a run (state
// reconstruction and what is computed from it) run per time window. A
// first pass over each process (in parallel) finds, for every window, the
// process's last state before the window (the seed) and its first state
// record in the window; each window is then reconstructed from its own
// records, seeded (state.Options Seed/From/To), on its own worker.

func init() {
	register.DoFn4x1[context.Context, string, func(string, int64), func(string, int64), error](&seedsFn{})
	register.DoFn6x1[context.Context, string, func(*int64) bool, func(*int64) bool, func(*string, *int64) bool, func(string, []byte), error](&windowFn{})
	register.Emitter2[string, int64]()
	register.Emitter2[string, []byte]()
	register.Iter1[int64]()
	register.Iter2[string, int64]()
	register.Function2x1(minInt64)
}

// packSeed packs a process and its state in one int64 (a shuffled value).
func packSeed(proc, st int32) int64 { return int64(proc)<<32 | int64(uint32(st)) }

func unpackSeed(v int64) (int32, int32) { return int32(v >> 32), int32(uint32(v)) }

func minInt64(a, b int64) int64 { return min(a, b) }

// seedsFn reads one process (procKey) and emits, per window of its run,
// the process's last state before the window (output 1, packed) and the
// time of its first state record in the window (output 2).
type seedsFn struct {
	Cfg  Config `json:"cfg"`
	Plan *plan  `json:"plan"`
}

func (f *seedsFn) ProcessElement(ctx context.Context, key string, seeds, firsts func(string, int64)) error {
	run, proc, rp, s, err := openPlanned(ctx, key, f.Cfg.Input, f.Plan)
	if err != nil {
		return err
	}
	k := 0
	var last int32
	have, seen := false, false
	err = trace.Each(s.Process(run, proc), func(r *trace.Record) error {
		if r.Kind != trace.KindState {
			return nil
		}
		for k+1 < rp.windows() && r.T >= rp.Bounds[k+1] {
			k++
			seen = false
			if have {
				seeds(windowKey(run, k), packSeed(proc, last))
			}
		}
		if !seen {
			firsts(windowKey(run, k), r.T)
			seen = true
		}
		last, have = r.ID, true
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: run %d process %d: %w", f.Cfg.Input, run, proc, err)
	}
	for k++; k < rp.windows() && have; k++ {
		seeds(windowKey(run, k), packSeed(proc, last))
	}
	return nil
}

// window is one reconstructed time window, as the window stage sees it.
type window struct {
	run     int32
	k       int
	from    int64 // the window's start
	end     int64 // the window's end
	first   int64 // first state record in the window, -1 when none
	next    int64 // first state record after the window, -1 when none
	seed    []int32
	h       *trace.Header
	records trace.Reader
}

// reconstruct reconstructs the window. With cut, rows are cut at the
// window's end (for time-window series); otherwise every row that begins
// in the window is delivered whole (lasting until the next record, which
// may be in a later window) and the seeded row that continues a row of
// the previous window is left out, so that every row belongs to exactly
// one window (for per-row measures).
func (w *window) reconstruct(ctx context.Context, cut bool, fn func(*state.Row) error) error {
	opts := state.Options{Seed: w.seed, From: w.from, Run: w.run}
	if cut {
		if w.next >= 0 {
			opts.To = w.end
		}
		return state.Reconstruct(ctx, w.h, w.records, opts, fn)
	}
	if w.first < 0 {
		return nil // every row in the window began before it
	}
	if w.next >= 0 {
		opts.To = w.next
	}
	skip := w.k > 0 && w.first != w.from
	return state.Reconstruct(ctx, w.h, w.records, opts, func(r *state.Row) error {
		if skip && r.Index == 0 {
			return nil
		}
		return fn(r)
	})
}

// windowFn reconstructs one window (windowKey, with its seeds grouped and
// the first record time of every window as a side input) and emits the
// analysis's partial result of the window.
type windowFn struct {
	Cfg  Config `json:"cfg"`
	Plan *plan  `json:"plan"`
}

func (f *windowFn) ProcessElement(ctx context.Context, key string, _, seeds func(*int64) bool, firsts func(*string, *int64) bool, emit func(string, []byte)) error {
	run, k32, rp, err := f.Plan.shard(key)
	if err != nil {
		return err
	}
	k := int(k32)
	// The first state record of this window and of the next non-empty one.
	first, next := int64(-1), int64(-1)
	var fk string
	var ft int64
	for firsts(&fk, &ft) {
		r, j, err := parseKey(fk)
		if err != nil {
			return err
		}
		if r != run {
			continue
		}
		switch {
		case int(j) == k:
			first = ft
		case int(j) > k && (next < 0 || ft < next):
			next = ft
		}
	}
	// A process without a record before the window does not exist yet.
	seed := make([]int32, rp.Procs)
	for i := range seed {
		seed[i] = state.Absent
	}
	var v int64
	for seeds(&v) {
		p, st := unpackSeed(v)
		if p < 0 || p >= rp.Procs {
			return fmt.Errorf("window %s: a seed of process %d in a run of %d", key, p, rp.Procs)
		}
		seed[p] = st
	}
	s, err := openStore(ctx, f.Cfg.Input)
	if err != nil {
		return err
	}
	w := &window{run: run, k: k, from: rp.Bounds[k], end: rp.Bounds[k+1], first: first, next: next, seed: seed, h: f.Plan.Header,
		records: s.Records(store.ReadOptions{Runs: []int32{run}, Kinds: []trace.Kind{trace.KindState}, From: rp.Bounds[k], To: rp.Bounds[k+1]})}
	var out any
	switch f.Cfg.Analysis {
	case EntropyHistogram:
		ws, err := entropy.NewWindows(f.Cfg.Window)
		if err != nil {
			return err
		}
		if err := w.reconstruct(ctx, true, ws.Add); err != nil {
			return fmt.Errorf("%s: window %s: %w", f.Cfg.Input, key, err)
		}
		pts := ws.Result()
		if pts == nil {
			pts = []entropy.WindowPoint{}
		}
		out = pts
	case PCA:
		var acc *pca.Accumulator
		err := w.reconstruct(ctx, false, func(r *state.Row) error {
			if acc == nil {
				var err error
				if acc, err = pca.NewAccumulator(r.P(), f.Cfg.TimeWeighted); err != nil {
					return err
				}
			}
			return acc.Add(r)
		})
		if err != nil {
			return fmt.Errorf("%s: window %s: %w", f.Cfg.Input, key, err)
		}
		if acc == nil {
			return nil
		}
		out = acc.Partial()
	case States:
		ws := windowStates{Run: run}
		classes := map[uint64]bool{}
		err := w.reconstruct(ctx, false, func(r *state.Row) error {
			ws.Procs = r.P()
			ws.Rows++
			ws.End = r.T + r.Dur
			if !classes[r.ClassHash()] {
				classes[r.ClassHash()] = true
				ws.Classes = append(ws.Classes, r.ClassHash())
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: window %s: %w", f.Cfg.Input, key, err)
		}
		if ws.Rows == 0 {
			return nil
		}
		out = ws
	default:
		return fmt.Errorf("windowFn: analysis %q is not windowed", f.Cfg.Analysis)
	}
	return emitJSON(emit, key, out)
}

// windowStates is the states summary of one window.
type windowStates struct {
	Run     int32    `json:"run"`
	Procs   int      `json:"procs"`
	Rows    int64    `json:"rows"`
	End     int64    `json:"end_ns"`
	Classes []uint64 `json:"classes"`
}

// StateSummary is the states result of one run, as `parscope states
// --json` prints it.
type StateSummary struct {
	Run             int32 `json:"run"`
	Procs           int   `json:"procs"`
	Rows            int64 `json:"rows"`
	DistinctClasses int   `json:"distinct_classes"`
	End             int64 `json:"end_ns"`
}

// buildWindowed adds the windowed analyses to the pipeline: it returns the
// windows' partial results keyed by window.
func buildWindowed(s beam.Scope, cfg Config, p *plan) beam.PCollection {
	var procKeys, winKeys []string
	for _, rp := range p.Runs {
		for q := range rp.Procs {
			procKeys = append(procKeys, procKey(rp.Run, q))
		}
		for k := range rp.windows() {
			winKeys = append(winKeys, windowKey(rp.Run, k))
		}
	}
	procs := beam.Reshuffle(s, beam.CreateList(s, procKeys))
	seeds, firsts := beam.ParDo2(s, &seedsFn{Cfg: cfg, Plan: p}, procs)
	firstTimes := beam.CombinePerKey(s, minInt64, firsts)
	wins := beam.ParDo(s, keyWindow, beam.CreateList(s, winKeys))
	grouped := beam.CoGroupByKey(s, wins, seeds)
	return beam.ParDo(s, &windowFn{Cfg: cfg, Plan: p}, grouped, beam.SideInput{Input: firstTimes})
}

// finishWindowed merges the windows' partial results of the analysis into
// the output parts (sort key, JSON array).
func finishWindowed(s beam.Scope, cfg Config, parts beam.PCollection) beam.PCollection {
	switch cfg.Analysis {
	case EntropyHistogram:
		return parts // each window's points, in window order
	case PCA:
		res := beam.Combine(s, &pcaCombine{Components: cfg.Components}, beam.DropKey(s, parts))
		return beam.ParDo(s, singleKey, res)
	default: // States
		byRun := beam.ParDo(s, runOfWindow, parts)
		return beam.CombinePerKey(s, &statesCombine{}, byRun)
	}
}

// pcaCombine merges the windows' pca.Partial (JSON) with pca.Accumulator's
// Merge; its output is the pca.Result (a one-element JSON array).
type pcaCombine struct {
	Components int `json:"components"`
}

func init() {
	register.Combiner3[[]byte, []byte, []byte](&pcaCombine{})
	register.Combiner3[[]byte, []byte, []byte](&statesCombine{})
	register.Function1x2(keyWindow)
	register.Function2x2(runOfWindow)
	register.Function1x2(singleKey)
}

// keyWindow makes a window key a KV for CoGroupByKey.
func keyWindow(k string) (string, int64) { return k, 0 }

// runOfWindow keys a window's partial by its run.
func runOfWindow(key string, b []byte) (string, []byte) { return key[:10], b }

// singleKey keys the one global result.
func singleKey(b []byte) (string, []byte) { return "0", b }

func decodePCA(b []byte) (*pca.Accumulator, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var p pca.Partial
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("pca partial: %w", err)
	}
	return pca.FromPartial(p)
}

func mergePCA(a, b []byte) ([]byte, error) {
	return mergeEncoded(a, b, decodePCA, func(x, y *pca.Accumulator) ([]byte, error) {
		if err := x.Merge(y); err != nil {
			return nil, err
		}
		return json.Marshal(x.Partial())
	})
}

// mergeEncoded merges two encoded accumulators of a CombineFn (empty:
// nothing yet): it decodes both, merges them and encodes the result.
func mergeEncoded[T any](a, b []byte, decode func([]byte) (T, error), merge func(x, y T) ([]byte, error)) ([]byte, error) {
	switch {
	case len(a) == 0:
		return b, nil
	case len(b) == 0:
		return a, nil
	}
	x, err := decode(a)
	if err != nil {
		return nil, err
	}
	y, err := decode(b)
	if err != nil {
		return nil, err
	}
	return merge(x, y)
}

// CreateAccumulator returns an empty partial.
func (c *pcaCombine) CreateAccumulator() []byte { return nil }

// AddInput merges a window's partial.
func (c *pcaCombine) AddInput(a, in []byte) ([]byte, error) { return mergePCA(a, in) }

// MergeAccumulators merges two partials.
func (c *pcaCombine) MergeAccumulators(a, b []byte) ([]byte, error) { return mergePCA(a, b) }

// ExtractOutput computes the components.
func (c *pcaCombine) ExtractOutput(a []byte) ([]byte, error) {
	acc, err := decodePCA(a)
	if err != nil {
		return nil, err
	}
	if acc == nil {
		return nil, errNoStates
	}
	res, err := acc.Result(c.Components)
	if err != nil {
		return nil, err
	}
	return json.Marshal([]*pca.Result{res})
}

// statesCombine merges the windowStates of a run: rows add up, the class
// sets unite, the end is the last.
type statesCombine struct{}

func decodeStates(b []byte) (*windowStates, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var w windowStates
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("states partial: %w", err)
	}
	return &w, nil
}

func mergeStates(a, b []byte) ([]byte, error) {
	return mergeEncoded(a, b, decodeStates, func(x, y *windowStates) ([]byte, error) {
		x.Rows += y.Rows
		x.End = max(x.End, y.End)
		x.Procs = max(x.Procs, y.Procs)
		x.Classes = append(x.Classes, y.Classes...)
		slices.Sort(x.Classes)
		x.Classes = slices.Compact(x.Classes)
		return json.Marshal(x)
	})
}

// CreateAccumulator returns an empty summary.
func (c *statesCombine) CreateAccumulator() []byte { return nil }

// AddInput merges a window's summary.
func (c *statesCombine) AddInput(a, in []byte) ([]byte, error) { return mergeStates(a, in) }

// MergeAccumulators merges two summaries.
func (c *statesCombine) MergeAccumulators(a, b []byte) ([]byte, error) { return mergeStates(a, b) }

// ExtractOutput returns the run's StateSummary (a one-element JSON array).
func (c *statesCombine) ExtractOutput(a []byte) ([]byte, error) {
	w, err := decodeStates(a)
	if err != nil || w == nil {
		return nil, err
	}
	return json.Marshal([]StateSummary{{Run: w.Run, Procs: w.Procs, Rows: w.Rows, DistinctClasses: len(w.Classes), End: w.End}})
}
