package report

import (
	"context"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// MEntropyWindow is W, the window of the modified entropy.
const MEntropyWindow = 4

// mentropyAlpha and mentropyBeta are Table 4 of Özmen 2002 (W = 4, variant
// R), the defaults of `parscope mentropy` (docs/paper-oracles.md 1.3).
var (
	mentropyAlpha = []float64{0.5, 0.7, 0.8, 0.9, 0.99}
	mentropyBeta  = []float64{0.5, 0.3, 0.2, 0.1, 0.01}
)

// MEntropy is Özmen's modified entropy of each process's event stream
// (Özmen 2002), with uniform event probabilities.
type MEntropy struct {
	Window  int            `json:"window"`
	K       float64        `json:"k"`
	Variant string         `json:"variant"`
	Procs   []MEntropyProc `json:"procs"`
}

// MEntropyProc is one process's series. When the process has more events
// than Options.MaxPoints, each point stands for a bucket of consecutive
// events and carries the largest H of the bucket (peaks are what the
// series is read for) and its mean.
type MEntropyProc struct {
	Run      int32    `json:"run"`
	Proc     int32    `json:"proc"`
	Events   int      `json:"events"`
	Alphabet []string `json:"alphabet"`
	// Index is the first event of each point, T its time (ns).
	Index []int     `json:"index"`
	T     []int64   `json:"t_ns"`
	Max   []float64 `json:"h_max"`
	Mean  []float64 `json:"h_mean"`
}

func buildMEntropy(ctx context.Context, s *store.Store, opts Options) (*MEntropy, error) {
	c := mentropy.Config{Window: MEntropyWindow, K: 1, Alpha: mentropyAlpha, Beta: mentropyBeta, Variant: mentropy.VariantR}
	series, err := mentropy.FromTrace(ctx, s.Header(), s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindEvent}}),
		mentropy.OfEvents, c, mentropy.ProbSpec{})
	if err != nil {
		return nil, err
	}
	me := &MEntropy{Window: c.Window, K: c.K, Variant: string(c.Variant)}
	for _, ps := range series {
		n := len(ps.Steps)
		p := MEntropyProc{Run: ps.Run, Proc: ps.Proc, Events: n, Alphabet: ps.Alphabet.Names()}
		buckets := min(n, opts.MaxPoints)
		for b := range buckets {
			lo, hi := b*n/buckets, (b+1)*n/buckets
			mx, sum := ps.Steps[lo].H, 0.0
			for _, st := range ps.Steps[lo:hi] {
				mx = max(mx, st.H)
				sum += st.H
			}
			p.Index = append(p.Index, lo)
			p.T = append(p.T, ps.T[lo])
			p.Max = append(p.Max, mx)
			p.Mean = append(p.Mean, sum/float64(hi-lo))
		}
		me.Procs = append(me.Procs, p)
	}
	return me, nil
}
