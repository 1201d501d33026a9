package pipelines

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// Occupancy and comm are reductions whose core accumulators merge:
// occupancy's time shards in time order (occupancy.Accumulator.Merge
// resolves the modes a shard did not know at its start from the shard
// before), comm's per-process accumulators in any order
// (comm.Accumulator.Merge). The accumulators cross the shuffle encoded
// (MarshalBinary).

func init() {
	register.DoFn3x1[context.Context, string, func(string, []byte), error](&occShardFn{})
	register.DoFn4x1[context.Context, string, func(*[]byte) bool, func(string, []byte), error](&occMergeFn{})
	register.DoFn3x1[context.Context, string, func(string, []byte), error](&commProcFn{})
	register.Combiner3[[]byte, []byte, []byte](&commCombine{})
}

// occShard is one time shard's encoded occupancy accumulator.
type occShard struct {
	K    int    `json:"k"`
	Data []byte `json:"data"`
	// Empty is set for a first window without records: the run still
	// begins at 0 when later windows have records.
	Empty bool `json:"empty,omitempty"`
}

// occShardFn computes the occupancy accumulator of one time window of a
// run (windowKey), beginning at its first record.
type occShardFn struct {
	Cfg  Config `json:"cfg"`
	Plan *plan  `json:"plan"`
}

func (f *occShardFn) ProcessElement(ctx context.Context, key string, emit func(string, []byte)) error {
	run, k, rp, s, err := openPlanned(ctx, key, f.Cfg.Input, f.Plan)
	if err != nil {
		return err
	}
	modes := occupancy.StateModes(f.Plan.Header)
	from, to := rp.Bounds[k], rp.Bounds[k+1]
	// The first shard begins at 0 as the run does; the others at their
	// first state record (see occupancy.Accumulator.Merge), or at their
	// start when they have none.
	t0 := from
	if k > 0 {
		first := make([]trace.Record, 1)
		n, rerr := s.Records(store.ReadOptions{Runs: []int32{run}, Kinds: []trace.Kind{trace.KindState}, From: from, To: to}).Read(first)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("%s: run %d: %w", f.Cfg.Input, run, rerr)
		}
		if n > 0 {
			t0 = first[0].T
		}
	}
	var acc *occupancy.Accumulator
	r := s.Records(store.ReadOptions{Runs: []int32{run}, From: from, To: to})
	buf := make([]trace.Record, 512)
	for {
		n, rerr := r.Read(buf)
		for i := range n {
			if acc == nil {
				if acc, err = occupancy.NewAccumulator(modes, int(rp.Procs), t0, occupancy.Options{Start: f.Cfg.Start}); err != nil {
					return err
				}
			}
			if err := acc.Add(&buf[i]); err != nil {
				return fmt.Errorf("%s: run %d: %w", f.Cfg.Input, run, err)
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%s: run %d: %w", f.Cfg.Input, run, rerr)
		}
	}
	sh := occShard{K: int(k), Empty: acc == nil}
	if acc != nil {
		if sh.Data, err = acc.MarshalBinary(); err != nil {
			return err
		}
	} else if k > 0 {
		return nil
	}
	return emitJSON(emit, key[:10], sh)
}

// occMergeFn merges the shards of one run in time order and computes the
// run's occupancy.Result.
type occMergeFn struct {
	Cfg  Config `json:"cfg"`
	Plan *plan  `json:"plan"`
}

func (f *occMergeFn) ProcessElement(ctx context.Context, key string, shards func(*[]byte) bool, emit func(string, []byte)) error {
	var all []occShard
	var data []byte
	for shards(&data) {
		var sh occShard
		if err := json.Unmarshal(data, &sh); err != nil {
			return fmt.Errorf("run %s: a shard: %w", key, err)
		}
		all = append(all, sh)
	}
	slices.SortFunc(all, func(a, b occShard) int { return cmp.Compare(a.K, b.K) })
	if !slices.ContainsFunc(all, func(sh occShard) bool { return !sh.Empty }) {
		return nil // the run has no records
	}
	var run int32
	if _, err := fmt.Sscanf(key, "%d", &run); err != nil {
		return fmt.Errorf("bad run key %q", key)
	}
	modes := occupancy.StateModes(f.Plan.Header)
	var acc *occupancy.Accumulator
	rp, err := f.Plan.run(run)
	if err != nil {
		return err
	}
	for _, sh := range all {
		var a *occupancy.Accumulator
		var err error
		if sh.Empty {
			// The run begins at 0 even when its first window is empty.
			a, err = occupancy.NewAccumulator(modes, int(rp.Procs), 0, occupancy.Options{Start: f.Cfg.Start})
		} else {
			a, err = occupancy.UnmarshalAccumulator(sh.Data, modes)
		}
		if err != nil {
			return fmt.Errorf("run %s shard %d: %w", key, sh.K, err)
		}
		if acc == nil {
			acc = a
		} else if err := acc.Merge(a); err != nil {
			return fmt.Errorf("run %s shard %d: %w", key, sh.K, err)
		}
	}
	if acc == nil {
		return nil
	}
	res, err := acc.Result(0)
	if err != nil {
		return fmt.Errorf("%s: run %d: %w", f.Cfg.Input, run, err)
	}
	res.Run = run
	return emitJSON(emit, key, []*occupancy.Result{res})
}

// buildOccupancy adds the occupancy pipeline: shards in parallel, then
// one ordered merge per run.
func buildOccupancy(s beam.Scope, cfg Config, p *plan) beam.PCollection {
	var keys []string
	for _, rp := range p.Runs {
		for k := range rp.windows() {
			keys = append(keys, windowKey(rp.Run, k))
		}
	}
	shards := beam.ParDo(s, &occShardFn{Cfg: cfg, Plan: p}, beam.Reshuffle(s, beam.CreateList(s, keys)))
	return beam.ParDo(s, &occMergeFn{Cfg: cfg, Plan: p}, beam.GroupByKey(s, shards))
}

// commParams returns the comm options of cfg, the defaults when it has
// none.
func (cfg Config) commParams() *comm.Params {
	if cfg.Comm == nil {
		return comm.DefaultParams()
	}
	return cfg.Comm
}

// commProcFn computes the comm accumulator of one process.
type commProcFn struct {
	Cfg  Config `json:"cfg"`
	Plan *plan  `json:"plan"`
}

func (f *commProcFn) ProcessElement(ctx context.Context, key string, emit func(string, []byte)) error {
	run, proc, err := parseKey(key)
	if err != nil {
		return err
	}
	p := f.Cfg.commParams()
	opts, err := p.Options(run)
	if err != nil {
		return err
	}
	acc, err := comm.New(f.Plan.Header, opts)
	if err != nil {
		return err
	}
	s, err := openStore(ctx, f.Cfg.Input)
	if err != nil {
		return err
	}
	// The records the engine's comm analysis is fed; a process with none
	// adds nothing, and a run none of whose processes has any has no
	// result, as in the engine.
	an, _ := engine.Lookup(comm.Name)
	n := 0
	err = trace.Each(s.Records(store.ReadOptions{Runs: []int32{run}, Procs: []int32{proc}, Kinds: an.Kinds(p)}), func(r *trace.Record) error {
		n++
		return acc.Add(r)
	})
	if err != nil {
		return fmt.Errorf("%s: run %d process %d: %w", f.Cfg.Input, run, proc, err)
	}
	if n == 0 {
		return nil
	}
	data, err := acc.MarshalBinary()
	if err != nil {
		return err
	}
	emit(key[:10], data)
	return nil
}

// commCombine merges per-process comm accumulators (comm.Accumulator's
// Merge, any order); its output is the run's comm.RunReport, nodes in
// canonical order, matrices summed in groups above MaxSide processes.
type commCombine struct {
	Header  *trace.Header `json:"header"`
	MaxSide int           `json:"max_side"`
}

func (c *commCombine) decode(b []byte) (*comm.Accumulator, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return comm.UnmarshalAccumulator(b, c.Header)
}

func (c *commCombine) merge(a, b []byte) ([]byte, error) {
	return mergeEncoded(a, b, c.decode, func(x, y *comm.Accumulator) ([]byte, error) {
		if err := x.Merge(y); err != nil {
			return nil, err
		}
		return x.MarshalBinary()
	})
}

// CreateAccumulator returns an empty accumulator.
func (c *commCombine) CreateAccumulator() []byte { return nil }

// AddInput merges a process's accumulator.
func (c *commCombine) AddInput(a, in []byte) ([]byte, error) { return c.merge(a, in) }

// MergeAccumulators merges two accumulators.
func (c *commCombine) MergeAccumulators(a, b []byte) ([]byte, error) { return c.merge(a, b) }

// ExtractOutput returns the run's report as the engine's comm analysis
// makes it (comm.NewRunReport of the canonical result), in a one-element
// JSON array.
func (c *commCombine) ExtractOutput(a []byte) ([]byte, error) {
	acc, err := c.decode(a)
	if err != nil {
		return nil, err
	}
	return json.Marshal([]comm.RunReport{comm.NewRunReport(acc.Result().Canonical(), c.MaxSide)})
}

// buildComm adds the comm pipeline: one accumulator per process, merged
// per run.
func buildComm(s beam.Scope, cfg Config, p *plan) beam.PCollection {
	procs := beam.Reshuffle(s, beam.CreateList(s, procKeys(p)))
	accs := beam.ParDo(s, &commProcFn{Cfg: cfg, Plan: p}, procs)
	return beam.CombinePerKey(s, &commCombine{Header: p.Header, MaxSide: cfg.commParams().MaxSide}, accs)
}
