package pipelines

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// The analyses a pipeline can run.
const (
	Occupancy        = "occupancy"
	Comm             = "comm"
	EntropyHistogram = "entropy-histogram"
	PCA              = "pca"
	MEntropy         = "mentropy"
	Phases           = "phases"
	States           = "states"
)

// Analyses lists the analyses, in the order of the command's help.
var Analyses = []string{Occupancy, Comm, EntropyHistogram, PCA, MEntropy, Phases, States}

// Config is one pipeline: the analysis, its input and output and its
// options. It travels to the workers inside the DoFns (as JSON).
type Config struct {
	Analysis string `json:"analysis"`
	// Input is the .pst directory (a local path, or any filesystem the
	// binary registers: gs://, s3://...); Output the RESULT.json to write.
	Input  string `json:"input"`
	Output string `json:"output"`
	// Shards is the number of time windows each run is cut into for the
	// analyses that follow the global time order (0: DefaultShards).
	Shards int `json:"shards,omitempty"`

	// Window is the histogram-entropy window (ns) of entropy-histogram.
	Window int64 `json:"window_ns,omitempty"`
	// TimeWeighted weights states by their duration (pca); Components is
	// the number of principal components reported (0: all).
	TimeWeighted bool `json:"time_weighted,omitempty"`
	Components   int  `json:"components,omitempty"`
	// Start is the occupancy mode processes are in before their first
	// state ("": none, they do not exist before it, as in the core).
	Start string `json:"start,omitempty"`
	// Comm holds the options of comm (the engine's; nil: the defaults).
	Comm *comm.Params `json:"comm,omitempty"`
	// MEntropy holds the options of mentropy (the engine's; nil: the
	// defaults).
	MEntropy *mentropy.Params `json:"mentropy,omitempty"`
	// Phase configures phases; Chunk is the intervals projected per task
	// (0: DefaultChunk).
	Phase phase.Options `json:"phase"`
	Chunk int           `json:"chunk,omitempty"`
}

// DefaultShards is the number of time windows per run when Config.Shards
// is 0; DefaultChunk the intervals per projection task.
const (
	DefaultShards = 16
	DefaultChunk  = 256
)

// runPlan is one run of the trace: its processes and its time windows
// [Bounds[k], Bounds[k+1]).
type runPlan struct {
	Run    int32   `json:"run"`
	Procs  int32   `json:"procs"`
	Bounds []int64 `json:"bounds"`
}

// windows returns the number of time windows of the run.
func (r *runPlan) windows() int { return len(r.Bounds) - 1 }

// plan is what the launcher knows about the trace before the pipeline
// runs: its header and runs. It comes from the manifest alone.
type plan struct {
	Header *trace.Header `json:"header"`
	Runs   []runPlan     `json:"runs"`
}

// makePlan reads the manifest of cfg.Input (checking it) and cuts every
// run into time windows: cfg.Shards windows of equal width (a multiple of
// cfg.Window for entropy-histogram, whose windows must not straddle two
// shards), covering [0, the run's last time].
func makePlan(ctx context.Context, cfg Config) (*plan, error) {
	dir := cfg.Input
	if isRemote(dir) {
		var err error
		if dir, err = fetch(ctx, cfg.Input); err != nil {
			return nil, err
		}
	}
	if err := Check(dir); err != nil {
		return nil, err
	}
	m, err := store.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := checkEngine(cfg, m); err != nil {
		return nil, err
	}
	shards := cfg.Shards
	if shards <= 0 {
		shards = DefaultShards
	}
	p := &plan{Header: &m.Header}
	for _, ri := range m.Header.Runs {
		rp := runPlan{Run: ri.ID, Procs: ri.Procs}
		var tmax int64
		for _, rs := range m.Stats.Runs {
			if rs.Run == ri.ID {
				if rs.TMin < 0 {
					return nil, fmt.Errorf("%s: run %d has records before time 0 (%d ns); the windows begin at 0", cfg.Input, ri.ID, rs.TMin)
				}
				tmax = rs.TMax
			}
		}
		span := tmax + 1
		width := (span + int64(shards) - 1) / int64(shards)
		if cfg.Analysis == EntropyHistogram {
			if cfg.Window <= 0 {
				return nil, errors.New("entropy-histogram: the window must be positive")
			}
			width = (width + cfg.Window - 1) / cfg.Window * cfg.Window
		}
		width = max(width, 1)
		for b := int64(0); b < span; b += width {
			rp.Bounds = append(rp.Bounds, b)
		}
		rp.Bounds = append(rp.Bounds, rp.Bounds[len(rp.Bounds)-1]+width)
		p.Runs = append(p.Runs, rp)
	}
	slices.SortFunc(p.Runs, func(a, b runPlan) int { return int(a.Run) - int(b.Run) })
	return p, nil
}

// run returns the plan of run id.
func (p *plan) run(id int32) (*runPlan, error) {
	for i := range p.Runs {
		if p.Runs[i].Run == id {
			return &p.Runs[i], nil
		}
	}
	return nil, fmt.Errorf("the plan has no run %d", id)
}

// shard parses a shard's key (a run, then a process or a window) and
// returns the run's plan.
func (p *plan) shard(key string) (run, b int32, rp *runPlan, err error) {
	if run, b, err = parseKey(key); err != nil {
		return 0, 0, nil, err
	}
	rp, err = p.run(run)
	return run, b, rp, err
}

// procKey and windowKey are the shuffle keys: they sort in (run, process)
// and (run, window) order as strings.
func procKey(run, proc int32) string    { return fmt.Sprintf("%010d/%010d", run, proc) }
func windowKey(run int32, k int) string { return fmt.Sprintf("%010d/%010d", run, k) }

// parseKey splits a procKey or windowKey.
func parseKey(key string) (int32, int32, error) {
	var a, b int32
	if _, err := fmt.Sscanf(key, "%d/%d", &a, &b); err != nil {
		return 0, 0, fmt.Errorf("bad shard key %q: %w", key, err)
	}
	return a, b, nil
}

// engineOptions returns the engine's name and options of cfg's analysis,
// when it runs through the engine.
func (cfg Config) engineOptions() (name string, opts any, ok bool) {
	switch cfg.Analysis {
	case MEntropy:
		return mentropy.Name, cfg.mentropyParams(), true
	case Comm:
		return comm.Name, cfg.commParams(), true
	}
	return "", nil, false
}

// checkEngine refuses, before the pipeline runs, what engine.Run refuses
// first for an analysis that runs through the engine: a trace without the
// records it needs, and options its accumulator refuses.
func checkEngine(cfg Config, m *store.Manifest) error {
	name, opts, ok := cfg.engineOptions()
	if !ok {
		return nil
	}
	t := &engine.Trace{Name: filepath.Base(cfg.Input), Header: &m.Header, Stats: &m.Stats}
	return engine.Check(t, engine.Request{Analysis: name, Options: opts})
}
