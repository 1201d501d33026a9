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
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/parscope/parscope/analysis/state"
	"github.com/parscope/parscope/internal/spill"
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
	// Budget bounds the memory (bytes) of the table of distinct classes:
	// past it, the table is written, sorted by class, to a temporary file
	// in os.TempDir() and merged back at Result (package spill). 0 means
	// DefaultBudget.
	Budget int64
}

// DefaultBudget is the default of Options.Budget.
const DefaultBudget = 16 << 20

// classCost is what a class costs in the accumulator's map: its key and
// classStat, and the map's overhead.
const classCost = 64

// Accumulator collects the measures over a stream of states of one run (or
// of runs with the same number of processes). It is a reduction: Add rows,
// Merge accumulators of other shards, take the Result, and Close.
//
// Its memory is bounded by Options.Budget: the classes past it are
// spilled, sorted, to temporary files, and merged back by class at Result,
// which visits the classes in the same order (by class hash) either way,
// so that the measures do not depend on the budget.
type Accumulator struct {
	opts Options
	p    int
	n    int // largest N seen when Options.Blocks is 0

	rows    int64
	weight  float64
	histSum float64 // Σ w h_t
	// classes maps a class hash to its ln W and accumulated weight.
	classes map[uint64]classStat
	// runs holds the classes spilled (nil before the first spill).
	runs *spill.Runs
	keys []uint64
	kbuf []byte
	vbuf []byte
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

// maxClasses is the number of classes the budget holds in memory.
func (a *Accumulator) maxClasses() int {
	b := a.opts.Budget
	if b <= 0 {
		b = DefaultBudget
	}
	return int(max(b/classCost, 4))
}

// addClass adds a class's weight, spilling the classes past the budget.
func (a *Accumulator) addClass(k uint64, lnW, w float64, procs int) error {
	cs, ok := a.classes[k]
	cs.lnW = lnW
	cs.weight += w
	cs.procs = procs
	a.classes[k] = cs
	if !ok && len(a.classes) > a.maxClasses() {
		return a.spill()
	}
	return nil
}

// spill writes the classes in memory, sorted by hash, as a run and clears
// the map.
func (a *Accumulator) spill() error {
	if a.runs == nil {
		a.runs = spill.New("entropy", combineClass)
	}
	a.keys = a.keys[:0]
	for k := range a.classes {
		a.keys = append(a.keys, k)
	}
	slices.Sort(a.keys)
	w, err := a.runs.Create()
	if err != nil {
		return err
	}
	for _, k := range a.keys {
		a.kbuf = binary.BigEndian.AppendUint64(a.kbuf[:0], k)
		if err := w.Add(a.kbuf, a.encode(a.classes[k])); err != nil {
			w.Abort()
			return err
		}
	}
	clear(a.classes)
	return w.Close()
}

// encode encodes a class as a run's value: ln W and the weight as float64
// bits, then the processes.
func (a *Accumulator) encode(c classStat) []byte {
	b := binary.BigEndian.AppendUint64(a.vbuf[:0], math.Float64bits(c.lnW))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(c.weight))
	a.vbuf = binary.AppendUvarint(b, uint64(c.procs))
	return a.vbuf
}

func decodeClass(v []byte) classStat {
	procs, _ := binary.Uvarint(v[16:])
	return classStat{lnW: math.Float64frombits(binary.BigEndian.Uint64(v)),
		weight: math.Float64frombits(binary.BigEndian.Uint64(v[8:])), procs: int(procs)}
}

// combineClass adds the weight of a class in a later run to its weight,
// and takes the later run's ln W and processes, as Add does: the ln W of
// a state is kept up to date by the tracker, and may differ in its last
// bits from one state of the class to another.
func combineClass(dst, src []byte) []byte {
	w := math.Float64frombits(binary.BigEndian.Uint64(dst[8:])) + math.Float64frombits(binary.BigEndian.Uint64(src[8:]))
	dst = append(dst[:0], src...)
	binary.BigEndian.PutUint64(dst[8:], math.Float64bits(w))
	return dst
}

// each calls fn with every class (its hash and figures) in order of hash,
// and returns how many there are. With spilled runs, the classes in
// memory are spilled first.
func (a *Accumulator) each(fn func(k uint64, c classStat)) (int, error) {
	if a.runs == nil {
		a.keys = a.keys[:0]
		for k := range a.classes {
			a.keys = append(a.keys, k)
		}
		slices.Sort(a.keys)
		for _, k := range a.keys {
			fn(k, a.classes[k])
		}
		return len(a.keys), nil
	}
	if len(a.classes) > 0 {
		if err := a.spill(); err != nil {
			return 0, err
		}
	}
	n := 0
	err := a.runs.Merge(func(key, val []byte) error {
		n++
		fn(binary.BigEndian.Uint64(key), decodeClass(val))
		return nil
	})
	return n, err
}

// spillAll writes every class in memory to a run, so that a Merge of the
// accumulator into another moves its runs without copying its map.
func (a *Accumulator) spillAll() error {
	if len(a.classes) == 0 {
		return nil
	}
	return a.spill()
}

// Close removes the temporary files of the classes spilled. The
// accumulator is empty afterwards.
func (a *Accumulator) Close() error {
	clear(a.classes)
	if a.runs == nil {
		return nil
	}
	return a.runs.Close()
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
	return a.addClass(r.ClassHash(), lnW, w, r.Present())
}

// Merge adds the states of another accumulator with the same options,
// which follow a's. The spilled classes of b move to a; b must not be
// used afterwards.
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
	// The runs stay in the order of the states, so that the later ln W
	// of a class is kept: a's classes in memory go to a run before b's
	// runs, and b's classes in memory come last.
	if b.runs != nil {
		if err := a.spillAll(); err != nil {
			return err
		}
		if a.runs == nil {
			a.runs = spill.New("entropy", combineClass)
		}
		if err := a.runs.Take(b.runs); err != nil {
			return err
		}
	}
	for k, v := range b.classes {
		if err := a.addClass(k, v.lnW, v.weight, v.procs); err != nil {
			return err
		}
	}
	clear(b.classes)
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
// number of blocks the states used. The accumulator keeps its classes (a
// Merge into another accumulator may follow); Close lets them go.
func (a *Accumulator) Result() (Result, error) {
	n := a.opts.Blocks
	if n == 0 {
		n = max(a.n, 1)
	}
	r := Result{Units: "bits", P: a.p, N: n, Rows: a.rows, Weight: a.weight}
	// Every row measure is a sum over classes (the rows of a class share
	// its p); classes are visited in key order so that sums are
	// reproducible, and the same whether they were spilled or not.
	lnN := math.Log(float64(n))
	distinct, err := a.each(func(_ uint64, c classStat) {
		lp := (c.lnW - float64(c.procs)*lnN) / math.Ln2
		pl := math.Exp2(lp) * lp
		r.CombEntropy -= c.weight * pl
		r.SurprisalTotal -= c.weight * lp
		r.CombEntropyDistinct -= pl
		if a.weight > 0 && c.weight > 0 {
			f := c.weight / a.weight
			r.EmpiricalEntropy -= f * math.Log2(f)
		}
	})
	if err != nil {
		return Result{}, err
	}
	r.DistinctClasses = distinct
	if a.rows == 0 {
		return r, nil
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
	return r, nil
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}
