package report

import (
	"github.com/parscope/parscope/analysis/counters"
	"github.com/parscope/parscope/analysis/critpath"
	"github.com/parscope/parscope/analysis/pop"
	"github.com/parscope/parscope/analysis/profile"
	"github.com/parscope/parscope/analysis/waitstate"
	"github.com/parscope/parscope/engine"
)

// profileRequest asks for the profile of every run with the defaults
// (regions when the trace has them, else states; the first
// profile.DefaultTop rows by exclusive time; a call tree of at most
// profile.DefaultMaxNodes nodes, which the app draws as an icicle).
func profileRequest() engine.Request {
	return engine.Request{Analysis: profile.Name, Options: profile.DefaultParams()}
}

// popRequest asks for the POP efficiencies of every run with the
// defaults (time in regions or states named like MPI is not useful).
func popRequest() engine.Request {
	return engine.Request{Analysis: pop.Name, Options: pop.DefaultParams()}
}

// waitstatesRequest asks for the wait states of every run with the
// defaults (the waitstate.DefaultTop call sites of the largest wait).
func waitstatesRequest() engine.Request {
	return engine.Request{Analysis: waitstate.Name, Options: waitstate.DefaultParams()}
}

// critpathRequest asks for the critical path of every run with the
// defaults (the critpath.DefaultTop regions of the longest time on the
// path, the first critpath.DefaultSegments segments).
func critpathRequest() engine.Request {
	return engine.Request{Analysis: critpath.Name, Options: critpath.DefaultParams()}
}

// notApplicable says why an analysis the trace has the records of still
// cannot run with the report's options, or "" when it can: pop needs a
// region (or state) named like an MPI call, to tell useful time from
// the rest, which a trace of states of its own (such as amoeba's) lacks.
func notApplicable(t *engine.Trace, req engine.Request) string {
	if req.Analysis != pop.Name {
		return ""
	}
	if _, err := pop.New(t, req.Options.(*pop.Params)); err != nil {
		return err.Error()
	}
	return ""
}

// ProfileResult returns the result of the profile section, or false when
// there is none.
func (b *Bundle) ProfileResult() (*profile.Result, bool) {
	if b.Profile == nil {
		return nil, false
	}
	r, ok := b.Profile.Result.(*profile.Result)
	return r, ok
}

// POPResult returns the result of the pop section, or false when there
// is none.
func (b *Bundle) POPResult() (*pop.Result, bool) {
	if b.POP == nil {
		return nil, false
	}
	r, ok := b.POP.Result.(*pop.Result)
	return r, ok
}

// WaitStatesResult returns the result of the waitstates section, or
// false when there is none.
func (b *Bundle) WaitStatesResult() (*waitstate.Result, bool) {
	if b.WaitStates == nil {
		return nil, false
	}
	r, ok := b.WaitStates.Result.(*waitstate.Result)
	return r, ok
}

// CritPathResult returns the result of the critpath section, or false
// when there is none.
func (b *Bundle) CritPathResult() (*critpath.Result, bool) {
	if b.CritPath == nil {
		return nil, false
	}
	r, ok := b.CritPath.Result.(*critpath.Result)
	return r, ok
}

// CountersResult returns the result of the counters section, or false
// when there is none.
func (b *Bundle) CountersResult() (*counters.Result, bool) {
	if b.Counters == nil {
		return nil, false
	}
	r, ok := b.Counters.Result.(*counters.Result)
	return r, ok
}
