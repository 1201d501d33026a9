// Package phase finds the phases of a program from its basic block
// vectors, the way SimPoint does: it projects every interval's normalised
// vector to a few random dimensions, clusters the intervals with k-means
// for several k, picks k by the Bayesian information criterion, and
// reports per phase a weight and a representative interval (a
// "simulation point").
//
// Two modes share the pipeline:
//
//   - Compat reproduces SimPoint 3.2 bit for bit (docs/simpoint-3.2.md): its
//     ran2 generator, its random projection, its seed schedule, its k-means
//     with every quirk (sampling with replacement, empty clusters that
//     become the zero vector, the iteration-limit off-by-one), its BIC and
//     its k search. Given the same options it chooses the same k, the same
//     simulation points, weights and labels, and WriteSimpoints,
//     WriteWeights and WriteLabels print the same bytes.
//   - Default is a modern k-means on the same projection: k-means++
//     seeding, restarts run in parallel, Lloyd iterations pruned by
//     Hamerly's bounds, empty clusters re-seeded by splitting the widest
//     cluster, convergence on a tolerance, and Hartigan's moves to refine
//     the chosen clustering. It keeps SimPoint's BIC and k rule, with a
//     phase-size guard (Options.MinPhaseSize) so that k is not chosen for
//     isolating stray intervals, and is deterministic for a seed whatever
//     the number of goroutines.
//
// Run takes a *bbv.File (see format/bbv; parse it with SimPointQuirks for
// SimPoint's view of a file) and Options, and returns a Result that
// marshals to JSON.
package phase

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Mode selects the clustering engine.
type Mode int

const (
	// Compat reproduces SimPoint 3.2 bit for bit.
	Compat Mode = iota
	// Default is k-means++ with restarts, re-seeded empty clusters and
	// tolerance-based convergence.
	Default
)

// String returns "compat" or "default".
func (m Mode) String() string {
	switch m {
	case Compat:
		return "compat"
	case Default:
		return "default"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// ParseMode is the inverse of Mode.String.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "compat", "simpoint":
		return Compat, nil
	case "default":
		return Default, nil
	}
	return 0, fmt.Errorf("phase: unknown mode %q (want compat or default)", s)
}

// InitMethod is how Compat mode picks the initial k-means centres
// (SimPoint's -initkm).
type InitMethod int

const (
	// InitSample draws k rows at random, with replacement (-initkm samp).
	InitSample InitMethod = iota
	// InitFurthestFirst draws one row at random, then repeatedly takes
	// the row furthest from the centres chosen so far (-initkm ff).
	InitFurthestFirst
)

// String returns "samp" or "ff", SimPoint's names.
func (m InitMethod) String() string {
	switch m {
	case InitSample:
		return "samp"
	case InitFurthestFirst:
		return "ff"
	}
	return fmt.Sprintf("init(%d)", int(m))
}

// ParseInitMethod is the inverse of InitMethod.String.
func ParseInitMethod(s string) (InitMethod, error) {
	switch s {
	case "samp":
		return InitSample, nil
	case "ff":
		return InitFurthestFirst, nil
	}
	return 0, fmt.Errorf("phase: unknown initialisation %q (want samp or ff)", s)
}

// NoProject as Options.Dim clusters the normalised vectors in their full
// dimension, without random projection (SimPoint's -dim noProject).
const NoProject = -1

// MaxClusters is the largest k Run accepts.
const MaxClusters = 1 << 20

// NoIterationLimit as Options.Iters lets k-means run until it converges
// (SimPoint's -iters off).
const NoIterationLimit = -1

// SimPoint 3.2's default options.
const (
	DefaultMaxK         = 30
	DefaultDim          = 15
	DefaultSeedKMeans   = 493575226
	DefaultSeedProj     = 2042712918
	DefaultNumInitSeeds = 5
	DefaultIters        = 100
	DefaultBICThreshold = 0.9
	DefaultTolerance    = 1e-9
	// DefaultMinPhaseSize is the smallest phase, in intervals, that
	// counts when Default mode chooses k (see Options.MinPhaseSize).
	DefaultMinPhaseSize = 2
)

// Options configure Run. Start from DefaultOptions: the zero value is not
// valid (MaxK, Dim, NumInitSeeds and CoveragePct must be set). The
// SimPoint option each field mirrors is given in brackets.
type Options struct {
	// Mode selects SimPoint 3.2 compatibility or the modern engine.
	Mode Mode
	// MaxK is the largest k of the binary search over 1..MaxK used when K
	// is empty [-maxK].
	MaxK int
	// K lists the k values to evaluate, in order, instead of searching
	// [-k LIST]; see ParseKList.
	K []int
	// Dim is the number of random projection dimensions, or NoProject [-dim].
	Dim int
	// SeedKMeans seeds k-means initialisation [-seedkm]. In Compat mode
	// trial t of the r-th clustering uses SeedKMeans + r·NumInitSeeds + 2t,
	// as SimPoint does (a seed of 1 is an error: SimPoint's generator is
	// undefined for it). In Default mode trial t of k draws from the PCG
	// stream (SeedKMeans + t, k), so a k's clustering does not depend on
	// the order of the search.
	SeedKMeans int64
	// SeedProj seeds the random projection matrix [-seedproj], in both
	// modes. Seeds must fit in 32 bits, and 1 is an error.
	SeedProj int64
	// NumInitSeeds is the number of k-means runs (restarts) per k; the
	// one with the best BIC is kept [-numInitSeeds].
	NumInitSeeds int
	// Iters limits k-means iterations; NoIterationLimit for none [-iters].
	// 0 runs no iteration at all: the initial centres are final, as with
	// SimPoint's -iters 0.
	Iters int
	// Init is Compat mode's initialisation [-initkm]. Default mode always
	// uses k-means++.
	Init InitMethod
	// VariableLength weighs each interval by its share of the total count
	// (instructions) instead of 1/n [-fixedLength off].
	VariableLength bool
	// BICThreshold picks the smallest evaluated k whose BIC is at least
	// min + BICThreshold·(max − min) over the evaluated k [-bicThreshold].
	BICThreshold float64
	// CoveragePct, when below 1, also selects the largest phases that
	// together cover this fraction of the weight (Result.Coverage) [-coveragePct].
	CoveragePct float64
	// Workers bounds the goroutines that run k-means restarts (0 means
	// GOMAXPROCS). Results do not depend on it.
	Workers int
	// Tolerance is Default mode's convergence test: k-means stops when an
	// iteration lowers the distortion by no more than Tolerance times its
	// value (or changes no label). 0 means DefaultTolerance.
	Tolerance float64
	// MinPhaseSize is Default mode's phase-size guard: when the k search
	// and the k rule compare the k, each k's best clustering is scored
	// (Evaluation.GuardedBIC) with its clusters of fewer than MinPhaseSize
	// intervals dissolved into the nearest larger one. SimPoint's BIC
	// (one variance for all clusters) rewards a better k-means for
	// isolating stray intervals, such as those that straddle two program
	// phases; with the guard such a k no longer wins for that, and the
	// phases reported are the best clustering of the chosen k as it is.
	// 1 turns the guard off; 0 means DefaultMinPhaseSize. Compat mode
	// ignores it, as SimPoint has no such guard.
	MinPhaseSize int
	// Progress, when not nil, is told how far the work has got, for a
	// progress line; it never changes the result. See ProgressFunc.
	Progress ProgressFunc
}

// ProgressFunc receives the progress of the phase engine: while the
// intervals are read, StageReading with the intervals read and the most
// there can be (0 when not known); then StageClustering with the k-means
// trials done and the most the k search can run (it may stop before).
// Calls come one at a time, every few hundred intervals or after each
// trial.
type ProgressFunc func(stage string, done, total int64)

// The stages a ProgressFunc is told of.
const (
	StageReading    = "reading intervals"
	StageClustering = "k-means trials"
)

// report calls f if it is not nil.
func (f ProgressFunc) report(stage string, done, total int64) {
	if f != nil {
		f(stage, done, total)
	}
}

// DefaultOptions returns SimPoint 3.2's defaults: Compat mode, -maxK 30,
// -dim 15, default seeds, 5 initialisations, -iters 100, -initkm samp,
// -fixedLength on, -bicThreshold 0.9, -coveragePct 1.
func DefaultOptions() Options {
	return Options{
		Mode:         Compat,
		MaxK:         DefaultMaxK,
		Dim:          DefaultDim,
		SeedKMeans:   DefaultSeedKMeans,
		SeedProj:     DefaultSeedProj,
		NumInitSeeds: DefaultNumInitSeeds,
		Iters:        DefaultIters,
		Init:         InitSample,
		BICThreshold: DefaultBICThreshold,
		CoveragePct:  1,
	}
}

// validate checks the options and returns a descriptive error.
func (o *Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Mode != Compat && o.Mode != Default {
		bad("unknown mode %d", o.Mode)
	}
	if len(o.K) == 0 && (o.MaxK < 1 || o.MaxK > MaxClusters) {
		bad("MaxK is %d; it must be between 1 and %d (start from DefaultOptions)", o.MaxK, MaxClusters)
	}
	for _, k := range o.K {
		if k < 1 || k > MaxClusters {
			bad("k = %d in the k list; every k must be between 1 and %d", k, MaxClusters)
			break
		}
	}
	if o.Dim < 1 && o.Dim != NoProject {
		bad("Dim is %d; it must be at least 1, or NoProject", o.Dim)
	}
	if o.NumInitSeeds < 1 {
		bad("NumInitSeeds is %d; it must be at least 1", o.NumInitSeeds)
	}
	if o.Iters < 0 && o.Iters != NoIterationLimit {
		bad("Iters is %d; it must be ≥ 0, or NoIterationLimit", o.Iters)
	}
	if o.Init != InitSample && o.Init != InitFurthestFirst {
		bad("unknown initialisation %d", o.Init)
	}
	if math.IsNaN(o.BICThreshold) || math.IsInf(o.BICThreshold, 0) {
		bad("BICThreshold is %v; it must be finite", o.BICThreshold)
	}
	if !(o.CoveragePct > 0 && o.CoveragePct <= 1) {
		bad("CoveragePct is %v; it must be in (0, 1]", o.CoveragePct)
	}
	if o.Tolerance < 0 || math.IsNaN(o.Tolerance) {
		bad("Tolerance is %v; it must be ≥ 0", o.Tolerance)
	}
	if o.MinPhaseSize < 0 {
		bad("MinPhaseSize is %d; it must be ≥ 0", o.MinPhaseSize)
	}
	if o.Workers < 0 {
		bad("Workers is %d; it must be ≥ 0", o.Workers)
	}
	if o.SeedKMeans < math.MinInt32 || o.SeedKMeans > math.MaxInt32 || o.SeedProj < math.MinInt32 || o.SeedProj > math.MaxInt32 {
		bad("seeds must fit in a 32-bit int (SeedKMeans %d, SeedProj %d)", o.SeedKMeans, o.SeedProj)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("phase: bad options: %w", err)
	}
	return nil
}

// ParseKList parses SimPoint's -k argument: "search" (returns nil: binary
// search up to MaxK) or a comma-separated list of items "k", "a:b" (every
// k from a to b) and "a:s:b" (from a to b in steps of s). Ranges may run
// downward ("30:1", "30:5:1"); the step is a magnitude, and its sign, if
// given, must agree with the direction. The k are evaluated in the order
// listed.
func ParseKList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "search" {
		return nil, nil
	}
	if s == "" {
		return nil, errors.New("phase: empty k list")
	}
	var ks []int
	for _, item := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(item), ":")
		nums := make([]int, len(parts))
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return nil, fmt.Errorf("phase: k list %q: item %q: %q is not an integer", s, item, p)
			}
			nums[i] = n
		}
		var from, step, to int
		switch len(nums) {
		case 1:
			from, step, to = nums[0], 1, nums[0]
		case 2:
			from, step, to = nums[0], 1, nums[1]
		case 3:
			from, step, to = nums[0], nums[1], nums[2]
		default:
			return nil, fmt.Errorf("phase: k list %q: item %q: want k, a:b or a:s:b", s, item)
		}
		if from < 1 || to < 1 {
			return nil, fmt.Errorf("phase: k list %q: item %q: k must be at least 1", s, item)
		}
		if step == 0 || (step < 0 && to > from) {
			return nil, fmt.Errorf("phase: k list %q: item %q: bad step %d", s, item, step)
		}
		if step < 0 {
			step = -step
		}
		if (to-from)/step+1 > 1<<20 || (from-to)/step+1 > 1<<20 {
			return nil, fmt.Errorf("phase: k list %q: item %q: too many k", s, item)
		}
		if from <= to {
			for k := from; k <= to; k += step {
				ks = append(ks, k)
			}
		} else {
			for k := from; k >= to; k -= step {
				ks = append(ks, k)
			}
		}
	}
	return ks, nil
}
