package phase

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	eng "github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the analysis' name in the engine's registry.
const Name = "phases"

// Params are the options of the phases analysis of a trace, with the
// flag names every face uses. Options turns them into the engine's
// Options.
type Params struct {
	// Compat reproduces SimPoint 3.2 exactly.
	Compat bool `json:"simpoint_compat" flag:"simpoint-compat" help:"reproduce SimPoint 3.2 exactly (its k-means, seeds and quirks)"`
	// MaxK is the largest k of the binary search.
	MaxK int `json:"maxk" flag:"maxk" help:"largest k of the binary search (SimPoint -maxK)"`
	// K lists the k values to evaluate instead of searching.
	K string `json:"k,omitempty" flag:"k" help:"k values to evaluate instead of searching: \"5\", \"1:10\", \"2:2:20\", \"4,8,16\" (SimPoint -k)"`
	// Dim is the number of random projection dimensions, or "noProject".
	Dim string `json:"dim" flag:"dim" help:"random projection dimensions, or \"noProject\" (SimPoint -dim)"`
	// Seed is the k-means seed.
	Seed int64 `json:"seed" flag:"seed" help:"k-means seed (SimPoint -seedkm)"`
	// SeedProj is the projection seed.
	SeedProj int64 `json:"seedproj" flag:"seedproj" help:"projection seed (SimPoint -seedproj)"`
	// InitSeeds is the number of k-means restarts per k.
	InitSeeds int `json:"init_seeds" flag:"init-seeds" help:"k-means restarts per k (SimPoint -numInitSeeds)"`
	// MinPhaseSize: in the default mode, phases of fewer intervals do not
	// count when k is chosen.
	MinPhaseSize int `json:"min_phase_size" flag:"min-phase-size" help:"default mode: phases of fewer intervals do not count when choosing k (1: off)"`
	// Init is the compat mode's initialisation: samp or ff.
	Init string `json:"init" flag:"init" help:"compat initialisation: samp or ff (SimPoint -initkm)"`
	// Iters bounds the k-means iterations (-1: no limit).
	Iters int `json:"iters" flag:"iters" help:"k-means iteration limit, -1 for none (SimPoint -iters)"`
	// BICThreshold is the threshold that chooses k.
	BICThreshold float64 `json:"bic_threshold" flag:"bic-threshold" help:"BIC threshold to choose k (SimPoint -bicThreshold)"`
	// Coverage also selects the largest phases covering this fraction.
	Coverage float64 `json:"coverage" flag:"coverage" help:"also select the largest phases covering this fraction (SimPoint -coveragePct)"`
	// VLI weighs intervals by their instruction count.
	VLI bool `json:"vli" flag:"vli" help:"weigh intervals by their instruction count (SimPoint -fixedLength off)"`
	// Procs selects the processes analysed (empty: all).
	Procs []int32 `json:"procs,omitempty" flag:"procs" help:"only these processes (e.g. 4,5 or 0-15)"`
	// Progress, when not nil, is Options.Progress: how far the analysis
	// has got, for a progress line. It is not an option of the result.
	Progress ProgressFunc `json:"-"`
}

// DefaultParams returns the defaults: the default mode with SimPoint's
// search settings.
func DefaultParams() *Params {
	return &Params{MaxK: DefaultMaxK, Dim: strconv.Itoa(DefaultDim), Seed: DefaultSeedKMeans, SeedProj: DefaultSeedProj,
		InitSeeds: DefaultNumInitSeeds, MinPhaseSize: DefaultMinPhaseSize, Init: "samp", Iters: DefaultIters,
		BICThreshold: DefaultBICThreshold, Coverage: 1}
}

// Options checks p and returns the Options of Run it stands for.
func (p *Params) Options() (Options, error) {
	o := DefaultOptions()
	o.Mode = Default
	if p.Compat {
		o.Mode = Compat
	}
	o.MaxK, o.SeedKMeans, o.SeedProj, o.NumInitSeeds = p.MaxK, p.Seed, p.SeedProj, p.InitSeeds
	o.Iters, o.BICThreshold, o.CoveragePct, o.VariableLength = p.Iters, p.BICThreshold, p.Coverage, p.VLI
	o.MinPhaseSize = p.MinPhaseSize
	o.Progress = p.Progress
	if p.K != "" {
		ks, err := ParseKList(p.K)
		if err != nil {
			return o, fmt.Errorf("--k: %w", err)
		}
		o.K = ks
	}
	if p.Dim == "noProject" {
		o.Dim = NoProject
	} else {
		d, err := strconv.Atoi(p.Dim)
		if err != nil || d < 1 {
			return o, fmt.Errorf("--dim %q: want a positive number of dimensions or noProject", p.Dim)
		}
		o.Dim = d
	}
	init, err := ParseInitMethod(p.Init)
	if err != nil {
		return o, fmt.Errorf("--init: %w", err)
	}
	o.Init = init
	if p.Iters < -1 {
		return o, fmt.Errorf("--iters %d: want ≥ 0, or -1 for no limit", p.Iters)
	}
	if !(p.Coverage > 0 && p.Coverage <= 1) {
		return o, fmt.Errorf("--coverage %v: want a fraction in (0, 1]", p.Coverage)
	}
	if p.MaxK < 1 || p.InitSeeds < 1 || p.MinPhaseSize < 1 {
		return o, fmt.Errorf("--maxk, --init-seeds and --min-phase-size must be at least 1")
	}
	return o, nil
}

// Phases is the result of the phases analysis of a trace: the phases of
// each basic block vector stream (each process of each run).
type Phases struct {
	// Streams are the streams in (run, process) order.
	Streams []StreamPhases `json:"streams"`
}

// StreamPhases are the phases of one process's basic block vectors.
type StreamPhases struct {
	// Name names the stream: "TRACE run R proc P".
	Name string `json:"name"`
	Run  int32  `json:"run"`
	Proc int32  `json:"proc"`
	// Result is the clustering.
	Result *Result `json:"result"`
}

func init() {
	eng.Register(&eng.Analysis{
		Name:    Name,
		Doc:     "program phases and simulation points from basic block vectors (Strube 2011; SimPoint 3.2)",
		Needs:   []trace.Kind{trace.KindBBV},
		Options: func() any { return DefaultParams() },
		New:     func(t *eng.Trace, o any) (eng.Accumulator, error) { return New(t, o.(*Params)) },
	})
}

// Accumulator gathers a trace's basic block vectors and clusters each
// process's stream when the pass ends. It keeps, per stream, the
// projected rows of the intervals (Options.Dim values each; see
// accumulate.go), not the records.
type Accumulator struct {
	name    string
	opts    Options
	procs   map[int32]bool // nil: every process
	m       *matrix        // nil with NoProject
	streams map[streamKey]*stream
	last    *stream  // the stream of the previous record
	seen    []uint32 // duplicate detection, see Accumulator.check
	stamp   uint32
	read    int64 // the BBV records read, for Options.Progress
	total   int64 // the trace's BBV records (the most read can reach)
}

// New returns the accumulator of the phases analysis of t with the
// options p.
func New(t *eng.Trace, p *Params) (*Accumulator, error) {
	o, err := p.Options()
	if err != nil {
		return nil, err
	}
	a := &Accumulator{name: t.Name, opts: o, streams: map[streamKey]*stream{}}
	if t.Stats != nil {
		a.total = t.Stats.BBVIntervals
	}
	if o.Dim != NoProject {
		// A broken seed is reported by Result, after the input's errors.
		a.m, _ = newMatrix(&o)
	}
	if len(p.Procs) > 0 {
		a.procs = map[int32]bool{}
		for _, id := range p.Procs {
			a.procs[id] = true
		}
	}
	return a, nil
}

// Add adds the BBV records of the selected processes to their streams.
func (a *Accumulator) Add(batch []trace.Record) error {
	for i := range batch {
		r := &batch[i]
		if r.Kind != trace.KindBBV {
			continue
		}
		if a.read++; a.read%256 == 0 {
			a.opts.Progress.report(StageReading, a.read, a.total)
		}
		if a.procs == nil || a.procs[r.Proc] {
			if err := a.add(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// Merge adds the streams of other, the accumulator of later records.
func (a *Accumulator) Merge(other eng.Accumulator) error {
	o, ok := other.(*Accumulator)
	if !ok {
		return fmt.Errorf("phases: merging a %T", other)
	}
	for _, k := range slices.SortedFunc(maps.Keys(o.streams), streamKey.compare) {
		if err := a.merge(o.streams[k]); err != nil {
			return err
		}
	}
	o.streams = nil
	return nil
}

// Result clusters each stream and returns a *Phases.
func (a *Accumulator) Result() (any, error) {
	if len(a.streams) == 0 {
		return nil, fmt.Errorf("no basic block vectors of the processes selected")
	}
	keys := slices.SortedFunc(maps.Keys(a.streams), streamKey.compare)
	// The records' errors first, for every stream, as bbv.FromRecords
	// gave them before any clustering.
	for _, k := range keys {
		if err := a.end(a.streams[k]); err != nil {
			return nil, err
		}
	}
	ctx := context.Background()
	out := &Phases{Streams: make([]StreamPhases, 0, len(keys))}
	for _, k := range keys {
		s := a.streams[k]
		name := a.streamName(k)
		res, err := a.run(ctx, s, name)
		delete(a.streams, k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out.Streams = append(out.Streams, StreamPhases{Name: name, Run: k.run, Proc: k.proc, Result: res})
	}
	return out, nil
}
