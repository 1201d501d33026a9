package report

import (
	"github.com/parscope/parscope/analysis/comm"
	"github.com/parscope/parscope/engine"
)

// CommMaxSide is the largest side of a matrix in the bundle: larger
// matrices are summed into blocks of adjacent processes.
const CommMaxSide = comm.DefaultMaxSide

// Comm is the comm analysis' envelope (its result a *comm.Report: the
// communication per code structure of every run, Jones et al. 2007, with
// collectives decomposed linearly) and the source files its regions name.
type Comm struct {
	*engine.Envelope
	// Sources holds the lines of the source files the regions name that
	// were found inside the source directories the user gave
	// (Options.SourceDirs), by the file name the trace gives.
	Sources map[string][]string `json:"sources,omitempty"`
}

// Report returns the comm analysis' result.
func (c *Comm) Report() *comm.Report { return c.Result.(*comm.Report) }

// commRequest asks for the communication of every run with the defaults
// (linear decomposition, working sets, matrices of at most CommMaxSide).
func commRequest() engine.Request {
	p := comm.DefaultParams()
	p.MaxSide = CommMaxSide
	return engine.Request{Analysis: comm.Name, Options: p}
}
