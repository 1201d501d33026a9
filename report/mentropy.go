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
	open := func() trace.Reader { return s.Records(store.ReadOptions{Kinds: []trace.Kind{trace.KindEvent}}) }
	// The events of each process are summed into at most opts.MaxPoints
	// buckets of consecutive events as they stream by (mentropy.EachStep):
	// nothing is kept per event.
	type bucket struct {
		p        *MEntropyProc
		b, hi, n int // current bucket, its end, buckets in all
		mx, sum  float64
		lo       int
	}
	procs := map[*mentropy.Stream]*bucket{}
	streams, err := mentropy.EachStep(ctx, s.Header(), open, mentropy.OfEvents, c, mentropy.ProbSpec{}, func(ps *mentropy.Stream, i int, t int64, st mentropy.Step) error {
		bk := procs[ps]
		if bk == nil {
			n := ps.Events
			bk = &bucket{p: &MEntropyProc{Run: ps.Run, Proc: ps.Proc, Events: n, Alphabet: ps.Alphabet.Names()}, n: min(n, opts.MaxPoints), hi: -1}
			procs[ps] = bk
		}
		if bk.hi < 0 || i == bk.hi {
			// A bucket begins: events lo..hi-1 of b = 0..n-1.
			if bk.hi >= 0 {
				bk.b++
			}
			bk.lo, bk.hi = bk.b*ps.Events/bk.n, (bk.b+1)*ps.Events/bk.n
			bk.mx, bk.sum = st.H, 0
			bk.p.Index = append(bk.p.Index, bk.lo)
			bk.p.T = append(bk.p.T, t)
		}
		bk.mx = max(bk.mx, st.H)
		bk.sum += st.H
		if i == bk.hi-1 {
			bk.p.Max = append(bk.p.Max, bk.mx)
			bk.p.Mean = append(bk.p.Mean, bk.sum/float64(bk.hi-bk.lo))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Procs is [] and not null when every event is one the stream leaves
	// out (only parscope.dropped events).
	me := &MEntropy{Window: c.Window, K: c.K, Variant: string(c.Variant), Procs: make([]MEntropyProc, 0, len(streams))}
	for _, ps := range streams {
		me.Procs = append(me.Procs, *procs[ps].p)
	}
	return me, nil
}
