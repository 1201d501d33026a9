// Package report runs every analysis that applies to a trace and gathers
// the results in one JSON-serialisable Bundle for the faces that show them
// (`parscope analyze` writes it into a self-contained HTML report,
// `parscope serve` answers its JSON endpoints from it).
//
// What runs depends on what the trace holds: state records give the
// parallel state analyses (entropy, PCA, phase space, occupancy); events
// give the modified entropy; messages and regions give the communication
// per code structure; basic block vectors give the program phases. The
// package computes nothing itself: it calls the analysis packages with
// sensible defaults and keeps their results at the levels of detail a
// browser can draw (time windows, thinned series), never raw records.
package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// Version is the version of the Bundle's JSON layout.
const Version = 1

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
	// SubsetProcs is the largest process count for which the entropy
	// subset ranking runs (it reads the trace once per subset). 0 means
	// DefaultSubsetProcs.
	SubsetProcs int
}

// DefaultMaxPoints is the default bound on the points per run of a series.
const DefaultMaxPoints = 2000

// DefaultSubsetProcs is the default bound on the processes of the subset ranking.
const DefaultSubsetProcs = 64

// Bundle is every result of one trace, ready to be marshalled to JSON.
type Bundle struct {
	Version int `json:"version"`
	// Trace is the base name of the trace analysed.
	Trace string     `json:"trace"`
	Meta  trace.Meta `json:"meta"`
	// Runs summarise the runs of the ensemble.
	Runs []RunSummary `json:"runs"`
	// Records counts the records by kind.
	Records map[string]int64 `json:"records"`
	// Ran lists the analyses that ran, in order; Skipped says why the
	// others did not.
	Ran     []string          `json:"ran"`
	Skipped map[string]string `json:"skipped,omitempty"`
	// Seconds is how long each analysis took.
	Seconds map[string]float64 `json:"seconds"`

	Overview   *Overview   `json:"overview,omitempty"`
	Entropy    *Entropy    `json:"entropy,omitempty"`
	PCA        *PCA        `json:"pca,omitempty"`
	PhaseSpace *PhaseSpace `json:"phasespace,omitempty"`
	// Occupancy is the occupancy analysis' envelope (engine.Envelope,
	// whose result is an *occupancy.Report).
	Occupancy *engine.Envelope `json:"occupancy,omitempty"`
	MEntropy  *MEntropy        `json:"mentropy,omitempty"`
	Comm      *Comm            `json:"comm,omitempty"`
	Phases    []*Phases        `json:"phases,omitempty"`
	Probe     *json.RawMessage `json:"probe,omitempty"`
}

// RunSummary describes one run.
type RunSummary struct {
	Run     int32  `json:"run"`
	Name    string `json:"name,omitempty"`
	Procs   int32  `json:"procs"`
	Records int64  `json:"records"`
	Begin   int64  `json:"begin_ns"`
	End     int64  `json:"end_ns"`
}

// Analysis names, as they appear in Bundle.Ran and Bundle.Skipped.
const (
	AnalysisOverview   = "overview"
	AnalysisStates     = "states" // entropy, PCA and phase space
	AnalysisOccupancy  = "occupancy"
	AnalysisMEntropy   = "mentropy"
	AnalysisComm       = "comm"
	AnalysisPhases     = "phases"
	AnalysisProbe      = "probe"
	analysisSubsetRank = "entropy subsets"
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

// FromStore runs every analysis that applies to the open trace s.
func FromStore(ctx context.Context, s *store.Store, opts Options) (*Bundle, error) {
	if opts.MaxPoints <= 0 {
		opts.MaxPoints = DefaultMaxPoints
	}
	if opts.SubsetProcs <= 0 {
		opts.SubsetProcs = DefaultSubsetProcs
	}
	m := s.Manifest()
	h := s.Header()
	b := &Bundle{Version: Version, Trace: filepath.Base(s.Dir()), Meta: h.Meta, Records: map[string]int64{},
		Skipped: map[string]string{}, Seconds: map[string]float64{}}
	for k, v := range m.Stats.Records {
		b.Records[k] = v
	}
	for _, r := range m.Stats.Runs {
		rs := RunSummary{Run: r.Run, Procs: r.Procs, Records: r.Records, Begin: r.TMin, End: r.TMax}
		if int(r.Run) < len(h.Runs) {
			rs.Name = h.Runs[r.Run].Name
		}
		b.Runs = append(b.Runs, rs)
	}
	sort.Slice(b.Runs, func(i, j int) bool { return b.Runs[i].Run < b.Runs[j].Run })
	rec := m.Stats.Records
	type step struct {
		name   string
		reason string // empty when the analysis applies
		run    func() error
	}
	steps := []step{
		{AnalysisOverview, "", func() (err error) { b.Overview, err = buildOverview(ctx, s, b.Runs); return }},
		{AnalysisStates, when(rec["state"] > 0, "the trace has no state records"), func() error { return buildStates(ctx, s, b, opts) }},
		{AnalysisOccupancy, when(rec["state"] > 0, "the trace has no state records"), func() error {
			res, err := engine.Run(ctx, s, []engine.Request{occupancyRequest(h)})
			if err != nil {
				return err
			}
			b.Occupancy = res.Envelopes[0]
			return nil
		}},
		{AnalysisMEntropy, when(rec["event"] > 0, "the trace has no event records"), func() (err error) { b.MEntropy, err = buildMEntropy(ctx, s, opts); return }},
		{AnalysisComm, when(rec["send"]+rec["collective"] > 0 || len(h.Regions) > 0, "the trace has neither messages nor regions"),
			func() (err error) { b.Comm, err = buildComm(ctx, s, opts); return }},
		{AnalysisPhases, when(m.Stats.BBVIntervals > 0 || rec["bbv"] > 0, "the trace has no basic block vectors"),
			func() (err error) { b.Phases, err = buildPhases(ctx, s); return }},
	}
	total := 0
	for _, st := range steps {
		if st.reason == "" {
			total++
		}
	}
	report := func(name string) {
		if opts.Progress != nil {
			opts.Progress(name, len(b.Ran), total)
		}
	}
	for _, st := range steps {
		if st.reason != "" {
			b.Skipped[st.name] = st.reason
			continue
		}
		report(st.name)
		start := time.Now()
		if err := st.run(); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", s.Dir(), st.name, err)
		}
		b.Seconds[st.name] = time.Since(start).Seconds()
		b.Ran = append(b.Ran, st.name)
	}
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

// when returns "" when ok, else why.
func when(ok bool, why string) string {
	if ok {
		return ""
	}
	return why
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
