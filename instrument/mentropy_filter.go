package instrument

import (
	"errors"
	"fmt"
	"sync"

	"github.com/parscope/parscope/analysis/mentropy/meter"
	"github.com/parscope/parscope/trace"
)

// EntropyOptions configure an EntropyFilter.
type EntropyOptions struct {
	// Config is the modified entropy's window, K, α/β table and variant
	// (DefaultEntropyConfig is Özmen's Table 4).
	Config meter.Config
	// Threshold: an event that repeats the previous one of its kind is kept
	// only when its modified entropy is above Threshold.
	Threshold float64
	// Procs is the number of processes (ids 0..Procs−1); events of other
	// processes are always kept. With Dynamic it is ignored.
	Procs int
	// Dynamic filters every process, whatever its id: a process's meters
	// are made when the recorder creates the process (ForProcess), for
	// programs that create process ids as they run (a rewritten program's
	// goroutines and channels).
	Dynamic bool
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
// DroppedEvent) and no change of state is lost. Keep allocates only at a
// process's first record of each filtered kind (its meter for that kind).
//
// It is a ProcessFilter: the recorder asks each process's own part of the
// filter, made when it creates the process.
type EntropyFilter struct {
	threshold float64
	slot      [16]int8 // kind → meter slot, −1 not filtered
	nslot     int
	config    meter.Config
	probs     meter.Probs
	dynamic   bool
	procs     []*entropyProc // fixed processes, by id
	// proto is the meter NewEntropyFilter made; every process's meter is
	// a fresh copy of it, sharing its tables.
	proto *meter.Meter

	mu  sync.Mutex
	dyn map[int]*entropyProc // Dynamic: processes made so far
}

// entropyProc is one process's meters and counts; it is the Filter the
// recorder asks for that process.
type entropyProc struct {
	f       *EntropyFilter
	meters  []*meter.Meter // by slot
	kept    int64
	dropped int64
}

// NewEntropyFilter validates the options and returns the filter.
func NewEntropyFilter(o EntropyOptions) (*EntropyFilter, error) {
	if o.Procs < 1 && !o.Dynamic {
		return nil, fmt.Errorf("instrument: entropy filter for %d processes: need at least one", o.Procs)
	}
	kinds := o.Kinds
	if len(kinds) == 0 {
		kinds = []trace.Kind{trace.KindState, trace.KindEvent}
	}
	f := &EntropyFilter{threshold: o.Threshold, config: o.Config, dynamic: o.Dynamic}
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
	f.probs = meter.UniformProbs(o.Alphabet)
	if o.Learned {
		f.probs = meter.LearnedProbs(o.Alphabet)
	}
	if o.Threshold < 0 {
		return nil, errors.New("instrument: entropy filter: negative threshold")
	}
	// The first meter validates the configuration; every process's
	// meters are fresh copies of it.
	m, err := meter.NewMeter(f.config, f.probs)
	if err != nil {
		return nil, fmt.Errorf("instrument: entropy filter: %w", err)
	}
	f.proto = m
	if o.Dynamic {
		f.dyn = map[int]*entropyProc{}
		return f, nil
	}
	f.procs = make([]*entropyProc, o.Procs)
	for i := range f.procs {
		f.procs[i] = f.newProc()
	}
	return f, nil
}

// newProc makes one process's part of the filter. Its meters are fresh
// copies of the filter's first (which shares its tables with them: see
// meter.Meter.Fresh), each made at the process's first record of its
// kind (Keep): most goroutines of a rewritten program record no events.
// It reads only what NewEntropyFilter set, and takes no lock.
func (f *EntropyFilter) newProc() *entropyProc {
	return &entropyProc{f: f, meters: make([]*meter.Meter, f.nslot)}
}

// proc returns proc's part of the filter, or nil for a process the filter
// does not filter. With Dynamic it makes it the first time.
func (f *EntropyFilter) proc(proc int) *entropyProc {
	if !f.dynamic {
		if proc < 0 || proc >= len(f.procs) {
			return nil
		}
		return f.procs[proc]
	}
	f.mu.Lock()
	p := f.dyn[proc]
	f.mu.Unlock()
	if p != nil {
		return p
	}
	// Made outside the lock, as the recorder makes its processes; the
	// first one stored is every caller's.
	p = f.newProc()
	f.mu.Lock()
	defer f.mu.Unlock()
	if q := f.dyn[proc]; q != nil {
		return q
	}
	f.dyn[proc] = p
	return p
}

// ForProcess implements ProcessFilter: the part of the filter that sees
// proc's records, made (with Dynamic) when the recorder creates proc.
func (f *EntropyFilter) ForProcess(proc int) Filter {
	if p := f.proc(proc); p != nil {
		return p
	}
	return keepAll{}
}

// Keep implements Filter. Through the recorder, each process's records go
// to its own part of the filter (ForProcess) instead.
func (f *EntropyFilter) Keep(proc int, kind trace.Kind, id int32, t int64) bool {
	p := f.proc(proc)
	if p == nil {
		return true
	}
	return p.Keep(proc, kind, id, t)
}

// Keep implements Filter for one process.
func (p *entropyProc) Keep(_ int, kind trace.Kind, id int32, _ int64) bool {
	f := p.f
	if int(kind) >= len(f.slot) || f.slot[kind] < 0 {
		return true
	}
	m := p.meters[f.slot[kind]]
	if m == nil {
		m = f.proto.Fresh()
		p.meters[f.slot[kind]] = m
	}
	s, err := m.Next(id)
	if err != nil || s.Case != meter.Alpha || s.H > f.threshold {
		p.kept++
		return true
	}
	p.dropped++
	return false
}

// keepAll keeps every record.
type keepAll struct{}

func (keepAll) Keep(int, trace.Kind, int32, int64) bool { return true }

// Counts returns how many filtered events of proc were kept and dropped.
// Call it after the process has finished recording.
func (f *EntropyFilter) Counts(proc int) (kept, dropped int64) {
	var p *entropyProc
	if f.dynamic {
		f.mu.Lock()
		p = f.dyn[proc]
		f.mu.Unlock()
	} else if proc >= 0 && proc < len(f.procs) {
		p = f.procs[proc]
	}
	if p == nil {
		return 0, 0
	}
	return p.kept, p.dropped
}

// DefaultEntropyThreshold is the threshold of the entropy filter in
// rewritten programs and the examples: with DefaultEntropyConfig over 7
// ids it keeps the first two events of a run (docs/modified-entropy.md);
// over a larger alphabet, fewer.
const DefaultEntropyThreshold = 0.1

// DefaultEntropyConfig is the modified entropy configuration of Özmen's
// (2002) Table 4 (meter.Table4) with K = 100, the constant of the
// filter's figures in docs/modified-entropy.md. It is the table of the
// filter in rewritten programs and the examples. Each call returns fresh
// tables.
func DefaultEntropyConfig() meter.Config {
	c := meter.Table4()
	c.K = 100
	return c
}
