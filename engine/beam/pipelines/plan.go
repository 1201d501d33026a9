package pipelines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
)

// Analyses lists the engine analyses a pipeline runs, in the order of the
// command's help.
var Analyses = []string{occupancy.Name, comm.Name, entropy.Name, pca.Name, mentropy.Name, phase.Name, state.Name}

// How a pipeline cuts the trace for an analysis, so that the parts'
// accumulators merge into what one pass over the trace gives (see each
// analysis' MarshalBinary, and docs/scale.md):
//
//   - by run (occupancy, entropy, pca, states): these analyses follow the
//     global state of a run, whose rows cannot begin in the middle of it
//     (derived states cannot even be read from there), and their
//     accumulators merge whole runs, in run order;
//   - by process (comm, mentropy, phases): their accumulators merge
//     disjoint processes (comm's matrices, a process's event stream, its
//     basic block vectors), in any order.
//
// pca's exact method makes two passes: the parts' moments are merged
// before every part scores its runs with the merged components (two
// rounds). Its randomized method (more than pca.ExactMaxProcs processes)
// runs whole on one worker.
type sharding struct {
	byProcess bool
	rounds    int
}

var shardings = map[string]sharding{
	occupancy.Name: {rounds: 1},
	comm.Name:      {byProcess: true, rounds: 1},
	entropy.Name:   {rounds: 1},
	pca.Name:       {rounds: 2},
	mentropy.Name:  {byProcess: true, rounds: 1},
	phase.Name:     {byProcess: true, rounds: 1},
	state.Name:     {rounds: 1},
}

// Sharding says, in words, how the pipeline of analysis cuts the trace.
func Sharding(analysis string) string {
	sh, ok := shardings[analysis]
	switch {
	case !ok:
		return ""
	case sh.byProcess:
		return "by process"
	case sh.rounds > 1:
		return "by run, the parts merged between the two passes"
	}
	return "by run"
}

// Config is one pipeline: the engine analysis, its request and options,
// its input and output, and how many parts to cut the trace into. It
// travels to the workers inside the DoFns (as JSON).
type Config struct {
	// Analysis is the engine analysis' name (Analyses).
	Analysis string `json:"analysis"`
	// Options is the JSON of the analysis' options (the struct its
	// engine.Analysis.Options returns, bound to flags by
	// engine.BindFlags); empty: the defaults. SetOptions sets it.
	Options json.RawMessage `json:"options,omitempty"`
	// Runs, Procs, ExcludeProcs and States are the engine.Request's.
	Runs         []int32           `json:"runs,omitempty"`
	Procs        []int32           `json:"procs,omitempty"`
	ExcludeProcs []int32           `json:"exclude_procs,omitempty"`
	States       engine.StatesFrom `json:"states,omitempty"`
	// Input is the .pst directory (a local path, or any filesystem the
	// binary registers: gs://, s3://...); Output the RESULT.json to write.
	Input  string `json:"input"`
	Output string `json:"output"`
	// Shards bounds the number of parts the trace is cut into (runs, or
	// processes of a run, grouped); 0: one part per run or process.
	Shards int `json:"shards,omitempty"`
}

// SetOptions sets the options of cfg's analysis to opts (a pointer of
// the type its Options returns).
func (cfg *Config) SetOptions(opts any) error {
	data, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	cfg.Options = data
	return nil
}

// Request returns the engine request of cfg, its options decoded into the
// analysis' options type.
func (cfg Config) Request() (engine.Request, error) {
	a, ok := engine.Lookup(cfg.Analysis)
	if !ok || !slices.Contains(Analyses, cfg.Analysis) {
		return engine.Request{}, fmt.Errorf("unknown analysis %q (want one of %s)", cfg.Analysis, strings.Join(Analyses, ", "))
	}
	req := engine.Request{Analysis: cfg.Analysis, Runs: cfg.Runs, Procs: cfg.Procs, ExcludeProcs: cfg.ExcludeProcs, States: cfg.States}
	if len(cfg.Options) > 0 {
		// Decoded into a zero struct: the JSON holds every field but the
		// empty ones it omits, which are then empty again.
		opts := reflect.New(reflect.TypeOf(a.Options()).Elem()).Interface()
		if err := json.Unmarshal(cfg.Options, opts); err != nil {
			return engine.Request{}, fmt.Errorf("%s: options: %w", cfg.Analysis, err)
		}
		req.Options = opts
	}
	return req, nil
}

// part is a part of the trace: some runs, and some processes of them
// (nil: every one), as engine.Restrict takes them.
type part struct {
	Runs  []int32 `json:"runs,omitempty"`
	Procs []int32 `json:"procs,omitempty"`
}

// plan is how a pipeline runs: its parts, in the order their
// accumulators merge, and its rounds (passes merged across the parts).
type plan struct {
	Parts  []part `json:"parts"`
	Rounds int    `json:"rounds"`
	// Ordered is set when the parts' accumulators merge in order (by run);
	// otherwise in any order, combined as they come.
	Ordered bool `json:"ordered"`
}

// opened is the trace of cfg, opened by the launcher or a worker, and its
// prepared request.
type opened struct {
	src  engine.Source
	s    *store.Store
	prep *engine.Prepared
}

// open opens cfg's trace (a worker's cached copy) and prepares its
// request, refusing what engine.Run refuses before it reads a record.
func open(ctx context.Context, cfg Config) (*opened, error) {
	req, err := cfg.Request()
	if err != nil {
		return nil, err
	}
	s, err := openStore(ctx, cfg.Input)
	if err != nil {
		return nil, err
	}
	src := named{s, cfg.Input}
	if err := checkRuns(src, cfg.Runs); err != nil {
		return nil, err
	}
	p, err := engine.Prepare(src, req)
	if err != nil {
		return nil, err
	}
	return &opened{src: src, s: s, prep: p}, nil
}

// named is a store under the name of the input given: a worker's local
// copy of a remote trace keeps the trace's name, in the envelope and in
// messages.
type named struct {
	*store.Store
	input string
}

// Dir implements engine.Source: the input's path, whose base name names
// the trace.
func (n named) Dir() string { return n.input }

// checkRuns refuses runs the trace does not have, as parscope's --runs
// does.
func checkRuns(src engine.Source, sel []int32) error {
	var have, missing []string
	for _, r := range src.Manifest().Stats.Runs {
		have = append(have, fmt.Sprint(r.Run))
	}
	for _, r := range sel {
		if !slices.Contains(have, fmt.Sprint(r)) {
			missing = append(missing, fmt.Sprint(r))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("--runs: %s has no run %s (its runs: %s)", filepath.Base(src.Dir()), strings.Join(missing, ", "), strings.Join(have, ", "))
	}
	return nil
}

// makePlan cuts cfg's trace into parts (see sharding), at most cfg.Shards
// when it is positive.
func makePlan(cfg Config, o *opened) (*plan, error) {
	sh := shardings[cfg.Analysis]
	pl := &plan{Rounds: sh.rounds, Ordered: !sh.byProcess}
	req := o.prep.Request
	var runs []int32
	for _, r := range o.src.Manifest().Stats.Runs {
		if req.Runs == nil || slices.Contains(req.Runs, r.Run) {
			runs = append(runs, r.Run)
		}
	}
	slices.Sort(runs)
	if cfg.Analysis == pca.Name && !pcaExact(o, runs) {
		// The randomized method's passes run on one worker.
		pl.Parts, pl.Rounds = []part{{}}, 1
		return pl, nil
	}
	if !sh.byProcess {
		for _, g := range groups(len(runs), cfg.Shards) {
			pl.Parts = append(pl.Parts, part{Runs: runs[g[0]:g[1]]})
		}
	} else {
		type proc struct{ run, proc int32 }
		var all []proc
		for _, r := range runs {
			for _, q := range o.s.Procs(r) {
				if (req.Procs == nil || slices.Contains(req.Procs, q)) && !slices.Contains(req.ExcludeProcs, q) {
					all = append(all, proc{r, q})
				}
			}
		}
		// Groups of processes of one run each.
		for _, g := range groups(len(all), cfg.Shards) {
			for i := g[0]; i < g[1]; {
				j := i
				pt := part{Runs: []int32{all[i].run}}
				for ; j < g[1] && all[j].run == all[i].run; j++ {
					pt.Procs = append(pt.Procs, all[j].proc)
				}
				pl.Parts = append(pl.Parts, pt)
				i = j
			}
		}
	}
	if len(pl.Parts) == 0 {
		// Nothing selected: one part, whose result is the engine's.
		pl.Parts = []part{{}}
	}
	return pl, nil
}

// groups cuts n items into at most shards contiguous groups of nearly
// equal size ([from, to) each); shards ≤ 0 makes one group per item.
func groups(n, shards int) [][2]int {
	if shards <= 0 || shards > n {
		shards = n
	}
	var out [][2]int
	for k := range shards {
		out = append(out, [2]int{k * n / shards, (k + 1) * n / shards})
	}
	return out
}

// pcaExact reports whether pca takes the exact method on every run of
// runs: at most pca.ExactMaxProcs columns.
func pcaExact(o *opened, runs []int32) bool {
	if p := o.prep.Options.(*pca.Params); p.Procs != nil {
		return pca.Exact(len(p.Procs))
	}
	for _, r := range runs {
		if !pca.Exact(o.prep.Trace.Procs(r)) {
			return false
		}
	}
	return true
}

// errNoParts is the error of a merge that received nothing.
var errNoParts = errors.New("no part of the trace reached the merge")
