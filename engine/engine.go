// Package engine is the one place where analyses run. Every analysis is
// described once in a registry (Register, Lookup, All): its name, the
// record kinds it needs, its options (one struct, whose fields carry the
// flag names, help and JSON names every face uses) and how to build its
// accumulator. Run reads a trace once and feeds every requested
// accumulator from that one pass; the faces (the CLI commands, the report
// behind `analyze` and `serve`, parscope-beam) only format the typed
// results Run returns, each wrapped in the same JSON Envelope.
//
// Some analyses read, rather than the records, a stream derived from them
// that others read too: the entropy, PCA and phase-space analyses all read
// the parallel states that package state rebuilds from the state records.
// Their accumulators are Staged: in each pass Run makes one Stage for the
// accumulators that share a stage key (and runs and record kinds), feeds
// it the batches in one goroutine, and the stage derives the stream once
// and hands it to each of them (state.Fan builds each state row once and
// gives it to every state analysis of the pass). Each analysis stays
// defined once, with its own options and result; only the derivation is
// shared. A staged accumulator used alone (Add) derives the stream itself.
//
// An analysis that needs what a trace lacks is refused with a
// *MissingError naming the trace and the missing record kinds, never run
// to an empty answer; one that cannot handle a trace of its size (its
// Limit) is refused with a *LimitError saying what is too large, before a
// record is read.
package engine

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/parscope/parscope/store"
	"github.com/parscope/parscope/trace"
)

// SchemaVersion is the version of the JSON layout of every result
// (Envelope and the result types inside it). It changes when a field
// changes meaning or is removed, so that scripts can rely on it.
const SchemaVersion = 1

// Analysis describes one analysis to the engine.
type Analysis struct {
	// Name is the analysis' name: its CLI command, its key in report.json
	// and in Envelope.Analysis.
	Name string
	// Doc is a one-line description.
	Doc string
	// Needs lists the record kinds of which the trace must hold at least
	// one for the analysis to apply; empty when it applies to every trace.
	Needs []trace.Kind
	// NeedsOf, when set, returns the record kinds the analysis needs with
	// the options opts (a pointer returned by Options), when they depend
	// on the options; Needs are then those of the defaults.
	NeedsOf func(opts any) []trace.Kind
	// Feeds returns the record kinds the accumulator is given for the
	// options opts (a pointer returned by Options). Nil means Needs.
	Feeds func(opts any) []trace.Kind
	// Options returns a new options struct (a pointer) holding the
	// defaults. Its fields carry `json:"..."` names, and `flag:"..."` and
	// `help:"..."` tags for BindFlags.
	Options func() any
	// Recorded marks an analysis that reads the trace's records as they
	// were recorded (the overview's counts; profiles, POP and the
	// critical path, which read regions and read states only when a trace
	// has no regions): it is never fed derived states (StatesFrom), and
	// its result names no source of states.
	Recorded bool
	// Limit, when set, returns why the trace t is larger than the analysis
	// handles for the request req with the options opts (a pointer
	// returned by Options), or nil: a run of more processes than its dense
	// matrices hold, say. It is where an analysis declares the sizes it
	// refuses, once: WithinLimits (and so Run and Check) turns the answer
	// into a *LimitError before a record is read, which the report shows
	// as the reason the analysis was skipped.
	Limit func(t *Trace, req Request, opts any) error
	// New returns an accumulator for the trace t with the options opts (a
	// pointer of the type Options returns).
	New func(t *Trace, opts any) (Accumulator, error)
}

// Accumulator is the running state of one analysis over a trace. The
// engine calls Add with batches of records in time-merged order (run by
// run, as store.Records returns them), holding only the kinds and runs the
// request selects; a batch is valid only during the call.
type Accumulator interface {
	// Add adds a batch of records.
	Add(batch []trace.Record) error
	// Merge adds other, the accumulator of the same analysis and options
	// over the records that follow this one's (a later time shard, or
	// later runs), to this one. other must not be used afterwards.
	Merge(other Accumulator) error
	// Result ends the accumulation and returns the typed result (a
	// pointer to a struct with JSON tags).
	Result() (any, error)
}

// Repeater is implemented by accumulators that need another pass over the
// records after a pass has ended (a randomized range finder, a ranking that
// needs the first pass's totals). Run asks every such accumulator after
// each pass and reads the store again only for those that answer true; the
// others are not fed again.
type Repeater interface {
	// Again reports whether the accumulator needs another pass; the next
	// pass feeds it the same kinds and runs.
	Again() (bool, error)
}

// Stage derives, from the batches of records of a pass, a stream that
// several accumulators read, once for all of them.
type Stage interface {
	// Add derives from a batch of records and hands the result to the
	// stage's accumulators.
	Add(batch []trace.Record) error
	// End ends the pass: the stage hands over what it held back (a state
	// row is complete only when the next one begins).
	End() error
}

// Staged is implemented by accumulators that read a Stage. Before each
// pass Run groups the staged accumulators of the pass whose StageKey,
// runs and record kinds are equal, makes one stage for each group with
// the first one's NewStage, feeds it the group's batches and ends it after
// the pass; Add of those accumulators is not called.
type Staged interface {
	// StageKey identifies the derived stream: equal keys, equal streams.
	StageKey() string
	// NewStage returns a stage that feeds accs, accumulators of equal
	// StageKey (the receiver among them).
	NewStage(accs []Accumulator) (Stage, error)
}

var (
	regMu    sync.RWMutex
	registry = map[string]*Analysis{}
)

// Register adds a to the registry. It panics when the name is empty or
// taken, or the description lacks Options or New: registration happens in
// init functions, where such a mistake is a programming error.
func Register(a *Analysis) {
	if a.Name == "" || a.Options == nil || a.New == nil {
		panic(fmt.Sprintf("engine: incomplete analysis %q", a.Name))
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, ok := registry[a.Name]; ok {
		panic(fmt.Sprintf("engine: analysis %q registered twice", a.Name))
	}
	registry[a.Name] = a
}

// Lookup returns the analysis named name.
func Lookup(name string) (*Analysis, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	a, ok := registry[name]
	return a, ok
}

// All returns every registered analysis, by name.
func All() []*Analysis {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]*Analysis, 0, len(registry))
	for _, a := range registry {
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y *Analysis) int { return cmp.Compare(x.Name, y.Name) })
	return out
}

// Kinds returns the record kinds a is fed with the options opts.
func (a *Analysis) Kinds(opts any) []trace.Kind {
	if a.Feeds != nil {
		return a.Feeds(opts)
	}
	return a.Needs
}

// Trace is what an accumulator knows of the trace before the pass: its
// name, header and the summary figures the store keeps.
type Trace struct {
	// Name is the trace's base name (the .pst directory's).
	Name string
	// Header holds the dictionaries, runs and metadata.
	Header *trace.Header
	// Stats are the store's summary figures: records per kind, and each
	// run's processes, records and time span.
	Stats *store.Stats
}

// Span returns the time span [begin, end] (ns) of run: from its first
// record to the last record's time or completion, over every kind.
func (t *Trace) Span(run int32) (begin, end int64, ok bool) {
	for _, r := range t.Stats.Runs {
		if r.Run == run {
			return r.TMin, r.TMax, true
		}
	}
	return 0, 0, false
}

// Procs returns the number of processes of run: the most the header or
// the store's figures give it (0 for a run the trace does not hold).
func (t *Trace) Procs(run int32) int {
	n := 0
	for _, ri := range t.Header.Runs {
		if ri.ID == run {
			n = int(ri.Procs)
		}
	}
	if t.Stats != nil {
		for _, rs := range t.Stats.Runs {
			if rs.Run == run {
				n = max(n, int(rs.Procs))
			}
		}
	}
	return n
}

// LargestRun returns, of the runs among runs (nil: every run), the one
// with the most processes (Procs) and their number; procs is 0 when the
// trace has none of the runs.
func (t *Trace) LargestRun(runs []int32) (run int32, procs int) {
	consider := func(id int32) {
		if runs != nil && !slices.Contains(runs, id) {
			return
		}
		if n := t.Procs(id); n > procs || n == procs && id < run {
			run, procs = id, n
		}
	}
	for _, ri := range t.Header.Runs {
		consider(ri.ID)
	}
	if t.Stats != nil {
		for _, rs := range t.Stats.Runs {
			consider(rs.Run)
		}
	}
	return run, procs
}

// Count returns the number of records of kind k in the trace.
func (t *Trace) Count(k trace.Kind) int64 { return t.Stats.Records[k.String()] }

// MissingError says that a trace lacks the records an analysis needs.
type MissingError struct {
	Trace    string
	Analysis string
	// Needs are the kinds of which the trace has none.
	Needs []trace.Kind
}

func (e *MissingError) Error() string {
	var names []string
	for _, k := range e.Needs {
		names = append(names, k.String())
	}
	return fmt.Sprintf("%s: %s needs %s records, and the trace has none", e.Trace, e.Analysis, strings.Join(names, " or "))
}

// LimitError says that a trace is larger than an analysis handles
// (Analysis.Limit): the analysis cannot run on it as asked, and is refused
// rather than run out of memory or time.
type LimitError struct {
	Trace    string
	Analysis string
	// Err says what is too large and the bound, without the trace's or
	// the analysis' name.
	Err error
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: %s cannot analyse this trace: %v", e.Trace, e.Analysis, e.Err)
}

// Unwrap returns Err.
func (e *LimitError) Unwrap() error { return e.Err }

// Reason says in a few words why the analysis cannot run: Err's message.
func (e *LimitError) Reason() string { return e.Err.Error() }

// WithinLimits returns nil when the trace t is within the sizes a handles
// (Analysis.Limit) for the request req with the options opts (a pointer
// returned by Options; nil: the defaults), else a *LimitError.
func (a *Analysis) WithinLimits(t *Trace, req Request, opts any) error {
	if a.Limit == nil {
		return nil
	}
	if opts == nil {
		opts = a.Options()
	}
	if err := a.Limit(t, req, opts); err != nil {
		return &LimitError{Trace: t.Name, Analysis: a.Name, Err: err}
	}
	return nil
}

// Applies returns nil when the trace t holds what a needs with its
// default options, else a *MissingError.
func (a *Analysis) Applies(t *Trace) error { return a.AppliesWith(t, nil) }

// AppliesWith returns nil when the trace t holds what a needs with the
// options opts (nil: the defaults), else a *MissingError.
func (a *Analysis) AppliesWith(t *Trace, opts any) error {
	needs := a.Needs
	if a.NeedsOf != nil && opts != nil {
		needs = a.NeedsOf(opts)
	}
	if len(needs) == 0 {
		return nil
	}
	for _, k := range needs {
		if t.Count(k) > 0 {
			return nil
		}
	}
	return &MissingError{Trace: t.Name, Analysis: a.Name, Needs: needs}
}

// Source is a trace the engine can read: a *store.Store is one.
type Source interface {
	// Dir is the trace's path; its base name names the trace.
	Dir() string
	// Manifest holds the header and summary figures.
	Manifest() *store.Manifest
	// Records returns the selected timed records in time-merged order.
	Records(store.ReadOptions) trace.Reader
	// BBV returns the basic block vector records.
	BBV(store.ReadOptions) trace.Reader
}

// TraceOf returns what accumulators know of src before the pass.
func TraceOf(src Source) *Trace {
	m := src.Manifest()
	return &Trace{Name: filepath.Base(src.Dir()), Header: &m.Header, Stats: &m.Stats}
}

// Request asks Run for one analysis.
type Request struct {
	// Analysis is the registered name.
	Analysis string
	// Options is a pointer of the type the analysis' Options returns; nil
	// means the defaults.
	Options any
	// Runs selects the runs analysed; nil means every run.
	Runs []int32
	// Procs, when not empty, selects the processes analysed: the records
	// of the others are not fed to the analysis, which sees them as
	// processes that never exist (absent all along).
	Procs []int32
	// ExcludeProcs leaves these processes out the same way (counter
	// readers, GPU streams, helper threads that are not the application).
	ExcludeProcs []int32
	// States is where the analysis takes processes' states from ("" is
	// StatesAuto). Every request of one Run that sets it must resolve to
	// the same source.
	States StatesFrom
}

// Envelope is the JSON form of every result, whichever face writes it.
type Envelope struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Analysis is the analysis' registered name.
	Analysis string `json:"analysis"`
	// Trace is the base name of the trace analysed.
	Trace string `json:"trace"`
	// Runs are the runs selected; absent when every run was.
	Runs []int32 `json:"runs,omitempty"`
	// Procs and ExcludeProcs are the processes selected and left out;
	// absent when every process was analysed.
	Procs        []int32 `json:"procs,omitempty"`
	ExcludeProcs []int32 `json:"exclude_procs,omitempty"`
	// StatesFrom is where the analysis took processes' states from
	// (StatesRecorded, StatesRegions or StatesMPI); absent for an analysis
	// that reads no states.
	StatesFrom StatesFrom `json:"states_from,omitempty"`
	// Options are the options the analysis ran with, defaults included.
	Options any `json:"options"`
	// Result is the analysis' typed result.
	Result any `json:"result"`
}

// Results are the envelopes of one Run, in the order of the requests.
type Results struct {
	Envelopes []*Envelope
	// Passes is the number of passes over the records Run made.
	Passes int
}

// Get returns the envelope of the first request of the analysis named
// name, or nil.
func (r *Results) Get(name string) *Envelope {
	for _, e := range r.Envelopes {
		if e.Analysis == name {
			return e
		}
	}
	return nil
}

// optionsOf returns the options a request giving given runs a with: given
// when it is of the type a.Options makes, the defaults when it is nil. Of
// another type, it returns the defaults and an error naming both types.
func (a *Analysis) optionsOf(given any) (any, error) {
	def := a.Options()
	if given == nil {
		return def, nil
	}
	if want, got := fmt.Sprintf("%T", def), fmt.Sprintf("%T", given); want != got {
		return def, fmt.Errorf("%s: options of type %s, want %s", a.Name, got, want)
	}
	return given, nil
}

// resolve checks a request and fills in its defaults.
func resolve(t *Trace, req Request) (*Analysis, any, error) {
	a, ok := Lookup(req.Analysis)
	if !ok {
		var names []string
		for _, x := range All() {
			names = append(names, x.Name)
		}
		return nil, nil, fmt.Errorf("unknown analysis %q (known: %s)", req.Analysis, strings.Join(names, ", "))
	}
	opts, err := a.optionsOf(req.Options)
	if err != nil {
		return nil, nil, err
	}
	if err := a.AppliesWith(t, opts); err != nil {
		return nil, nil, err
	}
	if err := a.WithinLimits(t, req, opts); err != nil {
		return nil, nil, err
	}
	return a, opts, nil
}

// errStop ends a pass early when the context is cancelled.
var errStop = errors.New("engine: stopped")
