package pipelines

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/format/bbv"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// The per-process analyses run per process key: a worker reads one
// process's records (store.Process or the process's BBV records), in time
// order, and runs the core analysis on them.

func init() {
	register.DoFn3x1[context.Context, string, func(string, []byte), error](&mentropyFn{})
	register.DoFn3x1[context.Context, string, func(string, []byte), error](&bbvChunksFn{})
	register.DoFn4x1[context.Context, string, []byte, func(string, []byte), error](&projectFn{})
	register.DoFn4x1[context.Context, string, func(*[]byte) bool, func(string, []byte), error](&clusterFn{})
	register.Iter1[[]byte]()
}

// mentropyFn computes the modified entropy series of one process with the
// engine's mentropy analysis, over that process's records only.
type mentropyFn struct {
	Cfg Config `json:"cfg"`
}

func (f *mentropyFn) ProcessElement(ctx context.Context, key string, emit func(string, []byte)) error {
	run, proc, s, err := openShard(ctx, key, f.Cfg.Input)
	if err != nil {
		return err
	}
	res, err := runMEntropy(ctx, processSource{s, run, proc}, f.Cfg)
	if err != nil {
		return fmt.Errorf("%s: run %d process %d: %w", f.Cfg.Input, run, proc, err)
	}
	if len(res.Procs) == 0 {
		return nil
	}
	return emitJSON(emit, key, res.Procs)
}

// runMEntropy runs the engine's mentropy analysis with cfg's options over src.
func runMEntropy(ctx context.Context, src engine.Source, cfg Config) (*mentropy.Result, error) {
	res, err := engine.Run(ctx, src, []engine.Request{{Analysis: mentropy.Name, Options: cfg.mentropyParams()}})
	if err != nil {
		return nil, err
	}
	return res.Envelopes[0].Result.(*mentropy.Result), nil
}

// mentropyParams returns the mentropy options of cfg, the defaults when
// it has none.
func (cfg Config) mentropyParams() *mentropy.Params {
	if cfg.MEntropy == nil {
		return mentropy.DefaultParams()
	}
	return cfg.MEntropy
}

// processSource is a store whose records are those of one process of one
// run: the engine's source for a per-process shard.
type processSource struct {
	*store.Store
	run, proc int32
}

// Records implements engine.Source.
func (p processSource) Records(o store.ReadOptions) trace.Reader {
	o.Runs, o.Procs = []int32{p.run}, []int32{p.proc}
	return p.Store.Records(o)
}

// ProcSpans implements engine.Spanner: the span of the one process.
func (p processSource) ProcSpans() []store.ProcSpan {
	var out []store.ProcSpan
	for _, sp := range p.Store.ProcSpans() {
		if sp.Run == p.run && sp.Proc == p.proc {
			out = append(out, sp)
		}
	}
	return out
}

// Whole implements engine.Part: states derived for the process are
// numbered by the dictionary of the whole trace.
func (p processSource) Whole() engine.Source { return p.Store }

// BBV implements engine.Source.
func (p processSource) BBV(o store.ReadOptions) trace.Reader {
	o.Runs, o.Procs = []int32{p.run}, []int32{p.proc}
	return p.Store.BBV(o)
}

// bbvChunk is a run of consecutive intervals of one BBV stream, to be
// projected on its own.
type bbvChunk struct {
	First   int          `json:"first"`
	Dim     int32        `json:"dim"`
	Name    string       `json:"name"`
	Vectors []bbv.Vector `json:"vectors"`
}

// bbvChunksFn reads one process's basic block vectors and cuts them into
// chunks of Cfg.Chunk intervals.
type bbvChunksFn struct {
	Cfg Config `json:"cfg"`
}

func (f *bbvChunksFn) ProcessElement(ctx context.Context, key string, emit func(string, []byte)) error {
	run, proc, s, err := openShard(ctx, key, f.Cfg.Input)
	if err != nil {
		return err
	}
	streams, err := bbv.FromRecords(ctx, f.Cfg.Input, s.BBV(store.ReadOptions{Runs: []int32{run}, Procs: []int32{proc}}), 0)
	if err != nil {
		return err
	}
	chunk := f.Cfg.Chunk
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	for _, st := range streams {
		vs := st.File.Vectors
		for first := 0; first < len(vs); first += chunk {
			c := bbvChunk{First: first, Dim: st.File.Dim, Name: st.File.Name, Vectors: vs[first:min(first+chunk, len(vs))]}
			data, err := json.Marshal(c)
			if err != nil {
				return err
			}
			emit(procKey(st.Run, st.Proc), data)
		}
	}
	return nil
}

// projectFn normalises and projects one chunk (phase.ProjectPart).
type projectFn struct {
	Cfg Config `json:"cfg"`
}

func (f *projectFn) ProcessElement(ctx context.Context, key string, data []byte, emit func(string, []byte)) error {
	var c bbvChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("stream %s: a chunk: %w", key, err)
	}
	part, err := phase.ProjectPart(ctx, &bbv.File{Name: c.Name, Vectors: c.Vectors, Dim: c.Dim}, c.First, f.Cfg.Phase)
	if err != nil {
		return fmt.Errorf("%s: stream %s: %w", f.Cfg.Input, key, err)
	}
	return emitJSON(emit, key, part)
}

// PhasesStream is the phases result of one BBV stream.
type PhasesStream struct {
	Run    int32         `json:"run"`
	Proc   int32         `json:"proc"`
	Result *phase.Result `json:"result"`
}

// clusterFn clusters the projected parts of one stream on one worker
// (phase.RunParts): the projected set is small (Dim columns per interval).
type clusterFn struct {
	Cfg Config `json:"cfg"`
}

func (f *clusterFn) ProcessElement(ctx context.Context, key string, parts func(*[]byte) bool, emit func(string, []byte)) error {
	run, proc, err := parseKey(key)
	if err != nil {
		return err
	}
	var ps []*phase.Part
	var data []byte
	for parts(&data) {
		p := new(phase.Part)
		if err := json.Unmarshal(data, p); err != nil {
			return fmt.Errorf("stream %s: a projected part: %w", key, err)
		}
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *phase.Part) int { return a.First - b.First })
	res, err := phase.RunParts(ctx, ps, f.Cfg.Phase)
	if err != nil {
		return fmt.Errorf("%s: run %d process %d: %w", f.Cfg.Input, run, proc, err)
	}
	return emitJSON(emit, key, []PhasesStream{{Run: run, Proc: proc, Result: res}})
}

// emitJSON emits v, JSON-encoded, under key.
func emitJSON(emit func(string, []byte), key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	emit(key, data)
	return nil
}

// procKeys lists the (run, process) keys of the plan.
func procKeys(p *plan) []string {
	var keys []string
	for _, rp := range p.Runs {
		for q := range rp.Procs {
			keys = append(keys, procKey(rp.Run, q))
		}
	}
	return keys
}

// buildPerProc adds mentropy or phases to the pipeline.
func buildPerProc(s beam.Scope, cfg Config, p *plan) beam.PCollection {
	procs := beam.Reshuffle(s, beam.CreateList(s, procKeys(p)))
	if cfg.Analysis == MEntropy {
		return beam.ParDo(s, &mentropyFn{Cfg: cfg}, procs)
	}
	chunks := beam.Reshuffle(s, beam.ParDo(s, &bbvChunksFn{Cfg: cfg}, procs))
	parts := beam.ParDo(s, &projectFn{Cfg: cfg}, chunks)
	return beam.ParDo(s, &clusterFn{Cfg: cfg}, beam.GroupByKey(s, parts))
}
