// Package report runs every analysis that applies to a trace and gathers
// the results in one JSON-serialisable Bundle for the faces that show them
// (`parscope analyze` writes it into a self-contained HTML report,
// `parscope serve` answers its JSON endpoints from it).
//
// What runs depends on what the trace holds: state records give the
// parallel state analyses (states, entropy, PCA, phase space, occupancy); events
// give the modified entropy; messages and regions give the communication
// per code structure; regions (or states) give the profile and the POP
// efficiencies; messages and collectives give the wait states; basic
// block vectors give the program phases. The
// package computes nothing itself: it calls the analysis packages with
// sensible defaults and keeps their results at the levels of detail a
// browser can draw (time windows, thinned series), never raw records.
package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/analysis/counters"
	"github.com/parscope/parscope/analysis/critpath"
	"github.com/parscope/parscope/analysis/entropy"
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/overview"
	"github.com/parscope/parscope/analysis/pca"
	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/analysis/phasespace"
	"github.com/parscope/parscope/analysis/pop"
	"github.com/parscope/parscope/analysis/profile"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// Version is the version of the Bundle's JSON layout. 2: the mentropy
// and comm sections are the engine's envelopes (comm's of every run). 3:
// the profile, pop, waitstates and critpath sections.
const Version = 3

// Options tune the defaults of the analyses.
type Options struct {
	// MaxPoints bounds the points kept per run of a series (PCA scores,
	// phase-space points, modified entropy per process). 0 means
	// DefaultMaxPoints.
	MaxPoints int
	// SourceDirs are the directories the user names (--source-dir) to
	// link communication structures to their source lines. The source
	// files that code regions name are read from inside these directories
	// only (see OpenSource); without them no source file is read, as a
	// trace is untrusted input that could name any file.
	SourceDirs []string
	// Probe is a probe result (JSON) to show beside the analyses; nil when
	// there is none.
	Probe json.RawMessage
	// Progress, when not nil, is called before each analysis that applies
	// with its name, how many have finished and how many apply, and once
	// more with name "" when all have finished.
	Progress func(name string, done, total int)
	// SubsetProcs is the largest process count of run 0 for which the
	// entropy analysis ranks the windows of SubsetK adjacent processes.
	// 0 means DefaultSubsetProcs.
	SubsetProcs int
	// Procs, when not empty, selects the processes every analysis reads,
	// and ExcludeProcs leaves processes out: the others count as
	// processes that never exist (engine.Request).
	Procs, ExcludeProcs []int32
	// States is where the analyses take processes' states from ("":
	// engine.StatesAuto).
	States engine.StatesFrom
}

// DefaultMaxPoints is the default bound on the points per run of a series.
const DefaultMaxPoints = 2000

// DefaultSubsetProcs is the default bound on the processes of the subset ranking.
const DefaultSubsetProcs = 64

// SubsetK is the size of the process windows the subset ranking searches.
const SubsetK = 3

// EntropyWindows is the number of windows of the entropy series over the
// longest run.
const EntropyWindows = 200

// Bundle is every result of one trace, ready to be marshalled to JSON.
type Bundle struct {
	Version int `json:"version"`
	// Trace is the base name of the trace analysed.
	Trace string     `json:"trace"`
	Meta  trace.Meta `json:"meta"`
	// Runs summarise the runs of the ensemble and Records counts the
	// records by kind: the overview's figures (overview.Result), without
	// its levels, for a summary that loads at once.
	Runs    []overview.RunSummary `json:"runs"`
	Records map[string]int64      `json:"records"`
	// Ran lists the analyses that ran, in order; Skipped says why the
	// others did not.
	Ran     []string          `json:"ran"`
	Skipped map[string]string `json:"skipped,omitempty"`
	// Seconds is how long each analysis took; the analyses that ran in
	// the engine's one pass (RanTogether) each have that pass's duration.
	Seconds map[string]float64 `json:"seconds"`
	// RanTogether lists the analyses computed in one engine pass.
	RanTogether []string `json:"ran_together,omitempty"`
	// Procs and ExcludeProcs are the processes selected and left out of
	// every analysis (Options); absent when all were analysed.
	Procs        []int32 `json:"procs,omitempty"`
	ExcludeProcs []int32 `json:"exclude_procs,omitempty"`
	// StatesFrom is where the state analyses took processes' states from
	// (engine.StatesFrom), and StatesFromText says it in words; absent
	// when no analysis read states.
	StatesFrom     engine.StatesFrom `json:"states_from,omitempty"`
	StatesFromText string            `json:"states_from_text,omitempty"`

	// Overview is the overview analysis' envelope (engine.Envelope, whose
	// result is an *overview.Result).
	Overview *engine.Envelope `json:"overview,omitempty"`
	// States is the states analysis' envelope (its result, a
	// *state.Summary, holds the timeline the overview's state chart draws).
	States *engine.Envelope `json:"states,omitempty"`
	// Entropy is the entropy analysis' envelope (an *entropy.Report).
	Entropy *engine.Envelope `json:"entropy,omitempty"`
	// PCA is the pca analysis' envelope (a *pca.Report).
	PCA *engine.Envelope `json:"pca,omitempty"`
	// PhaseSpace is the phasespace analysis' envelope (a
	// *phasespace.Report), of the states PCA keeps the scores of.
	PhaseSpace *engine.Envelope `json:"phasespace,omitempty"`
	// Occupancy is the occupancy analysis' envelope (engine.Envelope,
	// whose result is an *occupancy.Report).
	Occupancy *engine.Envelope `json:"occupancy,omitempty"`
	// MEntropy is the mentropy analysis' envelope (a *mentropy.Result).
	MEntropy *engine.Envelope `json:"mentropy,omitempty"`
	// Comm is the comm analysis' envelope, with the source lines its
	// regions name.
	Comm *Comm `json:"comm,omitempty"`
	// Profile is the profile analysis' envelope (a *profile.Result): flat
	// profile and call tree of the regions, or of the states.
	Profile *engine.Envelope `json:"profile,omitempty"`
	// POP is the pop analysis' envelope (a *pop.Result): the POP
	// efficiencies of every run.
	POP *engine.Envelope `json:"pop,omitempty"`
	// WaitStates is the waitstates analysis' envelope (a
	// *waitstate.Result): MPI wait time by pattern, process and call site.
	WaitStates *engine.Envelope `json:"waitstates,omitempty"`
	// CritPath is the critpath analysis' envelope (a *critpath.Result):
	// the critical path of every run, with each region's and process's
	// share of it.
	CritPath *engine.Envelope `json:"critpath,omitempty"`
	// Counters is the counters analysis' envelope (a *counters.Result):
	// every counter's range, and its series over time windows.
	Counters *engine.Envelope `json:"counters,omitempty"`
	// Phases is the phases analysis' envelope (a *phase.Phases: the
	// phases of each process's basic block vectors).
	Phases *engine.Envelope `json:"phases,omitempty"`
	Probe  *json.RawMessage `json:"probe,omitempty"`
}

// Analysis names, as they appear in Bundle.Ran and Bundle.Skipped.
const (
	AnalysisOverview   = "overview"
	AnalysisStates     = "states"
	AnalysisEntropy    = "entropy"
	AnalysisPCA        = "pca"
	AnalysisPhaseSpace = "phasespace"
	AnalysisOccupancy  = "occupancy"
	AnalysisMEntropy   = "mentropy"
	AnalysisComm       = "comm"
	AnalysisProfile    = "profile"
	AnalysisPOP        = "pop"
	AnalysisWaitStates = "waitstates"
	AnalysisCritPath   = "critpath"
	AnalysisCounters   = "counters"
	AnalysisPhases     = "phases"
	AnalysisProbe      = "probe"
)

// Build opens the .pst trace at path and runs every analysis that applies.
func Build(ctx context.Context, path string, opts Options) (*Bundle, error) {
	s, err := store.Open(path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return FromStore(ctx, s, opts)
}

// engineRequests are the analyses the engine computes for the report, in
// the order of Bundle.Ran, with the options the report gives them.
func engineRequests(t *engine.Trace, opts Options) []engine.Request {
	return []engine.Request{
		{Analysis: overview.Name, Options: overview.DefaultParams()},
		{Analysis: state.Name, Options: state.DefaultStatesParams()},
		entropyRequest(t, opts),
		pcaRequest(opts),
		phaseSpaceRequest(opts),
		occupancyRequest(),
		mentropyRequest(opts),
		commRequest(),
		profileRequest(),
		popRequest(),
		waitstatesRequest(),
		critpathRequest(),
		{Analysis: counters.Name, Options: counters.DefaultParams()},
		{Analysis: phase.Name, Options: phase.DefaultParams()},
	}
}

// entropyRequest asks for the entropy of every run with its series in
// EntropyWindows windows of the longest run, and, for a run 0 of more than
// SubsetK and at most opts.SubsetProcs processes, the ranking of its
// windows of SubsetK processes.
func entropyRequest(t *engine.Trace, opts Options) engine.Request {
	p := entropy.DefaultParams()
	var longest int64
	for _, r := range t.Stats.Runs {
		longest = max(longest, r.TMax-r.TMin)
	}
	p.Window = time.Duration(max(longest/EntropyWindows, 1))
	if len(t.Header.Runs) > 0 {
		if n := int(t.Header.Runs[0].Procs); n > SubsetK && n <= opts.SubsetProcs {
			p.Subsets = SubsetK
		}
	}
	return engine.Request{Analysis: entropy.Name, Options: p}
}

// pcaRequest asks for the pca of every run with DefaultComponents
// components, keeping opts.MaxPoints scores per run.
func pcaRequest(opts Options) engine.Request {
	p := pca.DefaultParams()
	p.Components = PCAComponents
	p.MaxPoints = opts.MaxPoints
	return engine.Request{Analysis: pca.Name, Options: p}
}

// phaseSpaceRequest asks for the phase space of every run, projecting the
// opts.MaxPoints states of each run the pca request keeps the scores of.
func phaseSpaceRequest(opts Options) engine.Request {
	p := phasespace.DefaultParams()
	p.MaxPoints = opts.MaxPoints
	return engine.Request{Analysis: phasespace.Name, Options: p}
}

// FromStore runs every analysis that applies to the open trace s: those
// the engine computes in one pass over the records, then the others.
func FromStore(ctx context.Context, s *store.Store, opts Options) (*Bundle, error) {
	if opts.MaxPoints <= 0 {
		opts.MaxPoints = DefaultMaxPoints
	}
	if opts.SubsetProcs <= 0 {
		opts.SubsetProcs = DefaultSubsetProcs
	}
	h := s.Header()
	b := &Bundle{Version: Version, Trace: filepath.Base(s.Dir()), Meta: h.Meta,
		Skipped: map[string]string{}, Seconds: map[string]float64{}, Procs: opts.Procs, ExcludeProcs: opts.ExcludeProcs}
	// The engine's analyses that apply run together; the others are
	// skipped with the kinds they miss, or the size they cannot handle.
	// States derived from regions (engine.WithStates) when the trace or
	// the options ask for them: every state analysis reads the same ones.
	var src engine.Source = s
	if from := engine.ResolveStates(engine.TraceOf(s), opts.States); from != engine.StatesRecorded {
		var err error
		if src, _, err = engine.WithStates(s, from); err != nil {
			return nil, err
		}
	}
	tr := engine.TraceOf(src)
	var reqs []engine.Request
	for _, req := range engineRequests(tr, opts) {
		req.Procs, req.ExcludeProcs, req.States = opts.Procs, opts.ExcludeProcs, opts.States
		a, _ := engine.Lookup(req.Analysis)
		var miss *engine.MissingError
		if err := a.AppliesWith(tr, req.Options); errors.As(err, &miss) {
			b.Skipped[req.Analysis] = missingReason(miss)
			continue
		} else if err != nil {
			return nil, err
		}
		// A trace larger than the analysis handles (more processes than
		// comm's dense matrices hold) skips it, saying so: the others run.
		var lim *engine.LimitError
		if err := a.WithinLimits(tr, req, req.Options); errors.As(err, &lim) {
			b.Skipped[req.Analysis] = lim.Reason()
			continue
		} else if err != nil {
			return nil, err
		}
		if why := notApplicable(tr, req); why != "" {
			b.Skipped[req.Analysis] = why
			continue
		}
		reqs = append(reqs, req)
	}
	total := len(reqs)
	report := func(name string) {
		if opts.Progress != nil {
			opts.Progress(name, len(b.Ran), total)
		}
	}
	var names []string
	for _, req := range reqs {
		names = append(names, req.Analysis)
	}
	report(strings.Join(names, ", "))
	start := time.Now()
	// The engine's errors name the trace and the analysis already.
	res, err := engine.Run(ctx, src, reqs)
	if err != nil {
		return nil, err
	}
	for _, env := range res.Envelopes {
		if env.StatesFrom != "" {
			b.StatesFrom, b.StatesFromText = env.StatesFrom, env.StatesFrom.Describe()
		}
	}
	took := time.Since(start).Seconds()
	for _, env := range res.Envelopes {
		switch env.Analysis {
		case overview.Name:
			b.Overview = env
			ov := env.Result.(*overview.Result)
			b.Runs, b.Records = ov.Summaries(), ov.Records
		case state.Name:
			b.States = env
		case entropy.Name:
			b.Entropy = env
		case pca.Name:
			b.PCA = env
		case phasespace.Name:
			b.PhaseSpace = env
		case occupancy.Name:
			b.Occupancy = env
		case mentropy.Name:
			b.MEntropy = env
		case comm.Name:
			b.Comm = &Comm{Envelope: env}
		case profile.Name:
			b.Profile = env
		case pop.Name:
			b.POP = env
		case waitstate.Name:
			b.WaitStates = env
		case critpath.Name:
			b.CritPath = env
		case counters.Name:
			b.Counters = env
		case phase.Name:
			b.Phases = env
		}
		b.Seconds[env.Analysis] = took
		b.Ran = append(b.Ran, env.Analysis)
	}
	b.RanTogether = names
	report("")
	if opts.Probe != nil {
		if !json.Valid(opts.Probe) {
			return nil, fmt.Errorf("probe result: not valid JSON")
		}
		p := append(json.RawMessage(nil), opts.Probe...)
		b.Probe = &p
		b.Ran = append(b.Ran, AnalysisProbe)
	} else {
		b.Skipped[AnalysisProbe] = "no probe result given"
	}
	if b.Comm != nil {
		b.Comm.Sources = readSources(h, opts.SourceDirs)
	}
	return b, nil
}

// OverviewResult returns the result of the overview section, or false
// when there is none.
func (b *Bundle) OverviewResult() (*overview.Result, bool) {
	if b.Overview == nil {
		return nil, false
	}
	ov, ok := b.Overview.Result.(*overview.Result)
	return ov, ok
}

// PCAResult returns the result of the pca section, or false when there
// is none.
func (b *Bundle) PCAResult() (*pca.Report, bool) {
	if b.PCA == nil {
		return nil, false
	}
	r, ok := b.PCA.Result.(*pca.Report)
	return r, ok
}

// PhaseSpaceResult returns the result of the phasespace section, or
// false when there is none.
func (b *Bundle) PhaseSpaceResult() (*phasespace.Report, bool) {
	if b.PhaseSpace == nil {
		return nil, false
	}
	r, ok := b.PhaseSpace.Result.(*phasespace.Report)
	return r, ok
}

// missingReason says in a few words what a trace lacks.
func missingReason(e *engine.MissingError) string {
	var names []string
	for _, k := range e.Needs {
		names = append(names, k.String())
	}
	return "the trace has no " + strings.Join(names, " or ") + " records"
}

// ReadProbe reads a probe result file for Options.Probe, checking that it
// is JSON.
func ReadProbe(path string) (json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Errorf("%s: not a JSON probe result: %v", path, err)
	}
	return data, nil
}
