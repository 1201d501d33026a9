package engine

import (
	"context"
	"encoding"
	"fmt"
	"slices"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// Running an analysis in parts. A face that spreads an analysis over
// machines (parscope-beam) cuts the trace into parts (Restrict: some runs,
// or some processes of a run), feeds each part to an accumulator of its
// own (Prepared.Feed), sends the accumulators to one machine (Portable),
// merges them there in the order of their parts (Accumulator.Merge) and
// ends as Run ends: Again for an accumulator that asks for another pass
// over every part, then Result and the envelope (Prepared.Envelope). The
// analysis is the one Run runs; only where its records are read differs.

// Portable is implemented by the accumulators that can travel between
// machines. MarshalBinary encodes what the accumulator holds;
// UnmarshalBinary, called on an accumulator just made by New for the same
// trace and options, gives it that state, so that it merges, repeats and
// ends as the encoded one would. MarshalBinary may end what the
// accumulator holds (the runs of an analysis that merges whole runs, the
// processes of one that merges whole processes): each analysis says what
// a decoded accumulator still takes.
type Portable interface {
	Accumulator
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Prepared is a request resolved over a whole trace, to be run in parts:
// its analysis, its options (the defaults filled in), the Trace its
// accumulators are made for, and where its states come from.
type Prepared struct {
	Request  Request
	Analysis *Analysis
	Options  any
	// Trace is what every part's accumulator is made for: the whole
	// trace's name, header and figures, with the derived states'
	// dictionary when the states are derived from regions.
	Trace *Trace
	// from is the source of states of the run (as Run resolves it: ""
	// when the analysis reads none); used the regions the trace enters,
	// read once for the dictionary of states derived from them.
	from StatesFrom
	used map[int32]bool
	job  *job
}

// Prepare resolves req over src, the whole trace, as Run would: it refuses
// what Run refuses before reading a record (an unknown analysis, options of
// another type, a trace without the records the analysis needs, options
// its accumulator refuses). With states derived from regions it reads the
// trace's region entries once, for the dictionary.
func Prepare(src Source, req Request) (*Prepared, error) {
	src, from, err := statesSource(src, []Request{req})
	if err != nil {
		return nil, err
	}
	t := TraceOf(src)
	a, opts, err := resolve(t, req)
	if err != nil {
		return nil, err
	}
	p := &Prepared{Request: req, Analysis: a, Options: opts, Trace: t, from: from}
	if d, ok := src.(*derivedSource); ok {
		p.used = d.used
	}
	if _, err := p.New(); err != nil {
		return nil, err
	}
	p.job = newJob(a, opts, req, nil, from)
	return p, nil
}

// New returns a new accumulator of the prepared request.
func (p *Prepared) New() (Accumulator, error) {
	acc, err := p.Analysis.New(p.Trace, p.Options)
	if err != nil {
		return nil, analysisError(p.Trace.Name, p.Analysis.Name, err)
	}
	return acc, nil
}

// Feed gives acc, an accumulator of p, one pass over part, a part of the
// trace (Restrict) or the whole of it, as Run feeds the request's
// accumulator: the kinds, runs and processes of the request, states
// derived from the part's regions with the whole trace's dictionary
// (made once, by Prepare). It neither asks acc for another pass nor takes
// its result: the caller does, on acc or on the merge of the parts'
// accumulators.
func (p *Prepared) Feed(ctx context.Context, part Source, acc Accumulator) error {
	src := part
	if p.from == StatesRegions || p.from == StatesMPI {
		var err error
		if src, _, err = withStates(part, p.from, p.used); err != nil {
			return err
		}
	}
	fed, err := group([]*job{newJob(p.Analysis, p.Options, p.Request, acc, p.from)})
	if err != nil {
		return fmt.Errorf("%s: %w", p.Trace.Name, err)
	}
	if err := pass(ctx, src, fed); err != nil {
		return err
	}
	for _, j := range fed {
		if j.stage != nil {
			if err := j.stage.End(); err != nil {
				return analysisError(p.Trace.Name, p.Analysis.Name, err)
			}
		}
	}
	return nil
}

// Again asks acc, an accumulator of p, whether it needs another pass (its
// error named as Run names it); an accumulator that is no Repeater needs
// none.
func (p *Prepared) Again(acc Accumulator) (bool, error) {
	r, ok := acc.(Repeater)
	if !ok {
		return false, nil
	}
	again, err := r.Again()
	if err != nil {
		return false, analysisError(p.Trace.Name, p.Analysis.Name, err)
	}
	return again, nil
}

// Result ends acc, an accumulator of p, and returns the envelope of its
// result, as Run does.
func (p *Prepared) Result(acc Accumulator) (*Envelope, error) {
	v, err := acc.Result()
	if err != nil {
		return nil, analysisError(p.Trace.Name, p.Analysis.Name, err)
	}
	return p.job.envelope(p.Trace, p.Request, p.from, v), nil
}

// Error names the trace and the analysis in err, as Run does.
func (p *Prepared) Error(err error) error {
	return analysisError(p.Trace.Name, p.Analysis.Name, err)
}

// Restrict returns the part of src that holds the runs runs and the
// processes procs (nil: every one) of it: its records, basic block vectors
// and process spans are those of src in the part. It is a Part, whose
// states derived from regions (WithStates) are numbered as the whole
// trace's, and its Manifest is the whole trace's.
func Restrict(src Source, runs, procs []int32) Source {
	r := &restricted{src: src, runs: runs, procs: procs}
	if _, ok := src.(Spanner); ok {
		return spannedPart{r}
	}
	return r
}

type restricted struct {
	src         Source
	runs, procs []int32
}

// intersect returns the ids both a and b select, nil standing for every
// id; an empty, not nil, result selects none.
func intersect(a, b []int32) []int32 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := []int32{}
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func (r *restricted) Dir() string               { return r.src.Dir() }
func (r *restricted) Manifest() *store.Manifest { return r.src.Manifest() }
func (r *restricted) Whole() Source {
	if p, ok := r.src.(Part); ok {
		return p.Whole()
	}
	return r.src
}

func (r *restricted) Records(o store.ReadOptions) trace.Reader {
	o.Runs, o.Procs = intersect(o.Runs, r.runs), intersect(o.Procs, r.procs)
	return r.src.Records(o)
}

func (r *restricted) BBV(o store.ReadOptions) trace.Reader {
	o.Runs, o.Procs = intersect(o.Runs, r.runs), intersect(o.Procs, r.procs)
	return r.src.BBV(o)
}

// spannedPart is the part of a Spanner, a Spanner too.
type spannedPart struct{ *restricted }

// ProcSpans implements Spanner: the spans of the part's processes.
func (r spannedPart) ProcSpans() []store.ProcSpan {
	var out []store.ProcSpan
	for _, sp := range r.src.(Spanner).ProcSpans() {
		if (r.runs == nil || slices.Contains(r.runs, sp.Run)) && (r.procs == nil || slices.Contains(r.procs, sp.Proc)) {
			out = append(out, sp)
		}
	}
	return out
}
