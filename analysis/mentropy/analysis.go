package mentropy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/parscope/parscope/engine"
	"github.com/parscope/parscope/trace"
)

// Name is the mentropy analysis' name in the engine's registry.
const Name = "mentropy"

// Params are the options of the mentropy analysis: the flags of `parscope
// mentropy` (and parscope-beam mentropy) and the "options" of its
// envelope.
type Params struct {
	// Of is the stream: events, states or regions (Of).
	Of string `json:"of" flag:"of" help:"the stream: events, states or regions"`
	// Procs selects the processes (nil: every process).
	Procs []int32 `json:"procs,omitempty" flag:"procs" help:"only these processes (e.g. 0-3)"`
	// WindowEvents is W, the number of previous events in the window.
	WindowEvents int `json:"window_events" flag:"window-events" help:"W, the number of previous events in the window"`
	// Alpha and Beta are the transition tables (Table 4's by default).
	Alpha []float64 `json:"alpha" flag:"alpha" help:"α table, comma-separated: W+1 values for variant R, W for W (Özmen 2002, Table 4, for W = 4 and variant R, by default)"`
	Beta  []float64 `json:"beta" flag:"beta" help:"β table, comma-separated (Table 4's by default)"`
	// K is the constant of equation 1.
	K float64 `json:"k" flag:"K" help:"the constant K"`
	// Variant is R or W, Scope history or window (Config).
	Variant string `json:"variant" flag:"variant" help:"R (equations 2–3) or W (window chain, the paper's Table 3)"`
	Scope   string `json:"scope" flag:"scope" help:"repetition count scope for R: history or window"`
	// Prob is a table of probabilities NAME=P,... ("": uniform over each
	// process's events); Learned uses running frequencies instead;
	// Normalize scales a Prob table that does not sum to 1.
	Prob      string `json:"prob,omitempty" flag:"prob" help:"event probabilities NAME=P,... (default: uniform over each process's events)"`
	Learned   bool   `json:"learned" flag:"learned" help:"use running event frequencies as probabilities"`
	Normalize bool   `json:"normalize" flag:"normalize" help:"scale a --prob table that does not sum to 1 (with a warning)"`
	// MaxPoints bounds the points of each process: with more events, a
	// point stands for a bucket of consecutive events. 0 keeps every
	// event, with its window, row, case and p_w (Proc.Steps).
	MaxPoints int `json:"max_points" flag:"max-points" help:"at most this many points per process, each the largest and mean H of consecutive events (0: every event, with its window, row, case and p_w)"`
	// PhaseThreshold, when positive, segments each process's series into
	// phases: one begins where H rises above it after at least MinLow
	// events at or below it.
	PhaseThreshold float64 `json:"phase_threshold" flag:"phase-threshold" help:"report phases: H rises above this after a low stretch (0: none)"`
	MinLow         int     `json:"min_low" flag:"min-low" help:"with --phase-threshold: events at or below it that make a low stretch"`
}

// DefaultParams returns the default options: Table 4's configuration over
// the named events, uniform probabilities, every event kept.
func DefaultParams() *Params {
	c := Table4()
	return &Params{Of: string(OfEvents), WindowEvents: c.Window, Alpha: c.Alpha, Beta: c.Beta, K: c.K,
		Variant: string(c.Variant), Scope: string(c.Scope), MinLow: 3}
}

// Config checks the options and returns the configuration, the
// probabilities and the record kind of the stream.
func (p *Params) Config() (Config, ProbSpec, trace.Kind, error) {
	kind, err := Of(p.Of).Kind()
	if err != nil {
		return Config{}, ProbSpec{}, 0, err
	}
	if !(p.K > 0) {
		return Config{}, ProbSpec{}, 0, fmt.Errorf("mentropy: K = %v: need a positive constant", p.K)
	}
	if p.MaxPoints < 0 || p.MinLow < 0 || p.PhaseThreshold < 0 {
		return Config{}, ProbSpec{}, 0, errors.New("mentropy: max_points, min_low and phase_threshold must not be negative")
	}
	c := Config{Window: p.WindowEvents, K: p.K, Variant: Variant(strings.ToUpper(p.Variant)), Scope: Scope(p.Scope),
		Alpha: p.Alpha, Beta: p.Beta}
	if err := c.Validate(); err != nil {
		t4 := Table4()
		if slices.Equal(c.Alpha, t4.Alpha) && slices.Equal(c.Beta, t4.Beta) && (c.Window != t4.Window || c.Variant != "" && c.Variant != VariantR) {
			return Config{}, ProbSpec{}, 0, fmt.Errorf("mentropy: --alpha and --beta are needed (W+1 values for variant R, W for W): the default tables are Table 4's, for W = 4 and variant R (%w)", err)
		}
		return Config{}, ProbSpec{}, 0, err
	}
	ps := ProbSpec{Normalize: p.Normalize}
	switch {
	case p.Prob != "" && p.Learned:
		return Config{}, ProbSpec{}, 0, errors.New("mentropy: prob and learned exclude each other")
	case p.Prob != "":
		ps.Mode = Given
		if ps.Table, err = ParseProbs(p.Prob); err != nil {
			return Config{}, ProbSpec{}, 0, fmt.Errorf("mentropy: prob: %w", err)
		}
	case p.Learned:
		ps.Mode = Learned
	}
	return c, ps, kind, nil
}

// Result is the mentropy analysis' result: the series of every process
// of the stream, in (run, process) order.
type Result struct {
	Procs []Proc `json:"procs"`
}

// Proc is one process's series. Point k stands for the events Index[k]
// to Index[k+1]−1 (to the last event for the last point): at most
// Params.MaxPoints points, one per event when the process has no more.
type Proc struct {
	Run  int32 `json:"run"`
	Proc int32 `json:"proc"`
	// Events is the length of the process's stream.
	Events int `json:"events"`
	// Alphabet names the process's events, in order of first appearance.
	Alphabet []string `json:"alphabet"`
	// Warning is set when the probability table was normalised.
	Warning string `json:"warning,omitempty"`
	// Index is the first event of each point, TNS its time (ns).
	Index []int   `json:"index"`
	TNS   []int64 `json:"t_ns"`
	// HMax and HMean are the largest and the mean H (nats) of each point's
	// events: peaks are what the series is read for.
	HMax  []float64 `json:"h_max"`
	HMean []float64 `json:"h_mean"`
	// Steps holds every event, with MaxPoints 0.
	Steps []EventStep `json:"steps,omitempty"`
	// Phases are the phases, with a positive PhaseThreshold.
	Phases []Phase `json:"phases,omitempty"`
}

// EventStep is one event of a stream and its modified entropy.
type EventStep struct {
	// Event is the event's name; Window the W events before it, most
	// recent first, "*" for none (the paper's "Window" column).
	Event  string `json:"event"`
	Window string `json:"window"`
	Step
}

func init() {
	engine.Register(&engine.Analysis{
		Name:    Name,
		Doc:     "modified entropy of each process's event stream (Özmen 2002)",
		Needs:   []trace.Kind{trace.KindEvent},
		NeedsOf: func(o any) []trace.Kind { return feeds(o.(*Params)) },
		Feeds:   func(o any) []trace.Kind { return feeds(o.(*Params)) },
		Options: func() any { return DefaultParams() },
		New:     func(t *engine.Trace, o any) (engine.Accumulator, error) { return newAnalysis(t, o.(*Params)) },
	})
}

// feeds returns the record kind of the stream p reads (none for an
// unknown stream, which New refuses).
func feeds(p *Params) []trace.Kind {
	k, err := Of(p.Of).Kind()
	if err != nil {
		return nil
	}
	return []trace.Kind{k}
}

// procKey identifies a process of a run.
type procKey struct{ run, proc int32 }

// procAcc is the running series of one process.
type procAcc struct {
	out      Proc
	alphabet trace.Dict
	meter    *Meter
	// next is the index of the next event to step through.
	next int
	// buckets: n in all; the current one, b, covers events lo..hi−1.
	n, b, lo, hi int
	mx, sum      float64
	// ring holds the last W event ids (for Steps' windows), newest at
	// head−1.
	ring       []int32
	head, fill int
	phases     *phaser
}

// analysis is the mentropy accumulator. A first pass learns each
// process's alphabet and length (uniform probabilities are over the whole
// alphabet, and the points are spread over the whole stream); a second
// feeds every event to its process's Meter (engine.Repeater). Memory grows
// with the processes, their alphabets and the points kept, not with the
// events (but with MaxPoints 0, which keeps them all).
type analysis struct {
	p     *Params
	c     Config
	ps    ProbSpec
	kind  trace.Kind
	names map[int32]string
	procs map[procKey]*procAcc
	order []*procAcc
	last  *procAcc
	// pass is 0 while counting, 1 while stepping, 2 when done.
	pass int
}

func newAnalysis(t *engine.Trace, p *Params) (*analysis, error) {
	c, ps, kind, err := p.Config()
	if err != nil {
		return nil, err
	}
	return &analysis{p: p, c: c, ps: ps, kind: kind, names: dictionary(t.Header, kind), procs: map[procKey]*procAcc{}}, nil
}

// nameOf returns the name of the record's event, and false for a record
// not in the stream.
func (a *analysis) nameOf(rec *trace.Record) (string, bool) {
	if rec.Kind != a.kind || (a.p.Procs != nil && !slices.Contains(a.p.Procs, rec.Proc)) {
		return "", false
	}
	name, ok := a.names[rec.ID]
	if !ok {
		name = fmt.Sprintf("%s %d", a.kind, rec.ID)
		a.names[rec.ID] = name
	}
	if a.kind == trace.KindEvent && name == DroppedEvent {
		return "", false
	}
	return name, true
}

// procOf returns the accumulator of the record's process.
func (a *analysis) procOf(rec *trace.Record) (*procAcc, error) {
	if a.last != nil && a.last.out.Run == rec.Run && a.last.out.Proc == rec.Proc {
		return a.last, nil
	}
	k := procKey{rec.Run, rec.Proc}
	pa := a.procs[k]
	if pa == nil {
		if a.pass > 0 {
			return nil, fmt.Errorf("run %d process %d: the stream changed between the two passes (a new process)", rec.Run, rec.Proc)
		}
		pa = &procAcc{out: Proc{Run: rec.Run, Proc: rec.Proc}}
		a.procs[k] = pa
		a.order = append(a.order, pa)
	}
	a.last = pa
	return pa, nil
}

// Add implements engine.Accumulator.
func (a *analysis) Add(batch []trace.Record) error {
	if a.pass > 1 {
		return errors.New("mentropy: records added after the second pass")
	}
	for i := range batch {
		rec := &batch[i]
		name, ok := a.nameOf(rec)
		if !ok {
			continue
		}
		pa, err := a.procOf(rec)
		if err != nil {
			return err
		}
		if a.pass == 0 {
			pa.alphabet.ID(name)
			pa.out.Events++
			continue
		}
		if err := a.step(pa, name, rec.T); err != nil {
			return err
		}
	}
	return nil
}

// Again implements engine.Repeater: after the counting pass, the meters
// are made and the events stepped through in a second.
func (a *analysis) Again() (bool, error) {
	if a.pass > 0 {
		a.pass = 2
		return false, nil
	}
	a.pass = 1
	a.last = nil
	for _, pa := range a.order {
		if err := a.start(pa); err != nil {
			return false, err
		}
	}
	if len(a.order) == 0 {
		a.pass = 2
		return false, nil
	}
	return true, nil
}

// start makes the meter of a counted process.
func (a *analysis) start(pa *procAcc) error {
	probs, warn, err := a.ps.Probs(&pa.alphabet)
	if err != nil {
		return fmt.Errorf("run %d process %d: %w", pa.out.Run, pa.out.Proc, err)
	}
	if pa.meter, err = NewMeter(a.c, probs); err != nil {
		return fmt.Errorf("run %d process %d: %w", pa.out.Run, pa.out.Proc, err)
	}
	pa.out.Warning = warn
	pa.out.Alphabet = pa.alphabet.Names()
	pa.n, pa.hi = pa.out.Events, -1
	if a.p.MaxPoints > 0 {
		pa.n = min(pa.n, a.p.MaxPoints)
	}
	if a.p.MaxPoints == 0 {
		pa.ring = make([]int32, a.c.Window)
		pa.out.Steps = make([]EventStep, 0, pa.out.Events)
	}
	if a.p.PhaseThreshold > 0 {
		pa.phases = newPhaser(a.p.PhaseThreshold, a.p.MinLow, pa.out.Alphabet)
	}
	return nil
}

// step feeds the next event of a process to its meter.
func (a *analysis) step(pa *procAcc, name string, t int64) error {
	o := &pa.out
	i := pa.next
	ev, ok := pa.alphabet.Lookup(name)
	if !ok || i >= o.Events {
		return fmt.Errorf("run %d process %d: the stream changed between the two passes (more than %d events, or a new event)", o.Run, o.Proc, o.Events)
	}
	st, err := pa.meter.Next(ev)
	if err != nil {
		return fmt.Errorf("run %d process %d: event %d of the stream: %w", o.Run, o.Proc, i, err)
	}
	if pa.hi < 0 || i == pa.hi {
		// A bucket begins: events lo..hi−1 of bucket b = 0..n−1.
		if pa.hi >= 0 {
			pa.b++
		}
		pa.lo, pa.hi = pa.b*o.Events/pa.n, (pa.b+1)*o.Events/pa.n
		pa.mx, pa.sum = st.H, 0
		o.Index = append(o.Index, pa.lo)
		o.TNS = append(o.TNS, t)
	}
	pa.mx = max(pa.mx, st.H)
	pa.sum += st.H
	if i == pa.hi-1 {
		o.HMax = append(o.HMax, pa.mx)
		o.HMean = append(o.HMean, pa.sum/float64(pa.hi-pa.lo))
	}
	if pa.ring != nil {
		o.Steps = append(o.Steps, EventStep{Event: name, Window: pa.window(), Step: st})
		pa.ring[pa.head] = ev
		pa.head = (pa.head + 1) % len(pa.ring)
		pa.fill = min(pa.fill+1, len(pa.ring))
	}
	if pa.phases != nil {
		pa.phases.add(i, ev, t, st.H)
	}
	pa.next++
	return nil
}

// window returns the last W events before the next, most recent first,
// "*" for none.
func (pa *procAcc) window() string {
	var b strings.Builder
	w := len(pa.ring)
	for j := 1; j <= w; j++ {
		if j > 1 {
			b.WriteByte(' ')
		}
		if j <= pa.fill {
			b.WriteString(pa.out.Alphabet[pa.ring[(pa.head-j+w)%w]])
		} else {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// Merge implements engine.Accumulator. The modified entropy of an event
// depends on every event of its process before it, so the accumulators
// merged must hold different processes (shards by process, or by run);
// only while counting (the first pass) may they share a process, whose
// later events other then holds.
func (a *analysis) Merge(o engine.Accumulator) error {
	b, ok := o.(*analysis)
	if !ok {
		return fmt.Errorf("mentropy: merging a %T", o)
	}
	if a.pass != b.pass {
		return fmt.Errorf("mentropy: merging an accumulator of pass %d into one of pass %d", b.pass, a.pass)
	}
	for _, pb := range b.order {
		k := procKey{pb.out.Run, pb.out.Proc}
		pa := a.procs[k]
		if pa == nil {
			a.procs[k] = pb
			a.order = append(a.order, pb)
			continue
		}
		if a.pass > 0 {
			return fmt.Errorf("mentropy: run %d process %d is in both accumulators merged: its series must be computed in one (shard by process)", k.run, k.proc)
		}
		for _, name := range pb.alphabet.Names() {
			pa.alphabet.ID(name)
		}
		pa.out.Events += pb.out.Events
	}
	b.procs, b.order, b.last = nil, nil, nil
	a.last = nil
	return nil
}

// Result implements engine.Accumulator.
func (a *analysis) Result() (any, error) {
	if a.pass < 2 {
		return nil, errors.New("mentropy: the result asked for before the second pass ended")
	}
	res := &Result{Procs: make([]Proc, 0, len(a.order))}
	for _, pa := range a.order {
		if pa.next != pa.out.Events {
			return nil, fmt.Errorf("run %d process %d: the stream changed between the two passes (%d events, then %d)", pa.out.Run, pa.out.Proc, pa.out.Events, pa.next)
		}
		if pa.phases != nil {
			pa.out.Phases = pa.phases.end()
		}
		res.Procs = append(res.Procs, pa.out)
	}
	slices.SortFunc(res.Procs, func(x, y Proc) int {
		return cmp.Or(cmp.Compare(x.Run, y.Run), cmp.Compare(x.Proc, y.Proc))
	})
	return res, nil
}

// StreamResult computes the result of one literal stream of event names
// (`parscope mentropy --stream`), as process 0 of run 0 with times 0, 1,
// 2, ... ; the options' stream and processes are not used.
func StreamResult(names []string, p *Params) (*Result, error) {
	c, ps, _, err := p.Config()
	if err != nil {
		return nil, err
	}
	a := &analysis{p: p, c: c, ps: ps, procs: map[procKey]*procAcc{}}
	pa := &procAcc{}
	a.procs[procKey{}] = pa
	a.order = []*procAcc{pa}
	for _, n := range names {
		pa.alphabet.ID(n)
	}
	pa.out.Events = len(names)
	if _, err := a.Again(); err != nil {
		return nil, err
	}
	for i, n := range names {
		if err := a.step(pa, n, int64(i)); err != nil {
			return nil, err
		}
	}
	if _, err := a.Again(); err != nil {
		return nil, err
	}
	r, err := a.Result()
	if err != nil {
		return nil, err
	}
	return r.(*Result), nil
}
