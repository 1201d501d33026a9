// Package mentropy is the modified entropy analysis (Özmen 2002): for each
// event of a process, how much information it carries given the events just
// before it, per process of a trace, with the low-entropy phases it finds.
//
// The meter itself (the windowed modified entropy of one stream, both
// readings of the paper, the probability modes) is package meter, which
// the recorder's entropy filter uses too without linking the analysis
// engine. The names below are the meter's, given here so that the
// analysis' API (Params.Config, the results' steps) reads as one package.
package mentropy

import "github.com/parscope/parscope/analysis/mentropy/meter"

// The meter's types (see package meter).
type (
	// Variant selects the reading of the algorithm (meter.Variant).
	Variant = meter.Variant
	// Scope says where VariantR counts repetitions (meter.Scope).
	Scope = meter.Scope
	// Config holds the parameters of the modified entropy (meter.Config).
	Config = meter.Config
	// ProbMode says where event probabilities come from (meter.ProbMode).
	ProbMode = meter.ProbMode
	// Probs is the event probability model (meter.Probs).
	Probs = meter.Probs
	// Case says which transition applied to an event (meter.Case).
	Case = meter.Case
	// Step is the meter's answer for one event (meter.Step).
	Step = meter.Step
	// UnknownEventError reports an event outside the probability table
	// (meter.UnknownEventError).
	UnknownEventError = meter.UnknownEventError
	// Meter computes the modified entropy of one stream (meter.Meter).
	Meter = meter.Meter
)

// The meter's constants (see package meter).
const (
	VariantR     = meter.VariantR
	VariantW     = meter.VariantW
	ScopeHistory = meter.ScopeHistory
	ScopeWindow  = meter.ScopeWindow
	Uniform      = meter.Uniform
	Given        = meter.Given
	Learned      = meter.Learned
	Beta         = meter.Beta
	Alpha        = meter.Alpha
	First        = meter.First
)

// ErrSum is meter.ErrSum: probabilities that do not sum to 1.
var ErrSum = meter.ErrSum

// Table4 returns the configuration of Özmen's (2002) Table 4 (meter.Table4).
func Table4() Config { return meter.Table4() }

// UniformProbs returns uniform probabilities over n events
// (meter.UniformProbs).
func UniformProbs(n int) Probs { return meter.UniformProbs(n) }

// GivenProbs returns the fixed table p, indexed by event id
// (meter.GivenProbs).
func GivenProbs(p []float64) Probs { return meter.GivenProbs(p) }

// LearnedProbs returns running frequencies over n events
// (meter.LearnedProbs).
func LearnedProbs(n int) Probs { return meter.LearnedProbs(n) }

// Normalize divides a table of positive weights by its sum in place and
// reports whether it changed anything beyond rounding (meter.Normalize).
func Normalize(p []float64) (changed bool, err error) { return meter.Normalize(p) }

// NewMeter validates the parameters and returns a Meter at the start of a
// stream (meter.NewMeter).
func NewMeter(c Config, p Probs) (*Meter, error) { return meter.NewMeter(c, p) }

// Series computes the modified entropy of every event of a stream
// (meter.Series).
func Series(c Config, p Probs, events []int32, dst []Step) ([]Step, error) {
	return meter.Series(c, p, events, dst)
}
