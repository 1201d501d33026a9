package instrument

import (
	"errors"
	"fmt"

	"github.com/parscope/parscope/analysis/mentropy"
	"github.com/parscope/parscope/trace"
)

// EntropyOptions configure an EntropyFilter.
type EntropyOptions struct {
	// Config is the modified entropy's window, K, α/β table and variant.
	Config mentropy.Config
	// Threshold: an event that repeats the previous one of its kind is kept
	// only when its modified entropy is above Threshold.
	Threshold float64
	// Procs is the number of processes (ids 0..Procs−1); events of other
	// processes are always kept.
	Procs int
	// Kinds are the record kinds filtered (default: trace.KindState and
	// trace.KindEvent); every other kind is always kept. Each kind is its
	// own stream.
	Kinds []trace.Kind
	// Alphabet is the number of ids per kind (state, region or event ids
	// 0..Alphabet−1); ids outside are always kept. Probabilities are uniform
	// over it, or running frequencies when Learned.
	Alphabet int
	Learned  bool
}

// EntropyFilter is the Filter of Özmen 2002: it computes the modified entropy
// of each event of a process as it happens (per record kind) and keeps the
// event when its entropy is above the threshold, and always when it differs
// from the previous event of its kind, so that a run of repeats is kept as
// its first events plus the count of the dropped ones (the recorder's
// DroppedEvent) and no change of state is lost. Keep does not allocate.
type EntropyFilter struct {
	threshold float64
	slot      [16]int8 // kind → meter slot, −1 not filtered
	nslot     int
	meters    []*mentropy.Meter // proc*nslot + slot
	kept      []procCount
}

// procCount is padded to a cache line so processes do not share one.
type procCount struct {
	kept, dropped int64
	_             [48]byte
}

// NewEntropyFilter validates the options and returns the filter.
func NewEntropyFilter(o EntropyOptions) (*EntropyFilter, error) {
	if o.Procs < 1 {
		return nil, fmt.Errorf("instrument: entropy filter for %d processes: need at least one", o.Procs)
	}
	kinds := o.Kinds
	if len(kinds) == 0 {
		kinds = []trace.Kind{trace.KindState, trace.KindEvent}
	}
	f := &EntropyFilter{threshold: o.Threshold, kept: make([]procCount, o.Procs)}
	for i := range f.slot {
		f.slot[i] = -1
	}
	for _, k := range kinds {
		if !k.Valid() {
			return nil, fmt.Errorf("instrument: entropy filter: invalid record kind %d", k)
		}
		if f.slot[k] < 0 {
			f.slot[k] = int8(f.nslot)
			f.nslot++
		}
	}
	p := mentropy.UniformProbs(o.Alphabet)
	if o.Learned {
		p = mentropy.LearnedProbs(o.Alphabet)
	}
	f.meters = make([]*mentropy.Meter, o.Procs*f.nslot)
	for i := range f.meters {
		m, err := mentropy.NewMeter(o.Config, p)
		if err != nil {
			return nil, fmt.Errorf("instrument: entropy filter: %w", err)
		}
		f.meters[i] = m
	}
	if o.Threshold < 0 {
		return nil, errors.New("instrument: entropy filter: negative threshold")
	}
	return f, nil
}

// Keep implements Filter.
func (f *EntropyFilter) Keep(proc int, kind trace.Kind, id int32, _ int64) bool {
	if proc < 0 || proc >= len(f.kept) || int(kind) >= len(f.slot) || f.slot[kind] < 0 {
		return true
	}
	s, err := f.meters[proc*f.nslot+int(f.slot[kind])].Next(id)
	if err != nil || s.Case != mentropy.Alpha || s.H > f.threshold {
		f.kept[proc].kept++
		return true
	}
	f.kept[proc].dropped++
	return false
}

// Counts returns how many filtered events of proc were kept and dropped.
// Call it after the process has finished recording.
func (f *EntropyFilter) Counts(proc int) (kept, dropped int64) {
	if proc < 0 || proc >= len(f.kept) {
		return 0, 0
	}
	return f.kept[proc].kept, f.kept[proc].dropped
}

// DefaultEntropyConfig is the modified entropy configuration of Özmen's
// (2002) Table 4 (W = 4, variant R, α = 0.5 0.7 0.8 0.9 0.99, β = 0.5 0.3
// 0.2 0.1 0.01; docs/paper-oracles.md 1.3) with K = 100, the constant of
// the filter's figures in docs/modified-entropy.md. It is the default of
// `parscope mentropy` and of the filter in rewritten programs and the
// examples. Each call returns fresh tables.
func DefaultEntropyConfig() mentropy.Config {
	return mentropy.Config{Window: 4, K: 100, Variant: mentropy.VariantR,
		Alpha: []float64{0.5, 0.7, 0.8, 0.9, 0.99}, Beta: []float64{0.5, 0.3, 0.2, 0.1, 0.01}}
}
