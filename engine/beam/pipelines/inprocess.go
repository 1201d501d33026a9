package pipelines

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/format/bbv"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// InProcess computes the document of cfg with the in-process engine: one
// pass of the core analysis over the time-merged records of the whole
// trace, as the parscope CLI does. It is what the pipelines must
// reproduce, and the in-process column of docs/scale.md.
func InProcess(ctx context.Context, cfg Config) ([]byte, error) {
	if err := Check(cfg.Input); err != nil {
		return nil, err
	}
	s, err := store.Open(cfg.Input)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	h := s.Header()
	states := func() trace.Reader { return s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindState}}) }
	var results any
	switch cfg.Analysis {
	case EntropyHistogram:
		w, err := entropy.NewWindows(cfg.Window)
		if err != nil {
			return nil, err
		}
		if err := state.Reconstruct(ctx, h, states(), state.Options{}, w.Add); err != nil {
			return nil, err
		}
		results = w.Result()
	case PCA:
		var acc *pca.Accumulator
		err := state.Reconstruct(ctx, h, states(), state.Options{}, func(r *state.Row) error {
			if acc == nil {
				var err error
				if acc, err = pca.NewAccumulator(r.P(), cfg.TimeWeighted); err != nil {
					return err
				}
			}
			return acc.Add(r)
		})
		if err != nil {
			return nil, err
		}
		if acc == nil {
			return nil, errNoStates
		}
		res, err := acc.Result(cfg.Components)
		if err != nil {
			return nil, err
		}
		results = []*pca.Result{res}
	case States:
		var sums []StateSummary
		classes := map[uint64]bool{}
		err := state.Reconstruct(ctx, h, states(), state.Options{}, func(r *state.Row) error {
			if len(sums) == 0 || sums[len(sums)-1].Run != r.Run {
				sums = append(sums, StateSummary{Run: r.Run, Procs: r.P()})
				clear(classes)
			}
			cur := &sums[len(sums)-1]
			cur.Rows++
			cur.End = r.T + r.Dur
			if !classes[r.ClassHash()] {
				classes[r.ClassHash()] = true
				cur.DistinctClasses++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		results = sums
	case MEntropy:
		res, err := runMEntropy(ctx, s, cfg)
		if err != nil {
			return nil, err
		}
		results = res.Procs
	case Phases:
		streams, err := bbv.FromRecords(ctx, cfg.Input, s.BBV(store.ReadOptions{}), 0)
		if err != nil {
			return nil, err
		}
		var out []PhasesStream
		for _, st := range streams {
			res, err := phase.Run(ctx, st.File, cfg.Phase)
			if err != nil {
				return nil, err
			}
			out = append(out, PhasesStream{Run: st.Run, Proc: st.Proc, Result: res})
		}
		results = out
	case Occupancy:
		modes := occupancy.StateModes(h)
		res, err := occupancy.Compute(ctx, h, s.Records(store.ReadOptions{}), modes, occupancy.Options{Start: cfg.Start})
		if err != nil {
			return nil, err
		}
		results = res
	case Comm:
		res, err := engine.Run(ctx, s, []engine.Request{{Analysis: comm.Name, Options: cfg.commParams()}})
		if err != nil {
			return nil, err
		}
		results = res.Envelopes[0].Result.(*comm.Report).Runs
	default:
		return nil, fmt.Errorf("unknown analysis %q", cfg.Analysis)
	}
	data, err := json.Marshal(results)
	if err != nil {
		return nil, err
	}
	if string(data) == "null" {
		data = []byte("[]")
	}
	return assemble(cfg, []part{{Key: "0", Data: data}})
}
