package comm

import (
	"fmt"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the comm analysis' name in the engine's registry.
const Name = "comm"

// DefaultMaxSide is the default of Params.MaxSide.
const DefaultMaxSide = 128

// Params are the options of the comm analysis: the flags of `parscope
// comm` and the "options" of its envelope.
type Params struct {
	// Decompose is how collectives become messages: linear, binomial or
	// ring (trace.ParseDecomposition).
	Decompose string `json:"decompose" flag:"decompose" help:"how collectives become messages: linear, binomial or ring"`
	// NoCollectives leaves collectives out.
	NoCollectives bool `json:"no_collectives" flag:"no-collectives" help:"leave collectives out"`
	// UnknownCommAsWorld decomposes the collectives of a communicator of
	// unknown members over every process (Options.UnknownCommAsWorld).
	UnknownCommAsWorld bool `json:"unknown_comm_as_world" flag:"unknown-comm-as-world" help:"decompose collectives on communicators of unknown members over every process (else they are reported and left out)"`
	// NoWorkingSets skips the working sets.
	NoWorkingSets bool `json:"no_working_sets" flag:"no-working-sets" help:"skip the working sets (less memory on long traces)"`
	// MaxSide bounds the side of the matrices in the result: a run of more
	// processes has its matrices summed into blocks of adjacent processes
	// (RunReport.Group). 0 never sums.
	MaxSide int `json:"max_side" flag:"max-side" help:"largest side of the matrices in the result: more processes are summed in groups of adjacent ones (0: never)"`
}

// DefaultParams returns the default options.
func DefaultParams() *Params { return &Params{Decompose: "linear", MaxSide: DefaultMaxSide} }

// Options returns the accumulator options of p for run.
func (p *Params) Options(run int32) (Options, error) {
	alg, err := trace.ParseDecomposition(p.Decompose)
	if err != nil {
		return Options{}, fmt.Errorf("decompose: %w", err)
	}
	if p.MaxSide < 0 {
		return Options{}, fmt.Errorf("max_side %d: must not be negative", p.MaxSide)
	}
	return Options{Selection: Selection{Run: run, Decompose: alg, NoCollectives: p.NoCollectives, UnknownCommAsWorld: p.UnknownCommAsWorld}, WorkingSets: !p.NoWorkingSets}, nil
}

// Report is the comm analysis' result: the communication per code
// structure of every run with messages, collectives or regions.
type Report struct {
	// Runs are in run order.
	Runs []RunReport `json:"runs"`
	// Regions gives the source location of the regions the trees name,
	// by region id.
	Regions map[int32]trace.RegionDef `json:"regions"`
}

// RunReport is the communication per code structure of one run, its
// nodes in canonical order (Result.Canonical), whichever order the records
// were read in.
type RunReport struct {
	*Result
	// RankOwn and RankAggregate order the structures by their
	// communication alone and with nested structures.
	RankOwn       Ranking `json:"ranking_own"`
	RankAggregate Ranking `json:"ranking_aggregate"`
	// Matrices holds, per node (same index as Nodes), its matrices alone
	// and with nested structures, summed in groups of Group processes.
	Matrices []NodeMatrices `json:"matrices"`
	// Group is the number of adjacent processes summed into one row and
	// column of the matrices (1 when Procs ≤ Params.MaxSide).
	Group int `json:"group"`
}

// NodeMatrices are one structure's matrices.
type NodeMatrices struct {
	Own       *Matrix `json:"own"`
	Aggregate *Matrix `json:"aggregate"`
}

// NewRunReport ranks the structures of res and sums its matrices in groups
// of processes so that their side is at most maxSide (0: no bound).
func NewRunReport(res *Result, maxSide int) RunReport {
	r := RunReport{Result: res, RankOwn: res.Rank(false), RankAggregate: res.Rank(true), Group: 1}
	for maxSide > 0 && r.Group*maxSide < res.Procs {
		r.Group *= 2
	}
	for i := range res.Nodes {
		n := &res.Nodes[i]
		r.Matrices = append(r.Matrices, NodeMatrices{Own: n.OwnMatrix().Coarsen(r.Group), Aggregate: n.AggregateMatrix().Coarsen(r.Group)})
	}
	return r
}

// Coarsen returns m with its g×g blocks summed (m itself when g ≤ 1).
func (m *Matrix) Coarsen(g int) *Matrix {
	if g <= 1 {
		return m
	}
	out := NewMatrix((m.N + g - 1) / g)
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			k := (i/g)*out.N + j/g
			out.Bytes[k] += m.Bytes[i*m.N+j]
			out.Count[k] += m.Count[i*m.N+j]
		}
	}
	return out
}

// kinds are the record kinds the analysis reads.
var kinds = []trace.Kind{trace.KindEnter, trace.KindExit, trace.KindSend, trace.KindRecv, trace.KindCollective}

func init() {
	engine.Register(&engine.Analysis{
		Name:    Name,
		Doc:     "communication per code structure: tree, matrices, degrees, working sets (Jones et al. 2007)",
		Needs:   []trace.Kind{trace.KindSend, trace.KindRecv, trace.KindCollective, trace.KindEnter},
		Feeds:   func(any) []trace.Kind { return kinds },
		Options: func() any { return DefaultParams() },
		Limit:   Limit,
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return newAnalysis(t, o.(*Params)) },
	})
}

// Limit is the comm analysis' engine.Analysis.Limit, and that of the
// analyses that build its matrices (ocs): a run among those req selects
// may have at most MaxProcs processes, as the matrices are dense (n×n per
// structure that communicates).
func Limit(t *engine.Trace, req engine.Request, _ any) error {
	if run, n := t.LargestRun(req.Runs); n > MaxProcs {
		return fmt.Errorf("run %d has %d processes, and the dense n×n communication matrices hold at most %d", run, n, MaxProcs)
	}
	return nil
}

// analysis is the comm accumulator: one Accumulator per run, made on the
// run's first record.
type analysis struct {
	h    *trace.Header
	p    *Params
	runs engine.PerRun[*Accumulator]
}

func newAnalysis(t *engine.Trace, p *Params) (*analysis, error) {
	if _, err := p.Options(0); err != nil {
		return nil, err
	}
	a := &analysis{h: t.Header, p: p}
	a.runs.New = func(run int32) (*Accumulator, error) {
		o, err := p.Options(run)
		if err != nil {
			return nil, err
		}
		return newAccumulator(a.h, o)
	}
	return a, nil
}

// Add implements engine.Accumulator.
func (a *analysis) Add(batch []trace.Record) error {
	for i := range batch {
		acc, err := a.runs.Of(batch[i].Run)
		if err != nil {
			return err
		}
		if err := acc.Add(&batch[i]); err != nil {
			return err
		}
	}
	return nil
}

// Merge implements engine.Accumulator: runs add up; the accumulators of
// one run must hold different processes (Accumulator.Merge).
func (a *analysis) Merge(o engine.Accumulator) error {
	b, ok := o.(*analysis)
	if !ok {
		return fmt.Errorf("comm: merging a %T", o)
	}
	return a.runs.Merge(&b.runs, func(_ int32, x, y *Accumulator) error { return x.Merge(y) })
}

// Result implements engine.Accumulator.
func (a *analysis) Result() (any, error) {
	rep := &Report{Runs: []RunReport{}, Regions: map[int32]trace.RegionDef{}}
	used := map[int32]bool{}
	for _, run := range a.runs.Runs() {
		acc, _ := a.runs.Get(run)
		r := NewRunReport(acc.Result().Canonical(), a.p.MaxSide)
		for _, n := range r.Nodes {
			used[n.Region] = true
		}
		rep.Runs = append(rep.Runs, r)
	}
	for _, r := range a.h.Regions {
		if used[r.ID] {
			rep.Regions[r.ID] = r
		}
	}
	return rep, nil
}

// Run returns the report of run, or nil.
func (r *Report) Run(run int32) *RunReport {
	for i := range r.Runs {
		if r.Runs[i].Run == run {
			return &r.Runs[i]
		}
	}
	return nil
}
