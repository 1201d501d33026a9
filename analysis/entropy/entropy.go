// Package entropy measures how disordered a parallel execution is, from its
// reconstructed parallel states (package state), as Gomez, Cai & Schubert (2017)
// define it, with the exact definitions of docs/paper-oracles.md section 3.
//
// A state of P processes among N blocks belongs to the class given by how
// many processes are in each block (b_1..b_N); states that are permutations
// of each other are equivalent. Its combinatorial probability is
//
//	p = P! / (N^P · Π_k b_k!)
//
// computed in logarithms with log-gamma, never with integer factorials
// (21! and 13^18 overflow 64 bits; the paper's 32-process tables appear to
// have). Entropies are in bits.
//
// Processes that do not exist at a state's time (state.Absent: before
// their first record, after a goroutine ended) are in no block and are
// not among its P: the class of a state is the multiset of the blocks of
// the processes present, and P in p and in the histogram entropy is their
// number (docs/entropy.md, "Processes that come and go").
package entropy

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/parscope/parscope/analysis/state"
)

// LnMultiplicity returns ln W = lnΓ(P+1) − Σ_k lnΓ(b_k+1) for block counts
// b (P = Σ b): the log of the number of ordered states in the class.
func LnMultiplicity(b []int) float64 {
	p := 0
	s := 0.0
	for _, c := range b {
		p += c
		s += lgamma(float64(c) + 1)
	}
	return lgamma(float64(p)+1) - s
}

// LnProb returns ln p = ln W − P ln N for block counts b among n blocks.
func LnProb(b []int, n int) float64 {
	p := 0
	for _, c := range b {
		p += c
	}
	return LnMultiplicity(b) - float64(p)*math.Log(float64(n))
}

// ClassEntropy returns H_class(P, N) = −Σ_classes p log2 p in bits: the
// entropy of the class of a state drawn uniformly from the N^P ordered
// states, the maximum any measure over classes can reach. It uses the
// closed form −(ln P! − P ln N − N·E[ln b!]) / ln 2 with b ~ Bin(P, 1/N).
func ClassEntropy(p, n int) float64 {
	if p <= 0 || n <= 1 {
		return 0
	}
	// E[ln b!] for b ~ Bin(P, 1/N), summed in logs.
	q := 1 / float64(n)
	lq, l1q := math.Log(q), math.Log1p(-q)
	e := 0.0
	lnP := lgamma(float64(p) + 1)
	for b := 0; b <= p; b++ {
		lnBinom := lnP - lgamma(float64(b)+1) - lgamma(float64(p-b)+1)
		w := math.Exp(lnBinom + float64(b)*lq + float64(p-b)*l1q)
		e += w * lgamma(float64(b)+1)
	}
	h := -(lnP - float64(p)*math.Log(float64(n)) - float64(n)*e) / math.Ln2
	return max(h, 0)
}

// Options configure the measures.
type Options struct {
	// Blocks is N, the number of blocks of the code (the side of the phase
	// space hypercube). 0 means the number the tracker has seen.
	Blocks int
	// TimeWeighted weights each state by its duration instead of 1.
	TimeWeighted bool
}

// Accumulator collects the measures over a stream of states of one run (or
// of runs with the same number of processes). It is a reduction: Add rows,
// Merge accumulators of other shards, take the Result.
type Accumulator struct {
	opts Options
	p    int
	n    int // largest N seen when Options.Blocks is 0

	rows    int64
	weight  float64
	histSum float64 // Σ w h_t
	// classes maps a class hash to its ln W and accumulated weight.
	classes map[uint64]classStat
}

type classStat struct {
	lnW    float64
	weight float64
	procs  int // the processes present in the class's states
}

// NewAccumulator returns an empty accumulator.
func NewAccumulator(opts Options) *Accumulator {
	return &Accumulator{opts: opts, classes: map[uint64]classStat{}}
}

func (a *Accumulator) blocks(t *state.Tracker) int {
	if a.opts.Blocks > 0 {
		return a.opts.Blocks
	}
	return max(len(t.Counts), 1)
}

// Add adds one state row.
func (a *Accumulator) Add(r *state.Row) error {
	if a.rows == 0 && a.p == 0 {
		a.p = r.P()
	} else if r.P() != a.p {
		return fmt.Errorf("entropy: a state of %d processes among states of %d", r.P(), a.p)
	}
	n := a.blocks(r.Tracker)
	if a.opts.Blocks == 0 && n > a.n {
		a.n = n
	}
	w := 1.0
	if a.opts.TimeWeighted {
		w = float64(r.Dur)
	}
	lnW := r.LnMultiplicity()
	a.rows++
	a.weight += w
	a.histSum += w * r.HistogramEntropy()
	cs := a.classes[r.ClassHash()]
	cs.lnW = lnW
	cs.weight += w
	cs.procs = r.Present()
	a.classes[r.ClassHash()] = cs
	return nil
}

// Merge adds the states of another accumulator with the same options.
func (a *Accumulator) Merge(b *Accumulator) error {
	if b.rows == 0 {
		return nil
	}
	if a.rows > 0 && a.p != b.p {
		return fmt.Errorf("entropy: merging states of %d processes into states of %d", b.p, a.p)
	}
	a.p = b.p
	a.n = max(a.n, b.n)
	a.rows += b.rows
	a.weight += b.weight
	a.histSum += b.histSum
	for k, v := range b.classes {
		cs := a.classes[k]
		cs.lnW = v.lnW
		cs.weight += v.weight
		cs.procs = v.procs
		a.classes[k] = cs
	}
	return nil
}

// Result holds every measure of docs/paper-oracles.md section 3.3, in bits.
type Result struct {
	Units string `json:"units"`
	// P and N are the processes and blocks of the phase space. A state's
	// probability counts only the processes present in it (at most P).
	P int `json:"procs"`
	N int `json:"blocks"`
	// Rows is the number of states; Weight their total weight (rows, or
	// ns when time-weighted).
	Rows   int64   `json:"rows"`
	Weight float64 `json:"weight"`
	// CombEntropy is −Σ_rows w p log2 p; SignedCombEntropy = −CombEntropy,
	// the sign the paper prints in its Tables 4 and 5.
	CombEntropy       float64 `json:"comb_entropy"`
	SignedCombEntropy float64 `json:"signed_comb_entropy"`
	// CombEntropyDistinct is −Σ over distinct observed classes of p log2 p,
	// DistinctClasses their number and DistinctFraction the ratio to
	// ClassEntropyMax.
	CombEntropyDistinct       float64 `json:"comb_entropy_distinct"`
	SignedCombEntropyDistinct float64 `json:"signed_comb_entropy_distinct"`
	DistinctClasses           int     `json:"distinct_classes"`
	DistinctFraction          float64 `json:"distinct_fraction"`
	// SurprisalTotal is −Σ w log2 p; SurprisalMean its weighted mean.
	SurprisalTotal float64 `json:"surprisal_total"`
	SurprisalMean  float64 `json:"surprisal_mean"`
	// HistogramEntropyMean is the weighted mean over states of
	// −Σ_k (b_k/P) log2 (b_k/P).
	HistogramEntropyMean float64 `json:"histogram_entropy_mean"`
	// EmpiricalEntropy is −Σ_c f_c log2 f_c over the observed frequencies
	// f_c of the classes (weighted).
	EmpiricalEntropy float64 `json:"empirical_entropy"`
	// ClassEntropyMax is H_class(P, N), over the P processes of the run.
	ClassEntropyMax float64 `json:"class_entropy_max"`
}

// Result computes the measures. N is Options.Blocks, or the largest
// number of blocks the states used.
func (a *Accumulator) Result() Result {
	n := a.opts.Blocks
	if n == 0 {
		n = max(a.n, 1)
	}
	r := Result{Units: "bits", P: a.p, N: n, Rows: a.rows, Weight: a.weight, DistinctClasses: len(a.classes)}
	if a.rows == 0 {
		return r
	}
	// Every row measure is a sum over classes (the rows of a class share
	// its p); classes are visited in key order so that sums are reproducible.
	type entry struct {
		key uint64
		classStat
	}
	entries := make([]entry, 0, len(a.classes))
	for k, c := range a.classes {
		entries = append(entries, entry{k, c})
	}
	slices.SortFunc(entries, func(x, y entry) int { return cmp.Compare(x.key, y.key) })
	lnN := math.Log(float64(n))
	for _, c := range entries {
		lp := (c.lnW - float64(c.procs)*lnN) / math.Ln2
		pl := math.Exp2(lp) * lp
		r.CombEntropy -= c.weight * pl
		r.SurprisalTotal -= c.weight * lp
		r.CombEntropyDistinct -= pl
		if a.weight > 0 && c.weight > 0 {
			f := c.weight / a.weight
			r.EmpiricalEntropy -= f * math.Log2(f)
		}
	}
	r.SignedCombEntropy = -r.CombEntropy
	r.SignedCombEntropyDistinct = -r.CombEntropyDistinct
	if a.weight > 0 {
		r.SurprisalMean = r.SurprisalTotal / a.weight
		r.HistogramEntropyMean = a.histSum / a.weight
	}
	r.ClassEntropyMax = ClassEntropy(a.p, n)
	if r.ClassEntropyMax > 0 {
		r.DistinctFraction = r.CombEntropyDistinct / r.ClassEntropyMax
	}
	r.EmpiricalEntropy = max(r.EmpiricalEntropy, 0)
	return r
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}
