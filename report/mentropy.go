package report

import (
	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/engine"
)

// mentropyRequest asks for the modified entropy of every process's named
// events with the defaults (Özmen's Table 4, uniform probabilities), each
// process's series summed into at most opts.MaxPoints points.
func mentropyRequest(opts Options) engine.Request {
	p := mentropy.DefaultParams()
	p.MaxPoints = opts.MaxPoints
	return engine.Request{Analysis: mentropy.Name, Options: p}
}

// MEntropyResult returns the result of the mentropy section, or false
// when there is none.
func (b *Bundle) MEntropyResult() (*mentropy.Result, bool) {
	if b.MEntropy == nil {
		return nil, false
	}
	r, ok := b.MEntropy.Result.(*mentropy.Result)
	return r, ok
}
