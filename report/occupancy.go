package report

import (
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// OccupancyTableRows bounds the occupancy table rows kept per run (those
// of the largest occupancy).
const OccupancyTableRows = 200

// OccupancyParams are the options the report runs the occupancy analysis
// with: every state a mode, processes in the trace's default start state
// (the one the state analyses use) before their first state, the
// OccupancyTableRows largest rows, and the default windows.
func OccupancyParams(h *trace.Header) *occupancy.Params {
	p := occupancy.DefaultParams()
	p.Top = OccupancyTableRows
	modes := occupancy.StateModes(h)
	if k, ok := modes.Mode(state.DefaultStart(h)); ok {
		p.Start = modes.Names[k]
	}
	return p
}

// occupancyRequest is the engine request of the report's occupancy section.
func occupancyRequest(h *trace.Header) engine.Request {
	return engine.Request{Analysis: occupancy.Name, Options: OccupancyParams(h)}
}
