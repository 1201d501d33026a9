package report

import (
	"github.com/parscope/parscope/analysis/occupancy"
	"github.com/parscope/parscope/engine"
)

// OccupancyTableRows bounds the occupancy table rows kept per run (those
// of the largest occupancy).
const OccupancyTableRows = 200

// OccupancyParams are the options the report runs the occupancy analysis
// with: every state a mode, processes in no mode before their first state
// record (they do not exist yet, as in the state analyses), the
// OccupancyTableRows largest rows, and the default windows.
func OccupancyParams() *occupancy.Params {
	p := occupancy.DefaultParams()
	p.Top = OccupancyTableRows
	return p
}

// occupancyRequest is the engine request of the report's occupancy section.
func occupancyRequest() engine.Request {
	return engine.Request{Analysis: occupancy.Name, Options: OccupancyParams()}
}
