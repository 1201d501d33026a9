package probe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/parscope/parscope/analysis/phase"
	"github.com/parscope/parscope/format/bbv"
)

// BuildOptions configure Build.
type BuildOptions struct {
	// Backend runs the worker; nil means Local{Clock: Clock}.
	Backend Backend
	// Clock is what the reference times measure ("" is WallClock); a
	// given Backend must use the same clock.
	Clock Clock
	// Interval is the interval size in blocks. 0 chooses it so that the
	// run has about Intervals intervals (a multiple of FineInterval), and
	// at least 8 times the blocks of the largest step.
	Interval int64
	// Intervals is the number of intervals aimed at when Interval is 0;
	// 0 means DefaultIntervals.
	Intervals int
	// FineInterval is the vector run's interval when Interval is 0
	// (vectors are summed into intervals); 0 means 64 blocks.
	FineInterval int64
	// WarmUp is the number of blocks run after a restore before the
	// interval is timed; 0 means a quarter of the interval, negative none.
	WarmUp int64
	// MaxK bounds the number of phases (0 means 10); Seed seeds the phase
	// engine (0 means SimPoint's default).
	MaxK int
	Seed int64
	// MinWeight discards phases below this share of the intervals when
	// building (the thesis drops phases under 1%); the prediction
	// extrapolates by the rule of three. Negative keeps every phase.
	MinWeight float64
	// RefRuns is the number of uninstrumented reference runs; each is
	// followed by its share of the Repeat replays, and ETuninstRef is
	// their mean, so that a reference machine whose speed drifts drifts
	// alike for ETuninstRef and TPhaseRef. 0 means 1.
	RefRuns int
	// Repeat is the number of times each phase is replayed on the
	// reference to measure TPhaseRef (the mean is kept; the phases are
	// replayed in rounds, each once per round); 0 means DefaultRefRepeat.
	Repeat int
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// BuildSteps returns the number of lines a successful Build writes to
// o.Log, one for each pass: the vector run, the choice of phases, the
// counted run, each uninstrumented reference run (each followed by its
// replays), and the replays' summary. A progress line takes it for its
// total.
func BuildSteps(o BuildOptions) int { return 4 + max(o.RefRuns, 1) }

// SnapshotError is Build's error when a snapshot failed: the reference run
// completed and its measurements are in Probe, but no probe is usable.
type SnapshotError struct {
	// Phase is the phase id, Interval its representative interval and
	// Step the step at which the snapshot was taken.
	Phase, Interval int
	Step            int64
	Err             error
	// Probe holds the manifest of the reference run, without snapshots.
	Probe *Probe
}

func (e *SnapshotError) Error() string {
	return fmt.Sprintf("the snapshot of phase %d (interval %d, at step %d) failed: %v; the reference run completed (ETRef %.3fs)",
		e.Phase, e.Interval, e.Step, e.Err, e.Probe.Manifest.ETRef)
}

func (e *SnapshotError) Unwrap() error { return e.Err }

// Build builds a probe of the worker c on this (reference) machine: a
// basic block vector run (the instrument library counts the vectors), the
// phase engine's choice of phases, weights and representative intervals,
// a counted run that times every interval (ETRef, the phases' time shares)
// and snapshots each representative's start minus the warm-up, then
// uninstrumented timed runs (ETuninstRef), each followed by replays of the
// snapshots that measure TPhaseRef exactly as the target will measure
// TProbed.
func Build(ctx context.Context, c Command, o BuildOptions) (*Probe, error) {
	be := o.Backend
	if be == nil {
		be = Local{Clock: o.Clock}
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	sum, err := FileSHA256(c.Path)
	if err != nil {
		return nil, err
	}
	buildID, err := GoBuildID(c.Path)
	if err != nil {
		return nil, err
	}
	fine := o.Interval
	if fine == 0 {
		fine = cmp.Or(o.FineInterval, 64)
	}
	if fine < 1 {
		return nil, fmt.Errorf("interval %d: want a positive number of blocks", fine)
	}
	vec, err := be.Vectors(ctx, c, fine)
	if err != nil {
		return nil, err
	}
	logf("vectors: %d blocks in %d steps, %d intervals of %d blocks, %v", vec.Blocks, vec.Steps, len(vec.Vectors), fine, vec.Elapsed.Round(time.Millisecond))
	if vec.Blocks == 0 {
		return nil, fmt.Errorf("%s executed no block: the worker must call Block", c.Path)
	}
	group := int64(1)
	if o.Interval == 0 {
		group = AutoInterval(vec.Blocks, vec.MaxStep, o.Intervals, fine) / fine
	}
	interval := fine * group
	vectors := sumVectors(vec.Vectors, int(group))
	warm := o.WarmUp
	switch {
	case warm == 0:
		warm = interval / 4
	case warm < 0:
		warm = 0
	}
	opts := phase.DefaultOptions()
	opts.Mode = phase.Default
	opts.MaxK = cmp.Or(o.MaxK, 10)
	if o.Seed != 0 {
		opts.SeedKMeans, opts.SeedProj = o.Seed, o.Seed
	}
	opts.MaxK = min(opts.MaxK, len(vectors))
	res, err := phase.Run(ctx, &bbv.File{Name: c.Path, Vectors: vectors, Dim: vec.Dim}, opts)
	if err != nil {
		return nil, err
	}
	logf("phases: k=%d over %d intervals of %d blocks", res.K, len(vectors), interval)

	m := Manifest{
		Format:      FormatVersion,
		Clock:       cmp.Or(o.Clock, WallClock),
		Worker:      Worker{Info: vec.Worker, Path: c.Path, SHA256: sum, GoBuildID: buildID, Args: append([]string{}, c.Args...)},
		Interval:    interval,
		WarmUp:      warm,
		Intervals:   len(vectors),
		TotalBlocks: vec.Blocks,
		TotalSteps:  vec.Steps,
		ETVectors:   vec.Elapsed.Seconds(),
		K:           res.K,
		Engine:      fmt.Sprintf("parscope phase engine, default mode, maxK %d, dim %d, seeds %d/%d", opts.MaxK, opts.Dim, opts.SeedKMeans, opts.SeedProj),
		Created:     time.Now().UTC().Format(time.RFC3339),
	}
	m.Host, _ = os.Hostname()
	var at []int64
	var kept []int
	for _, ph := range res.Phases {
		rep := representative(res, ph, interval, warm)
		m.Phases = append(m.Phases, Phase{ID: ph.ID, Weight: ph.Weight, Size: ph.Size, Representative: rep})
		if o.MinWeight >= 0 && ph.Weight < cmp.Or(o.MinWeight, 0.01) {
			continue
		}
		kept = append(kept, len(m.Phases)-1)
		at = append(at, max(0, int64(rep)*interval-warm))
	}
	order := make([]int, len(kept))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	sortedAt := make([]int64, len(order))
	for i, j := range order {
		sortedAt[i] = at[j]
	}

	capt, err := be.Capture(ctx, c, interval, sortedAt)
	if err != nil {
		return nil, err
	}
	logf("counted run: %v, %d snapshots", capt.Elapsed.Round(time.Millisecond), len(capt.Snapshots))
	m.ETRef = capt.Elapsed.Seconds()
	if capt.Blocks != vec.Blocks || capt.Steps != vec.Steps {
		return nil, fmt.Errorf("%s is not deterministic: the vector run executed %d blocks in %d steps, the counted run %d blocks in %d steps",
			c.Path, vec.Blocks, vec.Steps, capt.Blocks, capt.Steps)
	}
	if len(capt.Marks) != len(vectors) {
		return nil, fmt.Errorf("%s: the counted run has %d intervals, the vector run %d", c.Path, len(capt.Marks), len(vectors))
	}
	// Interval k runs from mark k to mark k+1 (or the end).
	span := func(k int) (Mark, Mark) {
		if k+1 < len(capt.Marks) {
			return capt.Marks[k], capt.Marks[k+1]
		}
		return capt.Marks[k], Mark{Time: capt.Elapsed, Step: capt.Steps, Blocks: capt.Blocks}
	}
	phaseTime := map[int]time.Duration{}
	var total time.Duration
	for k, label := range res.Labels {
		a, b := span(k)
		phaseTime[label] += b.Time - a.Time
		total += b.Time - a.Time
	}
	for i := range m.Phases {
		ph := &m.Phases[i]
		ph.TimeShare = phaseTime[ph.ID].Seconds() / total.Seconds()
		a, b := span(ph.Representative)
		ph.StartStep, ph.EndStep, ph.Blocks = a.Step, b.Step, b.Blocks-a.Blocks
		ph.TIntervalRef = (b.Time - a.Time).Seconds()
		ph.TPhaseRef = ph.TIntervalRef
		ph.SnapshotStep, ph.WarmBlocks = a.Step, 0
	}
	p := &Probe{Manifest: m}
	for i, j := range order {
		ph := &p.Manifest.Phases[kept[j]]
		s := capt.Snapshots[i]
		if s.Err != nil {
			return nil, &SnapshotError{Phase: ph.ID, Interval: ph.Representative, Step: s.Step, Err: s.Err, Probe: p}
		}
		if ph.EndStep == ph.StartStep {
			return nil, fmt.Errorf("phase %d: interval %d has no step of its own: a step executes more blocks than an interval (%d); use a larger interval",
				ph.ID, ph.Representative, interval)
		}
		ph.SnapshotStep, ph.WarmBlocks = s.Step, capt.Marks[ph.Representative].Blocks-s.Blocks
		if err := p.SetSnapshot(kept[j], s.State); err != nil {
			return nil, err
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("no phase above the minimum weight")
	}
	// TPhaseRef is measured the way the target measures TProbed: restore,
	// warm up, time the interval. ETuninstRef and TPhaseRef enter every
	// prediction as a ratio, so they are measured interleaved: each
	// uninstrumented run is followed by its share of the replays, and a
	// machine whose speed drifts during the build drifts for both.
	refRuns := max(o.RefRuns, 1)
	rounds := (cmp.Or(o.Repeat, DefaultRefRepeat) + refRuns - 1) / refRuns
	samples := map[int][]time.Duration{}
	var plainSum time.Duration
	for range refRuns {
		plain, err := be.Plain(ctx, c)
		if err != nil {
			return nil, err
		}
		if plain.Steps != vec.Steps {
			return nil, fmt.Errorf("%s is not deterministic: the vector run executed %d steps, the plain run %d", c.Path, vec.Steps, plain.Steps)
		}
		logf("uninstrumented run: %v", plain.Elapsed.Round(time.Millisecond))
		plainSum += plain.Elapsed
		runs, err := be.Replay(ctx, c, p, kept, ReplayOptions{Rounds: rounds})
		if err != nil {
			return nil, fmt.Errorf("replaying the probe on the reference: %w", err)
		}
		for _, r := range runs {
			if r.Err != nil {
				return nil, fmt.Errorf("replaying phase %d on the reference: %w", p.Manifest.Phases[r.Phase].ID, r.Err)
			}
			samples[r.Phase] = append(samples[r.Phase], r.Probed...)
		}
	}
	p.Manifest.ETUninstRef = (plainSum / time.Duration(refRuns)).Seconds()
	for _, i := range kept {
		ph := &p.Manifest.Phases[i]
		ph.TPhaseRef, ph.TPhaseRefErr = mean(samples[i])
		ph.RefSamples = len(samples[i])
	}
	logf("replayed %d phases on the reference, %d times each", len(kept), rounds*refRuns)
	if len(kept) < len(m.Phases) {
		p.Manifest.Reduction = fmt.Sprintf("phases under weight %g dropped at build", cmp.Or(o.MinWeight, 0.01))
	}
	return p, nil
}

// representative returns the interval of phase ph to measure: the one
// closest to the phase's centre (the earliest on ties), as SimPoint
// chooses, but among the intervals that start at least warm blocks into
// the run, so that the whole warm-up can run before it (eq. 4.2). An
// interval closer to the start cannot be warmed up: its replay would time
// it on caches the restore left, not on those the run left. Only when no
// interval of the phase leaves room is SimPoint's choice kept.
func representative(res *phase.Result, ph phase.Phase, interval, warm int64) int {
	best := -1
	for k, label := range res.Labels {
		if label != ph.ID || int64(k)*interval < warm || k >= len(res.Distances) {
			continue
		}
		if best < 0 || res.Distances[k] < res.Distances[best] {
			best = k
		}
	}
	switch {
	case best >= 0:
		return best
	case ph.Representative >= 0:
		return ph.Representative
	}
	return slices.Index(res.Labels, ph.ID)
}

// AutoInterval is the interval size (blocks) Build chooses for a run of
// blocks blocks whose largest step executes maxStep blocks, counted in
// vectors of fine blocks: about intervals intervals (0 means
// DefaultIntervals), each at least stepsPerInterval of the largest steps,
// so that cutting at step boundaries stays fine; a multiple of fine.
func AutoInterval(blocks, maxStep int64, intervals int, fine int64) int64 {
	want := max(blocks/int64(cmp.Or(intervals, DefaultIntervals)), stepsPerInterval*maxStep)
	return fine * max(1, (want+fine-1)/fine)
}

// DefaultIntervals is the number of intervals an automatic interval size
// aims at. Each phase costs the probe about 1.25 intervals per measurement
// (warm-up included), so with k phases one round of measurements is about
// 1.25·k/DefaultIntervals of the run: 0.125% for k = 10, which leaves
// room for several rounds in a 1% budget. Short intervals are noisy one
// by one; the rounds average them over the probe's time.
const DefaultIntervals = 10000

// DefaultRefRepeat is how often Build replays each phase on the reference
// by default: the reference machine's time is not the probe's to save, and
// TPhaseRef enters every prediction made from the probe.
const DefaultRefRepeat = 40

// stepsPerInterval is the fewest largest steps an automatic interval holds.
const stepsPerInterval = 8

// sumVectors adds up each run of group consecutive vectors into one.
func sumVectors(vs []bbv.Vector, group int) []bbv.Vector {
	if group <= 1 {
		return vs
	}
	var out []bbv.Vector
	for i := 0; i < len(vs); i += group {
		acc := map[int32]float64{}
		for _, v := range vs[i:min(i+group, len(vs))] {
			for j, b := range v.Blocks {
				acc[b] += v.Counts[j]
			}
		}
		var nv bbv.Vector
		for b := range acc {
			nv.Blocks = append(nv.Blocks, b)
		}
		slices.Sort(nv.Blocks)
		for _, b := range nv.Blocks {
			nv.Counts = append(nv.Counts, acc[b])
		}
		out = append(out, nv)
	}
	return out
}
