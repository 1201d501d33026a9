package probe

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// Weights selects which weight enters equation (4.7) as Weight_i.
type Weights string

const (
	// TimeWeights uses each phase's measured share of the counted
	// reference run's time (Phase.TimeShare): ETRef·Weight_i is then the
	// time the reference run really spent in the phase. The default.
	TimeWeights Weights = "time"
	// IntervalWeights uses SimPoint's weight, the phase's share of the
	// intervals (Phase.Weight), as the thesis does: it assumes every
	// interval takes the same time on the reference machine.
	IntervalWeights Weights = "intervals"
)

// weight returns phase ph's weight of kind w.
func (w Weights) weight(ph Phase) float64 {
	if w == IntervalWeights {
		return ph.Weight
	}
	return ph.TimeShare
}

// ParseWeights parses "time" or "intervals".
func ParseWeights(s string) (Weights, error) {
	switch Weights(s) {
	case TimeWeights, IntervalWeights:
		return Weights(s), nil
	}
	return "", fmt.Errorf("weights %q: want time or intervals", s)
}

// PhaseResult is one phase of a prediction.
type PhaseResult struct {
	ID             int     `json:"id"`
	Weight         float64 `json:"weight"`
	Representative int     `json:"representative"`
	// Status is "ok", "dropped" (no snapshot in the probe) or "failed"
	// (the phase crashed on the target; Error says how).
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// TPhaseRef and TProbed are the interval's time on the reference and
	// on the target (s); TimeUnitValue and PhasePredicted are eq. (4.4)
	// and (4.5).
	TPhaseRef float64 `json:"t_phase_ref_s"`
	TProbed   float64 `json:"t_probed_s,omitempty"`
	// Samples is the number of measurements TProbed is the mean of, and
	// TProbedErr the standard error of that mean (s).
	Samples        int     `json:"samples,omitempty"`
	TProbedErr     float64 `json:"t_probed_stderr_s,omitempty"`
	TimeUnitValue  float64 `json:"time_unit_value,omitempty"`
	PhasePredicted float64 `json:"phase_predicted_s,omitempty"`
}

// Prediction is the outcome of a probe run.
type Prediction struct {
	Worker  Worker  `json:"worker"`
	Weights Weights `json:"weights"`
	// Predicted is the predicted full run time (s): eq. (4.7) over the
	// phases measured, extrapolated by the rule of three when they cover
	// less than the whole run.
	Predicted float64 `json:"predicted_s"`
	// StdErr is the standard error of Predicted (s) from the spread of
	// the phases' measurements on the target and on the reference (the
	// run-to-run variation of the full run itself is not in it).
	StdErr float64 `json:"predicted_stderr_s,omitempty"`
	// Partial is eq. (4.7) over the phases measured only; Covered is the
	// sum of their weights: the fraction of the run the prediction rests
	// on.
	Partial float64 `json:"partial_s"`
	Covered float64 `json:"covered"`
	// Noise is eq. (4.3); ETRef and ETUninstRef the reference times (s).
	Noise       float64 `json:"noise"`
	ETRef       float64 `json:"et_ref_s"`
	ETUninstRef float64 `json:"et_uninst_ref_s"`
	// Phases holds every phase of the probe.
	Phases []PhaseResult `json:"phases"`
	// ProbeTime is the probe run's own wall time (s), ProbeFraction
	// that time over the predicted run time.
	ProbeTime     float64 `json:"probe_time_s"`
	ProbeFraction float64 `json:"probe_fraction"`
	// Represented is the fraction of the run's blocks that the probe
	// executed (warm-ups and intervals of the phases measured, once).
	Represented float64 `json:"represented"`
	// Failed counts the phases that crashed on the target.
	Failed int `json:"failed"`
	// Costs says where ProbeTime went (set by Run).
	Costs *ProbeCosts `json:"costs,omitempty"`
}

// ProbeCosts is where a probe run's own time went, stage by stage, in
// seconds of the wall clock. Hash runs beside Snapshots; the other stages
// follow one another. Under the Valgrind backend the worker's stages
// (Start to Rounds) are the model machine's time instead, and
// Instructions counts the instructions the worker executed in each.
type ProbeCosts struct {
	// Read is reading and checking the probe file (from
	// RunOptions.Started to Run's start; 0 without Started).
	Read float64 `json:"read_s"`
	// Hash is checking the worker's identity: reading its Go build ID,
	// or (a probe without one) hashing the executable, beside Snapshots.
	Hash float64 `json:"hash_s"`
	// Snapshots is writing the compressed snapshots for the worker, Wait
	// waiting for Hash after that.
	Snapshots float64 `json:"snapshots_s"`
	Wait      float64 `json:"wait_s"`
	// Start is the worker's start up to its driver's stopwatch, Init the
	// task's Init, Load reading, decompressing and checking the
	// snapshots, FirstRound and Rounds the first and the later rounds of
	// measurements, Exit the worker's exit and reading its answers.
	Start      float64 `json:"start_s"`
	Init       float64 `json:"init_s"`
	Load       float64 `json:"load_s"`
	FirstRound float64 `json:"first_round_s"`
	Rounds     float64 `json:"rounds_s"`
	Exit       float64 `json:"exit_s"`
	// RoundsMade is the number of rounds.
	RoundsMade   int              `json:"rounds"`
	Instructions map[string]int64 `json:"instructions,omitempty"`
}

// Fixed is the probe's fixed cost: everything but the rounds.
func (c *ProbeCosts) Fixed() float64 {
	return c.Read + c.Snapshots + c.Wait + c.Start + c.Init + c.Load + c.Exit
}

// DefaultBudget is the probe's default time budget: 1% of the run time it
// predicts.
const DefaultBudget = 0.01

func sq(x float64) float64 { return x * x }

// RunOptions configure Run.
type RunOptions struct {
	// Backend runs the worker; nil means Local{Clock: the probe's clock}.
	Backend Backend
	// Repeat, when positive, measures each phase exactly this many
	// times (in rounds) and no budget applies.
	Repeat int
	// Budget bounds the probe's own wall time to this fraction of the run
	// time it predicts: the phases are measured in rounds, and another
	// round starts only if it fits (at least one round is always made).
	// 0 means DefaultBudget; negative means no budget (3 rounds unless
	// Repeat says otherwise).
	Budget float64
	// MaxRounds bounds the rounds a budget allows (0 means 100).
	MaxRounds int
	// Started is when the probe run began, if before Run (reading the
	// probe file, say): the probe's own time and its budget count from
	// there. Zero means when Run is called.
	Started time.Time
	// Weights selects Weight_i (default TimeWeights).
	Weights Weights
	// OtherBinary accepts a worker whose executable differs from the one
	// the probe was built with (same name, version and arguments), such
	// as a build with other compiler flags.
	OtherBinary bool
	// Progress, if set, is told the measurements taken (a phase measured
	// once, or failed) and how many there will be: the phases times the
	// rounds when these are fixed (Repeat, or no budget), 0 with a budget,
	// which decides the rounds as it goes. It is called from another
	// goroutine, one call at a time, never after Run returns; the Local
	// backend reports measurements as they are taken, Valgrind does not.
	Progress func(measured, total int)
}

// IdentityError is Run's error when the worker is not the one the probe was
// built from.
type IdentityError struct {
	// What names what differs ("executable", "arguments", "name/version").
	What          string
	Probe, Worker string
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("the probe was built from a worker with %s %s, this worker has %s %s", e.What, e.Probe, e.What, e.Worker)
}

// Run runs the probe on this (target) machine: for each phase with a
// snapshot, restore it, run the warm-up, time one interval; then predict
// the full run time with equation (4.7).
func Run(ctx context.Context, p *Probe, c Command, o RunOptions) (*Prediction, error) {
	begun := time.Now()
	start := o.Started
	if start.IsZero() {
		start = begun
	}
	be := o.Backend
	if be == nil {
		be = Local{Clock: p.Manifest.Clock}
	}
	w := cmp.Or(o.Weights, TimeWeights)
	m := &p.Manifest
	if !slices.Equal(m.Worker.Args, c.Args) {
		return nil, &IdentityError{What: "arguments", Probe: fmt.Sprintf("%q", m.Worker.Args), Worker: fmt.Sprintf("%q", c.Args)}
	}
	var phases []int
	for i := range m.Phases {
		if p.Kept(i) {
			phases = append(phases, i)
		}
	}
	// The worker must be the executable the probe was built from. With a
	// Go build ID in the probe, the IDs are compared (reading a few
	// section headers); otherwise the executable's SHA-256 is computed
	// while the snapshots are written for it. Both are checked before it
	// starts. --other-binary accepts any executable, so nothing is read.
	var hashTime time.Duration
	identity := func() error { return nil }
	const otherBinary = " (--other-binary accepts a rebuild of the same version)"
	switch {
	case o.OtherBinary:
	case m.Worker.GoBuildID != "":
		t0 := time.Now()
		id, err := GoBuildID(c.Path)
		hashTime = time.Since(t0)
		identity = func() error {
			if err != nil {
				return err
			}
			if id != m.Worker.GoBuildID {
				return &IdentityError{What: "Go build ID", Probe: m.Worker.GoBuildID, Worker: cmp.Or(id, "none") + otherBinary}
			}
			return nil
		}
	default:
		var sum string
		var sumErr error
		hashed := make(chan struct{})
		go func() {
			defer close(hashed)
			t0 := time.Now()
			sum, sumErr = FileSHA256(c.Path)
			hashTime = time.Since(t0)
		}()
		identity = func() error {
			<-hashed
			if sumErr != nil {
				return sumErr
			}
			if sum != m.Worker.SHA256 {
				return &IdentityError{What: "executable SHA-256", Probe: m.Worker.SHA256[:16] + "…", Worker: sum[:16] + "…" + otherBinary}
			}
			return nil
		}
	}
	var costs ReplayCosts
	ro := ReplayOptions{Rounds: o.Repeat, BeforeStart: identity, Costs: &costs}
	switch {
	case o.Repeat > 0:
	case o.Budget < 0:
		ro.Rounds = 3
	default:
		// Units: predicted run time per second of a phase's interval
		// time, eq. (4.7) with the rule of three over the kept phases.
		covered := 0.0
		for _, i := range phases {
			covered += w.weight(m.Phases[i])
		}
		for _, i := range phases {
			u := 0.0
			if ph := m.Phases[i]; ph.TPhaseRef > 0 && covered > 0 {
				u = TimeUnitValue(m.ETRef, w.weight(ph), ph.TPhaseRef) / Noise(m.ETRef, m.ETUninstRef) / covered
			}
			ro.Units = append(ro.Units, u)
		}
		ro.Rounds, ro.Budget, ro.MaxRounds, ro.Spent = 1, cmp.Or(o.Budget, DefaultBudget), cmp.Or(o.MaxRounds, 100), time.Since(start)
	}
	if o.Progress != nil {
		total := 0
		if ro.Budget == 0 {
			total = len(phases) * ro.Rounds
		}
		o.Progress(0, total)
		ro.Progress = func(n int) { o.Progress(n, total) }
	}
	runs, err := be.Replay(ctx, c, p, phases, ro)
	if err != nil {
		return nil, err
	}
	if err := identity(); err != nil { // a Backend that did not call it
		return nil, err
	}
	probed := map[int]float64{}
	stderr := map[int]float64{}
	samples := map[int]int{}
	failed := map[int]string{}
	for _, r := range runs {
		if r.Err != nil {
			failed[r.Phase] = r.Err.Error()
			continue
		}
		probed[r.Phase], stderr[r.Phase] = mean(r.Probed)
		samples[r.Phase] = len(r.Probed)
	}
	pred, err := Predict(m, probed, w)
	if err != nil {
		return nil, fmt.Errorf("%w (%d phases failed: %v)", err, len(failed), failed)
	}
	// The prediction's standard error from the phases' (independent)
	// measurement errors, target and reference.
	v := 0.0
	for i := range pred.Phases {
		ph := &pred.Phases[i]
		if msg, ok := failed[i]; ok {
			ph.Status, ph.Error = "failed", msg
			pred.Failed++
		}
		if ph.Status != "ok" {
			continue
		}
		ph.Samples, ph.TProbedErr = samples[i], stderr[i]
		if ph.TProbed > 0 {
			v += sq(ph.PhasePredicted) * (sq(ph.TProbedErr/ph.TProbed) + sq(m.Phases[i].TPhaseRefErr/ph.TPhaseRef))
		}
	}
	pred.StdErr = math.Sqrt(v) / Noise(m.ETRef, m.ETUninstRef) / pred.Covered
	pred.ProbeTime = time.Since(start).Seconds()
	pred.ProbeFraction = pred.ProbeTime / pred.Predicted
	pred.Costs = &ProbeCosts{Read: begun.Sub(start).Seconds(), Hash: hashTime.Seconds(),
		Snapshots: costs.Snapshots.Seconds(), Wait: costs.Wait.Seconds(), Start: costs.Start.Seconds(),
		Init: costs.Init.Seconds(), Load: costs.Load.Seconds(), FirstRound: costs.FirstRound.Seconds(),
		Rounds: costs.Rounds.Seconds(), Exit: costs.Exit.Seconds(), RoundsMade: costs.RoundsMade, Instructions: costs.Instructions}
	return pred, nil
}

// Predict computes the prediction from the manifest and the measured
// interval times (s) of some phases (by index): equation (4.7) over them,
// extrapolated by the rule of three to the weight they cover. It is pure.
func Predict(m *Manifest, probed map[int]float64, w Weights) (*Prediction, error) {
	w = cmp.Or(w, TimeWeights)
	pred := &Prediction{Worker: m.Worker, Weights: w, ETRef: m.ETRef, ETUninstRef: m.ETUninstRef, Noise: Noise(m.ETRef, m.ETUninstRef)}
	var terms []PhaseTerm
	var blocks int64
	for i, ph := range m.Phases {
		r := PhaseResult{ID: ph.ID, Weight: w.weight(ph), Representative: ph.Representative, TPhaseRef: ph.TPhaseRef, Status: "dropped"}
		if t, ok := probed[i]; ok {
			r.Status = "ok"
			r.TProbed = t
			r.TimeUnitValue = TimeUnitValue(m.ETRef, r.Weight, ph.TPhaseRef)
			r.PhasePredicted = PhasePredicted(r.TimeUnitValue, t)
			terms = append(terms, PhaseTerm{Weight: r.Weight, TPhaseRef: ph.TPhaseRef, TProbed: t})
			pred.Covered += r.Weight
			blocks += ph.WarmBlocks + ph.Blocks
		}
		pred.Phases = append(pred.Phases, r)
	}
	if len(terms) == 0 {
		return nil, errNoPhases
	}
	partial, err := ETPredicted(m.ETRef, m.ETUninstRef, terms)
	if err != nil {
		return nil, err
	}
	pred.Partial = partial
	if pred.Predicted, err = RuleOfThree(partial, pred.Covered); err != nil {
		return nil, err
	}
	pred.Represented = float64(blocks) / float64(m.TotalBlocks)
	return pred, nil
}

// Reduce returns a copy of p that keeps only the snapshots of the topK
// heaviest phases (0: no limit) whose weight is at least minWeight; the
// prediction extrapolates from them by the rule of three (§5.3).
func Reduce(p *Probe, topK int, minWeight float64, w Weights) *Probe {
	w = cmp.Or(w, TimeWeights)
	q := p.Clone()
	order := q.byWeight(w)
	n := 0
	for _, i := range order {
		if !q.Kept(i) {
			continue
		}
		if (topK > 0 && n >= topK) || w.weight(q.Manifest.Phases[i]) < minWeight {
			q.Drop(i)
			continue
		}
		n++
	}
	q.Manifest.Reduction = fmt.Sprintf("kept the %d heaviest phases (top-k %d, minimum %s weight %g)", n, topK, w, minWeight)
	return q
}

// byWeight returns the phase indexes, heaviest first.
func (p *Probe) byWeight(w Weights) []int {
	order := make([]int, len(p.Manifest.Phases))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(w.weight(p.Manifest.Phases[b]), w.weight(p.Manifest.Phases[a]))
	})
	return order
}

// CurvePoint is one point of the quality-against-size curve (Figures
// 5.1–5.2): the probe reduced to its K heaviest phases.
type CurvePoint struct {
	K int `json:"k"`
	// Weight is the weight the K phases cover.
	Weight float64 `json:"weight"`
	// Bytes is the compressed size of their snapshots, RawBytes the
	// uncompressed size.
	Bytes    int64 `json:"bytes"`
	RawBytes int64 `json:"raw_bytes"`
	// Predicted is the rule-of-three prediction (s); Error its relative
	// error against the actual time when one is given (else against the
	// prediction from every phase).
	Predicted float64 `json:"predicted_s"`
	Error     float64 `json:"error"`
}

// Curve computes the quality-against-size curve of p from one probe run
// that measured every kept phase (probed: interval times by phase index):
// the prediction from the K heaviest phases for every K. actual is the
// target's real run time (s), or 0 to compare with the full prediction.
func Curve(p *Probe, probed map[int]float64, w Weights, actual float64) ([]CurvePoint, error) {
	w = cmp.Or(w, TimeWeights)
	var out []CurvePoint
	sub := map[int]float64{}
	var pt CurvePoint
	for _, i := range p.byWeight(w) {
		t, ok := probed[i]
		if !ok || !p.Kept(i) {
			continue
		}
		sub[i] = t
		s := p.Manifest.Phases[i].Snapshot
		pt.K++
		pt.Bytes += s.Size
		pt.RawBytes += s.RawSize
		pred, err := Predict(&p.Manifest, sub, w)
		if err != nil {
			return nil, err
		}
		pt.Weight, pt.Predicted = pred.Covered, pred.Predicted
		out = append(out, pt)
	}
	if len(out) == 0 {
		return nil, errNoPhases
	}
	ref := actual
	if ref <= 0 {
		ref = out[len(out)-1].Predicted
	}
	for i := range out {
		out[i].Error = math.Abs(out[i].Predicted-ref) / ref
	}
	return out, nil
}
