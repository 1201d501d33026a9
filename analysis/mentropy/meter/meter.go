// Package meter computes Özmen's modified entropy of an event stream
// (Özmen 2002): for each event of a process, how much information it carries
// given the events just before it. A window of the W previous events and a
// table of transition probabilities (α for "the same event again", β for
// "a different event", indexed by how often the most recent event repeated)
// give the probability p_w of the windowed sequence, and
//
//	H = −K · p_w · x · ln x
//
// in nats, where x is the α or β entry that applies. Repeats drive H down,
// any change makes a peak.
//
// Two readings are implemented, because the paper's worked tables come from
// two different procedures (docs/paper-oracles.md section 1):
//
//   - VariantR ("run product", the default) follows the text, equations 2
//     and 3: in the α case p_w = p_0·p_1·…·p_I with p_0 = p(d) and
//     p_i = p_{i−1}·α_{i−1}, I the repetition count capped at W, x = α_I;
//     in the β case p_w = p(d) and x = β_I. The table has W+1 rows
//     (I = 0..W). It reproduces Table 4 and Example 1's first value.
//   - VariantW ("window chain", compatibility with the paper's "entropy
//     generator tool"): p_w is the Markov-chain probability of the W-slot
//     window, the table index is reversed (I = W − r for a run of length r
//     in the window) and H = 0 when the destination repeats an event that
//     fills the whole window. The table has W rows. It reproduces rows 1–21
//     of Table 3.
//
// Events are dense ids 0..n−1 (the mentropy analysis' Encode maps names to
// them). A Meter consumes one stream event by event without allocating;
// Series runs a whole stream.
//
// The meter is shared by the modified entropy analysis (package
// analysis/mentropy, which gives these names as its own) and the
// recorder's entropy filter (package instrument). It imports only the
// standard library, so that a program that records does not link the
// analysis engine and the trace store with it.
package meter

import (
	"errors"
	"fmt"
	"math"
)

// Table4 returns the configuration of Özmen's (2002) Table 4 (W = 4,
// variant R, α = 0.5 0.7 0.8 0.9 0.99, β = 0.5 0.3 0.2 0.1 0.01, K = 1;
// docs/paper-oracles.md 1.3): the defaults of the mentropy analysis, and
// the table of the instrument library's entropy filter. Each call returns
// fresh tables.
func Table4() Config {
	return Config{Window: 4, K: 1, Variant: VariantR, Scope: ScopeHistory,
		Alpha: []float64{0.5, 0.7, 0.8, 0.9, 0.99}, Beta: []float64{0.5, 0.3, 0.2, 0.1, 0.01}}
}

// Variant selects the reading of the algorithm.
type Variant string

// The two readings (see the package documentation).
const (
	VariantR Variant = "R"
	VariantW Variant = "W"
)

// Scope says where the repetition count of the most recent event is
// counted in VariantR.
type Scope string

// Count scopes. They differ only in the β index after a long run:
// ScopeHistory caps the run at W (β_W is used after a run of W or more),
// ScopeWindow counts inside the W-slot window (β index at most W−1).
const (
	ScopeHistory Scope = "history"
	ScopeWindow  Scope = "window"
)

// Config holds the parameters of the modified entropy.
type Config struct {
	// Window is W, the number of previous events looked at (≥ 1).
	Window int
	// K is the positive constant of equation 1 (0 means 1).
	K float64
	// Alpha and Beta are the transition probabilities, each in (0,1):
	// W+1 rows (I = 0..W) for VariantR, W rows for VariantW.
	Alpha, Beta []float64
	// Variant is VariantR (default when empty) or VariantW.
	Variant Variant
	// Scope is ScopeHistory (default when empty) or ScopeWindow (VariantR only).
	Scope Scope
}

// Validate reports the first problem with c, or nil.
func (c Config) Validate() error {
	if c.Window < 1 {
		return fmt.Errorf("mentropy: window %d: need W ≥ 1", c.Window)
	}
	if c.K < 0 || math.IsNaN(c.K) || math.IsInf(c.K, 0) {
		return fmt.Errorf("mentropy: K = %v: need a positive finite constant", c.K)
	}
	rows := c.Window + 1
	switch c.variant() {
	case VariantR:
	case VariantW:
		rows = c.Window
	default:
		return fmt.Errorf("mentropy: unknown variant %q (want R or W)", c.Variant)
	}
	switch c.Scope {
	case "", ScopeHistory, ScopeWindow:
	default:
		return fmt.Errorf("mentropy: unknown count scope %q (want history or window)", c.Scope)
	}
	for _, t := range []struct {
		name string
		v    []float64
	}{{"alpha", c.Alpha}, {"beta", c.Beta}} {
		if len(t.v) != rows {
			return fmt.Errorf("mentropy: %s table has %d rows, variant %s with W = %d needs %d", t.name, len(t.v), c.variant(), c.Window, rows)
		}
		for i, x := range t.v {
			if !(x > 0 && x < 1) {
				return fmt.Errorf("mentropy: %s[%d] = %v: need a probability in (0,1)", t.name, i, x)
			}
		}
	}
	return nil
}

func (c Config) variant() Variant {
	if c.Variant == "" {
		return VariantR
	}
	return c.Variant
}

func (c Config) k() float64 {
	if c.K == 0 {
		return 1
	}
	return c.K
}

// ProbMode says where event probabilities come from.
type ProbMode uint8

// Probability modes.
const (
	// Uniform gives every event of the alphabet probability 1/n.
	Uniform ProbMode = iota
	// Given uses a fixed table.
	Given
	// Learned uses the running frequency of each event, the current one
	// included: p(e) = count(e)/events so far.
	Learned
)

// Probs gives the probability of each event id 0..N−1.
type Probs struct {
	Mode ProbMode
	// N is the alphabet size (Uniform, Learned); for Given it is len(P).
	N int
	// P is the table for Given, indexed by event id; it must sum to 1
	// (see Normalize) with every entry in (0,1].
	P []float64
}

// UniformProbs returns uniform probabilities over n events.
func UniformProbs(n int) Probs { return Probs{Mode: Uniform, N: n} }

// GivenProbs returns the fixed table p, indexed by event id.
func GivenProbs(p []float64) Probs { return Probs{Mode: Given, N: len(p), P: p} }

// LearnedProbs returns running frequencies over n events.
func LearnedProbs(n int) Probs { return Probs{Mode: Learned, N: n} }

// sumTolerance is how far from 1 a given table may sum.
const sumTolerance = 1e-6

// ErrSum is wrapped by the error for a table that does not sum to 1.
var ErrSum = errors.New("probabilities do not sum to 1")

// Validate reports the first problem with p, or nil.
func (p Probs) Validate() error {
	switch p.Mode {
	case Uniform, Learned:
		if p.N < 1 {
			return fmt.Errorf("mentropy: alphabet of %d events: need at least one", p.N)
		}
	case Given:
		if len(p.P) == 0 {
			return errors.New("mentropy: empty probability table")
		}
		s := 0.0
		for i, x := range p.P {
			if !(x > 0 && x <= 1) {
				return fmt.Errorf("mentropy: probability of event %d = %v: need a value in (0,1]", i, x)
			}
			s += x
		}
		if math.Abs(s-1) > sumTolerance {
			return fmt.Errorf("mentropy: %w (sum %.9g)", ErrSum, s)
		}
	default:
		return fmt.Errorf("mentropy: unknown probability mode %d", p.Mode)
	}
	return nil
}

// Normalize divides a table of positive weights by its sum in place and
// reports whether it changed anything beyond rounding (the caller warns).
func Normalize(p []float64) (changed bool, err error) {
	s := 0.0
	for i, x := range p {
		if !(x > 0) || math.IsInf(x, 0) {
			return false, fmt.Errorf("mentropy: weight of event %d = %v: need a positive finite value", i, x)
		}
		s += x
	}
	if len(p) == 0 {
		return false, errors.New("mentropy: empty probability table")
	}
	for i := range p {
		p[i] /= s
	}
	return math.Abs(s-1) > sumTolerance, nil
}

// Case says which transition applied to an event.
type Case uint8

// Cases.
const (
	// Beta: the event differs from the most recent one.
	Beta Case = iota
	// Alpha: the event repeats the most recent one.
	Alpha
	// First: the first event of a VariantW stream (empty window). The paper's
	// value (Table 3 row 0) is not reproducible; the implementation-defined
	// rule is the β case with I = 0 and p_w = p(d), as in VariantR.
	First
)

// String returns "beta", "alpha" or "first".
func (c Case) String() string {
	switch c {
	case Alpha:
		return "alpha"
	case First:
		return "first"
	}
	return "beta"
}

// MarshalText implements encoding.TextMarshaler.
func (c Case) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Case) UnmarshalText(b []byte) error {
	for _, x := range []Case{Beta, Alpha, First} {
		if x.String() == string(b) {
			*c = x
			return nil
		}
	}
	return fmt.Errorf("mentropy: unknown case %q (want alpha, beta or first)", b)
}

// Step is the modified entropy of one event.
type Step struct {
	H  float64 `json:"h"`   // modified entropy, nats
	Pw float64 `json:"p_w"` // probability of the windowed sequence
	I  int32   `json:"i"`   // table row used
	// Case is the transition that applied.
	Case Case `json:"case"`
}

// UnknownEventError is returned for an event id outside the alphabet.
type UnknownEventError struct {
	Event int32
	N     int
}

func (e *UnknownEventError) Error() string {
	return fmt.Sprintf("mentropy: unknown event %d (the probability table has events 0..%d)", e.Event, e.N-1)
}

// Meter computes the modified entropy of one stream, event by event. Next
// does not allocate. A Meter is not safe for concurrent use.
type Meter struct {
	*meterTables // shared by the fresh copies of a meter (see Fresh)

	counts []int64
	total  int64
	prev   int32 // most recent event, −1 none
	run    int   // its run length (whole history)
	ring   []int32
	head   int // next slot in ring
	fill   int
}

// meterTables is what a Meter's configuration fixes: read only once
// NewMeter has made it.
type meterTables struct {
	variant Variant
	w       int
	k       float64
	alpha   []float64
	beta    []float64
	gA, gB  []float64 // g(x) = −x ln x of each table entry
	chain   []float64 // VariantR: Π_{i=1..I} α_0…α_{i−1}
	window  bool      // VariantR count scope window
	probs   Probs
	n       int // alphabet size
	uniform float64
	// alphaTab[e*(W+1)+I] is p_w and H of the α case for fixed probabilities.
	alphaTab []pwH
}

// NewMeter validates the parameters and returns a Meter at the start of a
// stream.
func NewMeter(c Config, p Probs) (*Meter, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	m := &Meter{meterTables: &meterTables{variant: c.variant(), w: c.Window, k: c.k(), alpha: c.Alpha, beta: c.Beta,
		window: c.Scope == ScopeWindow, probs: p, n: p.N}}
	if p.Mode == Given {
		m.n = len(p.P)
	}
	m.gA, m.gB = make([]float64, len(c.Alpha)), make([]float64, len(c.Beta))
	for i := range c.Alpha {
		m.gA[i], m.gB[i] = g(c.Alpha[i]), g(c.Beta[i])
	}
	m.chain = make([]float64, len(c.Alpha))
	m.chain[0] = 1
	prefix := 1.0
	for i := 1; i < len(c.Alpha); i++ {
		prefix *= c.Alpha[i-1]
		m.chain[i] = m.chain[i-1] * prefix
	}
	switch p.Mode {
	case Uniform:
		m.uniform = 1 / float64(p.N)
	case Learned:
		m.counts = make([]int64, p.N)
	}
	if m.variant == VariantW {
		m.ring = make([]int32, c.Window)
	} else if p.Mode != Learned {
		rows := len(m.chain)
		m.alphaTab = make([]pwH, m.n*rows)
		for e := range m.n {
			pe := m.prob(int32(e))
			pw := pe
			for i := range rows {
				x := pw * m.chain[i]
				m.alphaTab[e*rows+i] = pwH{x, m.k * x * m.gA[i]}
				pw *= pe
			}
		}
	}
	m.Reset()
	return m, nil
}

// Fresh returns a new Meter at the start of a stream with m's parameters.
// It shares m's read-only tables (the α and β terms, the table of the α
// case over the alphabet), so a meter per stream of one configuration, a
// recorder's per process, costs its own state only, not NewMeter's
// validation and tables again.
func (m *Meter) Fresh() *Meter {
	c := &Meter{meterTables: m.meterTables}
	if m.counts != nil {
		c.counts = make([]int64, len(m.counts))
	}
	if m.ring != nil {
		c.ring = make([]int32, len(m.ring))
	}
	c.Reset()
	return c
}

// Reset returns the Meter to the start of a stream (learned frequencies
// are forgotten too).
func (m *Meter) Reset() {
	m.prev, m.run, m.head, m.fill, m.total = -1, 0, 0, 0, 0
	clear(m.counts)
}

type pwH struct{ pw, h float64 }

// g is −x ln x.
func g(x float64) float64 { return -x * math.Log(x) }

func (m *Meter) prob(e int32) float64 {
	switch m.probs.Mode {
	case Uniform:
		return m.uniform
	case Given:
		return m.probs.P[e]
	}
	return float64(m.counts[e]) / float64(m.total)
}

// Next consumes event ev and returns its modified entropy.
func (m *Meter) Next(ev int32) (Step, error) {
	if ev < 0 || int(ev) >= m.n {
		return Step{}, &UnknownEventError{Event: ev, N: m.n}
	}
	if m.counts != nil {
		m.counts[ev]++
		m.total++
	}
	if m.variant == VariantW {
		return m.nextW(ev), nil
	}
	var s Step
	p := m.prob(ev)
	if m.prev >= 0 && ev == m.prev {
		i := min(m.run, m.w)
		m.run++
		if m.alphaTab != nil {
			t := m.alphaTab[int(ev)*(m.w+1)+i]
			return Step{H: t.h, Pw: t.pw, I: int32(i), Case: Alpha}, nil
		}
		pw := p
		for range i {
			pw *= p
		}
		pw *= m.chain[i]
		s = Step{H: m.k * pw * m.gA[i], Pw: pw, I: int32(i), Case: Alpha}
	} else {
		i := 0
		if m.prev >= 0 {
			r := m.run
			if m.window {
				r = min(r, m.w)
			}
			i = min(r-1, m.w)
		}
		s = Step{H: m.k * p * m.gB[i], Pw: p, I: int32(i), Case: Beta}
		m.prev, m.run = ev, 1
	}
	return s, nil
}

// nextW is VariantW: the Markov-chain probability of the window with the
// reversed index and the saturation rule.
func (m *Meter) nextW(ev int32) Step {
	var s Step
	if m.fill == 0 {
		p := m.prob(ev)
		s = Step{H: m.k * p * m.gB[0], Pw: p, I: 0, Case: First}
	} else {
		w := m.w
		start := (m.head - m.fill + w) % w // oldest
		first := m.ring[start]
		pw := m.prob(first)
		run, last := 1, first
		for j := 1; j < m.fill; j++ {
			e := m.ring[(start+j)%w]
			if e == last {
				pw *= m.alpha[w-run]
				run++
			} else {
				pw *= m.beta[w-run]
				run = 1
			}
			last = e
		}
		i := w - run
		if ev == last {
			h := 0.0 // saturated window: x = 1
			if run < w {
				h = m.k * pw * m.gA[i]
			}
			s = Step{H: h, Pw: pw, I: int32(i), Case: Alpha}
		} else {
			s = Step{H: m.k * pw * m.gB[i], Pw: pw, I: int32(i), Case: Beta}
		}
	}
	m.ring[m.head] = ev
	m.head = (m.head + 1) % m.w
	m.fill = min(m.fill+1, m.w)
	return s
}

// Series computes the modified entropy of every event of a stream, appending
// to dst (which may be nil) and returning it. It stops at the first unknown
// event with an error that gives its index.
func Series(c Config, p Probs, events []int32, dst []Step) ([]Step, error) {
	m, err := NewMeter(c, p)
	if err != nil {
		return dst, err
	}
	return m.series(events, dst)
}

func (m *Meter) series(events []int32, dst []Step) ([]Step, error) {
	dst = growSteps(dst, len(events))
	for i, e := range events {
		s, err := m.Next(e)
		if err != nil {
			return dst, fmt.Errorf("event %d of the stream: %w", i, err)
		}
		dst = append(dst, s)
	}
	return dst, nil
}

func growSteps(dst []Step, n int) []Step {
	if cap(dst)-len(dst) < n {
		nd := make([]Step, len(dst), len(dst)+n)
		copy(nd, dst)
		return nd
	}
	return dst
}
