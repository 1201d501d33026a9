package ocs

import (
	"context"
	"fmt"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the ocs analysis' name in the engine's registry.
const Name = "ocs"

// MaxPlanes bounds the planes of one simulation.
const MaxPlanes = 1024

// AnalysisParams are the options of the ocs analysis: the flags of
// `parscope ocs` and the "options" of its envelope (Params, the
// simulation's parameters, are in bytes per second and seconds; these in
// the units a user gives).
type AnalysisParams struct {
	// Planes are the numbers of optical planes simulated.
	Planes []int32 `json:"planes" flag:"planes" help:"numbers of optical planes to simulate (list and ranges)"`
	// Ranking names the strategies (ParseStrategy).
	Ranking []string `json:"ranking" flag:"ranking" help:"strategies: best, worst, indexed, runtime (comma-separated)"`
	// Threshold is the runtime strategy's smallest message that requests
	// a circuit, bytes.
	Threshold int64 `json:"threshold_bytes" flag:"threshold" help:"runtime strategy: smallest message (bytes) that requests a circuit"`
	// OpticalGbps, SwitchMS, ElecGbps and ElecLatUS are the network.
	OpticalGbps float64 `json:"optical_bw_gbps" flag:"optical-bw" help:"bandwidth of one optical circuit, Gbit/s"`
	SwitchMS    float64 `json:"switch_ms" flag:"switch-ms" help:"circuit switching (set-up) latency, milliseconds"`
	ElecGbps    float64 `json:"elec_bw_gbps" flag:"elec-bw" help:"bandwidth of a node's electronic link, Gbit/s"`
	ElecLatUS   float64 `json:"elec_lat_us" flag:"elec-lat" help:"electronic network latency per message, microseconds"`
	// Decompose, NoCollectives and UnknownCommAsWorld say what becomes of
	// collectives, as for the comm analysis.
	Decompose          string `json:"decompose" flag:"decompose" help:"how collectives become messages: linear, binomial or ring"`
	NoCollectives      bool   `json:"no_collectives" flag:"no-collectives" help:"leave collectives out (their time counts as compute)"`
	UnknownCommAsWorld bool   `json:"unknown_comm_as_world" flag:"unknown-comm-as-world" help:"decompose collectives on communicators of unknown members over every process (else they are reported and left out)"`
	// Structures, when given, are the code structures whose connections
	// the static strategies rank instead of the whole program's.
	Structures []string `json:"structures,omitempty" flag:"structure" help:"rank the connections of these structures (label, path or #id; comma-separated or repeated) instead of the whole program's"`
}

// DefaultAnalysisParams returns the default options: 1 to 11 planes,
// every strategy, the network of DefaultParams.
func DefaultAnalysisParams() *AnalysisParams {
	d := DefaultParams()
	return &AnalysisParams{Planes: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Ranking: []string{"best", "worst", "indexed", "runtime"},
		Threshold: d.Threshold, OpticalGbps: d.OpticalBW * 8 / 1e9, SwitchMS: d.SwitchLatency * 1e3, ElecGbps: d.ElecBW * 8 / 1e9,
		ElecLatUS: d.ElecLatency * 1e6, Decompose: "linear"}
}

// sweep is what AnalysisParams say, checked.
type sweep struct {
	planes     []int
	strategies []Strategy
	p          Params
	alg        trace.Decomposition
}

// check checks the options.
func (a *AnalysisParams) check() (*sweep, error) {
	s := &sweep{p: Params{OpticalBW: a.OpticalGbps * 1e9 / 8, SwitchLatency: a.SwitchMS * 1e-3, ElecBW: a.ElecGbps * 1e9 / 8,
		ElecLatency: a.ElecLatUS * 1e-6, Threshold: a.Threshold}}
	if len(a.Planes) == 0 {
		return nil, fmt.Errorf("planes: none given")
	}
	for _, k := range a.Planes {
		if k > MaxPlanes {
			return nil, fmt.Errorf("planes: %d planes is more than %d", k, MaxPlanes)
		}
		s.planes = append(s.planes, int(k))
	}
	if len(a.Ranking) == 0 {
		return nil, fmt.Errorf("ranking: no strategy given")
	}
	for _, name := range a.Ranking {
		st, err := ParseStrategy(name)
		if err != nil {
			return nil, fmt.Errorf("ranking: %w", err)
		}
		s.strategies = append(s.strategies, st)
	}
	if err := s.p.Validate(); err != nil {
		return nil, err
	}
	var err error
	if s.alg, err = trace.ParseDecomposition(a.Decompose); err != nil {
		return nil, fmt.Errorf("decompose: %w", err)
	}
	return s, nil
}

// Check reports the first problem with the options, or nil.
func (a *AnalysisParams) Check() error {
	_, err := a.check()
	return err
}

// Report is the ocs analysis' result: the curves of every run with
// messages or collectives.
type Report struct {
	// Runs are in run order.
	Runs []RunCurves `json:"runs"`
}

// RunCurves are the simulations of one run.
type RunCurves struct {
	Run      int32 `json:"run"`
	Procs    int   `json:"procs"`
	Messages int   `json:"messages"`
	// Decomposition is how collectives became messages ("" when left out).
	Decomposition string `json:"decomposition,omitempty"`
	// RankedFrom names the structures whose matrix the static strategies
	// rank ("program" for the whole trace); Connections counts its
	// connections.
	RankedFrom  []string `json:"ranked_from"`
	Connections int      `json:"connections"`
	Curves      *Curves  `json:"curves"`
	Problems    Problems `json:"problems"`
}

// kinds are the record kinds the analysis reads: the messages and what
// times the processes' compute between them.
var kinds = []trace.Kind{trace.KindState, trace.KindEnter, trace.KindExit, trace.KindSend, trace.KindRecv, trace.KindCollective, trace.KindEvent}

func init() {
	engine.Register(&engine.Analysis{
		Name:     Name,
		Recorded: true,
		Doc:      "optical circuit switch planning and simulation: time and delay against planes (Jones et al. 2007)",
		Needs:    []trace.Kind{trace.KindSend, trace.KindRecv, trace.KindCollective},
		Feeds:    func(any) []trace.Kind { return kinds },
		Options:  func() any { return DefaultAnalysisParams() },
		// The simulations start from comm's matrices, and within its
		// bound on processes their tables stay under MaxSimBytes.
		Limit: comm.Limit,
		New:   func(t *engine.Trace, o any) (engine.Accumulator, error) { return newAnalysis(t, o.(*AnalysisParams)) },
	})
}

// analysis is the ocs accumulator: one Builder per run, made on the run's
// first record; the simulations run at the end.
type analysis struct {
	p    *AnalysisParams
	s    *sweep
	runs engine.PerRun[*Builder]
}

func newAnalysis(t *engine.Trace, p *AnalysisParams) (*analysis, error) {
	s, err := p.check()
	if err != nil {
		return nil, err
	}
	a := &analysis{p: p, s: s}
	a.runs.New = func(run int32) (*Builder, error) {
		return newBuilder(t.Header, Options{Run: run, Decompose: s.alg, NoCollectives: p.NoCollectives, UnknownCommAsWorld: p.UnknownCommAsWorld})
	}
	return a, nil
}

// Add implements engine.Accumulator.
func (a *analysis) Add(batch []trace.Record) error {
	for i := range batch {
		b, err := a.runs.Of(batch[i].Run)
		if err != nil {
			return err
		}
		if err := b.Add(&batch[i]); err != nil {
			return err
		}
	}
	return nil
}

// Merge implements engine.Accumulator: accumulators of different runs
// merge; a run's messages are replayed from one accumulator.
func (a *analysis) Merge(o engine.Accumulator) error {
	b, ok := o.(*analysis)
	if !ok {
		return fmt.Errorf("ocs: merging a %T", o)
	}
	return a.runs.MergeWhole(&b.runs, "ocs")
}

// Result implements engine.Accumulator: it simulates every run.
func (a *analysis) Result() (any, error) {
	rep := &Report{Runs: []RunCurves{}}
	for _, run := range a.runs.Runs() {
		b, _ := a.runs.Get(run)
		w := b.Finish()
		rc := RunCurves{Run: run, Procs: w.Procs, Messages: w.Messages(), Decomposition: w.Comm.Decomposition,
			RankedFrom: []string{comm.RootName}, Problems: w.Problems}
		conns := w.ProgramConnections()
		if len(a.p.Structures) > 0 {
			var nodes []int
			for _, name := range a.p.Structures {
				found := w.Comm.Find(name)
				if len(found) == 0 {
					return nil, fmt.Errorf("structure %q: no such structure in run %d (see parscope comm --tree)", name, run)
				}
				nodes = append(nodes, found...)
			}
			m, err := w.Comm.Select(nodes, true)
			if err != nil {
				return nil, err
			}
			conns, rc.RankedFrom = Connections(m), a.p.Structures
		}
		rc.Connections = len(conns)
		var err error
		if rc.Curves, err = w.SweepConnections(context.Background(), conns, a.s.planes, a.s.strategies, a.s.p); err != nil {
			return nil, fmt.Errorf("run %d: %w", run, err)
		}
		rep.Runs = append(rep.Runs, rc)
	}
	return rep, nil
}
